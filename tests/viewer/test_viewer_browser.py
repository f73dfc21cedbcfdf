"""The viewer in real Chromium against a real run folder made by the offline loop."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import quote, unquote

from cua import Trajectory
from results import read_results
from verifier.judge import read_labels

RUN = "viewer-run"


def _path(url: str) -> str:
    """A file URL without its version query."""
    return unquote(url.split("?", 1)[0])


def _longest(run_dir) -> tuple[str, Trajectory]:
    """The run's trajectory with the most steps (results order breaks ties)."""
    results = read_results(run_dir)
    best = None
    for app in results.apps:
        for task in app.tasks:
            if task.trajectory and (best is None or task.steps > best[1]):
                best = (task.trajectory, task.steps)
    return best[0], Trajectory.load(run_dir / best[0])


async def test_runs_page_lists_each_run_with_its_figures_and_damaged_runs_say_why(served, viewer_roots, browser_page):
    page = browser_page
    await page.goto(served.base + "/")
    card = page.locator(f'section.run-card[data-run="{RUN}"]')
    assert await card.count() == 1
    text = await card.inner_text()
    results = read_results(viewer_roots["good"])
    for row in results.table:  # every round's FC / FC proven / SR, as results.json has them
        assert f"{100 * row.fc['overall']:.1f} / {100 * row.fc_proven['overall']:.1f} / {100 * row.sr['overall']:.1f}" in text
    assert "offline" in text and "No model calls" in text
    broken = await page.locator('section.run-card[data-run="broken-results"]').inner_text()
    assert "results.json: not a valid results file" in broken


async def test_a_run_page_shows_its_config_and_label_progress(served, viewer_roots, browser_page):
    page = browser_page
    await page.goto(f"{served.base}/runs/{RUN}")
    await page.locator("#run-config summary").click()
    config = await page.locator("#run-config").inner_text()
    assert "app_ids" in config and '["unit-converter"]' in config and "max_steps" in config
    total = len({t.trajectory for app in read_results(viewer_roots["good"]).apps for t in app.tasks if t.trajectory})
    assert f"/ {total}" in await page.locator("#label-progress").inner_text()


async def test_a_run_page_shows_each_figures_95_percent_interval_and_the_paired_comparisons(served, viewer_roots,
                                                                                               browser_page):
    page = browser_page
    results = read_results(viewer_roots["good"])
    await page.goto(f"{served.base}/runs/{RUN}")
    for index, row in enumerate(results.table):  # each round's overall cell: its FC, SR and weighted intervals
        cell = page.locator("table.figures tbody tr").nth(index).locator('span.cell[data-domain="overall"] .ci')
        low, high = row.sr_ci95["overall"]
        assert f"SR [{100 * low:.1f}, {100 * high:.1f}]" in await cell.inner_text()
    comparisons = await page.locator("#comparisons").inner_text()
    (comparison,) = results.comparisons  # one track, rounds 0 and 1
    assert f"round 1 vs round 0: {comparison.summary()}" in comparisons
    await page.goto(served.base + "/")
    card = await page.locator(f'section.run-card[data-run="{RUN}"]').inner_text()
    low, high = results.table[0].sr_ci95["overall"]
    assert f"{100 * results.table[0].sr['overall']:.1f} [{100 * low:.1f}, {100 * high:.1f}]" in card


async def test_an_app_shows_its_versions_feedback_diff_and_task_grid(served, viewer_roots, browser_page):
    page = browser_page
    results = read_results(viewer_roots["good"])
    await page.goto(f"{served.base}/runs/{RUN}")
    await page.get_by_role("link", name="unit-converter").first.click()
    await page.wait_for_selector(".versions")
    assert await page.locator("figure.version").count() == 2  # rounds 0 and 1 side by side
    for image in await page.locator("figure.version img").all():
        assert await image.evaluate("img => img.complete && img.naturalWidth") == 1280
    assert await page.locator("details.feedback li").count() > 0  # the commenter's feedback as lists
    assert "Non-regression" in await page.locator("figure.version").nth(1).inner_text()
    assert await page.locator("pre.diff .d-add").count() > 0  # the offline revision changed the HTML
    grid = {}
    for row in await page.locator("table.tasks tbody tr").all():
        cells = row.locator("td")
        grid[await row.get_attribute("data-task")] = [await cells.nth(i).get_attribute("class") for i in (1, 2)]
    for app in results.apps:
        for task in app.tasks:
            want = "cell-success" if task.success else "cell-failure" if task.checker_valid else "cell-unsupported"
            assert grid[task.task_id][app.round] == want, (task.task_id, app.round)


