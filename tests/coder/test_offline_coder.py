"""The offline coder without a browser: v0 sources, planning from feedback, contract, idempotence."""


import pytest

from apps_prompts import load_apps, reference_html_path
from coder import (
    TRANSFORMS,
    CoderError,
    Feedback,
    MeasuredFact,
    Regression,
    RevisionRequest,
    UnsupportedTask,
    get_coder,
    plan_transforms,
)
from coder._contract import missing_items
from coder._css_transforms import fit_viewport
from coder._document import AppDocument
from cua import Viewport

from .conftest import page

BUNDLED = load_apps().raise_for_errors()


def request(app, html, **fields) -> RevisionRequest:
    # Without the style block unless a test asks for it: the integrated mode's default (on) would
    # select every transform and hide what the planning from feedback selects.
    return RevisionRequest(app=app, html=html, **{"mode": "integrated", "style_block": False, **fields})


async def test_v0_is_the_reference_html_and_labelled_offline():
    app = next(a for a in BUNDLED if reference_html_path(a))
    result = await get_coder("offline").generate(app)
    assert result.html == reference_html_path(app).read_text(encoding="utf-8")
    assert result.offline and result.coder == "offline" and result.source.startswith("reference:")


async def test_v0_comes_from_the_v0_dir_when_given(tmp_path, counter_app, counter_html):
    (tmp_path / "counter").mkdir()
    (tmp_path / "counter" / "index.html").write_text(counter_html)
    result = await get_coder("offline", v0_dir=tmp_path).generate(counter_app)
    assert result.html == counter_html and result.source == f"v0-dir:{tmp_path / 'counter' / 'index.html'}"


async def test_an_app_missing_from_the_v0_dir_is_an_error_naming_the_dir_and_id(tmp_path, counter_app):
    (tmp_path / "other-app").mkdir()
    (tmp_path / "other-app" / "index.html").write_text("<html></html>")
    with pytest.raises(CoderError) as caught:
        await get_coder("offline", v0_dir=tmp_path).generate(counter_app)
    message = str(caught.value)
    assert "'counter'" in message and str(tmp_path) in message and "other-app" in message


async def test_an_app_without_reference_html_and_no_v0_dir_is_a_clear_error(counter_app):
    with pytest.raises(CoderError, match="no reference HTML.*--v0-dir"):
        await get_coder("offline").generate(counter_app)


async def test_without_feedback_the_offline_revision_changes_nothing(counter_app, counter_html):
    result = await get_coder("offline").revise(request(counter_app, counter_html, style_block=False))
    assert result.html == counter_html and not result.changed and result.transforms == []


def test_feedback_lines_map_to_transforms_by_keyword_and_principle(counter_app, counter_html):
    feedback = Feedback(actionable_changes=[
        "Show the #presets-menu items without hover (state visibility)",
        "Add a number input beside the #tempo slider (input permissiveness)",
        "Give #save a stable id and a text label (interaction robustness)",
        "Keep the user informed in #panel (predictable behaviour)",
    ])
    plan = plan_transforms(request(counter_app, counter_html, feedback=[feedback]))
    assert set(plan) == {"reveal_hover", "persistent_status", "slider_companions", "commit_typed_values", "add_ids",
                         "remove_animations"}
    assert plan["slider_companions"] == ["Add a number input beside the #tempo slider (input permissiveness)"]
    assert plan["remove_animations"] == ["Keep the user informed in #panel (predictable behaviour)"]


def test_measured_facts_and_fit_within_screen_map_to_transforms(counter_app, counter_html):
    feedback = Feedback(fit_within_screen=True, facts=[MeasuredFact(kind="small_target", selector="#inc"),
                                                       MeasuredFact(kind="low_contrast", selector="p")])
    assert set(plan_transforms(request(counter_app, counter_html, feedback=[feedback]))) == {
        "fit_viewport", "enlarge_targets", "raise_contrast"}


def test_a_line_naming_the_runs_viewport_calls_for_fitting_the_app_to_it(counter_app, counter_html):
    line = Feedback(actionable_changes=["Keep #inc within 1024 px"])
    assert "fit_viewport" in plan_transforms(request(counter_app, counter_html, feedback=[line],
                                                     viewport=Viewport.parse("1024x768")))
    assert "fit_viewport" not in plan_transforms(request(counter_app, counter_html, feedback=[line]))


def test_fitting_the_app_shortens_boxes_tall_for_the_runs_viewport():
    html = page("<div class='panel'>x</div>", style=".panel { height: 340px; }")
    at_default, at_768 = AppDocument(html), AppDocument(html)
    assert fit_viewport(at_default).changes == 1  # 340 px is more than 4/9 of 720
    assert "height: 204px" in str(at_default)
    assert fit_viewport(at_768, Viewport.parse("1024x768")).changes == 0  # and less than 4/9 of 768
    assert "height: 340px" in str(at_768)


