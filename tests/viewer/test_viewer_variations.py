"""The viewer's variation views in real Chromium, on the hand-made run of `tests/variation_runs.py` (no loop runs):
the run page's heatmap, spread and failure modes; the app page's variants and exclusions; a variant's trajectory."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from results import read_results
from tests.variation_runs import EXCLUDED_REASON, POPUP_ERROR, variation_run
from tests.viewer.conftest import Served

RUN = "variation-run"


@pytest.fixture(scope="module")
def varied(tmp_path_factory):
    run_dir = variation_run(tmp_path_factory.mktemp("variation-runs"), RUN)
    server = Served([run_dir])
    yield server, run_dir
    server.stop()


async def test_the_run_page_shows_the_heatmap_spread_and_failure_modes_per_round(varied, browser_page):
    server, _ = varied
    page = browser_page
    await page.goto(f"{server.base}/runs/{RUN}#variations")
    block = page.locator('.variation-block[data-round="0"]')
    cell = block.locator('table.heatmap tr[data-variation="dark"] td[data-app="alpha"]')
    assert " ".join((await cell.inner_text()).split()) == "50.0 n=4"
    assert "heat-5" in await cell.get_attribute("class")
    pooled = block.locator('table.heatmap tr[data-variation="popup"] td[data-app="all"]')
    assert " ".join((await pooled.inner_text()).split()) == "0.0 n=4"  # beta has no popup variant: alpha's tasks only
    assert await block.locator('table.heatmap tr[data-variation="popup"] td[data-app="beta"]').inner_text() == "–"
    assert POPUP_ERROR in await block.locator(".problem").inner_text()
    spread = " ".join((await block.locator("p.spread").inner_text()).split())
    assert "4 common of 5 tasks" in spread and "mean 50.0 · std 30.6 · MAD 12.5 · min–max 0.0–75.0" in spread
    assert "reliability gap: yes" in spread
    assert "reliability gap: no" in await page.locator('.variation-block[data-round="1"] p.spread').inner_text()
    decoys = block.locator('table.failure-modes tr[data-variation="adversarial"] td')
    assert [await td.inner_text() for td in await decoys.all()] == ["8", "2", "", "", "2"]


async def test_the_app_page_shows_each_variant_beside_the_default_look_with_its_exclusions(varied, browser_page):
    server, run_dir = varied
    page = browser_page
    await page.goto(f"{server.base}/runs/{RUN}/apps/alpha#variants")
    looks = page.locator('.variants[data-round="0"] figure.variant')
    assert [await f.get_attribute("data-variation") for f in await looks.all()] == ["default", "dark", "adversarial",
                                                                                    "popup"]
    for image in await looks.locator("img").all():  # every look's screenshot at load is there and loads
        assert await image.evaluate("img => img.decode().then(() => img.naturalWidth)") == 320
    adversarial = looks.nth(2)
    assert [await li.inner_text() for li in await adversarial.locator("details.exclusions li").all()] == [
        f"t3: {EXCLUDED_REASON}"]
    link = adversarial.locator(".variant-tasks a", has_text="t1")
    alpha = next(r for r in read_results(run_dir).apps if r.app_id == "alpha" and r.round == 0)
    assert await link.get_attribute("href") == f"/runs/{RUN}/t/{quote(alpha.variations[1].tasks[0].trajectory)}"
    assert "decoy" in await adversarial.locator(".variant-tasks").inner_text()
    await page.goto(f"{server.base}/runs/{RUN}/apps/beta")
    assert POPUP_ERROR in await page.locator('.variants[data-round="0"] figure[data-variation="popup"]').inner_text()


async def test_a_variant_trajectory_says_its_variation_and_marks_the_step_on_an_injected_decoy(varied, browser_page):
    server, _ = varied
    page = browser_page
    trajectory = "apps/alpha/offline/round-0/rollouts/heuristic/variations/adversarial/t1"
    await page.goto(f"{server.base}/runs/{RUN}/t/{quote(trajectory)}")
    assert "variation adversarial · transform adversarial@seed=0" in " ".join(
        (await page.locator("#variation").inner_text()).split())
    assert await page.locator("#injected-steps").inner_text() == "Acted on an element the variation injected: step 1 (decoy)"
    dots = page.locator("#step-dots button")
    assert [await b.get_attribute("class") or "" for b in await dots.all()] == ["", "injected current", ""]
    assert "decoy: added by the variation" in await page.locator("#step-details").inner_text()
    assert await page.locator("#overlay rect.target-box.injected").count() == 1
    await page.keyboard.press("ArrowRight")  # step 2 acted on the app's own button: no mark
    assert "injected element" not in await page.locator("#step-details").inner_text()
    assert await page.locator("#overlay rect.injected").count() == 0
    default = "apps/alpha/offline/round-0/rollouts/heuristic/t1"
    await page.goto(f"{server.base}/runs/{RUN}/t/{quote(default)}")
    assert await page.locator("#variation").count() == 0 and await page.locator("#injected-steps").count() == 0