async def test_stepping_through_a_trajectory_with_the_keyboard_shows_each_steps_screenshot_and_action(
        served, viewer_roots, browser_page):
    page = browser_page
    trajectory_id, trajectory = _longest(viewer_roots["good"])
    assert len(trajectory.steps) >= 3
    await page.goto(f"{served.base}/runs/{RUN}/t/{quote(trajectory_id)}")
    await page.wait_for_selector("#step-details tr")
    for number, step in enumerate(trajectory.steps, start=1):
        if number > 1:
            await page.keyboard.press("ArrowRight")
        assert await page.locator("#step-title").inner_text() == f"step {number} of {len(trajectory.steps)}"
        before = trajectory.initial_screenshot if number == 1 else trajectory.steps[number - 2].screenshot
        assert _path(await page.locator("#before-img").get_attribute("src")).endswith(f"/{trajectory_id}/{before}")
        assert _path(await page.locator("#after-img").get_attribute("src")).endswith(f"/{trajectory_id}/{step.screenshot}")
        assert await page.locator("#after-img").evaluate("img => img.decode().then(() => img.naturalWidth)") == 1280
        details = await page.locator("#step-details").inner_text()
        assert step.screen_action.describe() in details
        if step.screen_action.point is not None:  # the ring is drawn where the agent pointed, in screen pixels
            ring = page.locator("#overlay circle.ring").first
            assert float(await ring.get_attribute("cx")) == step.screen_action.point.x
            assert float(await ring.get_attribute("cy")) == step.screen_action.point.y
    await page.keyboard.press("ArrowLeft")
    assert await page.locator("#step-title").inner_text() == f"step {len(trajectory.steps) - 1} of {len(trajectory.steps)}"


async def test_j_and_k_move_between_trajectories_in_results_order(served, viewer_roots, browser_page):
    page = browser_page
    results = read_results(viewer_roots["good"])
    order = list(dict.fromkeys(t.trajectory for app in results.apps for t in app.tasks if t.trajectory))
    await page.goto(f"{served.base}/runs/{RUN}/t/{quote(order[1])}")
    await page.keyboard.press("j")
    await page.wait_for_url(f"**/t/{quote(order[2])}")
    await page.keyboard.press("k")
    await page.wait_for_url(f"**/t/{quote(order[1])}")
    await page.keyboard.press("k")
    await page.wait_for_url(f"**/t/{quote(order[0])}")


async def test_comparing_two_rounds_lists_every_task_that_flipped(served, viewer_roots, browser_page):
    page = browser_page
    results = read_results(viewer_roots["good"])
    by_round = {app.round: {t.task_id: t.success and t.checker_valid for t in app.tasks} for app in results.apps}
    to_success = sorted(t for t, won in by_round[1].items() if won and not by_round[0].get(t))
    to_failure = sorted(t for t, won in by_round[1].items() if not won and by_round[0].get(t))
    assert to_success, "the offline revision is expected to make at least one task succeed"
    await page.goto(f"{served.base}/runs/{RUN}")
    await page.locator("#compare-rounds").click()
    await page.wait_for_selector("#to_success")
    seen_success = sorted([await row.locator("td").nth(1).inner_text()
                           for row in await page.locator("tr.flip-to_success").all()])
    seen_failure = sorted([await row.locator("td").nth(1).inner_text()
                           for row in await page.locator("tr.flip-to_failure").all()])
    assert (seen_success, seen_failure) == (to_success, to_failure)


async def test_comparing_the_last_rounds_of_two_runs_lists_every_task_that_flipped(offline_run, browser_page, tmp_path):
    """`/compare?a=RUN&b=RUN`: a second run (the first one's copy with two last-round results turned over)
    against the first; each flip links to the trajectory in its own run."""
    from tests.viewer.conftest import Served

    other = tmp_path / f"{RUN}-b"
    shutil.copytree(offline_run, other)
    results = read_results(other)
    last = max(app.round for app in results.apps)
    tasks = [task for app in results.apps if app.round == last for task in app.tasks if task.checker_valid]
    turned = [next(task for task in tasks if task.success), next((task for task in tasks if not task.success), None)]
    for task in filter(None, turned):
        task.success = not task.success
    (other / "results.json").write_text(results.model_dump_json())
    server = Served([offline_run, other])
    try:
        page = browser_page
        await page.goto(f"{server.base}/compare?a={RUN}&b={RUN}-b")
        assert await page.locator("h1").inner_text() == f"{RUN} · round {last} → {RUN}-b · round {last}"
        flips = {}
        for kind in ("to_success", "to_failure"):
            for row in await page.locator(f"tr.flip-{kind}").all():
                links = [await link.get_attribute("href") for link in await row.locator("a").all()]
                flips[await row.locator("td").nth(1).inner_text()] = (kind, links)
        want = {task.task_id: "to_success" if task.success else "to_failure" for task in filter(None, turned)}
        assert {task_id: kind for task_id, (kind, _) in flips.items()} == want
        for task in filter(None, turned):
            _, links = flips[task.task_id]
            assert links == [f"/runs/{RUN}/t/{quote(task.trajectory)}?reveal=1",
                             f"/runs/{RUN}-b/t/{quote(task.trajectory)}?reveal=1"]
    finally:
        server.stop()