def test_the_offline_commenters_fact_object_is_flattened_into_facts():
    feedback = Feedback.model_validate({
        "app_id": "x", "issues": [], "actionable_changes": [], "sources": [], "offline": True,
        "facts": [{"small_targets": [{"selector": "#inc", "detail": "16×16 px"}], "live_regions": [{"selector": "#s"}],
                   "slider_only_inputs": [{"selector": "#tempo"}], "no_effect_steps": [{"step": 2, "action": "click"}]}],
    })
    assert [(f.kind, f.selector) for f in feedback.facts] == [
        ("small_target", "#inc"), ("slider_only", "#tempo"), ("no_effect", None)]


def test_a_line_naming_a_slider_or_an_icon_button_selects_its_fix_whatever_its_words(counter_app):
    html = page("<input type='range' id='dial'><button id='try'><svg></svg></button>")
    feedback = Feedback(actionable_changes=["Make `#dial` respond visibly when used", "Check #try works"])
    assert set(plan_transforms(request(counter_app, html, feedback=[feedback]))) == {"slider_companions", "add_ids"}


def test_mode_decides_which_inputs_count(counter_app, counter_html):
    inputs = dict(feedback=[Feedback(actionable_changes=["Remove the animation on #count (predictable behaviour)"])],
                  unsupported=[UnsupportedTask(task_id="t", description="d", reason="the slider has no number input")])
    assert set(plan_transforms(request(counter_app, counter_html, mode="cua", **inputs))) == {"remove_animations"}
    assert set(plan_transforms(request(counter_app, counter_html, mode="unsupported", **inputs))) == {"slider_companions"}


@pytest.mark.parametrize("app", BUNDLED, ids=lambda a: a.id)
async def test_full_revision_of_each_bundled_app_keeps_checker_ids_and_named_functions(app):
    html = reference_html_path(app).read_text(encoding="utf-8")
    checkers = [t.checker for t in app.tasks if t.checker]
    result = await get_coder("offline").revise(request(app, html, style_block=True, checkers=checkers))
    assert result.changed and result.contract.status == "kept"
    assert missing_items(result.contract, html, result.html) == ([], [])
    # Every id of the original markup survives, not only the checkers' ones.
    from coder._contract import element_ids

    assert element_ids(html) <= element_ids(result.html)


async def test_a_second_revision_does_not_inject_the_same_helpers_twice(counter_app):
    html = page("<input type='range' id='r'><div id='toast'></div>", style="p { transition: color .3s; }")
    coder = get_coder("offline")
    once = (await coder.revise(request(counter_app, html, style_block=True))).html
    twice = await coder.revise(request(counter_app, once, style_block=True))
    assert twice.html.count('data-aui="slider_companions"') == 2  # one <style>, one <script>
    assert twice.html.count('data-aui="persistent_status"') == 2
    assert twice.html.count('data-aui="remove_animations"') == 1


async def test_a_revised_file_declares_utf_8_so_it_reads_the_same_from_disk(counter_app):
    html = "<!DOCTYPE html><html><head><title>t</title></head><body><button>Go&nbsp;now</button></body></html>"
    result = await get_coder("offline").revise(request(counter_app, html, style_block=True))
    assert '<meta charset="utf-8"/>' in result.html and "Go\u00a0now" in result.html


def test_the_modes_default_style_block_selects_every_transform_only_when_there_is_something_to_fix(counter_app, counter_html):
    feedback = [Feedback(actionable_changes=["Remove the animation on #count (predictable behaviour)"])]
    everything = {t.name for t in TRANSFORMS}
    assert set(plan_transforms(request(counter_app, counter_html, mode="cua", style_block=None, feedback=feedback))) == everything
    assert plan_transforms(request(counter_app, counter_html, mode="cua", style_block=None)) == {}
    unsupported = [UnsupportedTask(task_id="t", description="d", reason="the slider has no number input")]
    assert set(plan_transforms(request(counter_app, counter_html, mode="unsupported", style_block=None,
                                       unsupported=unsupported))) == {"slider_companions"}
    # an explicit choice wins either way
    assert set(plan_transforms(request(counter_app, counter_html, mode="cua", style_block=False, feedback=feedback))) == {
        "remove_animations"}
    assert set(plan_transforms(request(counter_app, counter_html, mode="unsupported", style_block=True))) == everything


async def test_the_offline_revision_records_the_resolved_style_block_and_the_regressions(counter_app, counter_html):
    result = await get_coder("offline").revise(request(
        counter_app, counter_html, mode="cua", style_block=None,
        regressions=[Regression(task_id="count-to-three", description="Count to three.")]))
    assert result.style_block and result.regression_task_ids == ["count-to-three"]
