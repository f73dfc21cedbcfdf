"""A real browser on a real `prefect server start`, and on `report.html` opened from disk.

Starts the Prefect server (its own PREFECT_HOME), runs a small offline sweep against it with
`aui sweep`, then drives Chromium: the Prefect UI lists the sweep's flow run and its FC/SR table
artifact, and the static report shows its results table, its plot and every screenshot and
dashboard image (none broken).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
NAME = "ui-check"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1"]


@pytest.mark.timeout(900)
async def test_prefect_ui_shows_the_run_and_its_table_and_the_report_has_no_broken_images(tmp_path, prefect_ui):
    from playwright.async_api import async_playwright

    from cua import BrowserConfig

    base, env = prefect_ui
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump({
        "name": NAME, "app_ids": ["unit-converter"], "rounds": 1, "revision_modes": ["integrated"],
        "max_steps": 2, "tasks_per_app": 3, "out_dir": str(tmp_path / "runs"),
    }))
    done = subprocess.run([str(BIN / "aui"), "sweep", str(config)], cwd=ROOT, env=env, capture_output=True, timeout=600)
    assert done.returncode == 0, (done.stdout.decode()[-3000:], done.stderr.decode()[-3000:])
    run_dir = tmp_path / "runs" / NAME
    results = json.loads((run_dir / "results.json").read_text())
    failed_dashboards = [t["dashboard"] for a in results["apps"] for t in a["tasks"] if t["dashboard"] and not t["success"]]
    assert failed_dashboards, "the report should show dashboards of failed tasks (2 steps are too few for some)"
    table_key = f"fc-sr-{NAME}-round-0"

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=BrowserConfig().executable_path, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(90_000)  # the UI is a large single-page app; the machine may be busy

            await page.goto(f"{base}/runs")
            await page.get_by_text(f"sweep {NAME}", exact=True).first.wait_for()
            await page.get_by_text(f"sweep {NAME}", exact=True).first.click()
            await page.wait_for_url("**/runs/flow-run/**")
            await page.get_by_text("Completed").first.wait_for()

            await page.goto(f"{base}/artifacts")
            await page.get_by_text(table_key).first.wait_for()
            await page.get_by_text(table_key).first.click()
            await page.wait_for_url(f"**/artifacts/key/{table_key}")
            await page.locator("a[href*='/artifacts/artifact/']").first.click()  # its latest version
            await page.wait_for_url("**/artifacts/artifact/**")
            await page.locator("th", has_text="SR overall").first.wait_for(state="attached")  # our FC/SR table
            row = page.locator("tr", has_text="heuristic").first
            await row.wait_for(state="attached")
            assert "integrated" in await row.inner_text()

            report = await browser.new_page(viewport={"width": 1400, "height": 900})
            await report.goto((run_dir / "report.html").as_uri())
            assert await report.locator("table.results tbody tr").count() == 2  # rounds 0 and 1
            images = report.locator("img")
            count = await images.count()
            sources = [await images.nth(i).get_attribute("src") for i in range(count)]
            assert "fc_sr_by_round.png" in sources
            assert any(src.endswith("dashboard.png") for src in sources)
            assert any(src.endswith("step_000.png") for src in sources)
            for i in range(count):  # lazy images load when scrolled to, as for a reader
                await images.nth(i).scroll_into_view_if_needed()
            await report.wait_for_function(
                "[...document.images].every(img => img.complete)", timeout=60_000)
            broken = await report.evaluate(
                "[...document.images].filter(img => !(img.naturalWidth > 0)).map(img => img.getAttribute('src'))")
            assert broken == []
        finally:
            await browser.close()