async def test_labelling_three_trajectories_with_the_keys_survives_a_reload_and_lands_in_labels_jsonl(
        served, viewer_roots, browser_page):
    page = browser_page
    results = read_results(viewer_roots["good"])
    outcomes = {t.trajectory: t for app in results.apps for t in app.tasks if t.trajectory}
    order = list(outcomes)[:3]
    labelled = dict(zip(order, ("success", "failure", "unsure")))
    for trajectory_id, value in labelled.items():
        await page.goto(f"{served.base}/runs/{RUN}/t/{quote(trajectory_id)}")
        # Blind: the checker's verdict is hidden until this person labels.
        assert "hidden until you label" in await page.locator("#verdict").inner_text()
        assert await page.locator("img.dashboard").count() == 0
        await page.locator("#label-note").fill(f"note on {value}")
        await page.locator("body").click(position={"x": 5, "y": 300})  # leave the note field: keys label again
        async with page.expect_navigation():
            await page.keyboard.press(value[0])
        verdict = await page.locator("#verdict").inner_text()
        outcome = outcomes[trajectory_id]
        checker = "success" if outcome.success else "failure"
        assert f"Checker: {checker}" in verdict
        disagrees = value != "unsure" and value != checker
        assert ("disagrees" in verdict) == disagrees
        assert ("disagree" in (await page.locator("#verdict").get_attribute("class"))) == disagrees
    await page.reload()
    assert f"Your label: {labelled[order[-1]]}" in await page.locator("#my-label").inner_text()
    assert "3 / " in await page.locator("#label-progress").inner_text()
    for trajectory_id, value in labelled.items():
        await page.goto(f"{served.base}/runs/{RUN}/t/{quote(trajectory_id)}")
        assert f"Your label: {value}" in await page.locator("#my-label").inner_text()
    stored = read_labels(viewer_roots["good"])
    assert stored.problems == []
    assert {label.trajectory_id: (label.label, label.note, label.who) for label in stored.labels} == {
        t: (v, f"note on {v}", "ada") for t, v in labelled.items()}


