"""Repeatable app randomness: a seeded `Math.random` and, optionally, a clock with a fixed start.

An app that draws demo data on load (random scores, shuffled cards, "today's" entries) shows each
rollout a different page; with a seed every rollout of it, whatever the agent, sees the same one.
The page's side is `_seeding.js`, installed by `open_app` as a context init script before the app
loads. Only the app's main world changes: the harness's isolated world keeps the real globals.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

_SEEDING = Path(__file__).with_name("_seeding.js").read_text(encoding="utf-8")

FIXED_CLOCK_START = datetime(2025, 1, 15, 10, 0, 0, tzinfo=timezone.utc)
"""Where the app's clock starts with `fixed_clock=True` (it then runs in real time)."""


def seeding_script(seed: int | None, fixed_clock: bool) -> str | None:
    """The init script that seeds the page's `Math.random` with `seed` (taken modulo 2**32) and, with
    `fixed_clock`, starts its clock at `FIXED_CLOCK_START`; None when there is nothing to change.

    Raises:
        TypeError: `seed` is not an int (or None).
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__} {seed!r}")
    if seed is None and not fixed_clock:
        return None
    start_ms = int(FIXED_CLOCK_START.timestamp() * 1000) if fixed_clock else None
    page_seed = None if seed is None else seed % 2**32
    return f"({_SEEDING})({json.dumps(page_seed)}, {json.dumps(start_ms)})"
