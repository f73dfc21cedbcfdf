"""The verifier: task solvability, JS checkers, the checker runtime and gate, Function Completeness."""

from ._reference import TaskProof, prove_app, prove_task
from ._runtime import DEFAULT_TIMEOUT_MS, CheckerOutcome, run_checker

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "CheckerOutcome",
    "TaskProof",
    "prove_app",
    "prove_task",
    "run_checker",
]
