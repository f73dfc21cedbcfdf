"""Applied only on evidence: a change's verdict is read from the two versions as loaded in Chromium, never from the
coder's report — applied, not applied, or unverifiable when nothing on the pages can tell.

The app has a spinning button (`#spin`: an infinite CSS animation) and a still one (`#still`). Its round-1 version
comes from the real offline coder (its no-motion sheet selects every element with `*`, which no id or class names),
or is written by hand as a model coder's. One task per run acts on one button (or on nothing), so what the tasks
acted on decides a page-wide change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apps_prompts import AppPrompt, AppSpec, Domain
from coder import Feedback, RevisionRequest, get_coder
from insights import insights_of, motion_seconds, style_changed
from results import AppRoundResult, TaskOutcome, write_results

V0 = ("<!doctype html><html><head><meta charset='utf-8'><style>#spin{animation: spin 2s linear infinite} "
      "@keyframes spin{to{transform: rotate(1turn)}}</style></head><body><button id=spin>Spin</button>"
      "<button id=still>Still</button><p id=note>Ready</p></body></html>")
APP = AppSpec(id="demo", title="Demo", domain=Domain.utility,
              prompt=AppPrompt(name="Demo", goal="Press buttons.", features=["Spin"], theme="Plain"))
TRACK = Path("offline/heuristic/integrated/dashboard")
NO_MOTION_LINE = "Stop the spinning animation so the page holds still — predictable behaviour."
MODEL_CODER = {"offline": False, "changed": True, "coder": "gpt-5", "contract": {"status": "kept"}, "transforms": []}


def _version(run: Path, folder: Path, html: str, round_: int, target: str | None) -> AppRoundResult:
    (run / folder).mkdir(parents=True, exist_ok=True)
    (run / folder / "index.html").write_text(html, encoding="utf-8")
    trajectory = folder / "rollouts" / "heuristic" / "press"
    (run / trajectory).mkdir(parents=True)
    steps = [{"target": {"tag": "button", "id": target, "selector": f"#{target}"}}] if target else []
    (run / trajectory / "trajectory.json").write_text(json.dumps({"steps": steps}), encoding="utf-8")
    task = TaskOutcome(task_id="press", solvable=True, checker_valid=True, success=bool(round_),
                       trajectory=str(trajectory))
    return AppRoundResult(app_id="demo", domain="utility", coder="offline", cua="heuristic", mode="integrated",
                          commenter_mode="dashboard", round=round_, html=str(folder / "index.html"), html_sha="-",
                          tasks=[task], revised_from=0 if round_ else None)


def _run(run: Path, html: str, revision: dict, lines: list[str], target: str | None) -> Path:
    """A finished run of one revision (0 → 1) whose one task acted on `target` (None: on nothing)."""
    before = _version(run, Path("apps/demo/offline/round-0"), V0, 0, target)
    after = _version(run, Path("apps/demo") / TRACK / "round-1", html, 1, target)
    (run / "apps/demo" / TRACK / "round-1" / "revision.json").write_text(json.dumps(revision), encoding="utf-8")
    (run / "apps/demo" / TRACK / "feedback-round-0.json").write_text(json.dumps({"actionable_changes": lines}))
    (run / "manifest.json").write_text(json.dumps({"offline": True, "config": {"viewport": {"width": 800,
                                                                                          "height": 600}}}))
    write_results(run, [before, after], offline_roles=["coder", "cua"])
    return run


async def _offline_revision(line: str, html: str = V0) -> tuple[str, dict]:
    """The real offline coder's revision of `html` for one feedback line: its HTML and its record (revision.json)."""
    result = await get_coder("offline").revise(RevisionRequest(
        mode="integrated", app=APP, html=html, feedback=[Feedback(actionable_changes=[line])], style_block=False))
    return result.html, result.model_dump(mode="json", exclude={"html"})


