"""A serve-time change of an app: what the browser environment applies, decided elsewhere.

Variations (a dark theme, long copy, a pop-up) and injected defects are named, deterministic
changes of an app version made when it is served, never new app files (design.md §11). Their
catalogues and proofs live in `perturb`; the environment only applies a `PageTransform` it is
given, the same way for rollouts, proofs and the viewer's pictures:

- `style` is CSS inserted into the served HTML (at the end of its `<head>`), so it holds from
  the first paint and across reloads;
- `script` is a JS function expression called once the app has loaded (document complete), in
  the harness's isolated world — the app's scripts can neither see nor undo it — with `args`
  as its JSON arguments. It may add elements (marked `INJECTED_ATTRIBUTE`, so a trajectory can
  say the agent acted on an injected decoy), rewrite text and attach listeners.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

INJECTED_ATTRIBUTE = "data-aui-inject"
"""Marks an element a transform added (its value says what it is: decoy, banner, popup, text…).
For the harness only: attributes do not show in screenshots, and checkers are proven without it."""

_HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)
_BODY_START = re.compile(rb"<body[\s>]", re.IGNORECASE)
_HTML_START = re.compile(rb"<html[^>]*>", re.IGNORECASE)


class PageTransform(BaseModel):
    """One serve-time change of an app, applied as given (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="What it is, e.g. 'dark+long' or 'defect:element-missing@#save'; recorded in trajectories.")
    style: str = Field(default="", description="CSS inserted at the end of the served page's <head>.")
    script: str | None = Field(default=None, description="A JS function expression run in the harness's isolated world "
                               "once the app has loaded.")
    args: list[Any] = Field(default_factory=list, description="The script's arguments (JSON values).")

    @property
    def sha256(self) -> str:
        """Content address of what is applied (its name aside): the key of anything made under it."""
        body = json.dumps({"style": self.style, "script": self.script, "args": self.args}, sort_keys=True)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()


def serve_html(html: bytes, transform: PageTransform | None) -> bytes:
    """The app's HTML as served under `transform`: its style inserted before `</head>` (or, for a
    document without one, before `<body>`, after `<html>`, or at the very start)."""
    if transform is None or not transform.style:
        return html
    tag = b'<style ' + INJECTED_ATTRIBUTE.encode() + b'="style">' + transform.style.encode("utf-8") + b"</style>"
    for pattern, before in ((_HEAD_END, True), (_BODY_START, True), (_HTML_START, False)):
        match = pattern.search(html)
        if match is not None:
            at = match.start() if before else match.end()
            return html[:at] + tag + html[at:]
    return tag + html
