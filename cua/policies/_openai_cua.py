"""OpenAI computer-use through the Responses API (`computer_use_preview` tool).

The model answers with `computer_call` items (one action each, or an `actions` batch); we
execute them and answer each call with a `computer_call_output` carrying the screenshot taken
after its last action, chained by `previous_response_id`. Pending safety checks are
acknowledged (this harness only ever touches a sandboxed local app) and logged. `screenshot`
requests are answered at once with the current screenshot, within a bounded number of calls.
A reply with no computer call ends the episode as `finished` with the model's message. The
client validates the items we read (`llm.ComputerCall`); a malformed reply is an invalid one,
which the rollout asks again.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from llm import RoleClient, get_client, image_data_url

from .._actions import Action
from .._computer_use import UnusableReply, parse_computer_action
from .._coordinates import OffScreenPoint, place_action
from .._policy import Observation, Policy, PolicyDecision
from .._trajectory import TokenUsage

if TYPE_CHECKING:
    from llm import ComputerAction, ComputerCall, ResponsesResult

INSTRUCTIONS = (
    "You are testing a web app that is already open in the browser. Carry out the user's task in "
    "the app itself; do not navigate away or ask for confirmation. When the task is done, say so "
    "in one sentence."
)


@dataclass
class _PendingCall:
    call_id: str
    executed: int  # how many of the decision's executed actions precede and include this call's
    safety_checks: list[dict[str, Any]] = field(default_factory=list)


class OpenAIComputerUsePolicy(Policy):
    """`model` is a registry model name or role (default the `openai-cua` entry)."""

    name: ClassVar[str] = "openai-cua"
    default_model: ClassVar[str] = "openai-cua"

    def __init__(
        self,
        model: str | None = None,
        *,
        client: Any = None,
        models_path: str | None = None,
        environment: str = "browser",
        max_screenshot_rounds: int = 3,
        timeout_s: float | None = None,
        cache: bool | None = False,
        reasoning_summary: str | None = None,
        **params: Any,
    ):
        # The given client, else the process-wide one (`llm.get_client`: never a task argument), bound to the model.
        self.client = RoleClient(client if client is not None else get_client(models_path), model or self.default_model)
        self.model = self.client.model
        self.environment = environment
        self.max_screenshot_rounds = max(1, max_screenshot_rounds)
        self.timeout_s = timeout_s
        # Responses are chained server-side by id: replaying a cached one would point at nothing.
        self.cache = cache
        self.reasoning_summary = reasoning_summary
        self.params = params
        self.previous_response_id: str | None = None
        self.pending: list[_PendingCall] = []

    @property
    def coordinate_space(self) -> str:
        return "openai-cua"

    def tool(self, observation: Observation) -> dict[str, Any]:
        return {
            "type": "computer_use_preview",
            "display_width": observation.viewport_width,
            "display_height": observation.viewport_height,
            "environment": self.environment,
        }

    async def act(self, observation: Observation) -> PolicyDecision:
        started = time.perf_counter()
        tokens = TokenUsage()
        notes: list[str] = []
        raw_items: list[dict[str, Any]] = []
        inputs = self._first_input(observation) if self.previous_response_id is None else self._outputs(observation)
        for _ in range(self.max_screenshot_rounds):
            result = await self._call(observation, inputs)
            tokens += TokenUsage(prompt=result.usage.prompt_tokens, completion=result.usage.completion_tokens)
            self.previous_response_id = result.id
            raw_items.extend(result.output)
            thought = _reasoning_text(result.output)
            model_ms = round((time.perf_counter() - started) * 1000, 2)
            if result.invalid is not None:
                self._answer_malformed(result)
                return self._invalid(f"malformed reply: {result.invalid}", raw_items, tokens, model_ms, notes)
            calls = result.computer_calls()
            if not calls:
                message = result.output_text.strip()
                if not message:
                    return self._invalid("the reply had neither a computer_call nor a message", raw_items, tokens, model_ms)
                finished = Action(kind="finished", text=message[:2000])
                return PolicyDecision([finished], raw_text=_raw(raw_items), thought=thought or message, tokens=tokens,
                                      model_ms=model_ms, notes=notes)
            try:
                actions = self._accept_calls(calls, notes, observation.viewport_width, observation.viewport_height)
            except UnusableReply as exc:
                return self._invalid(str(exc), raw_items, tokens, model_ms, notes)
            if actions:
                return PolicyDecision(actions, raw_text=_raw(raw_items), thought=thought, tokens=tokens,
                                      model_ms=model_ms, notes=notes)
            # Only screenshot requests: answer them now with what the screen shows.
            inputs = self._call_outputs([image_data_url(observation.screenshot)] * len(self.pending))
        return self._invalid(
            f"the model asked for {self.max_screenshot_rounds} screenshots in a row without acting",
            raw_items, tokens, round((time.perf_counter() - started) * 1000, 2), notes,
        )

    async def _call(self, observation: Observation, inputs: list[dict[str, Any]]) -> Any:
        request: dict[str, Any] = {
            "input": inputs,
            "tools": [self.tool(observation)],
            "truncation": "auto",
            "instructions": INSTRUCTIONS,
            **self.params,
        }
        if self.previous_response_id:
            request["previous_response_id"] = self.previous_response_id
        if self.reasoning_summary:
            request["reasoning"] = {"summary": self.reasoning_summary}
        return await self.client.responses(timeout_s=self.timeout_s, cache=self.cache, **request)

    def _first_input(self, observation: Observation) -> list[dict[str, Any]]:
        content = [
            {"type": "input_text", "text": f"Task: {observation.task}"},
            {"type": "input_image", "image_url": image_data_url(observation.screenshot)},
        ]
        if observation.feedback:  # only after a malformed reply made us start the conversation afresh
            content.append({"type": "input_text", "text": observation.feedback})
        return [{"role": "user", "content": content}]

    def _outputs(self, observation: Observation) -> list[dict[str, Any]]:
        """Answers to the previous reply's calls, each with the screenshot after its last action."""
        shots = [observation.screenshot, *observation.action_screenshots]  # [0]: a call none of whose actions ran
        inputs = self._call_outputs([image_data_url(shots[min(call.executed, len(shots) - 1)]) for call in self.pending])
        failed = observation.history[-1].error if observation.history else None
        note = observation.feedback or (f"The last action did not work: {failed}" if failed else None)
        if note:
            inputs.append({"role": "user", "content": [{"type": "input_text", "text": note}]})
        return inputs

    def _call_outputs(self, urls: list[str]) -> list[dict[str, Any]]:
        outputs = [{"type": "computer_call_output", "call_id": call.call_id,
                    "output": {"type": "computer_screenshot", "image_url": url},
                    **({"acknowledged_safety_checks": call.safety_checks} if call.safety_checks else {})}
                   for call, url in zip(self.pending, urls)]
        self.pending = []
        return outputs

    def _answer_malformed(self, result: ResponsesResult) -> None:
        """Remember the calls of a malformed reply so the next turn answers each one."""
        call_ids = result.computer_call_ids()
        self.pending = [_PendingCall(call_id, 0) for call_id in call_ids]
        if len(call_ids) < len(result.items("computer_call")):
            # A call without an id cannot be answered, and the API refuses to continue a
            # conversation with an unanswered call: the next turn starts afresh.
            self.previous_response_id = None
            self.pending = []

    def _accept_calls(self, calls: list[ComputerCall], notes: list[str], width: int, height: int) -> list[Action]:
        """Actions of all calls, in order; remembers each call so the next turn can answer it.

        An action that cannot be executed — including one pointing off the `width`×`height`
        display beyond `place_action`'s tolerance — is skipped with a note; if none is left, the
        reply is unusable.

        Raises:
            UnusableReply: no call held an action that could be executed.
        """
        actions: list[Action] = []
        pending: list[_PendingCall] = []
        problem: str | None = None
        for call in calls:
            checks = call.pending_safety_checks
            notes.extend(f"acknowledged safety check {check.get('code', '?')}: {str(check.get('message', ''))[:200]}"
                         for check in checks)
            for computer_action in call.batch:
                try:
                    action = parse_computer_action(computer_action)
                    if action is not None:
                        # Only judged here (the rollout converts and records clamping when it executes).
                        place_action(action, self.coordinate_space, width, height)
                except (UnusableReply, OffScreenPoint) as exc:
                    problem = problem or str(exc)
                    continue
                if action is not None:
                    actions.append(action)
            pending.append(_PendingCall(call.call_id, len(actions), checks))
        # Every call must be answered next turn, even those we could not execute.
        self.pending = pending
        if problem and not actions:
            raise UnusableReply(problem)
        if problem:
            notes.append(f"skipped an unusable action: {problem}")
        return actions

    def _invalid(self, why: str, items: list[dict[str, Any]], tokens: TokenUsage, model_ms: float,
                 notes: list[str] | None = None) -> PolicyDecision:
        return PolicyDecision([], raw_text=_raw(items), tokens=tokens, model_ms=model_ms, invalid=why, notes=notes or [])


def _reasoning_text(items: list[dict[str, Any]]) -> str:
    summaries = [part for item in items if item.get("type") == "reasoning" for part in item.get("summary") or []]
    return " ".join(str(part["text"]) for part in summaries if isinstance(part, dict) and part.get("text"))


def _raw(items: list[dict[str, Any]]) -> str:
    """The reply items as compact JSON for the trajectory (screenshots are never in replies)."""
    return json.dumps(items, ensure_ascii=False, separators=(",", ":"))[:20_000]
