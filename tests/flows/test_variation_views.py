"""How a run's variations are shown: the report's section, the CLI's table, the Prefect table (issue 17).

Every test reads the hand-made results of `tests/variation_runs.py` (two apps, rounds 0–1, two
repeats, dark / adversarial / popup), whose figures are worked out in its docstring; no loop runs.
"""

from __future__ import annotations

import json

import pytest
from bs4 import BeautifulSoup
from rich.console import Console

from aui import variation_table
from flows._artifacts import publish_variations, variation_round_table
from results import AppRoundResult, TaskOutcome, VariationResult, table_rows, variation_rows, write_report
from tests.variation_runs import EXCLUDED_REASON, POPUP_ERROR, variation_results


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> BeautifulSoup:
    """report.html of the hand-made run, written and parsed once for the module (its plot takes seconds)."""
    results = variation_results()
    return BeautifulSoup(write_report(tmp_path_factory.mktemp("report"), table_rows(results), results, []).read_text(),
                         "html.parser")


def _section(report: BeautifulSoup, round_: int):
    return report.select_one(f'section.variations[data-round="{round_}"]')


def _cell(section, variation: str, app: str):
    return section.select_one(f'table.heatmap tr[data-variation="{variation}"] td[data-app="{app}"]')


def test_the_report_shows_a_heatmap_of_sr_with_n_per_cell_coloured_by_tenths(report):
    section = _section(report, 0)
    # (variation, app) → (SR shown, n, colour class); n = the app's common tasks × 2 repeats
    want = {("default", "alpha"): ("100.0", 4, "heat-10"), ("dark", "alpha"): ("50.0", 4, "heat-5"),
            ("adversarial", "beta"): ("100.0", 4, "heat-10"), ("popup", "alpha"): ("0.0", 4, "heat-0"),
            ("default", "all"): ("75.0", 8, "heat-8"), ("popup", "all"): ("0.0", 4, "heat-0")}
    for (variation, app), (figure, n, colour) in want.items():
        cell = _cell(section, variation, app)
        assert cell.find(string=True, recursive=True).strip() == figure, (variation, app)
        assert cell.small.get_text() == f"n={n}"
        assert colour in cell["class"]
    # popup could not be made for beta: no figure, and it says why further down
    popup_beta = section.select('table.heatmap tr[data-variation="popup"] td')[1]
    assert popup_beta.get_text() == "–" and "heat-none" in popup_beta["class"]
    assert POPUP_ERROR in section.select_one("details.variant-errors").get_text()
    # the kept column is over each variation's own kept tasks: adversarial kept t1, t2 (alpha) and u1, u2 (beta)
    kept = section.select('table.heatmap tr[data-variation="adversarial"] td')[-1]
    assert kept.get_text() == "75.0n=8"
    assert "common tasks" in section.select_one("p.spread").get_text()
    assert not section.select("table.heatmap [style]")  # colours are classes: the viewer's CSP forbids inline styles


def test_the_report_gives_the_spread_the_gap_flag_failure_modes_and_exclusions_with_reasons(report):
    first, last = _section(report, 0), _section(report, 1)
    spread = " ".join(first.select_one("p.spread").get_text().split())
    assert "4 of the 5 tasks with a valid checker" in spread
    assert "mean 50.0 · std 30.6 · MAD 12.5 · min–max 0.0–75.0" in spread and "reliability gap: yes" in spread
    assert "reliability gap: no" in last.select_one("p.spread").get_text()  # round 1: every variation at 100
    modes = {row["data-variation"]: [td.get_text() for td in row.select("td")]
             for row in first.select("table.failure-modes tbody tr")}
    header = [th.get_text() for th in first.select("table.failure-modes thead th")]
    assert header == ["variation", "rollouts", "failed", "action loop", "max steps", "decoy"]
    assert modes["adversarial"] == ["8", "2", "", "", "2"]  # t1 clicked the decoy in both repeats
    assert modes["popup"] == ["6", "6", "", "6", ""]
    exclusions = first.select_one("details.exclusions")
    assert "open" not in exclusions.attrs  # collapsed until asked for
    assert " ".join(exclusions.summary.get_text().split()).startswith("Excluded tasks: 1 (adversarial 1)")
    assert [li.get_text() for li in exclusions.select("li")] == [f"alpha · adversarial · t3: {EXCLUDED_REASON}"]


def test_the_report_puts_each_variant_beside_the_default_look_of_one_app(report):
    section = _section(report, 0)
    alpha = next(r for r in variation_results() if r.app_id == "alpha" and r.round == 0)
    pairs = section.select("figure.variant-shot")
    assert [figure["data-variation"] for figure in pairs] == ["dark", "adversarial", "popup"]
    for figure, variation in zip(pairs, alpha.variations):
        assert [img["src"] for img in figure.select("img")] == [alpha.screenshot, variation.screenshot]


def test_a_run_without_variations_has_no_variation_section(tmp_path):
    plain = [AppRoundResult(app_id="a", domain="app", coder="c", cua="u", mode="integrated", round=0, html="x.html",
                            html_sha="0", tasks=[TaskOutcome(task_id="t", solvable=True, checker_valid=True, success=True)])]
    html = write_report(tmp_path, table_rows(plain), plain, []).read_text()
    assert 'class="variations"' not in html and "Reliability across variations" not in html


