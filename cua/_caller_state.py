"""What a caller set on a warm page or its context while it held it: a page is reused only when nothing.

`open_app` hands its caller the real Playwright page and context, and a caller can set state on them that
outlives the document the reset navigates away from: Playwright's fake clock (a context init script),
routes, exposed functions and bindings, init scripts, extra HTTP headers, emulated media, the viewport,
offline mode, geolocation and permissions, locator handlers, event handlers (a dialog handler that
dismisses), default timeouts, a key or mouse button held down, a CDP session of its own. Some of it the
reset could undo and some it cannot even see (the clock and init scripts live in the browser, with no
list to read back), so the rule is the safe one: while the caller holds the page, every message the
page's and the context's Playwright channels (and the harness's CDP session) send is watched, and
anything but reading the page and acting on it as a user does marks the page; a marked page is closed
instead of reused. Handlers and timeouts, which never leave the Python side, are compared with what
they were when the caller got the page.

Reads private fields of Playwright's objects (`_impl_obj`, `_channel`, `_timeout_settings`): the
package is pinned (1.64.1), and tests/cua/test_warm_pages.py sets each state on a warm page and proves
the next app sees a fresh context's page — a Playwright upgrade that moves them fails there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import BrowserContext, CDPSession, Page

# Messages of the page's channel that read the page or act on it as a user does: nothing they do
# outlives the document (a key or button held down is followed separately).
_PAGE_MESSAGES = frozenset({
    "mouseMove", "mouseDown", "mouseUp", "mouseClick", "mouseWheel", "touchscreenTap",
    "keyboardDown", "keyboardUp", "keyboardInsertText", "keyboardType", "keyboardPress",
    "screenshot", "expectScreenshot", "accessibilitySnapshot", "snapshotForAI", "pdf",
    "consoleMessages", "pageErrors", "requests", "clearConsoleMessages", "clearPageErrors",
    "bringToFront", "hideHighlight", "requestGC", "goBack", "goForward", "reload",
    "updateSubscription", "__waitInfo__", "close", "runBeforeUnload",
})
# The context's: reading cookies and storage (the reset clears both), waiting for its events.
_CONTEXT_MESSAGES = frozenset({
    "cookies", "storageState", "clearCookies", "addCookies", "updateSubscription", "__waitInfo__",
})
# What the harness sends through its own CDP session while an app runs (screenshots, its isolated worlds).
_CDP_METHODS = frozenset({
    "Runtime.evaluate", "Page.createIsolatedWorld", "Page.getFrameTree", "Page.captureScreenshot",
})
_SEND_METHODS = ("send", "send_return_as_dict", "send_no_reply")


@dataclass
class CallerState:
    """Watches one warm page's channels; between `start` and `stop` it collects what would outlive the app."""

    page: Page
    context: BrowserContext
    watching: bool = False
    marks: list[str] = field(default_factory=list)
    held: set[str] = field(default_factory=set)
    _listeners: dict[str, int] = field(default_factory=dict)
    _timeouts: tuple = ()
    _cdp: CDPSession | None = None

    def __post_init__(self) -> None:
        _watch_channel(self, _impl(self.page)._channel, "page", _PAGE_MESSAGES)
        _watch_channel(self, _impl(self.context)._channel, "context", _CONTEXT_MESSAGES)

    def watch_cdp(self, session: CDPSession) -> None:
        """Also watch the harness's CDP session of this page (a caller can reach it through `isolated_world`)."""
        if session is not self._cdp:
            self._cdp = session
            _watch_channel(self, _impl(session)._channel, "CDP", _CDP_METHODS, by_cdp_method=True)

    def start(self) -> None:
        """The caller gets the page now: what it has is the baseline."""
        self.marks, self.held, self.watching = [], set(), True
        self._listeners, self._timeouts = self._listener_counts(), self._timeout_values()

    def stop(self) -> list[str]:
        """The caller is done: what it set that outlives the document (empty: the page may be reused)."""
        self.watching = False
        marks = list(dict.fromkeys(self.marks))
        marks += [f"held down: {key}" for key in sorted(self.held)]
        before, after = self._listeners, self._listener_counts()
        marks += [f"{owner} handler for '{event}' added" for (owner, event), count in sorted(after.items())
                  if count > before.get((owner, event), 0)]
        if self._timeout_values() != self._timeouts:
            marks.append("default timeouts changed")
        return marks

    def see(self, where: str, message: str, params: dict | None, harmless: frozenset[str]) -> None:
        """One message sent while the caller holds the page."""
        if message in ("keyboardDown", "mouseDown"):
            self.held.add(_pressed(message, params))
        elif message in ("keyboardUp", "mouseUp"):
            self.held.discard(_pressed(message, params))
        elif message not in harmless:
            self.marks.append(f"{where}: {message}")

    def _listener_counts(self) -> dict[tuple[str, str], int]:
        targets = (("page", _impl(self.page)), ("context", _impl(self.context)))
        return {(owner, str(event)): len(target.listeners(event))
                for owner, target in targets for event in target.event_names()}

    def _timeout_values(self) -> tuple:
        settings = [_impl(self.page)._timeout_settings, _impl(self.context)._timeout_settings]
        return tuple((s._default_timeout, s._default_navigation_timeout) for s in settings)


def _impl(api_object: Any) -> Any:
    return getattr(api_object, "_impl_obj", api_object)


def _pressed(message: str, params: dict | None) -> str:
    params = params or {}
    return f"key {params.get('key')}" if message.startswith("keyboard") else f"mouse {params.get('button', 'left')}"


def _watch_channel(state: CallerState, channel: Any, where: str, harmless: frozenset[str],
                   by_cdp_method: bool = False) -> None:
    """Wrap the channel's senders (on this one channel object) so that each message is seen first."""
    for name in _SEND_METHODS:
        original = getattr(channel, name)

        def watched(method: str, *args: Any, _original=original, **kwargs: Any) -> Any:
            if state.watching:
                params = args[1] if len(args) > 1 else kwargs.get("params")
                message = (params or {}).get("method", "") if by_cdp_method and method == "send" else method
                state.see(where, message, params, harmless)
            return _original(method, *args, **kwargs)

        setattr(channel, name, watched)
