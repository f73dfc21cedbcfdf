"""The stages' cache keys: their inputs, the code they run, and what they call outside.

A stage's result is reused only when all of these are what they were when it was made:

- its inputs (Prefect's `INPUTS`: records that hash, `FileRef`s with the sha256 of their files);
- the code it runs (`code_version`: its function and every project file it can reach,
  JavaScript and templates included) — a change to the README, the viewer or another stage's code
  invalidates nothing;
- outside the project: the Chromium binary and its version (stages that open a browser), the
  installed versions of the Python packages its code imports (Playwright for every browser stage,
  Pillow where it draws, BeautifulSoup where it rewrites HTML…; not Prefect or Dask, which run a stage
  and compute nothing of it), every model its inputs name (model id, endpoint, request settings —
  never keys), the data it reads by path (the app's spec, reference page and first version).

`--reuse-stale` pins the code and Chromium parts to what the run folder's manifest recorded, for
someone who knows a change does not matter; it is printed and recorded as such.

The run keeps a tally of stage runs that ran and that came from the cache (`CacheTally`), and the
manifest of the run before says why a result was not reused (`why_rerun`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from prefect.cache_policies import INPUTS, CachePolicy

from apps_prompts import AppSpec, load_app, reference_html_path
from code_version import PROJECT_ROOT, digest, file_hashes, imported_packages, stage_files
from cua import BrowserConfig, default_chromium, launch_args
from llm import load_model_registry

from ._budget import read_json_object

STAGE_FUNCTIONS: dict[str, tuple[str, str]] = {
    "generate": ("flows._stages", "generate_initial"),
    "propose": ("flows._stages", "propose_tasks"),
    "verify": ("flows._stages", "verify_version"),
    "rollout": ("flows._rollouts", "rollout_task"),
    "comment": ("flows._revision", "comment_failures"),
    "revise": ("flows._revision", "revise_version"),
    "translate": ("flows._variations", "translate_version"),
    "prove_variation": ("flows._variations", "prove_variation"),
}
"""Stage kind → (module, function): the kinds `results.json`'s `cache` counts."""

READS_APP_SPEC = frozenset({"generate", "propose", "verify", "comment", "revise"})
"""Stages that read the app's spec (prompt, tasks, reference page) by path, not as an input."""

PIN_FILE = ".cache-pin.json"
BROWSER_MODULE = "cua/_launch.py"
ORCHESTRATION_PACKAGES = frozenset({"prefect", "prefect_dask", "distributed", "dask"})
"""Imported by the stages' code to run them, not to compute their results: their versions are not in the keys."""


@functools.cache
def stage_code(kind: str) -> dict[str, str]:
    """{project file: sha256} of every file stage `kind` can run (read once per process: the code it runs)."""
    return file_hashes(stage_files(*STAGE_FUNCTIONS[kind]))


def chromium_version(path: str) -> str:
    """What the binary says with `--version` (the manifest's `chromium`, part of the browser stages' keys)."""
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable: {exc}"


@functools.cache
def chromium_identity() -> str:
    """The binary the run's rollouts launch, the version it reports (`cua.default_chromium`) and the
    switches it gets (`cua.launch_args`: ours, and any the user adds)."""
    path = default_chromium()
    version = chromium_version(path)
    switches = hashlib.sha256(" ".join(launch_args(BrowserConfig(executable_path=path))).encode()).hexdigest()[:12]
    return f"{path} {version} (switches {switches})".strip()


@functools.cache
def package_versions(kind: str) -> str:
    """"name version, …" of the installed distributions that stage `kind`'s code imports (sorted)."""
    distributions = _distributions_of_packages()
    found = {_installed(distribution)
             for package in imported_packages([PROJECT_ROOT / name for name in stage_code(kind)])
             if package not in ORCHESTRATION_PACKAGES for distribution in distributions.get(package, [package])}
    return ", ".join(sorted(found, key=str.lower))


@functools.cache
def _distributions_of_packages() -> Mapping[str, list[str]]:
    """`importlib.metadata.packages_distributions()` once per process: it reads the file list of every
    installed distribution (≈ 0.15 s here), and each stage kind asked for it again (≈ 2.5 s of every
    `aui run`, 2026-11-28)."""
    return importlib.metadata.packages_distributions()


