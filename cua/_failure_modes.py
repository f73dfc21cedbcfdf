"""How a rollout went wrong, read off its trajectory (OpenApps' failure modes).

Each mode is a fact of the record, not a guess about the agent's intent, and a trajectory may show
several (an agent can loop on a decoy until it runs out of steps):

- `action_loop`: the same action (kind, point to the pixel, text, keys) three or more times in a row
  (waiting is not a loop: a task may wait out the app's timer);
- `invalid_action`: a reply that could not be used (did not parse, pointed off the screen), or the
  episode ended on too many of them;
- `stuck`: ended by the stuck rule (no change over several steps, or an action repeated);
- `max_steps`: ran out of steps;
- `finished_early`: the agent said it was done (`finished`) while the checker was still false;
- `decoy`: acted on an element a variation injected as a decoy (`ElementInfo.injected == "decoy"`);
- `left_app`: tried to leave the app — a blocked top-level navigation, or a blocked request first
  seen after the agent's first action (requests the app made before it are the app's own);
- `wrong_answer`: a question task's answer check failed — no final answer, or not the expected one
  (answers are scored outside the trajectory, so the caller says so).
"""

from __future__ import annotations

from itertools import groupby

from ._actions import Action
from ._trajectory import Trajectory, TerminationReason

FAILURE_MODES: tuple[str, ...] = ("action_loop", "invalid_action", "stuck", "max_steps", "finished_early", "decoy",
                                  "left_app", "wrong_answer")
LOOP_LENGTH = 3


def failure_modes(trajectory: Trajectory, *, answer_failed: bool = False) -> list[str]:
    """The failure modes the trajectory shows, in `FAILURE_MODES` order (empty for a clean run);
    `answer_failed`: the task asked for an answer and its answer check failed."""
    steps, termination = trajectory.steps, trajectory.termination
    signatures = groupby(_signature(step.screen_action or step.model_action) for step in steps)
    found = {
        "action_loop": any(key is not None and len(list(run)) >= LOOP_LENGTH for key, run in signatures),
        "invalid_action": termination == TerminationReason.invalid or any(step.invalid_replies for step in steps),
        "stuck": termination == TerminationReason.stuck,
        "max_steps": termination == TerminationReason.max_steps,
        "finished_early": termination == TerminationReason.finished and not trajectory.success,
        "decoy": any(step.target is not None and step.target.injected == "decoy" for step in steps),
        "left_app": _left_the_app(trajectory),
        "wrong_answer": answer_failed,
    }
    return [mode for mode in FAILURE_MODES if found[mode]]


def _signature(action: Action | None) -> tuple | None:
    if action is None or action.kind in ("wait", "finished"):
        return None
    points = tuple((round(p.x), round(p.y)) for p in (action.point, action.end) if p is not None)
    return action.kind, points, action.text, tuple(action.keys or ()), action.direction


def _left_the_app(trajectory: Trajectory) -> bool:
    first = next((step.at_s for step in trajectory.steps if step.at_s is not None), None)
    before = {r.url for r in trajectory.blocked_requests if first is None or r.at_s < first}
    # A document request is the agent following a link (or a control navigating) away from the app.
    return any((request.resource_type == "document" and (first is None or request.at_s >= first))
               or (first is not None and request.at_s >= first and request.url not in before)
               for request in trajectory.blocked_requests)
