"""UI-TARS through chat completions: screenshots in, `Thought: … Action: …` text out.

The prompt is chosen by name (`prompt="official"`, the published template UI-TARS was trained
on, or `"compact"`; see `_uitars_prompts`). Either way the conversation keeps every reply as text
(the model's memory of what it did) but only the last `history_images` screenshots. Under the
official layout an older step keeps only its reply, as in the published agent loop; under the
compact one it keeps a one-line note, so user and assistant turns alternate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from llm import RoleClient, assistant_message, get_client, system_message, user_message

from .._parser import ParseError, parse_uitars
from .._policy import Observation, Policy, PolicyDecision
from .._trajectory import TokenUsage
from ._uitars_prompts import COORDINATE_SENTENCES, OFFICIAL_SYSTEM, action_lines, prompt_for, system_prompt

__all__ = ["COORDINATE_SENTENCES", "UITarsPolicy", "action_lines", "system_prompt"]


@dataclass
class _Turn:
    screenshot: bytes
    note: str
    reply: str | None = None


class UITarsPolicy(Policy):
    """UI-TARS-1.5 (default) or 1.0 (`coordinate_space="uitars-1.0"`) through an OpenAI-compatible endpoint.

    `model` is a model name or role in the model registry (default the `cua` role). `client` is an
    `llm.ModelClient`; by default the process-wide one for `models_path`. `prompt` names the prompt
    ("official": the published template for the coordinate space; "compact"); `history_images` is
    how many of the latest screenshots the model sees (the current one included); `language` fills
    the template's "Use {language} in `Thought` part".

    Raises (when built):
        ValueError: an unknown prompt or coordinate space, or `history_images` < 1.
    """

    name: ClassVar[str] = "uitars"
    default_model: ClassVar[str] = "cua"

    def __init__(
        self,
        model: str | None = None,
        *,
        client: Any = None,
        models_path: str | None = None,
        coordinate_space: str = "uitars-1.5",
        prompt: str = "official",
        history_images: int = 5,
        language: str = "English",
        timeout_s: float | None = None,
        cache: bool | None = None,
        **params: Any,
    ):
        if history_images < 1:
            raise ValueError(f"history_images must be at least 1, got {history_images}")
        self.prompt = prompt_for(prompt, coordinate_space)
        # The given client, else the process-wide one (`llm.get_client`: never a task argument), bound to the model.
        self.client = RoleClient(client if client is not None else get_client(models_path), model or self.default_model)
        self.model = self.client.model
        self._space = coordinate_space
        self.history_images = history_images
        self.language = language
        self.timeout_s = timeout_s
        self.cache = cache
        self.params = params
        self.turns: list[_Turn] = []

    def settings(self) -> dict[str, Any]:
        return {"prompt": self.prompt.name, "history_images": self.history_images, "language": self.language}

    @property
    def coordinate_space(self) -> str:
        return self._space

    def messages(self, task: str) -> list[dict[str, Any]]:
        """The chat messages for the current turn (the last turn has no reply yet)."""
        official = self.prompt.name == "official"
        if official:
            messages = [system_message(OFFICIAL_SYSTEM), user_message(self.prompt.render(task, self.language))]
        else:
            messages = [system_message(self.prompt.render(task, self.language))]
        first_with_image = max(0, len(self.turns) - self.history_images)
        for number, turn in enumerate(self.turns):
            if number >= first_with_image:
                # Official: the screenshot alone, as the model was trained; a harness note (a reply that
                # could not be used, an action that failed) follows it only when there is one.
                messages.append(user_message(turn.note or None, images=[turn.screenshot], images_first=official))
            elif not official:
                messages.append(user_message(f"{turn.note} (screenshot no longer shown)"))
            if turn.reply is not None:
                messages.append(assistant_message(turn.reply))
        return messages

    async def act(self, observation: Observation) -> PolicyDecision:
        note = _note(observation, step_count=self.prompt.name == "compact")
        self.turns.append(_Turn(observation.screenshot, note))
        started = time.perf_counter()
        result = await self.client.chat(
            self.messages(observation.task), timeout_s=self.timeout_s, cache=self.cache, **self.params
        )
        text = result.text or ""
        self.turns[-1].reply = text
        tokens = TokenUsage(prompt=result.usage.prompt_tokens, completion=result.usage.completion_tokens)
        model_ms = round((time.perf_counter() - started) * 1000, 2)
        if result.invalid is not None:  # e.g. malformed tool_calls beside the text: not a reply to act on
            return PolicyDecision(actions=[], raw_text=text, tokens=tokens, model_ms=model_ms,
                                  invalid=f"malformed reply: {result.invalid}")
        try:
            parsed = parse_uitars(text, offered=self.prompt.offered)
        except ParseError as exc:
            return PolicyDecision(actions=[], raw_text=text, tokens=tokens, model_ms=model_ms, invalid=str(exc))
        return PolicyDecision(actions=parsed.actions, raw_text=text, thought=parsed.thought, tokens=tokens, model_ms=model_ms)


def _note(observation: Observation, step_count: bool) -> str:
    """The text beside a turn's screenshot: the step count (compact only), and why the last reply or action failed."""
    parts = [f"Step {observation.step} of at most {observation.max_steps}."] if step_count else []
    if observation.feedback:
        parts.append(observation.feedback)
    elif observation.history and observation.history[-1].error:
        parts.append(f"Your last action did not work: {observation.history[-1].error}")
    return " ".join(parts)
