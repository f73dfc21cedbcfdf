"""The knobs of one episode, shared by the environment (`AppEnv`) and the rollout loop (`rollout`)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._executor import DEFAULT_SCROLL_PX, WAIT_CAP_MS
from ._launch import BrowserConfig
from ._settle import DEFAULT_CAP_MS, DEFAULT_MOTION_CAP_MS, DEFAULT_QUIET_MS


class RolloutConfig(BaseModel):
    """Limits and knobs of one rollout. The defaults follow the paper (20 steps)."""

    max_steps: int = Field(default=20, ge=1, le=500)
    model_timeout_s: float = Field(default=120.0, gt=0, description="Limit on one policy decision (model call).")
    step_timeout_s: float = Field(
        default=180.0, gt=0, description="Limit on one whole step: decision, action, settle, screenshot, checker, write. "
        "The default leaves room for a whole model call (model_timeout_s), a `wait` (up to 5 s: "
        "cua._executor.WAIT_CAP_MS), the motion cap of settling and the observation; a shorter limit cuts "
        "a `wait` to what is left of the step rather than timing the step out."
    )
    episode_timeout_s: float = Field(default=1800.0, gt=0, description="Limit on the whole rollout.")
    checker_timeout_s: float = Field(default=5.0, gt=0)
    max_invalid_replies: int = Field(
        default=3, ge=1,
        description="Unusable replies (unparseable, or pointing off the screen; re-asks included) allowed before ending as `invalid`.",
    )
    stuck_no_change_steps: int = Field(default=3, ge=0, description="0 disables the no-change rule.")
    stuck_repeat_steps: int = Field(default=4, ge=0, description="0 disables the repeated-action rule.")
    settle_quiet_ms: int = Field(default=DEFAULT_QUIET_MS, ge=0)
    settle_cap_ms: int = Field(default=DEFAULT_CAP_MS, ge=50, description="Cap on settling while nothing moves.")
    settle_motion_cap_ms: int = Field(
        default=DEFAULT_MOTION_CAP_MS,
        ge=0,
        description="Cap on settling once a scroll position or the acted-on element moved or animated (a smooth "
        "scroll, a transition); never below settle_cap_ms, and cut to what is left of the step's time.",
    )
    scroll_px: int = Field(default=DEFAULT_SCROLL_PX, ge=1, description="Scroll distance when the model gives none.")
    wait_cap_ms: int = Field(default=WAIT_CAP_MS, ge=0, le=WAIT_CAP_MS, description="How long a `wait` watches the page "
                             "for a change (it ends at the first): UI-TARS's wait() sleeps 5 s, the default and the most; "
                             "an environment stepped by a learner may want its waits shorter.")
    trace: bool = Field(default=False, description="Record a Playwright trace.zip (slower; for debugging).")
    final_text_max_chars: int = Field(
        default=20_000, ge=0,
        description="Characters of the final page's visible text kept in the trajectory (`Trajectory.final_text`, "
        "read once at the end; what text-only judges decide from); 0 does not read it.",
    )
    stop_on_checker: bool = Field(
        default=True,
        description="End the episode as soon as the checker passes (the paper's rule). False, for tasks that also "
        "need an answer (OSUniverse: every check must pass): the checker still runs after every step and is recorded "
        "(`Step.checker_passed`, `Trajectory.checker_ever_passed`), but only `finished`, max_steps, stuck, invalid, "
        "an error or a timeout end the episode; `Trajectory.success` still says whether the checker turned true.",
    )
    browser: BrowserConfig = Field(default_factory=BrowserConfig)
