"""A policy that replays a script: for tests and the benchmark (zero latency, no model)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from .._actions import Action
from .._parser import ParseError, parse_uitars
from .._policy import Observation, Policy, PolicyDecision

ScriptItem = Action | str | Sequence[Action]


class ScriptedPolicy(Policy):
    """Replays `script` one decision per call.

    An item is an `Action`, a list of actions (one multi-action decision), or UI-TARS reply text
    (parsed as a model reply would be — text that does not parse is an invalid reply). When the
    script runs out the policy says `finished`, unless `repeat` starts it over.
    """

    name: ClassVar[str] = "scripted"
    offline: ClassVar[bool] = True

    def __init__(self, script: Sequence[ScriptItem], coordinate_space: str = "screen", repeat: bool = False):
        self.script = list(script)
        self._space = coordinate_space
        self.repeat = repeat
        self.position = 0
        self.observations: list[Observation] = []  # what it was shown, for tests

    @property
    def coordinate_space(self) -> str:
        return self._space

    async def act(self, observation: Observation) -> PolicyDecision:
        self.observations.append(observation)
        if self.position >= len(self.script):
            if not self.repeat or not self.script:
                return PolicyDecision(actions=[Action(kind="finished", text="script exhausted")], raw_text="")
            self.position = 0
        item = self.script[self.position]
        self.position += 1
        if isinstance(item, Action):
            return PolicyDecision(actions=[item])
        if isinstance(item, str):
            try:
                parsed = parse_uitars(item)
            except ParseError as exc:
                return PolicyDecision(actions=[], raw_text=item, invalid=str(exc))
            return PolicyDecision(actions=parsed.actions, raw_text=item, thought=parsed.thought)
        return PolicyDecision(actions=list(item))