@pytest.mark.parametrize("target, status, changed", [
    ("spin", "applied", ["#spin"]),   # the spinning button stops: the sheet acted where the task did
    ("still", "not applied", []),     # the sheet also applies to `#still`, but a still button cannot move less
    (None, "unverifiable", []),       # no task acted on anything: the page cannot tell
])
async def test_the_no_motion_sheet_is_applied_on_an_animated_element_and_not_on_a_still_one(tmp_path, target, status,
                                                                                            changed):
    html, revision = await _offline_revision(NO_MOTION_LINE)
    (made,) = [t for t in revision["transforms"] if t["name"] == "remove_animations"]
    assert made["changes"] > 0 and "*, *::before" in html  # the coder reports it, whatever the tasks did

    found = await insights_of([_run(tmp_path / "run", html, revision, [NO_MOTION_LINE], target)])

    change = next(c for c in found.changes if c.transform == "remove_animations")
    assert (change.status, change.changed_elements) == (status, changed), change.how
    rows = {row.principle: row for row in found.principles}
    if status == "not applied":
        assert "predictable behaviour" not in rows
    else:
        row = rows["predictable behaviour"]
        assert (row.applied, row.unverifiable, row.revisions) == ((1, 0, 1) if status == "applied" else (0, 1, 0))
    # The line asked for it too (not counted: the offline coder's transforms are); it names no element, so it is
    # page-wide and decided the same way.
    asked = next(c for c in found.changes if c.kind == "asked")
    assert asked.status == status and not asked.counted


async def test_a_transform_that_reports_changes_but_changes_nothing_is_not_applied(tmp_path):
    claims = {"offline": True, "changed": True, "contract": {"status": "kept"}, "transforms": [
        {"name": "remove_animations", "principle": "predictable behaviour", "changes": 3, "triggered_by": [],
         "details": ["neutralised 3 animation/transition declarations"]},
        {"name": "enlarge_targets", "principle": "interaction robustness", "changes": 2,
         "triggered_by": ["fact small_target at #still"], "details": ["44 px minimum on 2 controls"]}]}
    same = await insights_of([_run(tmp_path / "same", V0, claims, [], "spin")])
    assert {c.transform: c.status for c in same.changes} == {"remove_animations": "not applied",
                                                             "enlarge_targets": "not applied"}
    assert same.principles == [] and "the two versions are the same as loaded" in same.changes[0].how

    # Something else changed (a label): `#still`, which enlarge_targets names, did not; the sheet-less no-motion claim
    # names nothing, and with no sheet of its own on the page nothing can tell.
    relabelled = V0.replace(">Ready<", ">Set<")
    other = await insights_of([_run(tmp_path / "other", relabelled, claims, [], "spin")])
    verdicts = {c.transform: c for c in other.changes}
    assert verdicts["enlarge_targets"].status == "not applied"
    assert verdicts["enlarge_targets"].how.endswith("DOM diff: 0 of 1 named element(s) changed")
    assert verdicts["remove_animations"].status == "unverifiable"
    (row,) = other.principles
    assert (row.principle, row.applied, row.unverifiable, row.revisions) == ("predictable behaviour", 0, 1, 0)


async def test_a_transform_that_only_adds_a_run_time_script_is_unverifiable_even_when_what_it_names_changed(tmp_path):
    """The typed-value commit is a script acting when a field is left: nothing of it shows in the DOM or the computed
    style, so the elements its trigger names changing (here `#qty`, restyled by hand) says nothing about it."""
    app = V0.replace("<p id=note>Ready</p>", "<input id=qty><p id=note>Ready</p><script>document.getElementById('qty')"
                     ".addEventListener('keydown', e => { if (e.key === 'Enter') note.textContent = qty.value; });</script>")
    line = "Typing in `#qty` takes effect only on Enter — input permissiveness."
    html, revision = await _offline_revision(line, app)
    assert [t["name"] for t in revision["transforms"] if t["changes"]] == ["commit_typed_values"]
    html = html.replace("#spin{", "#qty{width:90px} #spin{")  # `#qty` changes too, by someone else's hand

    found = await insights_of([_run(tmp_path / "run", html, revision, [line], "qty")])

    made = next(c for c in found.changes if c.transform == "commit_typed_values")
    assert made.status == "unverifiable" and "run time" in made.how
    assert next(c for c in found.changes if c.kind == "asked").applied  # the line's `#qty` did change: DOM diff
    (row,) = found.principles
    assert (row.principle, row.applied, row.unverifiable, row.revisions) == ("input permissiveness", 0, 1, 0)


