"""The dashboard renderer: size, determinism, layout, crops and markers."""

from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image

from cua import Action, Point, Trajectory
from dashboard_render import CANVAS_HEIGHT, CANVAS_WIDTH, first_failure_signal, plan_dashboard, render_dashboard
from dashboard_render._header import plan_header
from dashboard_render._fonts import font
from dashboard_render._markers import MARKER

from tests.trajectories import driven_trajectory, synthetic_trajectory


def _acted_points(trajectory: Trajectory, index: int) -> list[tuple[float, float]]:
    """The screen points a step acted on (both ends of a drag; the field centre for typing)."""
    step = trajectory.steps[index - 1]
    action = step.screen_action
    points = []
    if action.point is not None:
        points.append((action.point.x, action.point.y))
    if action.end is not None:
        points.append((action.end.x, action.end.y))
    if action.kind in ("type", "hotkey") and step.target is not None and step.target.box is not None:
        box = step.target.box  # typing lands at the field's start, which its tile must show
        points.append((box.x + min(box.width, 16) / 2, box.y + min(box.height, 16) / 2))
    return points


@pytest.mark.parametrize("steps", [3, 20])
def test_decoding_only_the_rows_the_crops_need_gives_the_same_pixels_as_a_full_decode(synthetic, steps, monkeypatch):
    from dashboard_render import _render

    folder = synthetic(steps)
    partial = render_dashboard(folder).png
    decode_top = _render._decode_top
    monkeypatch.setattr(_render, "_decode_top", lambda content, fraction: decode_top(content, 1.0))
    assert render_dashboard(folder).png == partial


@pytest.mark.parametrize("steps", [1, 2, 7, 20, 30])
def test_dashboard_is_exactly_1920x1080_whatever_the_step_count(tmp_path, synthetic, steps):
    rendered = render_dashboard(synthetic(steps), tmp_path / "dashboard.png")
    with Image.open(io.BytesIO(rendered.png)) as image:
        assert image.size == (1920, 1080)
        assert image.format == "PNG"
    assert (tmp_path / "dashboard.png").read_bytes() == rendered.png
    assert [tile.index for tile in rendered.layout.tiles] == list(range(steps + 1))


