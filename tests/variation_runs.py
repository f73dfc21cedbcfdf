"""A hand-made run with variations, for the tests of how a run's variations are shown (no loop is run).

`variation_results()` fabricates two apps × rounds 0–1 of one track, each version rolled out twice
(`repeats: 2`) on its default look and on `dark`, `adversarial` and `popup`. Its figures are chosen
so each view can be checked by hand:

- alpha (domain app) has three tasks; `adversarial` excludes t3 (its proof broke it), so the
  common tasks of alpha are t1 and t2. Round 0: default passes t1 and t2; dark passes t1; adversarial
  passes t2 (t1 clicked a decoy: failure mode `decoy`); popup passes nothing (every rollout
  `max_steps`).
- beta (domain tool) has u1, u2 and u3, u3 without a valid checker (so not counted); `popup` could
  not be made for beta (an error, nothing rolled out). Round 0: default and dark pass u1, adversarial
  passes u1 and u2.
- round 1 is round 0 with every variation passing everything it kept (the revision "worked").

`variation_run(folder)` writes that run as the flows write one (results.json through
`flows.write_results`, a manifest, and for repeat 0 a trajectory folder per rollout with small PNGs),
so the report and the viewer can be pointed at it. alpha/t1 on adversarial clicks an injected decoy
at step 1 (its `ElementInfo.injected` is "decoy").
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image, ImageDraw

from cua import Action, Box, ElementInfo, Point, Step, TerminationReason, Trajectory
from results import AppRoundResult, RepeatOutcomes, TaskOutcome, VariationResult, write_results

TRACK = {"coder": "offline", "cua": "heuristic", "mode": "integrated", "commenter_mode": "dashboard"}
VARIATIONS = ["dark", "adversarial", "popup"]
COLOURS = {"default": (250, 250, 250), "dark": (30, 30, 36), "adversarial": (255, 236, 200), "popup": (120, 120, 120)}
EXCLUDED_REASON = "t3's reference solution failed on the variant: click #go: an injected banner covers it"
POPUP_ERROR = "transform 'popup@seed=0': the pop-up could not be placed (the app has no body)"

# (app, round) → variation → task → passed (repeat 0 and 1 alike); a task absent from a variation was not kept.
PASSES = {
    "alpha": {"default": {"t1": True, "t2": True, "t3": False}, "dark": {"t1": True, "t2": False, "t3": False},
              "adversarial": {"t1": False, "t2": True}, "popup": {"t1": False, "t2": False, "t3": False}},
    "beta": {"default": {"u1": True, "u2": False}, "dark": {"u1": True, "u2": False},
             "adversarial": {"u1": True, "u2": True}},
}
DOMAINS = {"alpha": "app", "beta": "tool"}


def _folder(app_id: str, round_: int, variation: str, repeat: int = 0) -> Path:
    folder = Path("apps", app_id, "offline", f"round-{round_}", "rollouts", "heuristic")
    if variation != "default":
        folder = folder / "variations" / variation
    return folder / f"repeat-{repeat}" if repeat else folder


def _outcome(app_id: str, round_: int, variation: str, task_id: str, passed: bool, repeat: int) -> TaskOutcome:
    modes = [] if passed else (["decoy"] if (app_id, variation, task_id) == ("alpha", "adversarial", "t1")
                               else ["max_steps"] if variation == "popup" else ["action_loop"])
    return TaskOutcome(task_id=task_id, solvable=True, checker_valid=True, proof="proven", success=passed,
                       termination="success" if passed else ("max_steps" if "max_steps" in modes else "stuck"),
                       steps=2, failure_modes=modes,
                       trajectory=(_folder(app_id, round_, variation, repeat) / task_id).as_posix())


def variation_results() -> list[AppRoundResult]:
    results = []
    for app_id, looks in PASSES.items():
        for round_ in (0, 1):
            def outcomes(variation: str, repeat: int) -> list[TaskOutcome]:
                return [_outcome(app_id, round_, variation, task, passed or round_ == 1, repeat)
                        for task, passed in looks[variation].items()]

            default = outcomes("default", 0)
            if app_id == "beta":  # u3: no valid checker (left out of every variation figure)
                default.append(TaskOutcome(task_id="u3", solvable=False, checker_valid=False, proof="unsupported",
                                           reason="no checker could be proven"))
            varied = []
            for variation in VARIATIONS:
                if variation not in looks:
                    varied.append(VariationResult(variation=variation, transform=f"{variation}@seed=0", error=POPUP_ERROR))
                    continue
                kept = list(looks[variation])
                excluded = {"t3": EXCLUDED_REASON} if (app_id, variation) == ("alpha", "adversarial") else {}
                varied.append(VariationResult(
                    variation=variation, transform=variation if variation == "dark" else f"{variation}@seed=0",
                    kept=kept, excluded=excluded, tasks=outcomes(variation, 0),
                    repeats=[RepeatOutcomes(repeat=1, tasks=outcomes(variation, 1))],
                    screenshot=(_folder(app_id, round_, variation) / kept[0] / "step_000.png").as_posix()))
            results.append(AppRoundResult(
                app_id=app_id, domain=DOMAINS[app_id], round=round_, **TRACK,
                html=f"apps/{app_id}/offline/round-{round_}/index.html", html_sha="0" * 64,
                screenshot=(_folder(app_id, round_, "default") / next(iter(looks["default"])) / "step_000.png").as_posix(),
                tasks=default, repeats=[RepeatOutcomes(repeat=1, tasks=outcomes("default", 1) + default[len(looks["default"]):])],
                variations=varied, offline_roles=["coder", "verifier", "proposer", "commenter", "cua (heuristic)"]))
    return results


def _picture(path: Path, variation: str, label: str) -> None:
    image = Image.new("RGB", (320, 180), COLOURS[variation])
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 60, 140, 100), fill=(37, 99, 235))
    draw.text((26, 72), label, fill=(255, 255, 255))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def _trajectory(app_id: str, round_: int, variation: str, outcome: TaskOutcome, transform: str | None) -> Trajectory:
    decoy = "decoy" in outcome.failure_modes
    steps = [Step(index=index, screenshot=f"step_{index:03d}.png",
                  screen_action=Action(kind="click", point=Point(x=80, y=80)),
                  target=ElementInfo(tag="button", id=None if decoy and index == 1 else "go",
                                     text="Click here to finish the task" if decoy and index == 1 else "Go",
                                     box=Box(x=20, y=60, width=120, height=40),
                                     injected="decoy" if decoy and index == 1 else None))
             for index in (1, 2)]
    return Trajectory(app_id=app_id, task_id=outcome.task_id, task=f"Do {outcome.task_id}.", policy="heuristic",
                      offline=True, initial_screenshot="step_000.png", steps=steps, viewport_width=320,
                      viewport_height=180, transform=transform,
                      termination=TerminationReason(outcome.termination), success=outcome.success, max_steps=2)


def variation_run(folder: Path, name: str = "variation-run") -> Path:
    """The fabricated results written as a finished run folder (repeat 0's trajectories on disk)."""
    run_dir = Path(folder) / name
    results = variation_results()
    for result in results:
        (run_dir / result.html).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / result.html).write_text(f"<!doctype html><title>{result.app_id}</title>")
        looks = [("default", None, result.tasks)] + [(v.variation, v.transform, v.tasks) for v in result.variations]
        for variation, transform, outcomes in looks:
            for outcome in outcomes:
                if not outcome.trajectory:
                    continue
                trajectory = _trajectory(result.app_id, result.round, variation, outcome, transform)
                trajectory.save(run_dir / outcome.trajectory)
                for index in range(3):
                    _picture(run_dir / outcome.trajectory / f"step_{index:03d}.png", variation,
                             f"{variation} {index}")
    write_results(run_dir, results, usage={}, offline_roles=results[0].offline_roles)
    (run_dir / "manifest.json").write_text(json.dumps({"offline": True, "config": {
        "name": name, "rounds": 1, "repeats": 2, "variations": ["default", *VARIATIONS]}}))
    return run_dir
