"""`aui variations`: the list of variations, pictures of one bundled app in each (docs/variations.md's, in real Chromium);
`aui report`'s variation table."""

from __future__ import annotations

import io
import os
from pathlib import Path

from PIL import Image, ImageChops
from typer.testing import CliRunner

from apps_prompts import load_app
from aui import app as cli
from aui._variations import write_variation_pictures
from perturb import VARIATIONS, offline_variation_names, variation_names

ROOT = Path(__file__).resolve().parents[2]
README_APP = "mortgage-calculator"


def _rows(text: str) -> dict[str, list[str]]:
    """The table's rows by their first cell (the variation's name)."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if len(cells) == 4 and cells[0]:
            rows[cells[0]] = cells[1:]
    return rows


def test_aui_variations_lists_each_variation_with_its_kind_what_it_does_and_what_it_needs():
    result = CliRunner().invoke(cli, ["variations"])
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    kinds = {name: VARIATIONS.get(name).kind for name in variation_names()[1:]}
    assert list(rows) == ["default", *[n for n, k in kinds.items() if k == "appearance"],  # appearance, then content
                          *[n for n, k in kinds.items() if k == "content"]]
    for name in variation_names()[1:]:
        variation = VARIATIONS.get(name)
        kind, summary, needs = rows[name]
        assert (kind, summary) == (variation.kind, variation.summary)
        assert ("translator role" in needs) == (name == "german"), (name, needs)


def test_drawing_a_variation_that_needs_a_model_or_does_not_exist_is_one_error_line():
    for wrong, said in (("german", "translator"), ("sepia", "unknown variation 'sepia'")):
        result = CliRunner().invoke(cli, ["variations", "--show", README_APP, "--variation", wrong])
        assert result.exit_code == 2
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and said in lines[0], result.output


async def test_the_readme_pictures_show_one_app_in_every_offline_variation(tmp_path):
    """docs/variations.md's pictures (docs/variations/*.png) come from here (`AUI_UPDATE_SCREENSHOTS=1` rewrites them all), as
    `aui variations --show mortgage-calculator --width 640` draws them. Otherwise three are drawn (the default look,
    one appearance and one content variation: each variation on each bundled app is proven in tests/perturb)."""
    update = bool(os.environ.get("AUI_UPDATE_SCREENSHOTS"))
    target = ROOT / "docs" / "variations" if update else tmp_path
    names = offline_variation_names() if update else ["default", "dark", "popup"]
    written = await write_variation_pictures(load_app(README_APP), names, target, width=640)
    assert [path.name for path in written] == [f"{name}.png" for name in names]
    pictures = {path.stem: Image.open(io.BytesIO(path.read_bytes())).convert("RGB") for path in written}
    assert {picture.size for picture in pictures.values()} == {(640, 360)}
    for name in names[1:]:  # every variation changes what the agent sees
        assert ImageChops.difference(pictures["default"], pictures[name]).getbbox() is not None, name
    page = (ROOT / "docs" / "variations.md").read_text()  # the README links the page that shows them
    assert "docs/variations.md" in (ROOT / "README.md").read_text()
    for name in offline_variation_names():
        assert f'src="variations/{name}.png"' in page, name
        stored = ROOT / "docs" / "variations" / f"{name}.png"
        assert stored.is_file() and stored.stat().st_size < 80_000, name  # small enough for the repository


def test_aui_report_prints_the_variation_table_of_a_run_with_variations(tmp_path):
    from results import write_results
    from tests.variation_runs import variation_results

    write_results(tmp_path, variation_results())  # results.json is all `aui report` reads
    result = CliRunner().invoke(cli, ["report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "SR per variation (%) over the common tasks" in result.output
    assert "50.0 ± 30.6" in result.output  # round 0's spread across variations
