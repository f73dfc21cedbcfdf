"""Every offline variation on every bundled app, in real Chromium.

- Proofs: on each app, a task (the one with the longest reference solution) is proven on a third
  of the variants or excluded with the reason — in a Latin square, so every variation meets four
  apps and every app three variations (all 108 pairs took the suite 110 s). The proof machinery is
  the loop's own (`prove_variant`); every task of every app on every variant is proven by
  `bench/variations.py` (and by each run).
- Appearance: each appearance variant changes at least 20 % of the screen (16-px cells that differ
  at all; a font can change only text, so `hard-font` is measured over the cells that hold text)
  while the page's visible text stays exactly the same.
"""

from __future__ import annotations

import asyncio

import pytest

from apps_prompts import BUNDLED_DIR, load_apps, reference_html_path
from cua import BrowserConfig, capture_png, isolated_world, open_app, settle
from perturb import VARIATIONS, changed_share, offline_variation_names, prove_variant, text_cells, variation_transform
from verifier import AppVerdicts, reference_verdicts

APPS = load_apps(BUNDLED_DIR).apps
OTHERS = [name for name in offline_variation_names() if name != "default"]
APPEARANCE = [name for name in OTHERS if VARIATIONS.get(name).kind == "appearance"]
MIN_CHANGE = 0.20
SEED = 0


def _longest_task(spec):
    return max((t for t in spec.tasks if t.checker and t.solution), key=lambda t: len(t.solution))


def _square(apps, names, share: int = 3):
    """(app, variation) pairs with every variation on len(apps)/share apps and every app on len(names)/share variations."""
    return [(i, name) for i in range(len(apps)) for j, name in enumerate(names) if (i + j) % share == 0]


PROOFS_IN_FLIGHT = 3
"""Proofs mostly wait on the page (settling, the replay's waits): three at once keep 2 cores busy."""


@pytest.mark.timeout(900)
async def test_every_offline_variation_of_every_bundled_app_keeps_its_task_or_excludes_it_with_a_reason():
    gate = asyncio.Semaphore(PROOFS_IN_FLIGHT)

    async def judged_app(spec) -> tuple[str, AppVerdicts]:
        html = reference_html_path(spec).read_text(encoding="utf-8")
        task = _longest_task(spec)
        async with gate:
            verdicts, _ = await reference_verdicts(spec.model_copy(update={"tasks": [task]}), html)
        assert verdicts[0].proven, (spec.id, task.id, verdicts[0].proof_reason)
        return html, AppVerdicts(app_id=spec.id, domain=spec.domain.value, html_sha256="-", verifier="offline",
                                 offline=True, verdicts=verdicts)

    async def proven_on(spec, html: str, judged: AppVerdicts, name: str) -> bool:
        async with gate:
            proof = await prove_variant(html, judged, name, variation_transform(name, SEED))
        (outcome,) = proof.tasks
        assert proof.applied, (spec.id, name, proof.apply_error)
        assert outcome.status in ("proven", "excluded"), (spec.id, name, outcome)
        assert outcome.reason, (spec.id, name)
        return outcome.status == "proven"

    apps = await asyncio.gather(*(judged_app(spec) for spec in APPS))
    pairs = _square(APPS, OTHERS)
    assert {name for _, name in pairs} == set(OTHERS) and {i for i, _ in pairs} == set(range(len(APPS)))
    held = await asyncio.gather(*(proven_on(APPS[i], *apps[i], name) for i, name in pairs))
    # A variant may break a task (then it is excluded for it, with the reason), but most must hold:
    # a variation that broke everything would be a broken variation, not a harder app.
    assert sum(held) / len(held) >= 0.8, f"only {sum(held)} of {len(held)} app × variation proofs held"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("spec", APPS, ids=[spec.id for spec in APPS])
async def test_appearance_variants_change_a_fifth_of_the_screen_and_none_of_the_text(spec):
    html = reference_html_path(spec).read_text(encoding="utf-8")

    async def look(name: str | None):
        transform = variation_transform(name, SEED) if name else None
        async with open_app(html, BrowserConfig(transform=transform), seed=SEED, fixed_clock=True) as app:
            await settle(app.page)
            text = await isolated_world(app.page).call("() => document.body.innerText")
            return await capture_png(app.page), text, await text_cells(app.page)

    plain, plain_text, plain_cells = await look(None)
    for name in APPEARANCE:
        shot, text, cells = await look(name)
        assert text == plain_text, (spec.id, name)
        within = (plain_cells | cells) if name == "hard-font" else None
        share = changed_share(plain, shot, within=within)
        assert share >= MIN_CHANGE, (spec.id, name, round(share, 3))
