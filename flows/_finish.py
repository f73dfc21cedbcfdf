"""What a run leaves behind: the manifest (how to reproduce it), results tables, plot, report."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from apps_prompts import load_apps
from coder import PROMPT_VERSION as coder_version
from commenter import PROMPT_VERSION as commenter_version
from cua import is_headless_shell, launch_args, write_atomic
from experiment import ExperimentConfig, Plan
from llm import call_stats, load_model_registry, shared_clients
from perturb import TRANSLATOR_PROMPT_VERSION as translator_version
from results import AppRoundResult, write_report, write_results
from verifier import PROMPT_VERSION as verifier_version
from verifier.judge import PROMPT_VERSION as judge_version

from ._budget import read_json_object
from ._cache import app_files, chromium_version, file_sha, model_description, tally_for
from ._prefect_env import PROJECT_ROOT

PACKAGES = ["aui-loop", "prefect", "fastapi", "playwright", "openai", "pydantic", "pillow", "jsonschema", "beautifulsoup4", "axe-playwright-python"]


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "") if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _models_used(config: ExperimentConfig, plan: Plan) -> dict:
    """Model ids, endpoints and request settings of every model the run calls (never keys): every role it uses that
    a model plays (judge, detector and translator too), and the agents' models."""
    if not plan.models:
        return {}
    registry = load_model_registry(config.models_config)
    models = {name: registry.get(name) for name in plan.models}
    return {name: {**model_description(model), "timeout_s": model.timeout_s, "max_retries": model.max_retries}
            for name, model in models.items()}


ROLE_PROMPTS = {
    "coder": ["coder/_prompts.py"],
    "proposer": ["apps_prompts/_proposer.py"],
    "verifier": ["verifier/_prompts.py"],
    "commenter": ["commenter/_model.py"],
    "judge": ["verifier/judge/_prompts.py"],
    "translator": ["perturb/_translate.py"],
    # not a model's prompt, but what the agent is shown: a variation's CSS, script and words
    "variations": ["perturb/_catalogue.py", "perturb/_appearance.py", "perturb/_texts.py", "perturb/_content.js"],
    "detector": ["commenter/detector/_prompts.py"],
    "cua/uitars": ["cua/policies/_uitars.py", "cua/policies/_uitars_prompts.py", "cua/_parser.py"],  # + the parser's table
    "cua/openai-cua": ["cua/policies/_openai_cua.py"],
}
"""Where each role's prompts are written (the module files, so any change to a prompt shows)."""


def _input_hashes(config: ExperimentConfig) -> dict:
    """sha256 of the inputs the config names by path: each app's `app_files` that exist, the tasks file."""
    apps = {spec.id: {name: file_sha(path) for name, path in app_files(spec, config.v0_dir).items() if path.is_file()}
            for spec in load_apps(config.apps).apps if not config.app_ids or spec.id in config.app_ids}
    inputs: dict = {"apps": apps}
    if config.tasks_file is not None and Path(config.tasks_file).is_file():
        inputs["tasks_file"] = file_sha(Path(config.tasks_file))
    return inputs


def write_manifest(config: ExperimentConfig, plan: Plan, run_dir: Path, cache: dict | None = None) -> Path:
    """manifest.json: versions, Chromium, git commit, models (no keys), prompt hashes, seeds, inputs, config,
    and (`cache`: `flows._cache.start_run_cache`'s fields) the code each stage kind ran as its cache keys saw it."""
    from ._rollouts import run_browser_config

    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    models = _models_used(config, plan)
    browser = run_browser_config(config.viewport)  # what the run's rollouts get, not a fresh default
    manifest = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
        "chromium": chromium_version(browser.executable_path),
        "chromium_path": str(browser.executable_path),
        # What the agents' browser does differently from a stock one (README, "The browser"), and which
        # binary with which switches (the headless shell by default: `cua.default_chromium`).
        "browser": {"viewport": str(browser.viewport), "in_page_select_picker": browser.in_page_select_picker,
                    "headless": browser.headless, "binary": str(browser.executable_path),
                    "headless_shell": is_headless_shell(browser.executable_path), "args": launch_args(browser),
                    "reuse_pages": browser.reuse_pages},
        "git_commit": _git_commit(),
        "models": models,
        # sha256 of the prompt modules of every role, and the prompt versions the packages declare
        "prompt_hashes": {role: {relative: file_sha(PROJECT_ROOT / relative) or "missing" for relative in files}
                          for role, files in ROLE_PROMPTS.items()},
        "prompt_versions": {"coder": coder_version, "verifier": verifier_version, "commenter": commenter_version,
                            "judge": judge_version, "translator": translator_version},
        # The config's seed, and each model's sampling seed where its params set one (None: the
        # endpoint's default). The offline roles and the heuristic agent draw no random numbers.
        "seed": config.seed,
        "seeds": {"config": config.seed, "models": {name: m["params"].get("seed") for name, m in models.items()}},
        "inputs": _input_hashes(config),
        # Which roles offline providers played, and whether all did (`experiment.offline_roles`, the rule of every label).
        "offline": plan.offline,
        "offline_roles": plan.offline_roles(),
        # Rollouts in flight as run (config.concurrency None: chosen from the cores or the agents' models).
        "rollout_slots": plan.rollout_slots,
        "cpu_count": os.cpu_count(),
        "config": json.loads(config.model_dump_json()),
        **(cache or {}),
    }
    if cache is not None:
        manifest["settings_changed"] = settings_changed(read_json_object(run_dir / "manifest.json"), manifest)
    return write_atomic(run_dir / "manifest.json", json.dumps(manifest, indent=1, sort_keys=True).encode())


