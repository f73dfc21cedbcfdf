"""Shared test setup: one browser for the session, closed at the end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

# Each test process its own model call cache: under pytest-xdist a test that counts a scripted server's
# requests must not find a reply the other process's test cached a moment before. The workers inherit the
# environment of the process that started them, which had set the default already (so until 2026-11-28 both
# shared `main`): a worker replaces that default with its own folder, and keeps a folder the user set.
TEST_CACHE = ROOT / ".cache" / "test-llm"
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if "AUI_CACHE_DIR" not in os.environ or Path(os.environ["AUI_CACHE_DIR"]) == TEST_CACHE / "main":
    os.environ["AUI_CACHE_DIR"] = str(TEST_CACHE / (WORKER or "main"))
# The environments' proofs stay one folder for all: keyed by the page, the task and the proving code, and
# written atomically, a proof is a proof in any process (apart, each would prove the twelve bundled apps, ≈ 35 s).
PROOFS = Path(os.environ["AUI_CACHE_DIR"]) / "environments"
if WORKER and Path(os.environ["AUI_CACHE_DIR"]).parent == TEST_CACHE and not (PROOFS.exists() or PROOFS.is_symlink()):
    (TEST_CACHE / "environments").mkdir(parents=True, exist_ok=True)
    PROOFS.parent.mkdir(parents=True, exist_ok=True)
    PROOFS.symlink_to(TEST_CACHE / "environments", target_is_directory=True)
# A model stage that fails waits 2 s, then 10 s, before its next attempts; the tests that make every
# attempt fail would spend most of their time asleep (the attempts, not the waits, are what they check).
os.environ.setdefault("AUI_STAGE_RETRY_DELAYS_S", "0.2,0.5")
# Under pytest-xdist each test process has its own Prefect home, so the `aui` runs the tests start
# (ephemeral servers on SQLite) never share one database file between two processes.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["PREFECT_HOME"] = str(Path(os.environ.get("PREFECT_HOME", ROOT / ".prefect")) / os.environ["PYTEST_XDIST_WORKER"])
    # Prefect makes its home without the parents: on a fresh clone `.prefect/` is not there yet (a warning each process)
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data; tests that need it skip with a clear message when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (tests needing gpt5-apps / aui-gym-apps skipped)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def prefect_server():
    """A real (test-harness) Prefect server, one for the whole session (flow and reliability tests)."""
    from prefect.testing.utilities import prefect_test_harness

    # A cold ephemeral server took 18–20 s here; Prefect's default limit is 20 s (environment.md). On the
    # shared 2-core machine under load (load average 12-14: two CPU hogs beside other test sessions) it took
    # 242 s, past the 120 s allowed before. The limit bounds a server that never starts; it measures nothing.
    with prefect_test_harness(server_startup_timeout=600):
        yield


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory):
    """`synthetic(steps, success=False) -> Path`: a cached synthetic trajectory folder (do not modify)."""
    from tests.trajectories import synthetic_trajectory

    cache: dict[tuple[int, bool], Path] = {}

    def build(steps: int, success: bool = False) -> Path:
        key = (steps, success)
        if key not in cache:
            folder = tmp_path_factory.mktemp(f"synthetic-{steps}-{'ok' if success else 'fail'}")
            synthetic_trajectory(folder, steps, success=success)
            cache[key] = folder
        return cache[key]

    return build


@pytest.fixture(scope="session", autouse=True)
async def _close_browser_at_end():
    yield
    from cua import close_browser

    await close_browser()


# The files that take longest (each over ≈ 50 s in two processes on a fresh clone, 2026-11-27), started first.
# Under `make test` the test processes take whole files in collection order (`--no-loadscope-reorder`); a long
# file left to the end keeps one process busy while the others have nothing to do. One process: no effect.
SLOW_FILES_FIRST = (
    "tests/environments/test_reference_solutions.py",  # ≈ 6 min in one process, loaded machine (2026-11-28)
    "tests/environments/test_check_env.py",  # ≈ 6 min likewise, ≈ 1 min since its waits are 0.5 s (2026-11-28)
    "tests/flows/test_distributed.py",
    "tests/reliability/test_stop_signals.py",
    "tests/reliability/test_killed_run.py",
    "tests/flows/test_cache_follows_code.py",
    "tests/reliability/test_interrupted_sweeps.py",
    "tests/apps_prompts/test_gpt5_tasks.py",
    "tests/cua/test_hostile_apps.py",
    "tests/verifier/test_gate.py",
    "tests/flows/test_tables_and_traces.py",
    "tests/reliability/test_model_faults.py",
    "tests/perturb/test_bundled_variants.py",
    "tests/flows/test_deploy.py",
    "tests/flows/test_ui_and_report.py",
    "tests/reliability/test_bad_input.py",
    "tests/flows/test_offline_loop.py",
    "tests/flows/test_ablation.py",
    "tests/verifier/test_planted_checkers.py",
    "tests/cua/test_binary_fidelity.py",
)


def pytest_collection_modifyitems(items):
    rank = {path: number for number, path in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(Path(item.path).relative_to(ROOT).as_posix(), len(rank)))
