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
from ._isolated import IsolatedWorld, JavaScriptError, JavaScriptTimeout, isolated_world

__all__ = [
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
