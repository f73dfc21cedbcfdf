"""The verifier: task solvability, JS checkers, the checker runtime, gate and proofs, Function Completeness.

    verdicts = await verify_app(spec, html, verifier="offline" | "<model or role>", out_dir=...)
    verdicts.checkers()                 # task id → gated JS checker, for the rollouts
    verdicts.verdict(task_id).proof     # "proven" (true after replaying its solution) | "claimed" | "unsupported"
    rollout_checker(verdict)            # the rollout's `cua.Checker` (a verdict, or a checker's source)
    function_completeness(verdicts)     # Rate: valid checkers / all tasks (the paper's FC)
    function_completeness_proven(verdicts)  # Rate: checkers proven true after their solution / all tasks
    static_warnings(checker, html)      # why a checker looks like it can never be true (a warning, not a proof)
    audit_revision(before_html, after_html, checker).suspect   # markup changed, the code writing it did not
    match_answer(trajectory.answer, task.answer_check)          # an answer check: passed, and why
    verdicts.verdict(task_id).checks    # the task's further checks (answer, judge), each with its proof
    verdicts.answer_checks()            # task id → the answer check its final answer is scored against
    await score_rollout(trajectory, has_checker=True, checks=[...], judges=...)  # all checks must pass

`verifier.judge` holds the other judges of success and how far they agree: the model judge, the
offline text judge, people's labels and the agreement between any two (Cohen's κ, balanced
accuracy). Its names are used as `from verifier.judge import …`, not re-exported here: the judge
has its own `PROMPT_VERSION`, and one name should have one home.
"""

from ._answers import AnswerResult, answer_on_page, match_answer, normalize_answer, numbers_in
from ._audit import ElementChange, RevisionAudit, ScriptChange, audit_revision
from ._checker import MAX_CHECKER_CHARS, CheckerKind, CompiledChecker, compile_checker
from ._gate import GateResult, gate_checker, gate_checkers
from ._llm import LLMVerifierConfig, judge_app
from ._prompts import PROMPT_VERSION, SYSTEM_PROMPT, answer_schema, solution_schema, verdict_reply_schema
from ._proof import (
    PROOF_CONCURRENCY,
    AnswerProof,
    ProofStatus,
    SolutionProof,
    StepFailure,
    gate_and_prove,
    gate_and_prove_all,
    gate_on_fresh_app,
    prove_answer,
    replay_solution,
)
from ._reply import VerdictEntry, VerifierReplyError, parse_answer, parse_reply, parse_solution
from ._rollout_checker import rollout_checker
from ._rules import RuleSyntaxError, looks_like_rule, parse_rule
from ._rules_js import CompiledRule, compile_rule
from ._runtime import DEFAULT_TIMEOUT_MS, CheckerOutcome, run_checker
from ._scoring import CheckOutcome, TaskScore, dom_passed, score_rollout
from ._static import static_warnings
from ._verdicts import (
    OFFLINE,
    VERDICTS_FILE,
    AppVerdicts,
    CompletenessSummary,
    Rate,
    TokenTotals,
    Verdict,
    VerdictCheck,
    completeness_summary,
    function_completeness,
    function_completeness_proven,
    html_sha256,
    read_verdicts,
    success_outcomes,
    success_rate,
    success_rate_proven,
    write_verdicts,
)
from ._verify import TaskProof, prove_task, reference_verdicts, verify_app

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "MAX_CHECKER_CHARS",
    "OFFLINE",
    "PROMPT_VERSION",
    "PROOF_CONCURRENCY",
    "SYSTEM_PROMPT",
    "VERDICTS_FILE",
    "AnswerProof",
    "AnswerResult",
    "AppVerdicts",
    "CheckOutcome",
    "CheckerKind",
    "CheckerOutcome",
    "CompiledChecker",
    "CompiledRule",
    "CompletenessSummary",
    "ElementChange",
    "GateResult",
    "LLMVerifierConfig",
    "ProofStatus",
    "Rate",
    "RevisionAudit",
    "RuleSyntaxError",
    "ScriptChange",
    "SolutionProof",
    "StepFailure",
    "TaskProof",
    "TaskScore",
    "TokenTotals",
    "Verdict",
    "VerdictCheck",
    "VerdictEntry",
    "VerifierReplyError",
    "answer_on_page",
    "answer_schema",
    "audit_revision",
    "compile_checker",
    "compile_rule",
    "completeness_summary",
    "dom_passed",
    "function_completeness",
    "function_completeness_proven",
    "gate_and_prove",
    "gate_and_prove_all",
    "gate_checker",
    "gate_checkers",
    "gate_on_fresh_app",
    "html_sha256",
    "judge_app",
    "looks_like_rule",
    "match_answer",
    "normalize_answer",
    "numbers_in",
    "parse_answer",
    "parse_reply",
    "parse_rule",
    "parse_solution",
    "prove_answer",
    "prove_task",
    "read_verdicts",
    "reference_verdicts",
    "replay_solution",
    "rollout_checker",
    "run_checker",
    "score_rollout",
    "solution_schema",
    "static_warnings",
    "success_outcomes",
    "success_rate",
    "success_rate_proven",
    "verdict_reply_schema",
    "verify_app",
    "write_verdicts",
]
