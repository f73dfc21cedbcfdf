"""GUI defects: the catalogue, every implemented type proven on a bundled app, drops with reasons, a deterministic set."""

from __future__ import annotations

import asyncio

import pytest

from apps_prompts import SolutionStep, load_app, reference_html_path
from cua import DEFECT_TYPES, INJECTED_ATTRIBUTE
from perturb import (
    DefectError,
    binds_to,
    defect_transform,
    defect_types,
    draw_params,
    inject_defects,
    make_defect,
    prove_defect,
)

APP = load_app("unit-converter")
HTML = reference_html_path(APP).read_text(encoding="utf-8")

# Where each type is bound in the test: (task, 1-based solution step). The bench sweeps every bundled app.
BINDINGS = {
    "content-error": ("miles-to-km", 1),            # the field's label reads other words
    "data-format-error": ("miles-to-km", 1),
    "element-missing": ("swap-to-feet-metres", 1),
    "elements-overlapping": ("swap-to-feet-metres", 1),
    "misalignment": ("swap-to-feet-metres", 1),
    "uneven-spacing": ("swap-to-feet-metres", 1),
    "inconsistent-colour": ("swap-to-feet-metres", 1),
    "inconsistent-size": ("swap-to-feet-metres", 1),
    "abnormal-state": ("swap-to-feet-metres", 1),
    "no-response": ("swap-to-feet-metres", 1),
    "input-keyboard": ("miles-to-km", 1),
    "navigation-error": ("celsius-to-fahrenheit", 2),  # the Temperature item leads to another category
    "unexpected-result": ("miles-to-km", 2),           # the unit picked is not the one chosen
}


def test_every_type_has_a_binding_here():
    """So the proofs below cover the whole catalogue (that it is the whole taxonomy: tests/test_defect_types.py)."""
    assert set(BINDINGS) == set(defect_types())


def test_a_defect_is_a_seeded_deterministic_transform_bound_to_its_selector():
    first, again = make_defect("misalignment", "#swap", seed=3), make_defect("misalignment", "#swap", seed=3)
    assert defect_transform(first) == defect_transform(again)
    assert defect_transform(first).sha256 != defect_transform(make_defect("misalignment", "#swap", seed=4)).sha256
    transform = defect_transform(first)
    assert transform.name == "defect:misalignment@#swap@seed=3"
    assert f'[{INJECTED_ATTRIBUTE}="defect:misalignment"]' in transform.style
    assert transform.args[0] == {"type": "misalignment", "selector": "#swap", "seed": 3, "params": draw_params("misalignment", 3)}
    assert {draw_params("content-error", seed)["text"] for seed in range(20)} > {draw_params("content-error", 0)["text"]}


def test_a_wrong_type_is_refused_naming_the_known_ones():
    with pytest.raises(DefectError, match=r"unknown defect type 'wobble'; known: content-error, .*unexpected-result"):
        make_defect("wobble", "#swap")


def test_what_each_type_can_be_bound_to():
    fill, click, hover = (SolutionStep(action="fill", selector="#a", value="5"), SolutionStep(action="click", selector="#b"),
                          SolutionStep(action="hover", selector="#c"))
    assert binds_to("input-keyboard", fill) and not binds_to("input-keyboard", click)
    assert binds_to("navigation-error", click) and not binds_to("navigation-error", hover)
    assert binds_to("misalignment", hover) and not binds_to("no-response", hover)
    assert not binds_to("unexpected-result", SolutionStep(action="fill", selector="#a", value="Ada"))  # no digit to change


async def test_every_type_is_injected_into_a_bundled_app_and_proven():
    slots = asyncio.Semaphore(3)

    async def prove(defect_type: str):
        task_id, step = BINDINGS[defect_type]
        task = APP.task(task_id)
        spec = make_defect(defect_type, task.solution[step - 1].selector, seed=0)
        async with slots:
            return defect_type, await prove_defect(HTML, task.checker, task.solution, step, spec, clean_proven=True)

    proofs = dict(await asyncio.gather(*(prove(name) for name in BINDINGS)))
    assert {name: proof.reason for name, proof in proofs.items() if not proof.proven} == {}
    for name, proof in proofs.items():
        if DEFECT_TYPES[name] == "display":  # the region compared, around the bound element
            assert proof.region and proof.region["width"] > 0 and "still passes" in proof.reason
        else:
            assert "checker is not true" in proof.reason or "fails on the defect app at step" in proof.reason


async def test_an_unobservable_or_unfounded_injection_is_dropped_with_the_reason():
    save = APP.task("save-kg-to-lb")
    step = next(n for n, s in enumerate(save.solution, 1) if s.selector == "#save-conv")
    twice = make_defect("unexpected-result", "#save-conv", seed=0)  # the conversion saved twice still "contains" it
    proof = await prove_defect(HTML, save.checker, save.solution, step, twice, clean_proven=True)
    assert proof.status == "dropped" and proof.reason.startswith("not observable")
    swap = APP.task("swap-to-feet-metres")
    proof = await prove_defect(HTML, swap.checker, swap.solution, 1, make_defect("no-response", "#swap"), clean_proven=False)
    assert proof.status == "dropped" and "does not pass on the defect-free app" in proof.reason


async def test_a_defect_set_is_planned_from_its_seeds_and_written_byte_for_byte_the_same(tmp_path):
    small = APP.model_copy(update={"tasks": [APP.task("swap-to-feet-metres"), APP.task("clear-saved")]})
    sets = [await inject_defects([(small, HTML)], ["misalignment", "input-keyboard"], per_app=2, seed=5)
            for _ in range(2)]
    first, second = (s.write(tmp_path / f"run-{n}") for n, s in enumerate(sets))
    assert first.read_bytes() == second.read_bytes()
    records = sets[0].records
    assert [(r.type, r.seed) for r in records] == [("misalignment", 5), ("misalignment", 6), ("input-keyboard", 5),
                                                     ("input-keyboard", 6)]
    misaligned = [r for r in records if r.type == "misalignment"]
    assert {(r.task_id, r.step) for r in misaligned} == {("swap-to-feet-metres", 1), ("clear-saved", 1)}  # distinct
    assert all(r.proven and r.html_sha256 and r.transform_sha256 == r.transform_object().sha256 for r in misaligned)
    keyboard = [r for r in records if r.type == "input-keyboard"]
    assert all(r.status == "dropped" and "binds to fill, press steps" in r.reason for r in keyboard)  # no field here
