"""Is the agent still getting anywhere? The two "stuck" rules of the rollout loop.

1. Nothing changed — neither the DOM (with form values, focus, scroll) nor the pixels — for
   `no_change_limit` steps in a row.
2. The same action was repeated `repeat_limit` times in a row and the page came back to a
   state it had already been in during that run (a toggle flipping back and forth). Repeating
   an action that keeps making new states — pressing "+" ten times — is progress, not stuck.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ProgressTracker:
    no_change_limit: int = 3
    repeat_limit: int = 4
    _unchanged: int = 0
    _last_action: str | None = None
    _run_states: list[str] = field(default_factory=list)

    def record(self, action_key: str, changed: bool, state_after: str) -> str | None:
        """Record one executed step; returns why the agent is stuck, or None."""
        self._unchanged = 0 if changed else self._unchanged + 1
        if action_key == self._last_action:
            self._run_states.append(state_after)
        else:
            self._last_action = action_key
            self._run_states = [state_after]
        if self.no_change_limit and self._unchanged >= self.no_change_limit:
            return f"the page did not change over the last {self._unchanged} steps"
        run = len(self._run_states)
        if self.repeat_limit and run >= self.repeat_limit and len(set(self._run_states)) < run:
            return f"the same action was repeated {run} times without reaching a new state"
        return None
