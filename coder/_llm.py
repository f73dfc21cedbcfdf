"""The LLM coder: generation and revision through a chat model, with bounded retries.

Two bounded loops: a reply cut off before `</html>`, or holding no HTML document at all, is
asked again (at most `max_truncation_retries` times, each a fresh request with a nudge, so a
cached bad reply is never replayed as the retry), and a revision that drops protected ids or
functions gets exactly one retry that lists them. Everything else (rate limits, timeouts) is the model
client's business.
"""

from __future__ import annotations

import logging
from typing import Any

from apps_prompts import AppSpec
from cua import DEFAULT_VIEWPORT, Viewport
from llm import ChatResult, Message, ModelClient, ReplyAttempt, RoleClient, ask, assistant_message, user_message

from ._contract import missing_items, plan_contract
from ._extract import extract_html
from ._models import Coder, CoderUsage, GenerationResult, HtmlExtractionError, RevisionRequest, RevisionResult
from ._prompts import (
    PROMPT_VERSION,
    contract_retry_text,
    generation_messages,
    html_retry_text,
    merge_feedback,
    revision_messages,
)

logger = logging.getLogger("coder")

ROLE = "coder"


class LLMCoder(Coder):
    """A coder backed by a chat model of the registry (`model` is a model name or a role)."""

    offline = False

    def __init__(
        self,
        client: ModelClient,
        model: str = ROLE,
        *,
        max_truncation_retries: int = 2,
        params: dict[str, Any] | None = None,
    ) -> None:
        """`params` override the model's configured request params for coder calls.

        Raises:
            UnknownModelError: `model` is neither a model nor a role of the client's registry.
        """
        self.name = model
        self._client = RoleClient(client, model, role=ROLE)  # the coder's usage row, whichever model plays it
        self.model = self._client.model
        self.max_truncation_retries = max(0, max_truncation_retries)
        self.params = dict(params or {})

    async def generate(self, app: AppSpec, *, viewport: Viewport = DEFAULT_VIEWPORT) -> GenerationResult:
        messages = generation_messages(app, viewport)
        usage = CoderUsage()
        html, attempts, truncated, _ = await self._html_reply(messages, usage, app.id)
        return GenerationResult(
            app_id=app.id, html=html, coder=self.name, model=self.model, source="model",
            prompt_version=PROMPT_VERSION, attempts=attempts, truncated_attempts=truncated, usage=usage,
        )

    async def revise(self, request: RevisionRequest) -> RevisionResult:
        contract = plan_contract(request.html, request.checkers, request.protected_ids)
        unsupported = request.active_unsupported()
        feedback = merge_feedback(request.active_feedback(), request.viewport)
        usage = CoderUsage()
        style_block = request.resolved_style_block()
        html, attempts, truncated = request.html, 0, 0
        # With nothing to act on (every task supported, no failed rollout, no regression), a model call
        # would only risk regressions, so the version carries over unchanged. The mode's default style
        # block is a rule of how to revise, not a reason to.
        if request.needs_revision():
            messages = revision_messages(request.mode, request.app, request.html, unsupported, feedback, contract,
                                         style_block, request.regressions, request.viewport)
            html, attempts, truncated, reply_text = await self._html_reply(messages, usage, request.app.id)
            missing_ids, missing_functions = missing_items(contract, request.html, html)
            if missing_ids or missing_functions:
                contract.first_missing_ids, contract.first_missing_functions = missing_ids, missing_functions
                contract.retried = True
                logger.info("app %s: revision dropped ids %s and functions %s; retrying once",
                            request.app.id, missing_ids, missing_functions)
                retry = [*messages, assistant_message(reply_text),
                         user_message(contract_retry_text(missing_ids, missing_functions))]
                html, more_attempts, more_truncated, _ = await self._html_reply(retry, usage, request.app.id)
                attempts += more_attempts
                truncated += more_truncated
                missing_ids, missing_functions = missing_items(contract, request.html, html)
                contract.status = "violated" if (missing_ids or missing_functions) else "kept_after_retry"
            contract.missing_ids, contract.missing_functions = missing_ids, missing_functions
        return RevisionResult(
            app_id=request.app.id, mode=request.mode, html=html, coder=self.name, model=self.model,
            prompt_version=PROMPT_VERSION, style_block=style_block, contract=contract,
            regression_task_ids=[r.task_id for r in request.regressions],
            unsupported_task_ids=[t.task_id for t in unsupported], feedback_lines=len(feedback),
            changed=html != request.html, attempts=attempts, truncated_attempts=truncated, usage=usage,
        )

    async def _html_reply(self, messages: list[Message], usage: CoderUsage,
                          app_id: str) -> tuple[str, int, int, str]:
        """(html, attempts, truncated attempts, raw reply text); retries cut-off and non-HTML replies, bounded.

        Raises:
            HtmlExtractionError: still no complete HTML document after the retries; the message
                names the app and the model.
        """
        def read(result: ChatResult) -> str:
            return extract_html(result.text, finish_reason=result.finish_reason, model=self.model)

        def nudge(asked: list[Message], sent: list[Message], attempt: ReplyAttempt) -> list[Message]:
            # A fresh request (not the bad reply) with a nudge; the attempt number in it keeps the cache from
            # replaying the reply just refused.
            return [*asked, user_message(html_retry_text(attempt.number + 1, attempt.error.truncated))]

        answer = await ask(self._client, messages, read, repair=nudge, attempts=self.max_truncation_retries + 1,
                           params=self.params, invalid=HtmlExtractionError)
        answer.count_into(usage)
        refused = [attempt.error for attempt in answer.attempts if attempt.error is not None]
        for number, error in enumerate(refused, start=1):
            logger.warning("app %s: %s (attempt %d of %d)", app_id, error, number, self.max_truncation_retries + 1)
        truncated = sum(int(error.truncated) for error in refused)
        last = answer.attempts[-1]
        if not answer.ok:
            error = last.error
            advice = ("still cut off after {n} attempts; raise the model's max tokens" if error.truncated
                      else "no HTML document in any of {n} attempts").format(n=last.number)
            raise HtmlExtractionError(f"app {app_id!r}: {error} — {advice}", model=self.model, truncated=error.truncated,
                                      excerpt=error.excerpt) from error
        return answer.value, last.number, truncated, last.reply

