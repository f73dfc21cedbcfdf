"""The heuristic agent reads the page as a person would: never the harness's marker or a transform's name.

Its two reads (`_read_page.js`: the operable elements, `_read_text.js`: the visible text for answers)
run on the bundled unit-converter served under every variation that adds or changes elements and
under injected defects; what they return must not carry `cua.INJECTED_ATTRIBUTE`, the values the
transforms write into it, nor the transform's name — an agent that could read them would be told
where the decoy, the popup or the defect is.
"""

from __future__ import annotations

import json

import pytest

from apps_prompts import load_app, reference_html_path
from cua import DEFECT_PREFIX, DEFECT_TYPES, INJECTED_ATTRIBUTE, BrowserConfig, isolated_world, open_app, settle
from cua.policies.heuristic._answer import MAX_TEXT_CHARS, READ_TEXT
from cua.policies.heuristic._page import READ_LIMITS, READ_PAGE
from perturb import defect_transform, make_defect, variation_transform

APP = "unit-converter"
VARIATIONS = ["popup", "misleading", "adversarial", "long", "dark"]
DEFECTS = [("elements-overlapping", "#swap"), ("content-error", "#swap"), ("no-response", "#swap"),
           ("element-missing", "#swap"), ("data-format-error", "#swap")]
MARKER_VALUES = ["defect-overlay", "popup-close", "decoy", *(DEFECT_PREFIX + name for name in DEFECT_TYPES)]


def _transforms():
    for name in VARIATIONS:
        yield variation_transform(name, seed=0)
    for kind, selector in DEFECTS:
        yield defect_transform(make_defect(kind, selector, seed=0))


@pytest.mark.parametrize("transform", list(_transforms()), ids=lambda t: t.name)
async def test_what_the_heuristic_reads_carries_no_marker_nor_transform_name(transform):
    html = reference_html_path(load_app(APP)).read_text(encoding="utf-8")
    async with open_app(html, BrowserConfig(transform=transform)) as app:
        await settle(app.page)
        marked = await app.page.locator(f"[{INJECTED_ATTRIBUTE}]").count()
        world = isolated_world(app.page)
        page = await world.call(READ_PAGE, READ_LIMITS, timeout_ms=10_000)
        text = await world.call(READ_TEXT, MAX_TEXT_CHARS, timeout_ms=10_000)
    assert marked, "the transform marked what it added (so there was something to leak)"
    read = json.dumps(page) + "\n" + str(text)
    assert page["elements"] and "Length" in read  # it read the app
    for word in [INJECTED_ATTRIBUTE, *MARKER_VALUES, transform.name]:
        assert word not in read, (word, read[max(0, read.find(word) - 200):read.find(word) + 200])
