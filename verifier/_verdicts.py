"""The verifier's output: one verdict per task, collected per app version in `verdicts.json`."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel, Field, computed_field

from cua import write_atomic

from ._checker import CheckerKind
from ._gate import GateResult

VERDICTS_FILE = "verdicts.json"
OFFLINE = "offline"
"""The verifier label of the offline path (the spec's reference checkers through the gate)."""


class Verdict(BaseModel):
    """Whether the app supports one task, and the checker that will judge the agent on it.

    `checker` is set only when the checker passed the gate: it is the JS body rollouts run.
    A rejected attempt stays visible in `checker_source` and `gate` for whoever reads the record.
    """

    task_id: str
    solvable: bool = Field(description="Final: the verifier said solvable AND the checker passed the gate.")
    checker: str | None = Field(default=None, description="The gated JS body the runtime runs; None when invalid.")
    checker_source: str | None = Field(default=None, description="The checker as the verifier wrote it (JS or rule).")
    checker_kind: CheckerKind | None = None
    gate: GateResult | None = Field(default=None, description="The gate's decision on the last checker tried.")
    reasons: list[str] = Field(default_factory=list, description="The verifier's reason, then any gate failures.")
    warnings: list[str] = Field(default_factory=list)
    model: str = Field(description="Registry model name that judged, or 'offline'.")
    offline: bool = False
    tokens: int = Field(default=0, description="This task's share of its batch's tokens (even split).")
    repairs: int = Field(default=0, description="Gate repair round-trips spent on this task (0 or 1).")

    @property
    def valid(self) -> bool:
        """Has a checker that passed the gate: counts towards Function Completeness."""
        return self.solvable and self.checker is not None and self.gate is not None and self.gate.accepted

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


class TokenTotals(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class AppVerdicts(BaseModel):
    """Every task's verdict for one app version, in the spec's task order."""

    app_id: str
    domain: str
    html_sha256: str = Field(description="Which app version was judged.")
    verifier: str = Field(description="'offline' or the registry model name.")
    offline: bool
    prompt_version: str | None = Field(default=None, description="The verifier prompt's version (model verifiers).")
    verdicts: list[Verdict]
    tokens: TokenTotals = Field(default_factory=TokenTotals)
    elapsed_s: float = 0.0

    @computed_field  # written to verdicts.json so a reader needs no code to see it
    @property
    def function_completeness(self) -> float:
        """Tasks with a valid checker / all tasks (0.0 for an app without tasks)."""
        return round(sum(v.valid for v in self.verdicts) / len(self.verdicts), 6) if self.verdicts else 0.0

    def verdict(self, task_id: str) -> Verdict:
        """The verdict of one task; raises KeyError naming the known ids."""
        for verdict in self.verdicts:
            if verdict.task_id == task_id:
                return verdict
        raise KeyError(f"app '{self.app_id}' has no verdict for task '{task_id}' (known: {', '.join(self.task_ids())})")

    def task_ids(self) -> list[str]:
        return [v.task_id for v in self.verdicts]

    def checkers(self) -> dict[str, str]:
        """Task id → gated JS checker, for the tasks with a valid checker only (what rollouts run)."""
        return {v.task_id: v.checker for v in self.verdicts if v.valid and v.checker is not None}

    def unsupported(self) -> dict[str, str]:
        """Task id → why it has no valid checker (the input of the `unsupported` revision mode)."""
        return {v.task_id: v.reason or "no valid checker" for v in self.verdicts if not v.valid}


def html_sha256(html: str | bytes) -> str:
    data = html.encode("utf-8") if isinstance(html, str) else html
    return hashlib.sha256(data).hexdigest()


def write_verdicts(verdicts: AppVerdicts, out_dir: Path | str) -> Path:
    """Write `out_dir/verdicts.json` atomically (a reader sees the old file or the whole new one)."""
    payload = verdicts.model_dump_json(indent=2).encode("utf-8") + b"\n"
    return write_atomic(Path(out_dir) / VERDICTS_FILE, payload)


def read_verdicts(path: Path | str) -> AppVerdicts:
    """Read a `verdicts.json` (or the one inside the folder `path`)."""
    path = Path(path)
    if path.is_dir():
        path = path / VERDICTS_FILE
    data = path.read_text(encoding="utf-8")
    return AppVerdicts.model_validate_json(data)