def settings_changed(before: dict | None, now: dict) -> list[str]:
    """What the stages' keys read outside the code that differs from the run's last invocation: the
    models (id, endpoint, request settings) and the data read by path (app specs, pages, tasks file)."""
    if not before:
        return []
    lines = []
    old_models, new_models = before.get("models") or {}, now.get("models") or {}
    for name in sorted(set(old_models) | set(new_models)):
        old, new = old_models.get(name), new_models.get(name)
        if old == new:
            continue
        if old is None or new is None:
            lines.append(f"model '{name}' {'added' if old is None else 'no longer used'}")
        else:
            fields = [key for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]
            lines.append(f"model '{name}' changed ({', '.join(fields)}): the stages that call it run again")
    old_inputs, new_inputs = before.get("inputs") or {}, now.get("inputs") or {}
    old_apps, new_apps = old_inputs.get("apps") or {}, new_inputs.get("apps") or {}
    for app_id in sorted(set(old_apps) & set(new_apps)):
        changed = [key for key in sorted(set(old_apps[app_id]) | set(new_apps[app_id]))
                   if old_apps[app_id].get(key) != new_apps[app_id].get(key)]
        if changed:
            lines.append(f"app '{app_id}': {', '.join(changed)} changed: the stages that read it run again")
    if old_inputs.get("tasks_file") != new_inputs.get("tasks_file") and "tasks_file" in old_inputs:
        lines.append("the tasks file changed: the stages given its tasks run again")
    return lines


def usage_summary(config: ExperimentConfig) -> dict:
    """Token use and cost per role over the model clients of this run's registry, and the call counters."""
    by_role: dict[str, dict] = {}
    by_commenter_mode: dict[str, dict] = {}
    for client in shared_clients(config.models_config or None):  # as the stages call get_client
        for role, usage in client.ledger.by_role().items():
            # The model commenter calls under `commenter:<mode>`: one row for the role, one per mode.
            base, _, commenter_mode = role.partition(":")
            totals = [by_role.setdefault(base, {})]
            if commenter_mode:
                totals.append(by_commenter_mode.setdefault(commenter_mode, {}))
            for key, value in usage.model_dump().items():
                if isinstance(value, (int, float)):
                    for entry in totals:
                        entry[key] = round(entry.get(key, 0) + value, 6)
    return {"by_role": by_role, "by_commenter_mode": by_commenter_mode, "calls": call_stats().model_dump()}


def finish_run(config: ExperimentConfig, plan: Plan, run_dir: Path, results: list[AppRoundResult]) -> Path:
    """results.json/.csv/.md, the FC/SR plot and report.html; returns the report's path."""
    roles = plan.offline_roles()
    usage = usage_summary(config)
    cache = tally_for(run_dir).as_dict()
    rows = write_results(run_dir, results, usage=usage, offline_roles=roles, weights=config.weights, cache=cache)
    # the manifest (written when the run started) gets the invocation's ran / reused counts
    if manifest := read_json_object(run_dir / "manifest.json"):
        manifest["cache"] = cache
        write_atomic(run_dir / "manifest.json", json.dumps(manifest, indent=1, sort_keys=True).encode())
    return write_report(run_dir, rows, results, roles, usage)
