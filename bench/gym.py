"""Benchmark of the doors out: the Gymnasium environments and the dataset export; one JSON object as its last line.

    .venv/bin/python bench/gym.py [--steps 20] [--pairs 3] [--vector 8] [--skip-check-env] [--out DIR]

- `envs`: the bundled apps registered as environments on import (`environments.BUNDLED_IDS`);
  `check_env_passed`: of them, how many pass Gymnasium's own `check_env` (its only allowed warning: the advice
  to normalise Box action spaces — ours are screen pixels);
- `reference_solved` / `reference_total`: every offered bundled task's reference solution played through
  `env.step` (`environments.ReferencePolicy`), solved when it earns reward 1.0 exactly once, on the step its
  checker first turns true — over every task the environments offer (proven checkers only); `reference_steps`,
  and the pass's `reference_wall_s` and `reference_cpu_s` (the CPU of this process tree: Python, the Playwright
  driver, Chromium with its exited renderers; the checkers are proven before, by check_env) — what a Gym step
  costs the machine, which the test suite pays on every reference solution;
- `env_steps_per_s` / `rollout_steps_per_s`: the same `--steps` scripted actions on unit-converter, the same task's
  checker after each, through `env.step` and through `cua.rollout` (a scripted policy; its trajectory written to
  disk as in a run), each timed from the app's load to the last step, A/B
  interleaved `--pairs` times, medians; `env_step_vs_rollout_step` = rollout steps/s ÷ env steps/s (1.1 =
  an env step costs 10 % more than a rollout step; target ≤ 1.1);
- `vector_steps_per_s`: `--vector` environments of one browser stepped together (`environments.make_vector`),
  and `vector_ratio` to the same environments stepped one after another;
- `export_rows` / `export_steps`: `aui export`'s steps table of an offline run (unit-converter, rounds 0–1, made
  here) against the steps of the run's trajectories; `export_s` and `export_peak_rss_mb` of the export in a
  fresh interpreter.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import gymnasium
from gymnasium.utils.env_checker import check_env

import environments
from apps_prompts import Task, load_app, reference_html_path
from cua import Action, Point, RolloutConfig, Trajectory, close_browser, rollout
from cua.policies import get_policy
from experiment import make_config
from flows import sweep_without_prefect
from verifier import rollout_checker

sys.path.insert(0, str(Path(__file__).parent))
from dataset_export import measured  # noqa: E402  (the export's own peak memory, measured alike)
from scale import TreeSampler  # noqa: E402  (the same process-tree sampler)

APP = "unit-converter"
ADVICE = "For Box action spaces, we recommend using a symmetric and normalized space"
# The scripted actions: clicks and hovers over the page's top half, where unit-converter's controls are.
POINTS = [(320 + 60 * (i % 8), 120 + 40 * (i % 6)) for i in range(64)]
_EXPORT = """
import json, sys
from results import export_dataset
report = export_dataset([sys.argv[1]], sys.argv[2])
print(json.dumps({"rows": report.rows, "seconds": report.seconds}))
"""


def log(message: str) -> None:
    print(f"[bench/gym] {message}", file=sys.stderr, flush=True)


def scripted(steps: int) -> list[Action]:
    return [Action(kind="click" if i % 3 else "move", point=Point(x=x, y=y)) for i, (x, y) in enumerate(POINTS[:steps])]


def check_every_env() -> tuple[int, list[str]]:
    failed = []
    for name in environments.BUNDLED_IDS:
        env = gymnasium.make(name, render_mode="rgb_array")
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                check_env(env.unwrapped)
            failed += [f"{name}: {w.message}" for w in caught if ADVICE not in str(w.message)]
        except Exception as error:  # a failed check is a figure here, not a crash of the benchmark
            failed.append(f"{name}: {type(error).__name__}: {error}")
        finally:
            env.close()
    return len(environments.BUNDLED_IDS) - len({line.split(":")[0] for line in failed}), failed


def play_reference_solutions(max_actions: int = 60) -> tuple[int, int, list[str], int]:
    solved, total, unsolved, steps = 0, 0, [], 0
    for name in environments.BUNDLED_IDS:
        env = gymnasium.make(name, task="all", max_steps=max_actions)
        try:
            for task in env.unwrapped.tasks:
                total += 1
                env.reset(seed=0, options={"task": task.id})
                policy, rewards, passed, ended, info = environments.ReferencePolicy(task.solution), [], [], False, {}
                while not ended:
                    for action in env.unwrapped.ask(policy):
                        _, reward, terminated, truncated, info = env.step(action)
                        steps += 1
                        rewards.append(reward)
                        passed.append(info["checker"]["passed"])
                        ended = terminated or truncated
                        if ended:
                            break
                first = passed.index(True) if True in passed else None
                if rewards.count(1.0) == 1 and first == len(rewards) - 1 and info.get("termination") == "success":
                    solved += 1
                else:
                    unsolved.append(f"{name}/{task.id}")
        finally:
            env.close()
    return solved, total, unsolved, steps


def env_steps_per_s(actions: list[Action], task: str) -> float:
    env = gymnasium.make(f"aui/{APP}-v0", task=task, max_steps=len(actions) + 1)
    try:
        started = time.perf_counter()  # the load counts, as it does in a rollout's time
        env.reset(seed=0)
        done = 0
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            done += 1
            if terminated or truncated:  # solved by chance: the rollout stops at the same step
                break
        return done / (time.perf_counter() - started)
    finally:
        env.close()


def rollout_steps_per_s(actions: list[Action], html: str, task: Task, folder: Path,
                        loop: asyncio.AbstractEventLoop) -> float:
    """The same actions through `cua.rollout` on `loop` (one browser with warm pages, as the environments' loop has),
    with the same task's checker after every step; the whole call timed: the load, every step, the trajectory and
    its screenshots written to disk."""
    policy = get_policy("scripted", script=list(actions))
    config = RolloutConfig(max_steps=len(actions) + 1, stuck_no_change_steps=0, stuck_repeat_steps=0)
    checker = rollout_checker(task.checker)
    started = time.perf_counter()
    trajectory = loop.run_until_complete(rollout(html, task.description, policy, checker, folder, config, seed=0,
                                                 fixed_clock=True))
    seconds = time.perf_counter() - started
    acted = [step for step in trajectory.steps if step.screen_action is not None and step.screen_action.kind != "finished"]
    return len(acted) / seconds


def vector_figures(count: int, steps: int) -> tuple[float, float]:
    tasks = gymnasium.make(f"aui/{APP}-v0", task="all").unwrapped.tasks
    specs = [(f"aui/{APP}-v0", {"task": tasks[i % len(tasks)].id, "max_steps": steps + 1}) for i in range(count)]
    actions = scripted(steps)
    vector = environments.make_vector(specs)
    try:
        vector.reset(seed=list(range(count)))
        started = time.perf_counter()
        for action in actions:
            vector.step([action] * count)
        together = count * steps / (time.perf_counter() - started)
    finally:
        vector.close()
    singles = [gymnasium.make(name, **options) for name, options in specs]
    try:
        for number, env in enumerate(singles):
            env.reset(seed=number)
        started = time.perf_counter()
        for action in actions:
            for env in singles:
                env.step(action)
        one_by_one = count * steps / (time.perf_counter() - started)
    finally:
        for env in singles:
            env.close()
    return together, together / one_by_one


def export_figures(folder: Path) -> dict:
    run_dir = folder / "runs" / "gym-bench"
    config = make_config({"name": "gym-bench", "app_ids": [APP], "rounds": 1, "out_dir": str(folder / "runs")})
    asyncio.run(sweep_without_prefect(config))
    steps = sum(len(Trajectory.model_validate_json(path.read_text()).steps) for path in run_dir.rglob("trajectory.json"))
    output, seconds, peak_mb = measured(_EXPORT, str(run_dir), str(folder / "dataset"))
    report = json.loads(output.strip().splitlines()[-1])
    return {"export_rows": report["rows"]["steps"], "export_steps": steps, "export_s": round(seconds, 2),
            "export_peak_rss_mb": round(peak_mb, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="Scripted actions per timed episode.")
    parser.add_argument("--pairs", type=int, default=3, help="Env / rollout timings, interleaved.")
    parser.add_argument("--vector", type=int, default=8, help="Environments in the vector.")
    parser.add_argument("--skip-check-env", action="store_true", help="Skip check_env and the reference solutions.")
    parser.add_argument("--out", help="Keep the run and the dataset here (default: a temp folder).")
    args = parser.parse_args()
    figures: dict = {"load_avg_1m": round(os.getloadavg()[0], 2), "envs": len(environments.BUNDLED_IDS)}
    if not args.skip_check_env:
        log("check_env on every bundled environment …")
        figures["check_env_passed"], figures["check_env_failures"] = check_every_env()
        log("every reference solution through env.step …")
        sampler = TreeSampler(set())
        cpu_before, started = sum(sampler.cpu_by_kind().values()), time.perf_counter()
        solved, total, unsolved, steps = play_reference_solutions()
        figures.update(reference_solved=solved, reference_total=total, reference_unsolved=unsolved,
                       reference_steps=steps, reference_wall_s=round(time.perf_counter() - started, 2),
                       reference_cpu_s=round(sum(sampler.cpu_by_kind().values()) - cpu_before, 2))
    log(f"{args.steps} scripted steps through env.step and cua.rollout, {args.pairs} pairs …")
    app = load_app(APP)
    html = reference_html_path(app).read_text(encoding="utf-8")
    task = next(t for t in app.tasks if t.checker)  # its checker runs after every step on both paths
    actions, env_rates, rollout_rates = scripted(args.steps), [], []
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory(prefix="bench-gym-") as scratch:
        env_steps_per_s(actions[:3], task.id)  # warm-up: the loop, the browser, a warm page — of both paths
        rollout_steps_per_s(actions[:3], html, task, Path(scratch) / "warm-up", loop)
        for pair in range(args.pairs):
            env_rates.append(env_steps_per_s(actions, task.id))
            rollout_rates.append(rollout_steps_per_s(actions, html, task, Path(scratch) / f"rollout-{pair}", loop))
        loop.run_until_complete(close_browser())
        loop.close()
        figures["env_steps_per_s"] = round(statistics.median(env_rates), 2)
        figures["rollout_steps_per_s"] = round(statistics.median(rollout_rates), 2)
        figures["env_step_vs_rollout_step"] = round(figures["rollout_steps_per_s"] / figures["env_steps_per_s"], 3)
        log(f"a vector of {args.vector} environments, and the same one after another …")
        together, ratio = vector_figures(args.vector, args.steps)
        figures["vector_steps_per_s"], figures["vector_ratio"] = round(together, 2), round(ratio, 2)
        environments.shutdown()
        log("an offline run, exported …")
        figures.update(export_figures(Path(args.out) if args.out else Path(scratch)))
    figures["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    figures["met"] = {"env_step_within_10_percent": figures["env_step_vs_rollout_step"] <= 1.1,
                      "export_rows_equal_steps": figures["export_rows"] == figures["export_steps"]}
    if not args.skip_check_env:
        figures["met"].update(check_env=figures["check_env_passed"] == figures["envs"],
                              reference=figures["reference_solved"] == figures["reference_total"])
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
