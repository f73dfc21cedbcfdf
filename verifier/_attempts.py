"""A checker with its solution, through everything that judges it: the gate, the proof, the static reading.

Both verifiers use this: the offline one on the spec's reference checkers and solutions, the model
one on each reply (and on each repair). A candidate may also carry an answer check (a question-style
task), proven by reading the expected answer on the page after the same solution (`_proof`),
or carry only that. An `Attempt` knows its proof status and how to say what happened to it, for the
verdict and for the repair message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from apps_prompts import AnswerCheck, SolutionStep, Task
from cua import BrowserConfig

from ._checker import CheckerKind, CompiledChecker
from ._gate import GateResult, precompile
from ._proof import (PROOF_TIMEOUT_S, STEP_TIMEOUT_MS, AnswerProof, ProofStatus, SolutionProof, gate_and_prove_all,
                     prove_answer, run_all)
from ._runtime import DEFAULT_TIMEOUT_MS
from ._static import static_warnings
from ._verdicts import JUDGE_CHECK_REASON, Verdict, VerdictCheck

_RANK = {"unsupported": 0, "claimed": 1, "proven": 2}


@dataclass(frozen=True)
class Candidate:
    """A checker to judge (or none: an answer-only task), with the solution meant to make it true."""

    source: str | None = None  # the DOM checker as written; None when the task is judged by its answer only
    kind: CheckerKind | None = None
    solution: Sequence[SolutionStep] = ()
    solution_error: str | None = None  # why no solution is replayed (none given, or unusable)
    solution_text: str = ""  # the solution as sent, for the repair message
    answer: AnswerCheck | None = None  # the expected answer of a question-style task
    answer_source: str = "spec"  # "spec" or "verifier": who gave the answer check
    answer_error: str | None = None  # why the answer check the verifier sent was dropped
    answer_note: str | None = None  # how the answer check the verifier sent was repaired to be usable
    answer_text: str = ""  # the answer check as sent, for the repair message


@dataclass
class Attempt:
    """One candidate after the gate, the proofs (if it passed the gate) and the static reading.

    `gate` is None for a candidate without a DOM checker. The answer is proven only when there is no
    checker or the checker passed the gate (a task whose checker fails is unsupported anyway).
    """

    candidate: Candidate
    gate: GateResult | None
    proof: SolutionProof | None
    static_warnings: list[str] = field(default_factory=list)
    answer_proof: AnswerProof | None = None

    @property
    def status(self) -> ProofStatus:
        """unsupported: the checker failed the gate (or there is nothing to judge by); proven: the checker (if
        any) was proven and the answer (if any) shown; claimed otherwise."""
        if self.gate is not None and not self.gate.accepted:
            return "unsupported"
        parts = [proven for proven, _ in self._parts()]
        if not parts:
            return "unsupported"
        return "proven" if all(parts) else "claimed"

    def _parts(self) -> list[tuple[bool, str]]:
        """(proven, why) for the checker and for the answer check, those the candidate has."""
        parts = []
        if self.gate is not None:
            parts.append((self.proof.proven, self.proof.reason) if self.proof is not None
                         else (False, self.candidate.solution_error or "no solution was given"))
        if self.candidate.answer is not None:
            parts.append(self.answer_part)
        return parts

    @property
    def answer_part(self) -> tuple[bool, str]:
        """Whether the answer check was proven, and why (the reason names the answer check)."""
        if self.answer_proof is not None:
            return self.answer_proof.shown, f"answer check: {self.answer_proof.reason}"
        return False, f"answer check: not proven ({self.candidate.solution_error or 'no solution was replayed'})"

    @property
    def proof_reason(self) -> str:
        """Why the status is what it is, in one sentence."""
        if self.gate is not None and not self.gate.accepted:
            return f"the checker failed the validation gate: {self.gate.reason}"
        parts = self._parts()
        if not parts:
            return self.candidate.answer_error or "no checker and no answer check were given"
        shown = parts if all(proven for proven, _ in parts) else [part for part in parts if not part[0]]
        return "; ".join(why for _, why in shown)

    @property
    def what_happened(self) -> str:
        """The same, as the repair message tells it to the verifier."""
        error = self.candidate.answer_error
        dropped = f"the answer check you sent could not be used: {error}" if error else ""
        if self.gate is not None and not self.gate.accepted:
            return f"rejected by the validation gate: {self.gate.reason}" + (f"; {dropped}" if dropped else "")
        if self.status == "proven":
            return f"everything else passed, but {dropped}" if dropped else "was proven"
        if self.status == "unsupported":
            return "gave no checker and no usable answer check" + (f": {dropped}" if dropped else "")
        if self.gate is None:
            happened = f"was not proven: {self.proof_reason}"
        elif self.proof is None and self.candidate.answer is None:
            happened = f"passed the gate at load, but could not be proven: {self.proof_reason}"
        else:
            happened = f"passed the gate at load, but was not proven: {self.proof_reason}"
        return happened + (f"; {dropped}" if dropped else "")

    @property
    def needs_repair(self) -> bool:
        """Not proven, or the answer check sent with it had to be dropped."""
        return self.status != "proven" or self.candidate.answer_error is not None

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
    """Gate, prove and read every candidate (task id → candidate) against `html`.

    Checkers first (gate and proof); then the answer checks of the candidates whose checker passed
    the gate or that have none, each on a fresh page of its own.
    """
    compiled: dict[str, CompiledChecker | GateResult] = {
        key: precompile(candidate.source, candidate.kind) for key, candidate in candidates.items()
        if candidate.source is not None
    }
    runnable = {key: (c, candidates[key].solution) for key, c in compiled.items() if isinstance(c, CompiledChecker)}
    judged = await gate_and_prove_all(
        html, runnable, config=browser, timeout_ms=timeout_ms,
        step_timeout_ms=step_timeout_ms, proof_timeout_s=proof_timeout_s,
    ) if runnable else {}
    attempts = {}
    for key, candidate in candidates.items():
        checker = compiled.get(key)
        if isinstance(checker, CompiledChecker):
            attempts[key] = Attempt(candidate, *judged[key], static_warnings(checker, html))
        else:  # no checker, or the gate's rejection of one that does not compile
            attempts[key] = Attempt(candidate, checker, None)

    to_read = {
        key: attempt for key, attempt in attempts.items()
        if attempt.candidate.answer is not None and (attempt.gate is None or attempt.gate.accepted)
        and (attempt.candidate.solution or attempt.candidate.solution_error is None)  # an empty solution: shown at load
    }
    proofs = await run_all({key: prove_answer(
        html, attempt.candidate.answer, attempt.candidate.solution, config=browser,
        step_timeout_ms=step_timeout_ms, proof_timeout_s=proof_timeout_s,
    ) for key, attempt in to_read.items()})
    for key, answer_proof in proofs.items():
        attempts[key].answer_proof = answer_proof
    return attempts


def verdict_from_attempt(
    task_id: str, attempt: Attempt, *, model: str, reason: str, offline: bool = False, repairs: int = 0
) -> Verdict:
    """The verdict a task gets when `attempt` is the checker (and answer check) kept for it."""
    gate, candidate = attempt.gate, attempt.candidate
    accepted = gate.accepted if gate is not None else candidate.answer is not None
    checks = []
    if candidate.answer is not None:
        proven, why = attempt.answer_part
        checks.append(VerdictCheck(check=candidate.answer, proof="proven" if proven else "claimed", proof_reason=why,
                                   source=candidate.answer_source))
    warnings = list(gate.warnings) if gate is not None else []
    if candidate.answer_error:
        warnings.append(f"the verifier's answer check was dropped: {candidate.answer_error}")
    if candidate.answer_note:
        warnings.append(f"the verifier's answer check was repaired: {candidate.answer_note}")
    replayed = attempt.proof is not None or attempt.answer_proof is not None
    return Verdict(
        task_id=task_id,
        model=model,
        offline=offline,
        solvable=accepted,
        checker=gate.javascript if gate is not None and gate.accepted else None,
        checker_source=candidate.source,
        checker_kind=gate.kind if gate is not None else None,
        gate=gate,
        reasons=[reason] if accepted else [reason, f"checker failed the validation gate: {gate.reason}" if gate is not None
                                           else f"no checker, and no usable answer check: {attempt.proof_reason}"],
        warnings=warnings,
        repairs=repairs,
        proof=attempt.status,
        proof_reason=attempt.proof_reason,
        solution=list(candidate.solution) if replayed else [],
        static_warnings=list(attempt.static_warnings),
        checks=checks,
    )


def with_judge_checks(verdict: Verdict, task: Task) -> Verdict:
    """`verdict` with the task's judge checks (final_screenshot / flow) added: nothing to prove, a model decides later."""
    verdict.checks = [*verdict.checks, *(VerdictCheck(check=check, proof="claimed", proof_reason=JUDGE_CHECK_REASON)
                                         for check in task.judge_checks)]
    return verdict


def unsupported_verdict(task_id: str, *reasons: str, model: str, offline: bool = False, **fields) -> Verdict:
    """The verdict of a task without a checker to try (judged unsolvable, left out, no reference)."""
    return Verdict(task_id=task_id, model=model, offline=offline, solvable=False, reasons=list(reasons),
                   proof="unsupported", proof_reason=reasons[-1] if reasons else "no checker", **fields)
