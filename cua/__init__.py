"""Computer-use agent rollouts in real Chromium: environment, actions, policies, trajectories.

    from cua import rollout, RolloutConfig
    from cua.policies import get_policy

    trajectory = await rollout(html, task.description, get_policy("heuristic"), checker, out_dir)

or drive the environment from an agent of your own:

    async with AppEnv() as env:
        observation = await env.reset(html, task.description, checker)
        observation, check, done = await env.step(Action(kind="click", point=Point(x=100, y=60)))

and export a trajectory as GTArena's transition tuples (before, action, after; the ground-truth
defect when the app was served with an injected one): `write_tuples(trajectory, folder)`.
"""

from ._actions import POINTER_KINDS, Action, ActionKind, Point, ScrollDirection
from ._batch import RolloutJob, run_rollouts
from ._launch import FULL_CHROMIUM, HEADLESS_SHELL, default_chromium, get_browser, is_headless_shell, launch_args
from ._browser import (
    APP_ORIGIN,
    APP_URL,
    AppPage,
    BlockedRequest,
    BrowserConfig,
    DialogRecord,
    PageEvents,
    close_browser,
    close_warm_pages,
    open_app,
)
from ._coordinates import (
    EDGE_TOLERANCE,
    IMAGE_FACTOR,
    MAX_PIXELS,
    MIN_PIXELS,
    CoordinateSpace,
    OffScreenPoint,
    PlacedAction,
    action_from_screen,
    action_to_screen,
    coordinate_space,
    coordinate_space_names,
    place_action,
    smart_resize,
)
from ._defect_types import DEFECT_TAXONOMY, DEFECT_TYPES, DefectKind, DefectType
from ._failure_modes import FAILURE_MODES, failure_modes
from ._executor import ExecutionResult, UnknownKeyError, execute, key_combination, normalize_key, page_fingerprint
from ._isolated import IsolatedWorld, JavaScriptError, JavaScriptTimeout, isolated_world
from ._computer_use import UnusableReply, format_computer_action, parse_computer_action
from ._parser import ParsedReply, ParseError, format_uitars, parse_uitars
from ._policy import Observation, Policy, PolicyDecision
from ._processes import descendants as process_descendants
from ._check import Checker, CheckResult
from ._config import RolloutConfig
from ._env import AppEnv, StepResult
from ._rollout import TRACE_FILE, clear_rollout, rollout
from ._seeding import FIXED_CLOCK_START
from ._screenshot import ScreenshotTimeout, capture_png
from ._settle import settle
from ._timers import TIMERS_GRACE_MS, wait_for_short_timers
from ._trajectory import (
    TRAJECTORY_FILE,
    Box,
    ElementInfo,
    Step,
    StepTimings,
    TerminationReason,
    TokenUsage,
    Trajectory,
    write_atomic,
)
from ._transform import INJECTED_ATTRIBUTE, PageTransform, serve_html
from ._tuples import (
    DEFECT_PREFIX,
    NO_DEFECT,
    TUPLES_FILE,
    TransitionTuple,
    defect_of,
    is_defect_transform,
    read_tuples,
    transition_tuples,
    write_tuples,
)
from ._viewport import DEFAULT_VIEWPORT, Viewport

__all__ = [
    "DEFAULT_VIEWPORT",
    "DEFECT_PREFIX",
    "DEFECT_TAXONOMY",
    "DEFECT_TYPES",
    "NO_DEFECT",
    "TUPLES_FILE",
    "DefectKind",
    "DefectType",
    "TransitionTuple",
    "defect_of",
    "is_defect_transform",
    "read_tuples",
    "transition_tuples",
    "write_tuples",
    "EDGE_TOLERANCE",
    "FAILURE_MODES",
    "FIXED_CLOCK_START",
    "IMAGE_FACTOR",
    "INJECTED_ATTRIBUTE",
    "MAX_PIXELS",
    "MIN_PIXELS",
    "APP_ORIGIN",
    "APP_URL",
    "POINTER_KINDS",
    "TRACE_FILE",
    "TRAJECTORY_FILE",
    "Action",
    "ActionKind",
    "AppEnv",
    "AppPage",
    "BlockedRequest",
    "Box",
    "BrowserConfig",
    "FULL_CHROMIUM",
    "HEADLESS_SHELL",
    "default_chromium",
    "is_headless_shell",
    "launch_args",
    "CheckResult",
    "Checker",
    "CoordinateSpace",
    "DialogRecord",
    "ElementInfo",
    "ExecutionResult",
    "IsolatedWorld",
    "JavaScriptError",
    "JavaScriptTimeout",
    "Observation",
    "OffScreenPoint",
    "PageEvents",
    "PageTransform",
    "ParseError",
    "ParsedReply",
    "PlacedAction",
    "Point",
    "Policy",
    "PolicyDecision",
    "RolloutConfig",
    "RolloutJob",
    "ScreenshotTimeout",
    "ScrollDirection",
    "Step",
    "StepResult",
    "StepTimings",
    "TerminationReason",
    "TokenUsage",
    "Trajectory",
    "UnknownKeyError",
    "UnusableReply",
    "Viewport",
    "action_from_screen",
    "action_to_screen",
    "capture_png",
    "clear_rollout",
    "close_browser",
    "close_warm_pages",
    "coordinate_space",
    "coordinate_space_names",
    "execute",
    "failure_modes",
    "format_computer_action",
    "format_uitars",
    "get_browser",
    "isolated_world",
    "key_combination",
    "normalize_key",
    "open_app",
    "page_fingerprint",
    "parse_computer_action",
    "parse_uitars",
    "place_action",
    "process_descendants",
    "rollout",
    "run_rollouts",
    "serve_html",
    "settle",
    "TIMERS_GRACE_MS",
    "wait_for_short_timers",
    "smart_resize",
    "write_atomic",
]