@functools.cache
def _installed(distribution: str) -> str:
    try:
        return f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:
        return f"{distribution} not installed"


def current_version(kind: str) -> dict[str, str]:
    """What this process runs for stage `kind`: {"code": digest, "packages": versions, "chromium": identity
    (browser stages)}."""
    version = {"code": digest(stage_code(kind)), "packages": package_versions(kind)}
    if BROWSER_MODULE in stage_code(kind):  # a stage that opens a browser
        version["chromium"] = chromium_identity()
    return version


def code_files() -> dict[str, str]:
    """{file: sha256} over every stage's files (what the manifest records, to say what changed)."""
    return dict(sorted((name, sha) for kind in STAGE_FUNCTIONS for name, sha in stage_code(kind).items()))


# ---- --reuse-stale ---------------------------------------------------------------------------------

def version_in_use(kind: str, run_dir: str) -> dict[str, str]:
    """Stage `kind`'s version for the run's keys: pinned by `--reuse-stale` (the run folder's `PIN_FILE`),
    else the current code's."""
    try:
        pinned = _read_cached(read_json_object, Path(run_dir) / PIN_FILE).get(kind)
    except OSError:
        pinned = None
    return dict(pinned) if pinned is not None else current_version(kind)


@functools.lru_cache(maxsize=512)
def _read_at(read: Callable[[str], Any], path: str, stamp: int) -> Any:
    return read(path)


def _read_cached(read: Callable[[str], Any], path: Path) -> Any:
    """`read(path)`, read again only once the file's mtime changes. Raises OSError: no such file."""
    return _read_at(read, str(path), path.stat().st_mtime_ns)


# ---- what a stage's inputs name outside the project ----------------------------------------------

def models_named(models_path: str | None, inputs: Mapping[str, Any]) -> dict[str, str]:
    """{name: sha256 of the model's id, provider, endpoint and request settings} for every model or
    role of the registry that a stage's inputs name (a coder, the verifier, the CUA's model…);
    offline names and names the registry does not know are left out."""
    names: set[str] = set()
    for value in inputs.values():
        if isinstance(value, str):
            names.add(value)
        elif hasattr(value, "calls"):  # the CUA's `AgentSettings`: the model its policy calls
            names.add(value.calls or "")
        elif hasattr(value, "model"):  # a role's provider (`llm.RoleProvider`)
            names.add(value.model or "")
    names.discard("")
    if not names:
        return {}
    try:
        if models_path:
            registry = _read_cached(load_model_registry, Path(models_path))
        else:  # the bundled registry: no file to stamp, read once per process
            registry = _read_at(load_model_registry, None, None)
    except Exception:  # an unreadable registry fails the stage itself, with its own error
        return {}
    known = set(registry.names()) | set(registry.roles)
    described = {}
    for name in sorted(names & known):
        try:
            if registry.is_offline(name):
                continue
            description = model_description(registry.get(name))
        except Exception:
            continue
        described[name] = hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode()).hexdigest()
    return described


def model_description(model: Any) -> dict[str, Any]:
    """A registry model's id, provider, endpoint and request settings (never its key)."""
    try:
        endpoint = model.endpoint()
    except Exception as exc:  # an unset ${VAR} in the URL: said here; the stage (or the run) names it when it calls
        endpoint = f"unresolved: {exc}"
    return {"name": model.name, "provider": model.provider, "model": model.model, "endpoint": endpoint,
            "params": model.params.to_request()}