async def test_a_damaged_run_says_what_is_wrong_on_the_page_that_needs_it(served, viewer_roots, browser_page):
    page = browser_page
    damaged = viewer_roots["damaged"]
    trajectory_id, trajectory = _longest(damaged)
    (damaged / trajectory_id / trajectory.steps[0].screenshot).unlink()  # a missing PNG
    results = read_results(damaged)
    other = next(t.trajectory for app in results.apps for t in app.tasks if t.trajectory and t.trajectory != trajectory_id)
    text = (damaged / other / "trajectory.json").read_text()
    (damaged / other / "trajectory.json").write_text(text[: len(text) // 3])  # a truncated JSON
    await page.goto(f"{served.base}/runs/damaged-run/t/{quote(trajectory_id)}")
    assert f"{trajectory.steps[0].screenshot}: the screenshot is missing" in await page.locator(".problem").first.inner_text()
    assert await page.locator("#step-details tr").count() > 0  # the steps still show
    await page.goto(f"{served.base}/runs/damaged-run/t/{quote(other)}")
    assert "not a valid trajectory" in await page.locator(".problem").first.inner_text()
    await page.goto(f"{served.base}/runs/damaged-run/apps/unit-converter")  # the rest of the run still works
    assert await page.locator("figure.version").count() == 2
    await page.goto(f"{served.base}/runs/broken-results")
    assert "not a valid results file" in await page.locator(".problem").first.inner_text()
    await page.goto(f"{served.base}/runs/{RUN}")
    assert await page.locator("table.apps tbody tr").count() == 1


async def test_a_trajectory_links_its_dashboard_after_labelling_and_its_trace_with_the_show_trace_command(
        served, viewer_roots, browser_page):
    page = browser_page
    results = read_results(viewer_roots["good"])
    traced = next(t for app in results.apps for t in app.tasks if t.trace)
    await page.goto(f"{served.base}/runs/{RUN}/t/{quote(traced.trajectory)}?reveal=1")
    dashboard = page.locator("img.dashboard")
    # `loading="lazy"`: the page's load event does not wait for it, so wait until the image has loaded (or failed)
    await dashboard.scroll_into_view_if_needed()
    await page.wait_for_function("img => img.complete", arg=await dashboard.element_handle(), timeout=30_000)
    assert await dashboard.evaluate("img => img.naturalWidth") == 1920
    trace = await page.locator("p.trace").inner_text()
    assert f"playwright show-trace {viewer_roots['good'].resolve()}/{traced.trace}" in trace
    response = await page.request.get(served.base + await page.locator("p.trace a").get_attribute("href"))
    assert response.status == 200 and (await response.body())[:2] == b"PK"


async def test_app_versions_are_served_in_a_sandbox(served, viewer_roots, browser_page):
    results = read_results(viewer_roots["good"])
    response = await browser_page.request.get(f"{served.base}/files/{RUN}/{results.apps[0].html}")
    assert response.status == 200
    assert response.headers["content-security-policy"].startswith("sandbox")


async def test_labels_are_taken_as_json_only_and_for_trajectories_of_the_run(served, viewer_roots, browser_page):
    request = browser_page.request
    known = read_results(viewer_roots["good"]).apps[0].tasks[0].trajectory
    form = await request.post(f"{served.base}/runs/{RUN}/labels", form={"trajectory_id": known, "label": "success"})
    assert form.status in (415, 422)
    unknown = await request.post(f"{served.base}/runs/{RUN}/labels",
                                 data=json.dumps({"trajectory_id": "apps/../../x", "label": "success"}),
                                 headers={"Content-Type": "application/json"})
    assert unknown.status == 404
    bad = await request.post(f"{served.base}/runs/{RUN}/labels", data=json.dumps({"trajectory_id": known, "label": "maybe"}),
                             headers={"Content-Type": "application/json"})
    assert bad.status == 422


README_SHOTS = ("runs", "app", "trajectory")


async def test_the_readme_screenshots_are_made_by_this_test(served, viewer_roots, browser_page, tmp_path):
    """The viewer's pictures in the README come from here (`AUI_UPDATE_SCREENSHOTS=1` rewrites docs/viewer/)."""
    import io
    import os

    from PIL import Image

    root = Path(__file__).resolve().parents[2]
    page = browser_page
    await page.set_viewport_size({"width": 1280, "height": 800})
    trajectory_id, _ = _longest(viewer_roots["good"])
    urls = {"runs": "/", "app": f"/runs/{RUN}/apps/unit-converter", "trajectory": f"/runs/{RUN}/t/{quote(trajectory_id)}?reveal=1"}
    target = root / "docs" / "viewer" if os.environ.get("AUI_UPDATE_SCREENSHOTS") else tmp_path
    target.mkdir(parents=True, exist_ok=True)
    for name in README_SHOTS:
        await page.goto(served.base + urls[name])
        await page.wait_for_load_state("load")
        picture = Image.open(io.BytesIO(await page.screenshot()))
        small = picture.resize((960, 600)).convert("P", palette=Image.Palette.ADAPTIVE, colors=128)
        small.save(target / f"{name}.png", optimize=True)
    readme = (root / "README.md").read_text()
    for name in README_SHOTS:
        assert f"docs/viewer/{name}.png" in readme
        assert (root / "docs" / "viewer" / f"{name}.png").is_file()


async def test_the_links_prefect_artifacts_carry_open_the_viewers_pages(served, viewer_roots, browser_page):
    from flows import viewer_url
    from results import Track

    results = read_results(viewer_roots["good"])
    last = results.apps[-1]
    track = Track(coder=last.coder, cua=last.cua, mode=last.mode, commenter_mode=last.commenter_mode).folder.as_posix()
    failed = next(t for t in last.tasks if t.trajectory)
    for url in (viewer_url(served.base, RUN), viewer_url(served.base, RUN, app_id=last.app_id, track=track),
                viewer_url(served.base, RUN, failed.trajectory)):
        response = await browser_page.goto(url)
        assert response.status == 200, url
    assert failed.task_id in await browser_page.locator("h1").inner_text()
