"""The verifier's output: one verdict per task, collected per app version in `verdicts.json`."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel, Field, computed_field, model_validator

from apps_prompts import SolutionStep
from cua import write_atomic

from ._checker import CheckerKind
from ._gate import GateResult
from ._proof import ProofStatus

VERDICTS_FILE = "verdicts.json"
OFFLINE = "offline"
"""The verifier label of the offline path (the spec's reference checkers through the gate)."""


class Verdict(BaseModel):
    """Whether the app supports one task, and the checker that will judge the agent on it.

    `checker` is set only when the checker passed the gate: it is the JS body rollouts run.
    A rejected attempt stays visible in `checker_source` and `gate` for whoever reads the record.
    `proof` says how far the checker is trusted: "proven" (true after replaying `solution` on a
    fresh page), "claimed" (passed the gate, not proven) or "unsupported" (no valid checker). A
    verdict written before proofs existed loads as "claimed" or "unsupported" by its validity.
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
    repairs: int = Field(default=0, description="Repair round-trips spent on this task, for the gate or the proof (0 or 1).")
    proof: ProofStatus = Field(
        default="unsupported",
        description="proven: true after replaying `solution`; claimed: passed the gate, not proven; unsupported: no valid checker.",
    )
    proof_reason: str = Field(default="", description="Why the proof is what it is (the failed step, the checker's value).")
    solution: list[SolutionStep] = Field(default_factory=list, description="The steps replayed to prove the checker.")
    static_warnings: list[str] = Field(
        default_factory=list, description="Why the checker looks like it can never be true (a static reading; not a proof)."
    )

    @model_validator(mode="after")
    def _proof_agrees_with_validity(self) -> "Verdict":
        if "proof" not in self.model_fields_set:  # built without a proof, or read from an older file
            self.proof = "claimed" if self.valid else "unsupported"
            if not self.proof_reason:
                self.proof_reason = "no solution was replayed" if self.valid else "no checker passed the gate"
        elif (self.proof == "unsupported") == self.valid:
            raise ValueError(
                f"task '{self.task_id}': proof '{self.proof}' contradicts a checker that "
                f"{'passed' if self.valid else 'did not pass'} the gate"
            )
        return self

    @property
    def valid(self) -> bool:
        """Has a checker that passed the gate: counts towards Function Completeness (the paper's)."""
        return self.solvable and self.checker is not None and self.gate is not None and self.gate.accepted

    @property
    def proven(self) -> bool:
        """The checker passed the gate and turned true after replaying its solution: counts towards FC (proven)."""
        return self.proof == "proven" and self.valid

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

    @computed_field
    @property
    def function_completeness_proven(self) -> float:
        """Tasks with a proven checker / all tasks (0.0 for an app without tasks)."""
        return round(sum(v.proven for v in self.verdicts) / len(self.verdicts), 6) if self.verdicts else 0.0

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
