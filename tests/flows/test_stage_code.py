"""What each stage's cache key covers (`code_version`, `flows._cache`), read from the code."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from flows._cache import STAGE_FUNCTIONS, StageVersion, models_named, stage_code, why_rerun
from code_version import PROJECT_ROOT, stage_files
from flows._refs import AgentSettings, RunContext
from llm import RoleProvider


def files(kind: str) -> set[str]:
    return set(stage_code(kind))


def test_each_stage_covers_the_code_it_runs_and_not_the_code_of_the_others():
    rollout, verify, generate, comment = files("rollout"), files("verify"), files("generate"), files("comment")
    heuristic = {name for name in rollout if name.startswith("cua/policies/heuristic/")}
    # The heuristic is registered lazily ("cua.policies.heuristic:HeuristicPolicy"): found all the same,
    # with the JavaScript its page read runs.
    assert {"cua/policies/heuristic/_match.py", "cua/policies/heuristic/_read_page.js"} <= heuristic
    assert {"cua/policies/_uitars.py", "cua/_harness.js", "cua/_parser.py", "dashboard_render/__init__.py"} <= rollout
    assert not heuristic & verify and not heuristic & generate
    assert {"verifier/_checker_wrapper.js", "verifier/_proof.py", "flows/_stages.py"} <= verify
    assert "coder/_prompts.py" in generate and "coder/_prompts.py" not in verify
    assert "apps_prompts/_proposer.py" in files("propose") and "apps_prompts/_proposer.py" not in generate
    assert "commenter/_page_facts.js" in comment and "commenter/_page_facts.js" not in rollout
    # Nothing a run does not execute: docs, the viewer, the CLI, the key machinery itself.
    for kind in STAGE_FUNCTIONS:
        names = files(kind)
        assert not {n for n in names if n.startswith(("viewer/", "aui/", "tests/", "bench/")) or n.endswith(".md")}, kind
        assert "flows/_cache.py" not in names and "code_version/_closure.py" not in names, kind
        assert "flows/_track.py" not in names  # the orchestration around a stage is not its code
        # a stage is handed its roles' providers (`llm.RoleProvider`), not the experiment that resolved them
        assert not {n for n in names if n.startswith("experiment/")}, kind


def test_imports_for_type_checkers_and_package_reexports_do_not_widen_a_stage(tmp_path):
    # flows/__init__.py imports every module under `if TYPE_CHECKING:` and re-exports ~60 names:
    # a stage importing `flows._refs` runs neither.
    assert len(files("propose")) < 60
    assert "flows/_sweep.py" not in files("rollout")


def test_a_changed_file_is_named_with_its_package_and_the_time_of_the_earlier_run():
    before = {"stage_versions": {"rollout": {"code": "a", "chromium": "x"}, "verify": {"code": "b"}},
              "code_files": {"cua/policies/heuristic/_match.py": "1", "verifier/_proof.py": "2"},
              "stage_files": {"rollout": ["cua/policies/heuristic/_match.py"], "verify": ["verifier/_proof.py"]}}
    now = {"stage_versions": {"rollout": {"code": "c", "chromium": "x"}, "verify": {"code": "b"}},
           "code_files": {"cua/policies/heuristic/_match.py": "3", "verifier/_proof.py": "2"},
           "stage_files": before["stage_files"]}
    reasons = why_rerun(before, now, "2026-11-27 09:30")
    assert reasons == {"rollout": "code of cua/policies/heuristic changed since 2026-11-27 09:30 "
                                  "(cua/policies/heuristic/_match.py)"}
    now["stage_versions"]["rollout"] = {"code": "a", "chromium": "y"}
    now["code_files"]["cua/policies/heuristic/_match.py"] = "1"
    assert why_rerun(before, now, None) == {"rollout": "Chromium changed (x → y)"}
    assert why_rerun(None, now, None) == {}


_PACKAGES_OF = """
import json
from flows._cache import STAGE_FUNCTIONS, current_version
print(json.dumps({kind: current_version(kind) for kind in STAGE_FUNCTIONS}))
"""


def _versions(extra_path=None) -> dict:
    """Every stage's version as a fresh interpreter sees it, with `extra_path` first on its path."""
    environment = {**__import__("os").environ, **({"PYTHONPATH": str(extra_path)} if extra_path else {})}
    done = subprocess.run([sys.executable, "-c", _PACKAGES_OF], cwd=PROJECT_ROOT, env=environment, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_stage_key_follows_the_versions_of_the_packages_its_code_imports(tmp_path):
    """Another Playwright installed (a distribution's metadata first on the path, as a virtualenv upgrade leaves
    it) changes every browser stage's version — what its cache key hashes — and no stage's code digest."""
    (tmp_path / "playwright-9.9.9.dist-info").mkdir()
    (tmp_path / "playwright-9.9.9.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: playwright\n"
                                                                       "Version: 9.9.9\n")
    (tmp_path / "playwright-9.9.9.dist-info" / "top_level.txt").write_text("playwright\n")
    before, after = _versions(), _versions(tmp_path)
    assert "playwright 9.9.9" not in json.dumps(before)
    for kind in STAGE_FUNCTIONS:
        assert after[kind]["code"] == before[kind]["code"]
        assert ("playwright 9.9.9" in after[kind]["packages"]) == ("playwright " in before[kind]["packages"])
    assert "pillow " in before["rollout"]["packages"] and "prefect" not in json.dumps(before)  # draws; runs on Prefect
    assert after["rollout"] != before["rollout"] and after["verify"] != before["verify"]
    reasons = why_rerun({"stage_versions": before}, {"stage_versions": after}, None)
    assert "packages changed (playwright " in reasons["rollout"] and "→ 9.9.9)" in reasons["rollout"]


def _registry(path, model_id: str):
    path.write_text(yaml.safe_dump({
        "roles": {"cua": "remote", "verifier": "remote"},
        "models": [{"name": "remote", "provider": "openai-compatible", "model": model_id,
                    "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-not-used"},
                   {"name": "quiet", "provider": "offline"}]}))
    return path


def test_a_stage_key_follows_the_models_its_inputs_name_and_never_their_keys(tmp_path):
    models = _registry(tmp_path / "models.yaml", "model-a")
    run = RunContext(run_key="k", run_dir=str(tmp_path / "run"), apps="apps_prompts/bundled", models=str(models))
    policy = StageVersion(kind="verify")

    def key(**inputs):
        return policy.compute_key(None, {"run": run, **inputs}, {})

    remote, offline = key(verifier="remote"), key(verifier="offline")
    assert models_named(str(models), {"verifier": "quiet"}) == {}  # a name the registry maps to the offline provider
    assert key(verifier="quiet") == offline
    assert json.dumps(models_named(str(models), {"verifier": "remote"})).count("sk-") == 0
    agent = AgentSettings(policy="uitars", calls="cua", max_steps=3)  # the plan resolves UI-TARS's model: the `cua` role
    assert set(models_named(str(models), {"agent": agent})) == {"cua"}
    # a stage is handed the role's provider (`llm.RoleProvider`): keyed by the model it calls, as the name was
    provider = RoleProvider(role="verifier", name="remote", offline=False, model="remote")
    assert models_named(str(models), {"verifier": provider}) == models_named(str(models), {"verifier": "remote"})
    assert models_named(str(models), {"verifier": RoleProvider(role="verifier", name="offline", offline=True)}) == {}
    _registry(models, "model-b")
    assert key(verifier="remote") != remote  # another model id behind the same name
    assert key(verifier="offline") == offline


@pytest.mark.parametrize("kind", sorted(STAGE_FUNCTIONS))
def test_every_stage_kind_names_a_stage_function_that_exists(kind):
    module, function = STAGE_FUNCTIONS[kind]
    assert any(str(p).endswith(f"{module.replace('.', '/')}.py") for p in stage_files(module, function))
    imported = __import__(module, fromlist=[function])
    assert hasattr(imported, function)


def test_the_stages_fields_are_named_after_the_stage_kinds():
    """`flows._cache.tallied` counts each `Stages` field under its own name as the stage kind."""
    from dataclasses import fields

    from flows import Stages

    assert {field.name for field in fields(Stages)} == set(STAGE_FUNCTIONS)


_PARSE_STRESS = """
import ast, gc, sys, threading
from pathlib import Path
from code_version import parse_source

source = Path("code_version/_closure.py").read_text(encoding="utf-8")
failures, unlocked_failures = [], []
stop = threading.Event()

class Litter:
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it, running the finaliser mid-parse
    def __del__(self):
        for _ in range(20):  # bytecode, so the interpreter may switch threads here
            pass

def litter():
    for _ in range(20_000):
        if stop.is_set():
            return
        [Litter() for _ in range(100)]

def at_depth(depth, parse):
    return at_depth(depth - 1, parse) if depth else parse()

def parse_many(depth, parse, failed):
    for _ in range(15):
        try:
            at_depth(depth, parse)
        except SystemError as error:
            failed.append(str(error))

sys.setswitchinterval(1e-6)
gc.set_threshold(300)
locked = lambda: parse_source(source, "stress.py")
threads = [threading.Thread(target=parse_many, args=(depth, locked, failures)) for depth in (5, 20, 40)]
threads.append(threading.Thread(target=parse_many, args=(60, lambda: ast.parse(source), unlocked_failures)))
collector = threading.Thread(target=litter)
collector.start()
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
stop.set()
collector.join()
print(len(failures), len(unlocked_failures))
"""


def test_parsing_in_many_threads_never_fails_on_the_shared_ast_depth_counter():
    # CPython 3.11 counts the AST constructor's depth per interpreter (python/cpython#106905): a
    # finaliser run mid-construction hands the GIL to a thread parsing at another stack depth, and
    # the first parse fails with a spurious SystemError — it failed a sweep in CI. The stress (in
    # its own interpreter: it changes the switch interval and the collector's threshold) makes that
    # happen within a second on 3.11.7 with a bare `ast.parse` (measured: 1-4 failures in each of
    # 5 runs); `parse_source` must survive it, even beside a thread parsing outside its lock as
    # 3.11's traceback does.
    done = subprocess.run(
        [sys.executable, "-c", _PARSE_STRESS], capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    failures, unlocked_failures = map(int, done.stdout.split())
    assert failures == 0, f"{failures} parses failed (a bare ast.parse beside them failed {unlocked_failures} times)"
