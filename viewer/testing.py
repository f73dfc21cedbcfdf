"""A synthetic run folder of any size, for the viewer's benchmark and tests of its speed.

`synthetic_run(folder, apps=12, rounds=3, tasks=8, steps=20)` writes a finished run as the flows
write one (`results.json` through `flows.write_results`, a manifest, one trajectory folder per task
and round with a `trajectory.json` and real 1280×720 PNGs). The screenshots are painted once and
hard-linked into every trajectory, so a run of 288 trajectories × 21 screenshots takes seconds.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from PIL import Image, ImageDraw

from cua import DEFAULT_VIEWPORT, Action, Box, ElementInfo, Point, Step, TerminationReason, Trajectory
from results import AppRoundResult, TaskOutcome, write_results

DOMAINS = ["app", "landing", "game", "interactive", "tool", "utility"]


def _screen(index: int) -> Image.Image:
    width, height = DEFAULT_VIEWPORT.width, DEFAULT_VIEWPORT.height
    image = Image.new("RGB", (width, height), (248, 250, 252))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, 56), fill=(37, 99, 235))
    draw.text((20, 18), f"Synthetic app - state {index}", fill=(255, 255, 255))
    for row in range(6):
        for column in range(8):
            x, y = 40 + column * 155, 90 + row * 100
            shade = 200 + (index * 7 + row * 13 + column * 5) % 50
            draw.rounded_rectangle((x, y, x + 130, y + 60), radius=8, fill=(shade, 232, 240))
            draw.text((x + 12, y + 22), f"Button {row}-{column}", fill=(15, 23, 42))
    return image


def _trajectory(steps: int, success: bool) -> Trajectory:
    records = []
    for index in range(1, steps + 1):
        point = Point(x=60 + (index * 373) % 1160, y=70 + (index * 211) % 620)
        records.append(Step(
            index=index, screenshot=f"step_{index:03d}.png", model_action=Action(kind="click", point=point),
            screen_action=Action(kind="click", point=point), raw_text=f"Thought: try button {index}\nAction: click(...)",
            thought=f"try button {index}", dom_changed=index % 3 != 0, screen_changed=True,
            target=ElementInfo(tag="button", id=f"b{index}", text=f"Button {index}",
                               box=Box(x=point.x - 60, y=point.y - 25, width=120, height=50)),
            checker_passed=success and index == steps))
    return Trajectory(app_id="synthetic", task_id="t", task="Press the buttons in order.", expected_outcome="All pressed.",
                      policy="heuristic", offline=True, initial_screenshot="step_000.png", steps=records,
                      termination=TerminationReason.success if success else TerminationReason.max_steps, success=success,
                      max_steps=steps)


def synthetic_run(folder: Path, apps: int = 12, rounds: int = 3, tasks: int = 8, steps: int = 20,
                  name: str = "synthetic") -> Path:
    """A finished run of `apps` apps × `rounds` rounds × `tasks` tasks, every trajectory `steps` steps long."""
    run_dir = Path(folder) / name
    if run_dir.exists():
        shutil.rmtree(run_dir)
    pictures = run_dir / "_pictures"
    pictures.mkdir(parents=True)
    for index in range(steps + 1):
        _screen(index).save(pictures / f"step_{index:03d}.png", optimize=False)
    results = []
    for app_index in range(apps):
        app_id = f"app-{app_index:02d}"
        domain = DOMAINS[app_index % len(DOMAINS)]
        for round_ in range(rounds):
            version = Path("apps", app_id, "offline", f"round-{round_}")
            (run_dir / version).mkdir(parents=True, exist_ok=True)
            (run_dir / version / "index.html").write_text(f"<!doctype html><title>{app_id} round {round_}</title>")
            outcomes = []
            for task_index in range(tasks):
                task_id = f"task-{task_index}"
                success = (app_index + task_index + round_) % 3 == 0
                relative = version / "rollouts" / "heuristic" / task_id
                trajectory = _trajectory(steps, success)
                trajectory.app_id, trajectory.task_id = app_id, task_id
                trajectory.save(run_dir / relative)
                for picture in pictures.iterdir():
                    os.link(picture, run_dir / relative / picture.name)
                outcomes.append(TaskOutcome(task_id=task_id, solvable=True, checker_valid=True, proof="proven",
                                            success=success, termination=trajectory.termination.value, steps=steps,
                                            trajectory=relative.as_posix()))
            results.append(AppRoundResult(
                app_id=app_id, domain=domain, coder="offline", cua="heuristic", mode="integrated",
                commenter_mode="dashboard", round=round_, html=(version / "index.html").as_posix(), html_sha="0" * 64,
                screenshot=(version / "rollouts" / "heuristic" / "task-0" / "step_000.png").as_posix(), tasks=outcomes,
                offline_roles=["coder", "verifier", "proposer", "commenter", "cua"]))
    shutil.rmtree(pictures)
    write_results(run_dir, results, usage={}, offline_roles=["coder", "verifier", "proposer", "commenter", "cua"])
    (run_dir / "manifest.json").write_text(json.dumps({"offline": True, "config": {"name": name, "rounds": rounds - 1}}))
    return run_dir
