"""The README's picture of each defect type (docs/defects/<type>.png), made from the proofs' own bindings.

`AUI_UPDATE_SCREENSHOTS=1 pytest tests/perturb/test_defect_pictures.py` makes them again: for a
display type, the bound element's region on the defect-free app beside the same region with the
defect; for an interaction type, the screen before the bound step, after it on the defect-free
app, and after it with the defect. Without the variable the test only checks that every type has
its picture, small enough for the README.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageFont

from cua import DEFECT_TYPES, BrowserConfig, open_app, settle
from perturb import defect_transform, defect_types, make_defect
from tests.perturb.test_defects import APP, BINDINGS, HTML
from verifier import replay_solution

PICTURES = Path(__file__).resolve().parents[2] / "docs" / "defects"
MAX_BYTES = 80_000
PANEL_HEIGHT = 150
PANEL_WIDTH = 267  # an interaction's whole 1280×720 screen at 150 px high
MIN_PANEL_WIDTH = 200
PAD = 40
UPDATE = os.environ.get("AUI_UPDATE_SCREENSHOTS") == "1"


def test_every_type_has_a_small_picture():
    for name in defect_types():
        path = PICTURES / f"{name}.png"
        assert path.is_file(), f"{path} missing: run with AUI_UPDATE_SCREENSHOTS=1"
        assert path.stat().st_size <= MAX_BYTES
        with Image.open(path) as image:
            assert image.height <= PANEL_HEIGHT + 60 and image.width >= 2 * MIN_PANEL_WIDTH


@pytest.mark.skipif(not UPDATE, reason="set AUI_UPDATE_SCREENSHOTS=1 to make the pictures again")
@pytest.mark.parametrize("defect_type", list(BINDINGS))
async def test_make_the_picture(defect_type):
    task_id, step = BINDINGS[defect_type]
    task = APP.task(task_id)
    spec = make_defect(defect_type, task.solution[step - 1].selector, seed=0)
    prefix, bound = task.solution[: step - 1], task.solution[step - 1]
    clean, defective = BrowserConfig(), BrowserConfig(transform=defect_transform(spec))
    display = DEFECT_TYPES[defect_type] == "display"
    panels: list[tuple[str, Image.Image]] = []
    region = None
    for label, config in (("defect-free", clean), ("with the defect", defective)):
        async with open_app(HTML, config) as app:
            await settle(app.page)
            await replay_solution(app.page, prefix)
            locator = app.page.locator(bound.selector).first
            await locator.scroll_into_view_if_needed()
            await settle(app.page)
            if region is None:  # an interaction's effect may show anywhere: the whole screen
                box = await locator.bounding_box()
                region = {"x": max(0, box["x"] - 3 * PAD), "y": max(0, box["y"] - PAD), "width": box["width"] + 6 * PAD,
                          "height": box["height"] + 2 * PAD} if display else {"x": 0, "y": 0, "width": 1280, "height": 720}
            if display:
                panels.append((label, await _shot(app.page, region)))
                continue
            if config is clean:
                panels.append(("before the step", await _shot(app.page, region)))
            await replay_solution(app.page, [bound], 3_000)
            await settle(app.page)
            panels.append((f"after it, {label}", await _shot(app.page, region)))
    assert ImageChops.difference(panels[-2][1], panels[-1][1]).getbbox() is not None  # the defect shows
    PICTURES.mkdir(parents=True, exist_ok=True)
    _compose(defect_type, panels).save(PICTURES / f"{defect_type}.png", optimize=True)


async def _shot(page, region) -> Image.Image:
    png = await page.screenshot(clip=region, animations="disabled", caret="hide")
    image = Image.open(io.BytesIO(png)).convert("RGB")
    scale = min(PANEL_HEIGHT / image.height, PANEL_WIDTH / image.width)
    image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.LANCZOS)
    panel = Image.new("RGB", (max(image.width, MIN_PANEL_WIDTH), PANEL_HEIGHT), "white")
    panel.paste(image, ((panel.width - image.width) // 2, (PANEL_HEIGHT - image.height) // 2))
    return panel


def _compose(title: str, panels: list[tuple[str, Image.Image]]) -> Image.Image:
    font = ImageFont.truetype("DejaVuSans.ttf", 13)
    gap, caption = 8, 20
    width = sum(image.width for _, image in panels) + gap * (len(panels) + 1)
    sheet = Image.new("RGB", (width, PANEL_HEIGHT + 2 * caption + gap), "white")
    draw = ImageDraw.Draw(sheet)
    draw.text((gap, 3), f"{title} ({DEFECT_TYPES[title]})", fill="#111", font=font)
    x = gap
    for label, image in panels:
        draw.text((x, caption + 2), label, fill="#555", font=font)
        sheet.paste(image, (x, 2 * caption))
        draw.rectangle([x - 1, 2 * caption - 1, x + image.width, 2 * caption + image.height], outline="#999")
        x += image.width + gap
    return sheet.convert("P", palette=Image.ADAPTIVE, colors=128)
