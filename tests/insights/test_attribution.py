"""Attribution on a fixture run whose flips and changes are known: the counts below are worked out by hand.

Version 0 → 1 of one app, by an offline revision with three transforms:
- enlarge_targets (interaction robustness) restyles `#a`;
- persistent_status (state visibility) puts a status log beside `#d`;
- slider_companions (input permissiveness) reports no change and names `#c` (not applied).
Six tasks: t1 fails → passes acting on `#a`; t2 passes → fails, its checker reads `#d`; t3 passes twice on `#a`;
t4 fails twice on `#c`; t5 fails → passes on `#b`, which nothing changed (an unattributed flip); t6 has no valid
checker on version 0 (left out).
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from insights import insights_of, principle_table
from results import AppRoundResult, TaskOutcome, paired_difference_interval, rounded, write_results

V0 = ("<!doctype html><html><head><style>#a{width:10px}</style></head><body><button id=a>A</button>"
      "<button id=b>B</button><input id=c type=range><div><p id=d>x</p></div></body></html>")
V1 = V0.replace("#a{width:10px}", "#a{width:44px}").replace("<p id=d>x</p>", "<p id=d>x</p><div id=aui-status-log></div>")
TRACK = Path("offline/heuristic/integrated/dashboard")
CHECKS = {"t1": "#a", "t2": "#d", "t3": "#a", "t4": "#c", "t5": "#b", "t6": "#b"}
PASSED = {"t1": (False, True), "t2": (True, False), "t3": (True, True), "t4": (False, False), "t5": (False, True),
          "t6": (False, True)}
TARGETS = {"t1": "a", "t3": "a", "t4": "c", "t5": "b"}


def _write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def _version(run: Path, folder: Path, html: str, round_: int) -> AppRoundResult:
    _write(run / folder / "index.html", html)
    verdicts = [{"task_id": task, "model": "offline", "solvable": not (task == "t6" and round_ == 0),
                 "checker": None if task == "t6" and round_ == 0 else
                 f"return document.querySelector('{selector}') !== null;"} for task, selector in CHECKS.items()]
    _write(run / folder / "verdicts.json", {"app_id": "demo", "domain": "tools", "html_sha256": "-", "verifier": "offline",
                                            "offline": True, "verdicts": verdicts})
    tasks = []
    for task in CHECKS:
        trajectory = folder / "rollouts" / "heuristic" / task
        steps = [{"target": {"id": TARGETS[task], "selector": f"#{TARGETS[task]}"}}] if task in TARGETS else []
        _write(run / trajectory / "trajectory.json", {"steps": steps})
        valid = not (task == "t6" and round_ == 0)
        tasks.append(TaskOutcome(task_id=task, solvable=valid, checker_valid=valid, success=PASSED[task][round_],
                                 trajectory=str(trajectory)))
    return AppRoundResult(app_id="demo", domain="tools", coder="offline", cua="heuristic", mode="integrated",
                          commenter_mode="dashboard", round=round_, html=str(folder / "index.html"), html_sha="-",
                          tasks=tasks, revised_from=0 if round_ else None)


def _fixture_run(run: Path) -> Path:
    before = _version(run, Path("apps/demo/offline/round-0"), V0, 0)
    after = _version(run, Path("apps/demo") / TRACK / "round-1", V1, 1)
    transforms = [
        {"name": "enlarge_targets", "principle": "interaction robustness", "changes": 1,
         "triggered_by": ["fact small_target at #a"], "details": ["44 px minimum on 1 control"]},
        {"name": "persistent_status", "principle": "state visibility", "changes": 1,
         "triggered_by": ["fact transient_status at #d"], "details": ["messages are logged in #aui-status-log"]},
        {"name": "slider_companions", "principle": "input permissiveness", "changes": 0,
         "triggered_by": ["fact slider_only at #c"], "details": []},
    ]
    _write(run / "apps/demo" / TRACK / "round-1/revision.json",
           {"offline": True, "changed": True, "contract": {"status": "kept"}, "transforms": transforms})
    _write(run / "apps/demo" / TRACK / "feedback-round-0.json",
           {"actionable_changes": ["Enlarge `#a` to at least 24×24 px — interaction robustness.",
                                   "Add a number input beside `#c` — input permissiveness."]})
    _write(run / "manifest.json", {"offline": True, "config": {"viewport": {"width": 800, "height": 600}}})
    write_results(run, [before, after], offline_roles=["coder", "cua"])
    return run


async def test_flips_are_linked_to_the_changes_that_touched_them_and_each_principle_is_counted_by_hand(tmp_path):
    insights = await insights_of([_fixture_run(tmp_path / "run")])

    assert (insights.pairs, insights.left_out) == (5, 1)  # t6 has no valid checker on version 0
    flips = {flip.task_id: flip for flip in insights.flips}
    assert set(flips) == {"t1", "t2", "t5"}
    assert flips["t1"].direction == "gained" and flips["t1"].principles == ["interaction robustness"]
    assert flips["t2"].direction == "lost" and flips["t2"].principles == ["state visibility"]
    assert flips["t5"].changes == [] and flips["t5"].crops == []  # `#b` was not changed by anything
    # the element each flip is linked through, as it looked on both versions: `#a` grew from 10 to 44 px
    (crop,) = flips["t1"].crops
    assert crop.element == "#a"
    with Image.open(tmp_path / "run" / crop.before) as before, Image.open(tmp_path / "run" / crop.after) as after:
        assert before.width < after.width
    assert (insights.flips_total, insights.flips_attributed) == (3, 2)
    assert abs(insights.flips_attributed_ratio - 2 / 3) < 1e-6

    rows = {row.principle: row for row in insights.principles}
    assert set(rows) == {"interaction robustness", "state visibility"}  # slider_companions changed nothing
    robust, visible = rows["interaction robustness"], rows["state visibility"]
    # interaction robustness touched t1 (0 → 1) and t3 (1 → 1): both 1, gained 1, lost 0, neither 0
    assert (robust.applied, robust.apps, robust.tasks, robust.gained, robust.lost) == (1, 1, 2, 1, 0)
    assert robust.net == 0.5 and robust.net_ci95 == rounded(paired_difference_interval(1, 1, 0, 0))
    assert robust.mcnemar_p == 1.0  # one discordant pair: 2 · P(X ≤ 0), X ~ Bin(1, ½) = 1
    # state visibility touched t2 alone (1 → 0)
    assert (visible.tasks, visible.gained, visible.lost, visible.net) == (1, 0, 1, -1.0)

    changes = {change.id.rsplit("/", 1)[1]: change for change in insights.changes}
    assert changes["made-enlarge_targets"].applied and changes["made-enlarge_targets"].changed_elements == ["#a"]
    assert not changes["made-slider_companions"].applied
    asked = changes["asked-1"]  # what the commenter asked: applied (the DOM says so), not counted twice
    assert asked.kind == "asked" and asked.applied and not asked.counted
    assert not changes["asked-2"].applied  # `#c` is untouched
    # applied, unverifiable, revisions, apps, tasks touched, gained, lost, net
    assert "| interaction robustness | 1 | 0 | 1 | 1 | 2 | 1 | 0 | 50.0 |" in principle_table(insights)


async def test_a_model_coders_revision_is_logged_by_what_it_was_asked_and_what_else_changed(tmp_path):
    """A model coder names no transforms: what it was asked is checked on the DOM, and what it changed unasked is
    logged too (no principle) — here it was asked to enlarge `#a` and relabelled `#b` instead."""
    run = _fixture_run(tmp_path / "run")
    after = run / "apps/demo" / TRACK / "round-1"
    (after / "index.html").write_text(V0.replace("<button id=b>B</button>", "<button id=b>Go</button>"))
    (after / "revision.json").write_text(json.dumps({"offline": False, "changed": True, "coder": "gpt-5",
                                                     "contract": {"status": "kept"}, "transforms": []}))
    insights = await insights_of([run])

    changes = {change.id.rsplit("/", 1)[1]: change for change in insights.changes}
    assert set(changes) == {"asked-1", "asked-2", "made-b"}
    assert not changes["asked-1"].applied and changes["asked-1"].counted  # asked, not done: the DOM says so
    assert changes["made-b"].applied and changes["made-b"].principle is None and changes["made-b"].kind == "made"
    flips = {flip.task_id: flip for flip in insights.flips}
    assert flips["t5"].principles == ["(no principle named)"]  # t5 acted on `#b`, which only the unasked change touched
    assert flips["t1"].changes == []  # `#a` was not enlarged after all