def _sha256_of(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def file_sha(path: Path) -> str | None:
    """sha256 of the file (hashed again only once its mtime changes); None when it cannot be read."""
    try:
        return _read_cached(_sha256_of, path)
    except OSError:
        return None


def app_files(spec: AppSpec, v0_dir: str | Path | None) -> dict[str, Path]:
    """What a stage reads about an app by path (its key and the manifest's `inputs` hash them): its spec file,
    reference page and, in a run with `v0_dir`, first version."""
    files = {"spec": Path(spec.source)} if spec.source else {}
    if (reference := reference_html_path(spec)) is not None:
        files["reference_html"] = Path(reference)
    if v0_dir:
        files["v0_html"] = Path(v0_dir) / spec.id / "index.html"
    return files


def app_data(run: Any, app_id: str) -> dict[str, str | None]:
    """sha256 of `app_files` of `app_id` (None: missing)."""
    try:
        spec = load_app(app_id, run.apps)
    except Exception:  # an unknown app fails the stage itself
        return {}
    return {name: file_sha(path) for name, path in app_files(spec, run.v0_dir).items()}


TRAJECTORY_FILES = ("trajectory.json", "dashboard.png")


def trajectory_data(run: Any, folders: list[str]) -> dict[str, list[str | None]]:
    """sha256 of what a commenter reads of each rollout folder (named by path): its trajectory and dashboard.
    A rollout that ran again (its code changed) and ended otherwise is commented on again."""
    root = Path(run.run_dir)
    return {folder: [file_sha(root / folder / name) for name in TRAJECTORY_FILES] for folder in folders}


@dataclass
class StageVersion(CachePolicy):
    """The part of a stage's key that is not its inputs: its code, Chromium, its models, its app's data."""

    kind: str = ""

    def compute_key(self, task_ctx, inputs, flow_parameters, **kwargs) -> str:
        run = inputs.get("run")
        run_dir = getattr(run, "run_dir", "")
        parts: dict[str, Any] = {"version": version_in_use(self.kind, run_dir)}
        if run is not None:
            parts["models"] = models_named(run.models, inputs)
            if self.kind in READS_APP_SPEC and isinstance(inputs.get("app_id"), str):
                parts["app"] = app_data(run, inputs["app_id"])
            if isinstance(inputs.get("trajectories"), list):  # the comment stage gets rollout folders by path
                parts["trajectories"] = trajectory_data(run, inputs["trajectories"])
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def stage_cache(kind: str) -> CachePolicy:
    """The cache policy of stage `kind`: its inputs and `StageVersion`."""
    return INPUTS + StageVersion(kind=kind)


# ---- ran / reused -------------------------------------------------------------------------------

class CacheTally:
    """Per stage kind, how many stage runs ran and how many came from the cache, in this process."""

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()

    def count(self, kind: str, reused: bool) -> None:
        with self._lock:
            entry = self.counts.setdefault(kind, {"ran": 0, "reused": 0})
            entry["reused" if reused else "ran"] += 1

    def as_dict(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {kind: dict(entry) for kind, entry in sorted(self.counts.items())}


_tallies: dict[str, CacheTally] = {}


def tally_for(run_dir: str | Path) -> CacheTally:
    """The tally of one run folder in this process (made on first use)."""
    return _tallies.setdefault(str(Path(run_dir).resolve()), CacheTally())


def reset_tally(run_dir: str | Path) -> CacheTally:
    """A new tally for the run folder (each invocation of a sweep counts its own stage runs)."""
    tally = _tallies[str(Path(run_dir).resolve())] = CacheTally()
    return tally


def tallied(stages, tally: CacheTally):
    """The same `Stages`, each call counted in `tally` as ran or reused (Prefect's `Cached` state)."""
    # `flows.Stages` fields are named after the stage kinds (`STAGE_FUNCTIONS`)
    return replace(stages, **{f.name: functools.partial(_call_counted, f.name, getattr(stages, f.name),
                                                        tally) for f in fields(stages)})


async def _call_counted(kind: str, stage, tally: CacheTally, **inputs: Any) -> Any:
    state = await stage(**inputs, return_state=True)
    tally.count(kind, reused=state.name == "Cached")
    return await state.aresult()


# ---- why a result was not reused ----------------------------------------------------------------

def why_rerun(before: Mapping[str, Any] | None, now: Mapping[str, Any], since: str | None) -> dict[str, str]:
    """Per stage kind whose version changed since the manifest `before`, one line saying what changed.

    `before` and `now` are manifests (their `stage_versions`, `code_files`, `stage_files`); a kind
    missing from `before` (a run made before the code was part of the keys) says so.
    """
    if not before:
        return {}
    old_versions = before.get("stage_versions") or {}
    old_files = before.get("code_files") or {}
    new_files = now.get("code_files") or {}
    when = f" since {since}" if since else ""
    reasons = {}
    for kind, version in (now.get("stage_versions") or {}).items():
        old = old_versions.get(kind)
        if old == version:
            continue
        if old is None:
            reasons[kind] = f"the earlier run{when} did not record the code of its {kind} stage: its results are not reused"
            continue
        changed = [name if name in old_files else f"{name} (new)"
                   for name in (now.get("stage_files") or {}).get(kind, [])
                   if old_files.get(name) != new_files.get(name)]
        changed += [f"{name} (gone)" for name in (before.get("stage_files") or {}).get(kind, [])
                    if name not in new_files]
        parts = []
        if changed:
            parts.append(f"code of {_packages(changed)} changed{when} ({', '.join(changed[:3])}"
                         f"{f' and {len(changed) - 3} more' if len(changed) > 3 else ''})")
        if old.get("packages") != version.get("packages"):
            parts.append(f"packages changed{when} ({_package_changes(old.get('packages'), version.get('packages'))})")
        if old.get("chromium") != version.get("chromium"):
            parts.append(f"Chromium changed{when} ({old.get('chromium')} → {version.get('chromium')})")
        if not parts:
            parts.append(f"its results were made{when} with code pinned by --reuse-stale")
        reasons[kind] = "; ".join(parts)
    return reasons


def _package_changes(before: str | None, now: str | None) -> str:
    """"playwright 1.64.1 → 1.65.0, pillow (new)" between two `package_versions` strings."""
    def parsed(text: str | None) -> dict[str, str]:
        return dict(item.rsplit(" ", 1) for item in (text or "").split(", ") if " " in item)

    old, new = parsed(before), parsed(now)
    if not old:
        return "the earlier run did not record them"
    return ", ".join([f"{name} {old[name]} → {new[name]}" if name in old else f"{name} (new)"
                      for name in sorted(new) if old.get(name) != new[name]]
                     + [f"{name} (gone)" for name in sorted(old) if name not in new])


def _packages(files: list[str]) -> str:
    packages = list(dict.fromkeys(name.rpartition("/")[0] or name for name in files))
    return ", ".join(packages[:3]) + (" …" if len(packages) > 3 else "")


# ---- one invocation of a run ------------------------------------------------------------------------

def start_run_cache(run_dir: Path, reuse_stale: bool) -> dict[str, Any]:
    """Compare this process's code with the manifest the run's last invocation left, pin the old
    versions under `reuse_stale` (else unpin), and start a new tally. Returns the manifest's fields that
    record it: the code (`code_files`, `stage_files`), the version each stage kind's keys use (pinned
    under --reuse-stale), and per kind whose code changed what changed (`not_reused`; `stale_reused`
    for the kinds --reuse-stale reuses anyway)."""
    import datetime

    before = read_json_object(Path(run_dir) / "manifest.json")
    since = None if not before else datetime.datetime.fromtimestamp(
        (Path(run_dir) / "manifest.json").stat().st_mtime).strftime("%Y-%m-%d %H:%M")
    now = {"stage_versions": {kind: current_version(kind) for kind in STAGE_FUNCTIONS}, "code_files": code_files(),
           "stage_files": {kind: sorted(stage_code(kind)) for kind in STAGE_FUNCTIONS}}
    changed = why_rerun(before, now, since)
    old = before.get("stage_versions") or {}  # `changed` is empty without an earlier manifest
    pins = {kind: old[kind] for kind in changed if kind in old} if reuse_stale else {}
    pin_file = Path(run_dir) / PIN_FILE
    if pins:
        pin_file.write_text(json.dumps(pins, indent=1, sort_keys=True), encoding="utf-8")
    else:
        pin_file.unlink(missing_ok=True)
    reset_tally(run_dir)
    return {**now, "stage_versions": {kind: pins.get(kind, now["stage_versions"][kind]) for kind in STAGE_FUNCTIONS},
            "reuse_stale": reuse_stale, "stale_reused": {kind: changed[kind] for kind in pins},
            "not_reused": {kind: why for kind, why in changed.items() if kind not in pins}}