def test_rerendering_the_same_trajectory_gives_byte_identical_png(tmp_path, synthetic):
    shutil.copytree(synthetic(9), tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    first = render_dashboard(tmp_path / "a").png
    assert render_dashboard(tmp_path / "a").png == first
    assert render_dashboard(tmp_path / "b").png == first  # nothing depends on the folder's path


@pytest.mark.parametrize("steps", [1, 7, 12, 20, 30])
def test_each_step_tile_contains_the_point_it_acted_on(synthetic, steps):
    trajectory = Trajectory.load(synthetic(steps))
    layout = plan_dashboard(trajectory)
    checked = 0
    for step in trajectory.steps:
        tile = layout.tile_for(step.index)
        for point in _acted_points(trajectory, step.index):
            x, y = tile.to_canvas(point)
            assert tile.image.contains(x, y), f"step {step.index} {step.screen_action.kind} {point} → {(x, y)} not in {tile.image}"
            assert tile.tile.contains(x, y)
            checked += 1
    assert checked >= steps // 2


@pytest.mark.parametrize("steps", [3, 12, 20, 30])
def test_tiles_are_in_reading_order_inside_the_canvas_and_do_not_overlap(synthetic, steps):
    layout = plan_dashboard(Trajectory.load(synthetic(steps)))
    tiles = layout.tiles
    reading_order = sorted(tiles, key=lambda t: (t.tile.y, t.tile.x))
    assert [t.index for t in reading_order] == [t.index for t in tiles]
    for tile in tiles:
        assert 0 <= tile.tile.x and tile.tile.right <= CANVAS_WIDTH
        assert layout.header.bottom < tile.tile.y and tile.tile.bottom <= CANVAS_HEIGHT
    for a in tiles:
        for b in tiles:
            if a.index < b.index:
                apart = a.tile.right <= b.tile.x or b.tile.right <= a.tile.x or a.tile.bottom <= b.tile.y or b.tile.bottom <= a.tile.y
                assert apart, f"tiles {a.index} and {b.index} overlap"


def test_few_steps_get_larger_tiles_than_many(synthetic):
    few = plan_dashboard(Trajectory.load(synthetic(2))).tiles[1].tile
    many = plan_dashboard(Trajectory.load(synthetic(20))).tiles[1].tile
    assert few.width * few.height > 3 * many.width * many.height


def test_crops_stay_legible_up_to_12_and_20_steps(synthetic):
    full = Trajectory.load(synthetic(20))
    for steps in range(1, 21):
        scale = plan_dashboard(full.model_copy(update={"steps": full.steps[:steps]})).min_action_scale
        assert scale >= (0.7 if steps <= 12 else 0.5), f"{steps} steps: smallest crop scale {scale}"
    assert render_dashboard(synthetic(20)).layout.min_action_scale >= 0.5


def test_a_tile_is_a_crop_not_the_whole_screenshot_for_a_click(synthetic):
    trajectory = Trajectory.load(synthetic(20))
    layout = plan_dashboard(trajectory)
    clicks = [s.index for s in trajectory.steps if s.screen_action.kind == "click"]
    assert clicks, "the synthetic trajectory has no click to crop"
    for index in clicks:
        crop = layout.tile_for(index).crop
        assert crop.width < 1280 and crop.height < 720
    waits = [s.index for s in trajectory.steps if s.screen_action.kind == "wait"]
    assert waits and all(layout.tile_for(i).crop.width == 1280 and layout.tile_for(i).crop.height == 720 for i in waits)


def test_the_last_step_stretches_over_the_empty_cells_of_the_last_row(synthetic):
    layout = plan_dashboard(Trajectory.load(synthetic(12)))  # 13 tiles: 5×3 leaves two empty cells
    last = layout.tiles[-1]
    empty = layout.columns * layout.rows - len(layout.tiles)
    regular = layout.tiles[0].tile.width
    assert last.key == (empty > 0)
    assert last.tile.width >= regular * (empty + 1)


def test_click_marker_is_drawn_on_the_click_point(synthetic):
    trajectory = Trajectory.load(synthetic(7))
    rendered = render_dashboard(synthetic(7))
    image = Image.open(io.BytesIO(rendered.png)).convert("RGB")
    step = next(s for s in trajectory.steps if s.screen_action.kind == "click")
    x, y = rendered.layout.to_canvas(step.index, step.screen_action.point)
    near = [image.getpixel((round(x) + dx, round(y) + dy)) for dx in range(-2, 3) for dy in range(-2, 3)]
    assert any(sum(abs(a - b) for a, b in zip(pixel, MARKER)) < 60 for pixel in near)


@pytest.mark.parametrize("success, expected", [(True, (22, 163, 74)), (False, (220, 38, 38))])
def test_result_is_colour_coded_in_the_header(synthetic, success, expected):
    rendered = render_dashboard(synthetic(2, success))
    image = Image.open(io.BytesIO(rendered.png)).convert("RGB")
    header = rendered.layout.header
    assert image.getpixel((header.x + 20, header.bottom - 18)) == expected


def test_a_very_long_task_wraps_inside_the_header_and_ends_with_an_ellipsis(tmp_path):
    task = "Open the settings panel and " + "then adjust every slider to its maximum value " * 40
    trajectory = synthetic_trajectory(tmp_path, 4, task=task)
    text = plan_header(trajectory)
    assert len(text.task) == 3 and text.task[-1].endswith("…")
    assert all(font("bold", 22).width(line) <= 1920 - 24 - 250 - 36 for line in text.task)
    layout = plan_dashboard(trajectory)
    assert layout.header.height == text.height <= 200


def test_missing_screenshot_still_renders(tmp_path, synthetic):
    shutil.copytree(synthetic(2), tmp_path, dirs_exist_ok=True)
    (tmp_path / "step_002.png").unlink()
    rendered = render_dashboard(tmp_path)
    assert Image.open(io.BytesIO(rendered.png)).size == (1920, 1080)


async def test_dashboard_of_a_real_chromium_trajectory_keeps_each_action_in_its_tile(tmp_path):
    actions = [
        Action(kind="click", point=Point(x=75, y=140)),
        Action(kind="click", point=Point(x=120, y=198)),
        Action(kind="type", text="Ada\n"),
        Action(kind="drag", point=Point(x=96, y=263), end=Point(x=300, y=263)),
        Action(kind="scroll", point=Point(x=640, y=400), direction="down"),
        Action(kind="finished", text="done"),
    ]
    trajectory = await driven_trajectory(tmp_path, actions)
    assert trajectory.steps[0].dom_changed is True  # Increment changes #count
    rendered = render_dashboard(tmp_path, tmp_path / "dashboard.png")
    for step in trajectory.steps:
        tile = rendered.layout.tile_for(step.index)
        for point in _acted_points(trajectory, step.index):
            assert tile.image.contains(*tile.to_canvas(point)), f"step {step.index}"
    typed = rendered.layout.tile_for(3)
    assert typed.focus is not None and typed.focus.kind == "box" and typed.focus.width > 20  # the field, not a point
    assert rendered.layout.tile_for(6).focus is None  # finished shows the whole view


def test_first_failure_signal_is_the_first_action_without_effect_not_a_wait_or_finish(synthetic):
    trajectory = Trajectory.load(synthetic(20))
    assert first_failure_signal(trajectory) == 3  # step 3 (a scroll) changed nothing in the DOM
    quiet = trajectory.model_copy(update={"steps": [trajectory.steps[6]]})  # step 7 is a wait with no DOM change
    assert quiet.steps[0].screen_action.kind == "wait" and quiet.steps[0].dom_changed is False
    assert first_failure_signal(quiet) is None
    assert first_failure_signal(Trajectory.load(synthetic(2, True))) is None  # a success has no failure signal


def test_png_holds_only_image_chunks_and_a_valid_zlib_stream(synthetic):
    import struct
    import zlib

    png = render_dashboard(synthetic(2)).png
    chunks, offset = [], 8
    while offset < len(png):
        length, kind = struct.unpack(">I4s", png[offset : offset + 8])
        chunks.append((kind, png[offset + 8 : offset + 8 + length]))
        offset += 12 + length
    assert [kind for kind, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]  # no time, text or gamma chunks
    assert len(zlib.decompress(chunks[1][1])) == 1080 * (1 + 1920 * 3)
