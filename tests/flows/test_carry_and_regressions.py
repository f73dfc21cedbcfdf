"""`carry: latest | best` and regressions, on the loop itself with scripted stages (no browser, no model).

The stages are the loop's seam (`flows.Stages`): here they are small functions that write real
files into the run folder and succeed or fail tasks by a script, so the test decides which round
is best and which tasks regress.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from apps_prompts import load_app
from experiment import make_config
from flows import FileRef, RolloutRef, RunContext, Stages, TasksRef, TrackSteps, VerifyRef, VersionRef, judge_and_revise
from results import Track
from verifier import AppVerdicts, Verdict, write_verdicts

APP = "unit-converter"
TASKS = [task.id for task in load_app(APP).tasks][:3]
# Which tasks succeed in each round: round 1 regresses (loses a task it had in round 0).
SUCCEEDS = {0: {TASKS[0], TASKS[1]}, 1: {TASKS[0]}, 2: {TASKS[0], TASKS[1], TASKS[2]}}



async def _no_variations(**_):
    raise AssertionError("this run has no variations: nothing is translated or proven on a variant")

class ScriptedStages:
    """The six stages as plain async functions; `revisions` records what each revision was given."""

    def __init__(self, run: RunContext):
        self.run = run
        self.revisions: list[dict] = []

    def stages(self) -> Stages:
        return Stages(self.generate, self.propose, self.verify, self.rollout, self.comment, self.revise,
                      _no_variations, _no_variations)

    async def generate(self, *, run, app_id, coder, viewport):
        return VersionRef(app_id=app_id, round=0, html=run.write("v/round-0/index.html", "<p>v0</p>"), coder=coder.name,
                          offline=True)

    async def propose(self, *, run, app_id, proposer, tasks_file, tasks_per_app):
        tasks = [t for t in load_app(APP).tasks if t.id in TASKS]
        data = "[" + ",".join(t.model_dump_json() for t in tasks) + "]"
        return TasksRef(app_id=app_id, file=run.write("tasks.json", data), count=len(tasks), offline=True)

    async def verify(self, *, run, app_id, round, html, tasks, verifier):
        verdicts = AppVerdicts(app_id=app_id, domain="tool", html_sha256=html.sha, verifier="offline", offline=True,
                               verdicts=[Verdict(task_id=t, solvable=True, checker="return true;", model="offline")
                                         for t in TASKS])
        folder = run.file(html).parent
        write_verdicts(verdicts, folder)
        return VerifyRef(app_id=app_id, file=run.ref(Path(html.path).parent / "verdicts.json"),
                         valid={t: True for t in TASKS}, reasons={}, offline=True)

    async def rollout(self, *, run, app_id, round, task, checker, html, agent, out_path, **_):
        success = task.id in SUCCEEDS[round]
        return RolloutRef(app_id=app_id, task_id=task.id, trajectory=out_path, dashboard=None,
                          termination="success" if success else "finished", success=success, steps=1)

    async def comment(self, *, run, app_id, round, html, trajectories, commenter, track):
        return None

    async def revise(self, *, run, app_id, round, html, verdicts, tasks, feedback, track, style_block, regressions,
                     viewport, coder):
        self.revisions.append({"round": round, "html": html.path, "regressions": [r.task_id for r in regressions],
                               "attempts": [r.agent_attempt for r in regressions], "style_block": style_block})
        written = run.write(f"v/round-{round}/index.html", f"<p>v{round}</p>")
        return VersionRef(app_id=app_id, round=round, html=written, coder=track.coder, offline=True)


async def _run(tmp_path: Path, carry: str) -> tuple[list, ScriptedStages]:
    config = make_config({"app_ids": [APP], "rounds": 2, "carry": carry, "out_dir": str(tmp_path)})
    run = RunContext(run_key="k", run_dir=str(tmp_path), apps=str(config.apps))
    scripted = ScriptedStages(run)
    track = Track(coder="offline", cua="heuristic", mode="integrated", commenter_mode="dashboard")
    results = await judge_and_revise(TrackSteps(config, run, APP, track, scripted.stages()), config.rounds)
    return results, scripted


async def test_latest_revises_the_last_version_and_regressions_go_to_the_next_revision(tmp_path):
    results, scripted = await _run(tmp_path, "latest")
    assert [round(r.sr, 3) for r in results] == [round(2 / 3, 3), round(1 / 3, 3), 1.0]
    assert results[1].regressions == [TASKS[1]] and results[0].regressions == results[2].regressions == []
    assert [r["html"] for r in scripted.revisions] == ["v/round-0/index.html", "v/round-1/index.html"]
    assert scripted.revisions[1]["regressions"] == [TASKS[1]], "round 1's regression is fed to the revision making round 2"
    assert scripted.revisions[1]["attempts"] == ["it ended 'finished' after 1 step(s)"]
    assert [r.revised_from for r in results] == [None, 0, 1]
    assert all(r["style_block"] is None for r in scripted.revisions), "None: the coder applies the paper's setting per mode"


async def test_best_revises_the_best_version_so_far(tmp_path):
    results, scripted = await _run(tmp_path, "best")
    # Round 1 (SR 1/3) is worse than round 0 (2/3): round 2 revises round 0's version.
    assert [r["html"] for r in scripted.revisions] == ["v/round-0/index.html", "v/round-0/index.html"]
    assert [r.revised_from for r in results] == [None, 0, 0]
    assert results[1].regressions == [TASKS[1]]


def test_file_refs_in_results_point_into_the_run_folder(tmp_path):
    ref = RunContext(run_key="k", run_dir=str(tmp_path), apps="x").write("a/b.txt", "hello")
    assert ref == FileRef(path="a/b.txt", sha="2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")


V0 = """<!doctype html><html><body><button id="save">Save</button><p id="status"></p>
<script>function save() { localStorage.setItem('saved', '1'); }
document.getElementById('save').onclick = save;</script></body></html>"""
PLANTED = V0.replace('<p id="status"></p>', '<p id="status">Saved</p>')  # shows the state, changes no code
HONEST = V0.replace("localStorage.setItem('saved', '1'); }",
                    "localStorage.setItem('saved', '1'); document.getElementById('status').textContent = 'Saved'; }")
STATUS_CHECKER = "return document.querySelector('#status').textContent.includes('Saved');"


class RevisingStages(ScriptedStages):
    """Round 0 is V0 (the task fails); the revision writes `revised`, with which the task succeeds."""

    def __init__(self, run: RunContext, revised: str):
        super().__init__(run)
        self.revised = revised

    async def generate(self, *, run, app_id, coder, viewport):
        return VersionRef(app_id=app_id, round=0, html=run.write("v/round-0/index.html", V0), coder=coder.name, offline=True)

    async def verify(self, *, run, app_id, round, html, tasks, verifier):
        ref = await super().verify(run=run, app_id=app_id, round=round, html=html, tasks=tasks, verifier=verifier)
        verdicts = AppVerdicts(app_id=app_id, domain="tool", html_sha256=html.sha, verifier="offline", offline=True,
                               verdicts=[Verdict(task_id=t, solvable=True, checker=STATUS_CHECKER, model="offline")
                                         for t in TASKS])
        write_verdicts(verdicts, run.file(html).parent)
        return ref.model_copy(update={"file": run.ref(ref.file.path)})

    async def rollout(self, *, run, app_id, round, task, checker, html, agent, out_path, **_):
        success = round == 1 and task.id == TASKS[0]
        return RolloutRef(app_id=app_id, task_id=task.id, trajectory=out_path, dashboard=None,
                          termination="success" if success else "finished", success=success, steps=1)

    async def revise(self, *, run, app_id, round, html, verdicts, tasks, feedback, track, style_block, regressions,
                     viewport, coder):
        return VersionRef(app_id=app_id, round=round, html=run.write(f"v/round-{round}/index.html", self.revised),
                          coder=track.coder, offline=True)


@pytest.mark.parametrize(("revised", "suspect"), [(PLANTED, True), (HONEST, False)], ids=["status-text-only", "honest"])
async def test_a_success_after_a_status_text_only_revision_is_a_gaming_suspect(tmp_path, revised, suspect):
    config = make_config({"app_ids": [APP], "rounds": 1, "out_dir": str(tmp_path)})
    run = RunContext(run_key="k", run_dir=str(tmp_path), apps=str(config.apps))
    track = Track(coder="offline", cua="heuristic", mode="integrated", commenter_mode="dashboard")
    results = await judge_and_revise(TrackSteps(config, run, APP, track, RevisingStages(run, revised).stages()), 1)
    assert results[1].tasks[0].success
    flagged = [s.task_id for s in results[1].gaming_suspects]
    assert flagged == ([TASKS[0]] if suspect else []), results[1].gaming_suspects
    if suspect:
        assert "Saved" in results[1].gaming_suspects[0].planted_text


async def test_the_ablation_tells_the_revision_of_its_regressions_what_the_loop_told_it(tmp_path):
    from flows._ablation import _regressions

    results, scripted = await _run(tmp_path, "latest")
    tasks = [t for t in load_app(APP).tasks if t.id in TASKS]
    told = _regressions(results[1], results[2], tasks)
    assert [(r.task_id, r.agent_attempt) for r in told] == list(zip(scripted.revisions[1]["regressions"],
                                                                    scripted.revisions[1]["attempts"]))
    # A regressed task with no rollout in its round (its checker no longer valid, say): no attempt to tell, as in the loop
    unrun = results[1].model_copy(update={"tasks": [
        t.model_copy(update={"trajectory": None, "termination": None, "steps": 0, "reason": "no valid checker"})
        for t in results[1].tasks]})
    assert [r.agent_attempt for r in _regressions(unrun, results[2], tasks)] == [""]
