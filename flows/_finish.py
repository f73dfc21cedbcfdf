"""What a run leaves behind: the manifest (how to reproduce it), results tables, plot, report."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from cua import write_atomic

from ._config import ExperimentConfig
from ._prefect_env import PROJECT_ROOT
from ._report import write_report
from ._results import AppRoundResult, write_results

PACKAGES = ["aui-loop", "prefect", "fastapi", "playwright", "openai", "pydantic", "pillow", "jsonschema", "beautifulsoup4", "axe-playwright-python"]


def _chromium_version(path: str) -> str:
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable: {exc}"


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "") if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _models_used(config: ExperimentConfig) -> dict:
    """Model ids and endpoints of every named model (never keys)."""
    names = {*config.coders, config.verifier, config.proposer, config.commenter}
    if any(p != "heuristic" for p in config.cua_policies):
        names.add(config.cua_model or "cua")
    names.discard("offline")
    if not names:
        return {}
    from llm import load_model_registry

    registry = load_model_registry(config.models_config)
    described = {}
    for name in sorted(names):
        model = registry.get(name)
        try:
            endpoint = model.endpoint()
        except Exception as exc:  # an unset ${VAR} in the URL: say which, keep going
            endpoint = f"unresolved: {exc}"
        described[name] = {"name": model.name, "provider": model.provider, "model": model.model, "endpoint": endpoint}
    return described


def _prompt_hashes() -> dict[str, str]:
    """sha256 of every prompt module, so a changed prompt shows up as a changed manifest."""
    hashes = {}
    for path in sorted(PROJECT_ROOT.glob("*/_prompts*.py")):
        hashes[str(path.relative_to(PROJECT_ROOT))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def write_manifest(config: ExperimentConfig, run_dir: Path) -> Path:
    """manifest.json: versions, Chromium, git commit, models (no keys), prompt hashes, seed, config."""
    from cua import BrowserConfig

    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    manifest = {
        "python": platform.python_version(),
        "packages": versions,
        "chromium": _chromium_version(BrowserConfig().executable_path),
        "git_commit": _git_commit(),
        "models": _models_used(config),
        "prompt_hashes": _prompt_hashes(),
        "seed": config.seed,
        "offline": config.offline,
        "config": json.loads(config.model_dump_json()),
    }
    return write_atomic(run_dir / "manifest.json", json.dumps(manifest, indent=1, sort_keys=True).encode())


def offline_roles(config: ExperimentConfig) -> list[str]:
    roles = [role for role, name in (("coder", ",".join(config.coders)), ("proposer", config.proposer),
                                     ("verifier", config.verifier), ("commenter", config.commenter)) if "offline" in name]
    if "heuristic" in config.cua_policies:
        roles.append("cua (heuristic)")
    return roles


def usage_summary(config: ExperimentConfig) -> dict:
    """Token use and cost per role over the model clients of this run's registry, and the call counters."""
    from llm import call_stats, shared_clients

    by_role: dict[str, dict] = {}
    for client in shared_clients(config.models_config or None):  # as the stages call get_client
        for role, usage in client.ledger.by_role().items():
            entry = by_role.setdefault(role, {})
            for key, value in usage.model_dump().items():
                if isinstance(value, (int, float)):
                    entry[key] = round(entry.get(key, 0) + value, 6)
    return {"by_role": by_role, "calls": call_stats().model_dump()}


def finish_run(config: ExperimentConfig, run_dir: Path, results: list[AppRoundResult]) -> Path:
    """results.json/.csv/.md, the FC/SR plot and report.html; returns the report's path."""
    roles = offline_roles(config)
    usage = usage_summary(config)
    rows = write_results(run_dir, results, usage=usage, offline_roles=roles)
    return write_report(run_dir, rows, results, roles, usage)
