"""A checker with its solution, through everything that judges it: the gate, the proof, the static reading.

Both verifiers use this: the offline one on the spec's reference checkers and solutions, the model
one on each reply (and on each repair). An `Attempt` knows its proof status and how to say what
happened to it, for the verdict and for the repair message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from apps_prompts import SolutionStep
from cua import BrowserConfig

from ._checker import CheckerKind, CompiledChecker
from ._gate import GateResult, precompile
from ._proof import PROOF_TIMEOUT_S, STEP_TIMEOUT_MS, ProofStatus, SolutionProof, gate_and_prove_all, proof_status
from ._runtime import DEFAULT_TIMEOUT_MS
from ._static import static_warnings
from ._verdicts import Verdict

_RANK = {"unsupported": 0, "claimed": 1, "proven": 2}


@dataclass(frozen=True)
class Candidate:
    """A checker to judge, with the solution meant to make it true."""

    source: str
    kind: CheckerKind | None = None
    solution: Sequence[SolutionStep] = ()
    solution_error: str | None = None  # why no solution is replayed (none given, or unusable)
    solution_text: str = ""  # the solution as sent, for the repair message


@dataclass
class Attempt:
    """One candidate after the gate, the proof (if it passed the gate) and the static reading."""

    candidate: Candidate
    gate: GateResult
    proof: SolutionProof | None
    static_warnings: list[str] = field(default_factory=list)

    @property
    def status(self) -> ProofStatus:
        return proof_status(self.gate, self.proof)

    @property
    def proof_reason(self) -> str:
        """Why the status is what it is, in one sentence."""
        if not self.gate.accepted:
            return f"the checker failed the validation gate: {self.gate.reason}"
        if self.proof is not None:
            return self.proof.reason
        return self.candidate.solution_error or "no solution was given"

    @property
    def what_happened(self) -> str:
        """The same, as the repair message tells it to the verifier."""
        if not self.gate.accepted:
            return f"rejected by the validation gate: {self.gate.reason}"
        if self.proof is None:
            return f"passed the gate at load, but could not be proven: {self.proof_reason}"
        return f"passed the gate at load, but was not proven: {self.proof_reason}"

    def better_than(self, other: "Attempt") -> bool:
        """Ranks proven > claimed > unsupported; a tie goes to `self` (the later attempt)."""
        return _RANK[self.status] >= _RANK[other.status]


async def attempt_all(
    html: str,
    candidates: Mapping[str, Candidate],
    *,
    browser: BrowserConfig | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    step_timeout_ms: int = STEP_TIMEOUT_MS,
    proof_timeout_s: float = PROOF_TIMEOUT_S,
) -> dict[str, Attempt]:
    """Gate, prove and read every candidate (task id → candidate) against `html`."""
    compiled: dict[str, CompiledChecker | GateResult] = {
        key: precompile(candidate.source, candidate.kind) for key, candidate in candidates.items()
    }
    runnable = {key: (c, candidates[key].solution) for key, c in compiled.items() if isinstance(c, CompiledChecker)}
    judged = await gate_and_prove_all(
        html, runnable, config=browser, timeout_ms=timeout_ms,
        step_timeout_ms=step_timeout_ms, proof_timeout_s=proof_timeout_s,
    )
    attempts = {}
    for key, candidate in candidates.items():
        checker = compiled[key]
        if isinstance(checker, GateResult):
            attempts[key] = Attempt(candidate, checker, None)
            continue
        gate, proof = judged[key]
        attempts[key] = Attempt(candidate, gate, proof, static_warnings(checker, html))
    return attempts


def verdict_from_attempt(
    task_id: str, attempt: Attempt, *, model: str, reason: str, offline: bool = False, repairs: int = 0
) -> Verdict:
    """The verdict a task gets when `attempt` is the checker kept for it."""
    gate = attempt.gate
    return Verdict(
        task_id=task_id,
        model=model,
        offline=offline,
        solvable=gate.accepted,
        checker=gate.javascript if gate.accepted else None,
        checker_source=attempt.candidate.source,
        checker_kind=gate.kind,
        gate=gate,
        reasons=[reason] if gate.accepted else [reason, f"checker failed the validation gate: {gate.reason}"],
        warnings=list(gate.warnings),
        repairs=repairs,
        proof=attempt.status,
        proof_reason=attempt.proof_reason,
        solution=list(attempt.candidate.solution) if attempt.proof is not None else [],
        static_warnings=list(attempt.static_warnings),
    )


def unsupported_verdict(task_id: str, *reasons: str, model: str, offline: bool = False, **fields) -> Verdict:
    """The verdict of a task without a checker to try (judged unsolvable, left out, no reference)."""
    return Verdict(task_id=task_id, model=model, offline=offline, solvable=False, reasons=list(reasons),
                   proof="unsupported", proof_reason=reasons[-1] if reasons else "no checker", **fields)
