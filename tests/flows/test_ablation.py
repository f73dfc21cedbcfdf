"""Ablations: a revision made again without one change, verified and rolled out on the same tasks.

On the bundled mortgage calculator, the offline revision's slider companions (a typed field and step
buttons beside the down-payment slider) decide one task: `first-home-scenario` sets a 10 % down payment,
which the heuristic agent cannot drag to. Leaving that one transform out loses exactly that task; every
other task and transform stays as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiment import ConfigError, make_config
from flows import ablate, ablate_run, sweep_without_prefect
from insights import insights_of
from results import read_ablations, read_results
from tests.insights.test_verdicts import NO_MOTION_LINE, _offline_revision, _run

APP = "mortgage-calculator"
TRACK = "offline · heuristic · integrated · dashboard"
SLIDERS = f"{APP}/{TRACK}/r1/made-slider_companions"


@pytest.fixture(scope="module")
async def offline_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ablation")
    config = make_config({"name": "full", "app_ids": [APP], "rounds": 1, "revision_modes": ["integrated"],
                          "out_dir": str(out)})
    await sweep_without_prefect(config)
    return config.run_dir


@pytest.mark.timeout(600)
async def test_leaving_out_the_slider_companions_loses_exactly_the_task_they_decide(offline_run):
    ablation = await ablate_run(offline_run, change=SLIDERS)

    (revision,) = ablation.revisions
    assert revision.left_out == ["transform slider_companions"]
    assert revision.changes == [SLIDERS]  # selected because the change log found it applied
    assert (ablation.full_only, ablation.ablated_only) == (1, 0)  # one task lost, none gained
    assert ablation.tasks == revision.tasks and ablation.tasks > 1
    assert ablation.paired_diff == pytest.approx(-1 / ablation.tasks)
    folder = Path(ablation.folder)
    full = {t.task_id: t.passed for t in next(r for r in read_results(offline_run).apps if r.round == 1).tasks}
    ablated = {p.name: json.loads((p / "trajectory.json").read_text())["success"]
               for p in (folder / Path(revision.html).parent / "rollouts" / "heuristic").iterdir()}
    assert [task for task in full if full[task] and not ablated[task]] == ["first-home-scenario"]

    # the ablated version is the full one without the companions: every other transform is still in it
    made = json.loads((folder / Path(revision.html).parent / "revision.json").read_text())
    original = json.loads((offline_run / Path(revision.html).parent / "revision.json").read_text())
    assert [t["name"] for t in made["transforms"]] == [t["name"] for t in original["transforms"]
                                                       if t["name"] != "slider_companions"]
    assert "aui: slider companions" not in (folder / revision.html).read_text()
    assert "aui: slider companions" in (offline_run / revision.html).read_text()
    assert read_ablations(offline_run)[0].change == SLIDERS


async def test_an_ablation_needs_one_principle_or_one_change_and_a_principle_that_applied(offline_run):
    with pytest.raises(ConfigError, match="exactly one of --principle and --change"):
        await ablate_run(offline_run)
    nothing = await ablate_run(offline_run, principle="no such principle")
    assert nothing.tasks == 0 and nothing.paired_diff is None
    assert nothing.skipped and "nothing of no such principle was applied" in nothing.skipped[0]
    with pytest.raises(ValueError, match="'nope-id': no change of this run has that id"):
        await ablate_run(offline_run, change="nope-id")
    assert not (offline_run / "ablations" / "nope-id").exists()


@pytest.mark.parametrize("target, verdict", [("still", "not applied"), (None, "unverifiable")])
async def test_an_ablation_makes_again_only_the_revisions_the_change_log_finds_it_applied_in(tmp_path, target, verdict):
    """The offline coder's no-motion sheet reported changes, but the one task acted on a still button (or on nothing):
    the principle table does not count it as applied, so the ablation does not make that revision again, and says
    why."""
    html, revision = await _offline_revision(NO_MOTION_LINE)
    run = _run(tmp_path / "run", html, revision, [NO_MOTION_LINE], target)
    rows = {row.principle: row.revisions for row in (await insights_of([run])).principles}

    ablation = await ablate_run(run, principle="predictable behaviour")

    assert rows.get("predictable behaviour", 0) == len(ablation.revisions) == 0 and ablation.tasks == 0
    (skipped,) = ablation.skipped
    assert f"predictable behaviour {verdict} by the change log" in skipped and "remove_animations" in skipped
    assert "principle table" in ablation.selection


@pytest.mark.timeout(900)
async def test_the_ablation_flow_caches_its_stages_like_the_sweep(offline_run, prefect_server):
    """As a Prefect flow the ablation's stages are cached: run again, it revises, verifies and rolls out nothing anew
    and finds the same."""
    first = await ablate(str(offline_run), change=SLIDERS)
    again = await ablate(str(offline_run), change=SLIDERS)

    assert first.cache["revise"] == {"ran": 1, "reused": 0} and first.cache["rollout"]["ran"] >= first.tasks
    assert {kind: counts["ran"] for kind, counts in again.cache.items()} == {kind: 0 for kind in first.cache}
    assert again.cache["rollout"]["reused"] == first.cache["rollout"]["ran"]
    assert again.model_dump(exclude={"cache"}) == first.model_dump(exclude={"cache"})
    assert (first.full_only, first.ablated_only) == (1, 0)
