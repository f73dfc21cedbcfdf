"""The one coordinate executor, on a page with controls at known positions (see cua_lab)."""

import pytest
from tests.cua.cua_lab import DOUBLE_TARGET, DROP_ZONE, HANDLE, INC_BUTTON, LAB, LIST_POINT, NAME_INPUT, RIGHT_TARGET

from cua import Action, Point, UnknownKeyError, execute, isolated_world, key_combination, normalize_key, open_app, settle


def at(kind: str, xy: tuple[float, float], **fields) -> Action:
    return Action(kind=kind, point=Point(x=xy[0], y=xy[1]), **fields)


async def text(page, selector: str) -> str:
    return await isolated_world(page).evaluate(f"document.querySelector({selector!r}).textContent")


async def run(page, action: Action):
    result = await execute(page, action)
    await settle(page)
    return result


async def test_click_hits_the_element_at_the_point_and_records_it():
    async with open_app(LAB) as app:
        result = await run(app.page, at("click", INC_BUTTON))
        assert await text(app.page, "#count") == "1"
        assert result.target.tag == "button" and result.target.id == "inc" and result.target.text == "Add one"
        assert result.target.selector == "#inc"
        assert (result.target.box.x, result.target.box.y, result.target.box.width) == (40, 40, 120)
        assert result.error is None


async def test_click_beside_the_element_does_not_trigger_it():
    async with open_app(LAB) as app:
        await run(app.page, at("click", (INC_BUTTON[0], INC_BUTTON[1] + 40)))
        assert await text(app.page, "#count") == "0"


async def test_drag_is_a_real_press_move_release_that_drops_in_the_zone():
    async with open_app(LAB) as app:
        result = await run(app.page, Action(kind="drag", point=Point(x=HANDLE[0], y=HANDLE[1]), end=Point(x=DROP_ZONE[0], y=DROP_ZONE[1])))
        assert await text(app.page, "#zone") == "Dropped"
        assert result.target.id == "handle"
        left = await isolated_world(app.page).evaluate("document.querySelector('#handle').getBoundingClientRect().left")
        assert left == pytest.approx(DROP_ZONE[0] - 30, abs=2)


async def test_scroll_scrolls_the_element_under_the_point_in_the_given_direction():
    async with open_app(LAB) as app:
        world = isolated_world(app.page)
        await run(app.page, at("scroll", LIST_POINT, direction="down"))
        list_top = await world.evaluate("document.querySelector('#list').scrollTop")
        assert list_top > 0
        assert await world.evaluate("scrollY") == 0  # the page itself did not move
        await run(app.page, at("scroll", LIST_POINT, direction="up", amount=10_000))
        assert await world.evaluate("document.querySelector('#list').scrollTop") == 0


async def test_scroll_outside_a_scrollable_box_scrolls_the_page():
    async with open_app(LAB) as app:
        await run(app.page, at("scroll", (600, 650), direction="down", amount=300))
        assert await isolated_world(app.page).evaluate("scrollY") == pytest.approx(300, abs=1)


async def test_typing_with_a_trailing_newline_submits_the_form():
    async with open_app(LAB) as app:
        await run(app.page, at("click", NAME_INPUT))
        result = await run(app.page, Action(kind="type", text="Ada Lovelace\n"))
        assert await text(app.page, "#greeting") == "Hello, Ada Lovelace"
        assert result.target.id == "name"  # keyboard actions record the focused element


async def test_typing_without_newline_does_not_submit():
    async with open_app(LAB) as app:
        await run(app.page, at("click", NAME_INPUT))
        await run(app.page, Action(kind="type", text="Ada"))
        assert await text(app.page, "#greeting") == ""
        assert await isolated_world(app.page).evaluate("document.querySelector('#name').value") == "Ada"


async def test_hotkeys_reach_the_page_with_normalised_names():
    async with open_app(LAB) as app:
        await run(app.page, Action(kind="hotkey", keys=["ctrl", "k"]))
        assert await text(app.page, "#keys") == "ctrl+k"
        await run(app.page, Action(kind="hotkey", keys=["esc"]))
        assert await text(app.page, "#keys") == "escape"


async def test_double_and_right_click():
    async with open_app(LAB) as app:
        await run(app.page, at("left_double", DOUBLE_TARGET))
        await run(app.page, at("right_single", RIGHT_TARGET))
        assert await text(app.page, "#dbl") == "Double-clicked"
        assert await text(app.page, "#ctx") == "Right-clicked"


async def test_unknown_key_is_an_error_on_the_result_not_an_exception():
    async with open_app(LAB) as app:
        result = await execute(app.page, Action(kind="hotkey", keys=["hyperspace"]))
        assert result.error and "hyperspace" in result.error


def test_key_names_normalise_to_playwright_names():
    assert key_combination(["ctrl", "shift", "a"]) == "Control+Shift+a"
    assert [normalize_key(k) for k in ["Return", "esc", "pagedown", "F5", "up", "space"]] == [
        "Enter", "Escape", "PageDown", "F5", "ArrowUp", "Space"
    ]
    with pytest.raises(UnknownKeyError):
        normalize_key("hyperspace")


PICKER = """<!doctype html><body style="margin:0">
<select id="unit" style="position:absolute;left:20px;top:20px;width:200px;height:30px">
  <option value="m">Metres</option><option value="km">Kilometres</option><option value="mi">Miles</option></select>
<span id="changed">no</span>
<script>document.getElementById('unit').onchange = e => { document.getElementById('changed').textContent = 'trusted:' + e.isTrusted; };</script>
</body>"""


async def test_an_option_seen_in_an_open_drop_down_can_be_clicked():
    async with open_app(PICKER) as app:
        await run(app.page, at("click", (100, 35)))
        world = isolated_world(app.page)
        box = await world.evaluate("(() => { const r = document.querySelectorAll('#unit option')[2].getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2, r.height]; })()")
        assert box[2] > 0  # the options are laid out in the page, where the screenshot shows them
        result = await run(app.page, at("click", (box[0], box[1])))
        assert await world.evaluate("document.querySelector('#unit').value") == "mi"
        assert await text(app.page, "#changed") == "trusted:true"  # real input, not a scripted change
        assert result.target.tag == "option" and result.target.text == "Miles"


KANBAN = """<!doctype html><body style="margin:0">
<div id="card" draggable="true" style="position:absolute;left:20px;top:20px;width:100px;height:60px;background:#9cf">card</div>
<div id="done" style="position:absolute;left:400px;top:20px;width:200px;height:200px;border:1px solid">Done</div>
<span id="out">none</span>
<script>
  const card = document.getElementById('card'), done = document.getElementById('done');
  card.addEventListener('dragstart', e => e.dataTransfer.setData('text/plain', 'card'));
  done.addEventListener('dragover', e => e.preventDefault());
  done.addEventListener('drop', e => { e.preventDefault(); document.getElementById('out').textContent = 'dropped:' + e.dataTransfer.getData('text/plain'); });
</script></body>"""


async def test_drag_also_drives_html5_drag_and_drop():
    async with open_app(KANBAN) as app:
        await run(app.page, Action(kind="drag", point=Point(x=70, y=50), end=Point(x=500, y=120)))
        assert await text(app.page, "#out") == "dropped:card"