def _many_variations(names: list[str]) -> list[AppRoundResult]:
    """One app, two tasks, every variation passing a different share (none excluded), two repeats."""
    results = []
    for round_ in (0, 1):
        def tasks(passes: int) -> list[TaskOutcome]:
            return [TaskOutcome(task_id=f"t{i}", solvable=True, checker_valid=True, success=i < passes) for i in range(2)]

        results.append(AppRoundResult(
            app_id="a", domain="app", coder="gpt-5", cua="uitars", mode="integrated", round=round_, html="x.html",
            html_sha="0", tasks=tasks(2), variations=[
                VariationResult(variation=name, kept=["t0", "t1"], tasks=tasks(index % 3)) for index, name in enumerate(names)]))
    return results


def test_the_cli_variation_table_fits_120_columns_with_every_variation_and_figure_whole():
    names = ["dark", "black-white", "hard-font", "zoom-125", "zoom-80", "long", "misleading", "adversarial", "popup",
             "dark+long"]
    rows = variation_rows(_many_variations(names))
    console = Console(record=True, width=120)
    console.print(variation_table(rows, width=120))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 120
    lines = [" ".join(line.replace("│", " ").split()) for line in text.splitlines()]
    for row in rows:
        for name in row.variations:  # each variation on its own line with its SR, kept SR and exclusions, unbroken
            figure = f"{100 * row.sr[name]:.1f}"
            assert any(line.startswith(f"{name} {figure} {figure} 0") or f" {name} {figure} {figure} 0" in line
                       for line in lines), name
        assert f"mean {100 * row.mean:.1f} ± {100 * row.std:.1f}" in text
    wide = Console(record=True, width=320)
    wide.print(variation_table(variation_rows(variation_results()), width=320))
    line = " ".join(next(line for line in wide.export_text().splitlines() if " 0 │" in line).split())
    assert "75.0 │ 50.0 │ 75.0 │ 0.0 │ 50.0 ± 30.6 │ 12.5 │ 0.0–75.0 │ 0.0 │ yes │ 4/5" in line  # one line per row


def test_the_prefect_table_has_sr_per_variation_and_the_spread_per_round():
    rows = variation_rows(variation_results())
    (record,) = variation_round_table(rows, 0)
    assert {key: value for key, value in record.items() if key.startswith("SR ")} == {
        "SR default": "75.0", "SR dark": "50.0", "SR adversarial": "75.0", "SR popup": "0.0"}
    assert (record["mean"], record["std"], record["MAD"], record["min"], record["max"], record["std within"],
            record["gap"], record["common tasks"]) == ("50.0", "30.6", "12.5", "0.0", "75.0", "0.0", "yes", "4/5")
    assert variation_round_table(rows, 1)[0]["gap"] == "no"


@pytest.mark.timeout(600)
async def test_the_variation_tables_are_published_to_prefect_with_a_link_to_the_viewer(prefect_server, tmp_path):
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from experiment import make_config

    config = make_config({"name": "varied-run", "out_dir": str(tmp_path), "variations": ["default", "dark"]})
    rows = variation_rows(variation_results())

    @flow(name="publish-variations-test")
    async def publish() -> None:
        await publish_variations(config, rows)

    await publish()
    async with get_client() as client:
        # By key: the session's one test server holds hundreds of artifacts by now, and an unfiltered read
        # returns one page of 200 in id (random UUID) order.
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(like_="variations-varied-run-round-")))
    found = {a.key: a for a in artifacts if a.key and a.key.startswith("variations-varied-run-round-")}
    assert set(found) == {"variations-varied-run-round-0", "variations-varied-run-round-1"}
    table = found["variations-varied-run-round-0"]
    data = json.loads(table.data) if isinstance(table.data, str) else table.data
    assert data == variation_round_table(rows, 0)
    assert f"{config.viewer_url.rstrip('/')}/runs/varied-run#variations" in table.description


def test_each_variations_sr_has_its_interval_over_the_same_tasks_in_results_json_and_results_md(tmp_path):
    """Round 0's common tasks are alpha t1, t2 and beta u1, u2, each rolled out twice with the same outcome: the
    interval is the bootstrap over those 4 tasks (in app, task order), each with its 2 repeats — not over 8 rollouts."""
    from results import bootstrap_ratio_interval, variation_markdown, write_results

    (first, _) = variation_rows(variation_results())
    for name, passes in {"default": [2, 2, 2, 0], "dark": [2, 0, 2, 0], "adversarial": [0, 2, 2, 2]}.items():
        low, high = bootstrap_ratio_interval(passes, [2, 2, 2, 2])
        assert first.sr_ci95[name] == [round(low, 6), round(high, 6)], name
    # popup: only alpha's t1, t2 (beta's popup could not be made), failing in every repeat. The bootstrap would say
    # [0, 0]; every repeat agreeing, the run holds 2 tasks' worth of evidence: Wilson's 0 of 2, high z² / (2 + z²)
    assert first.sr_ci95["popup"] == [0.0, round(1.959964 ** 2 / (2 + 1.959964 ** 2), 6)]
    # kept: adversarial kept t1, t2 (alpha) and u1, u2 (beta) → the same four tasks as its common ones
    assert first.sr_kept_ci95["adversarial"] == first.sr_ci95["adversarial"]
    write_results(tmp_path, variation_results())
    stored = json.loads((tmp_path / "results.json").read_text())["variations"][0]
    assert stored["sr_ci95"] == first.sr_ci95
    low, high = first.sr_ci95["default"]
    assert f"| default | 75.0 [{100 * low:.1f}, {100 * high:.1f}] |" in variation_markdown([first])
