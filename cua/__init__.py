"""Computer-use agent rollouts in real Chromium: environment, actions, policies, trajectories."""

from ._browser import (
    APP_ORIGIN,
    APP_URL,
    AppPage,
    BlockedRequest,
    BrowserConfig,
    DialogRecord,
    PageEvents,
    close_browser,
    get_browser,
    open_app,
)
from ._actions import POINTER_KINDS, Action, ActionKind, Point, ScrollDirection
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
from ._isolated import IsolatedWorld, JavaScriptError, JavaScriptTimeout, isolated_world

__all__ = [
    "POINTER_KINDS",
    "TRAJECTORY_FILE",
    "Action",
    "ActionKind",
    "Box",
    "ElementInfo",
    "Point",
    "ScrollDirection",
    "Step",
    "StepTimings",
    "TerminationReason",
    "TokenUsage",
    "Trajectory",
    "write_atomic",
    "APP_ORIGIN",
    "APP_URL",
    "AppPage",
    "BlockedRequest",
    "BrowserConfig",
    "DialogRecord",
    "IsolatedWorld",
    "JavaScriptError",
    "JavaScriptTimeout",
    "PageEvents",
    "close_browser",
    "get_browser",
    "isolated_world",
    "open_app",
]