@pytest.mark.parametrize("html, target, status", [
    (V0.replace(">Ready<", ">Set<"), "spin", "not applied"),                             # `#spin` still spins
    (V0.replace("</style>", "</style><style>*{animation:none}</style>"), "spin", "not applied"),  # `#spin{…}` wins
    (V0.replace("</style>", "</style><style>*{animation:none!important}</style>"), "spin", "applied"),  # it stops
    (V0.replace(">Ready<", ">Set<"), None, "unverifiable"),                              # nothing to look at
])
async def test_a_model_coders_page_wide_claim_is_decided_on_the_elements_the_tasks_acted_on(tmp_path, html, target,
                                                                                           status):
    line = "Remove all animations and transitions — predictable behaviour."
    found = await insights_of([_run(tmp_path / "run", html, MODEL_CODER, [line], target)])

    (asked,) = [c for c in found.changes if c.kind == "asked"]
    assert asked.elements == [] and asked.counted
    assert asked.status == status, asked.how
    rows = {row.principle: (row.applied, row.unverifiable) for row in found.principles}
    assert rows.get("predictable behaviour") == {"applied": (1, 0), "unverifiable": (0, 1)}.get(status)


def test_motion_is_less_only_when_an_element_moves_for_less_time():
    spinning = {"animation-name": "spin", "animation-duration": "2s", "animation-iteration-count": "infinite",
                "animation-delay": "0s", "transition-property": "all", "transition-duration": "0s"}
    stopped = {**spinning, "animation-duration": "1e-06s", "animation-iteration-count": "1"}  # the no-motion sheet
    still = {"animation-name": "none", "animation-duration": "0s", "transition-property": "all",
             "transition-duration": "0s"}
    fading = {**still, "transition-property": "opacity, color", "transition-duration": "0.3s, 150ms"}
    assert motion_seconds(spinning) == float("inf") and motion_seconds(stopped) == 0.0
    assert motion_seconds(fading) == pytest.approx(0.3)
    assert motion_seconds({**still, "animation-duration": "1e-06s"}) == 0.0  # the sheet on a still element
    motion = [(("animation-duration", "transition-duration"), "less")]
    assert style_changed(spinning, stopped, motion) and style_changed(fading, still, motion)
    assert not style_changed(still, {**still, "transition-duration": "1e-06s"}, motion)
    assert not style_changed(still, fading, motion)  # more motion is not what removing animations does
    sizes = [(("min-height",), "more")]
    assert style_changed({"min-height": "0px"}, {"min-height": "44px"}, sizes)
    assert not style_changed({"min-height": "44px"}, {"min-height": "20px"}, sizes)
    assert style_changed({"scroll-behavior": "smooth"}, {"scroll-behavior": "auto"}, [(("scroll-behavior",), "less")])


def test_a_revisions_verdict_on_a_principle_prefers_applied_then_unverifiable_then_not_applied():
    """One applied change applies the principle; else a change nothing could tell leaves it unverifiable (the
    ablation's skip reason says so); only changes all seen not to happen make it not applied."""
    from insights import principle_status
    from insights._changes import Revision
    from results import Change

    def change(number: int, status: str) -> Change:
        return Change(id=f"a/t/r1/made-{number}", app_id="a", track="t", round=1, revised_from=0, kind="made",
                      text="x", principle="input permissiveness", status=status, how="-", counted=True)

    def verdict(*statuses: str) -> str | None:
        revision = Revision(result=None, before=None, old=None, new=None,
                            changes=[change(n, status) for n, status in enumerate(statuses)])
        return principle_status(revision, "input permissiveness")

    assert verdict("not applied", "unverifiable") == "unverifiable"
    assert verdict("unverifiable", "not applied", "applied") == "applied"
    assert verdict("not applied", "not applied") == "not applied"
    assert verdict() is None
