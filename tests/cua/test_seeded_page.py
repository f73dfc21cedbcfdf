"""Seeded app randomness and a fixed clock start (`seed` / `fixed_clock` of `rollout`, `AppEnv.reset`,
`open_app`): the same seed gives the app the same `Math.random` sequence and so the same demo data,
another seed another; the clock starts at `FIXED_CLOCK_START` and keeps running; timers, the harness's
isolated world and the in-page select picker are untouched."""

import asyncio
import time
from datetime import datetime, timezone

import pytest

from cua import (
    APP_URL,
    FIXED_CLOCK_START,
    Action,
    AppEnv,
    BrowserConfig,
    Point,
    RolloutConfig,
    TerminationReason,
    Trajectory,
    isolated_world,
    open_app,
    rollout,
)
from cua._seeding import seeding_script
from cua.policies import get_policy

FAST = RolloutConfig(max_steps=4, step_timeout_s=20, episode_timeout_s=60)

# Demo data drawn on load: five random numbers and a shuffled list; a button draws one more.
DEMO = """<!doctype html><body style="margin:0;font:16px sans-serif">
<p id="raw"></p>
<ol id="numbers"></ol>
<ul id="deck"></ul>
<button id="draw" style="position:absolute;left:20px;top:400px;width:120px;height:40px">Draw</button>
<p id="drawn" style="position:absolute;left:20px;top:460px"></p>
<script>
  const raw = [];
  for (let i = 0; i < 5; i++) raw.push(Math.random());
  document.getElementById('raw').textContent = JSON.stringify(raw);
  for (const r of raw) {
    const li = document.createElement('li'); li.textContent = String(Math.floor(r * 1000)); numbers.appendChild(li);
  }
  const deck = ['ace', 'king', 'queen', 'jack', 'ten', 'nine'];
  for (let i = deck.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1)); [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  for (const card of deck) { const li = document.createElement('li'); li.textContent = card; document.getElementById('deck').appendChild(li); }
  document.getElementById('draw').onclick = () => {
    document.getElementById('drawn').textContent = 'Drew ' + Math.floor(Math.random() * 1e6);
  };
</script></body>"""
DRAW = (80, 420)


def mulberry32(seed: int, count: int) -> list[float]:
    """The reference PRNG the init script implements (Tommy Ettinger's mulberry32)."""
    state, out = seed % 2**32, []
    mask = 0xFFFFFFFF

    def imul(a: int, b: int) -> int:
        return (a * b) & mask

    for _ in range(count):
        state = (state + 0x6D2B79F5) & mask
        t = state
        t = imul(t ^ (t >> 15), t | 1)
        t ^= (t + imul(t ^ (t >> 7), t | 61)) & mask
        out.append(((t ^ (t >> 14)) & mask) / 4294967296)
    return out


async def raw_numbers(seed, fixed_clock=False) -> list[float]:
    async with open_app(DEMO, seed=seed, fixed_clock=fixed_clock) as app:
        return await app.page.evaluate("JSON.parse(document.getElementById('raw').textContent)")


async def demo_rollout(folder, seed) -> Trajectory:
    policy = get_policy("scripted", script=[Action(kind="click", point=Point(x=DRAW[0], y=DRAW[1]))])
    return await rollout(DEMO, "Draw a card", policy, None, folder, FAST, seed=seed)


async def test_the_same_seed_gives_the_same_random_sequence_and_it_is_mulberry32_of_the_seed():
    first = await raw_numbers(7)
    assert await raw_numbers(7) == first
    assert first == pytest.approx(mulberry32(7, 5), abs=0)
    assert await raw_numbers(2**32 + 7) == first  # the page's seed is the seed modulo 2**32
    assert await raw_numbers(-1) == pytest.approx(mulberry32(2**32 - 1, 5), abs=0)
    other = await raw_numbers(8)
    assert other != first and all(0 <= x < 1 for x in other)


async def test_two_rollouts_with_one_seed_see_the_same_app_state_and_another_seed_a_different_one(tmp_path):
    a = await demo_rollout(tmp_path / "a", 42)
    b = await demo_rollout(tmp_path / "b", 42)
    c = await demo_rollout(tmp_path / "c", 43)
    for trajectory in (a, b, c):
        assert trajectory.termination == TerminationReason.finished and "Drew " in trajectory.final_text
    # Demo data on load, the shuffled deck and the number drawn after a click: all the same.
    assert a.final_text == b.final_text
    assert (tmp_path / "a" / a.initial_screenshot).read_bytes() == (tmp_path / "b" / b.initial_screenshot).read_bytes()
    assert c.final_text != a.final_text
    assert (a.seed, c.seed, a.fixed_clock) == (42, 43, False)
    assert Trajectory.load(tmp_path / "c").seed == 43


async def test_without_a_seed_the_app_keeps_the_browsers_own_randomness(tmp_path):
    assert await raw_numbers(None) != await raw_numbers(None)
    trajectory = await demo_rollout(tmp_path / "r", None)
    assert trajectory.seed is None and trajectory.fixed_clock is False


async def test_a_seed_that_is_not_an_int_ends_the_rollout_as_an_error_naming_it(tmp_path):
    trajectory = await demo_rollout(tmp_path / "r", "7")
    assert trajectory.termination == TerminationReason.error
    assert "seed must be an int" in trajectory.error


CLOCK = """<!doctype html><body><p id="at"></p><p id="ticks">0</p><p id="timeout">waiting</p><script>
  window.loadedAt = {iso: new Date().toISOString(), now: Date.now(),
                     origin: new Date(performance.timeOrigin + performance.now()).toISOString(), perf: performance.now()};
  document.getElementById('at').textContent = window.loadedAt.iso;
  let ticks = 0;
  setInterval(() => { document.getElementById('ticks').textContent = String(++ticks); }, 20);
  setTimeout(() => { document.getElementById('timeout').textContent = 'fired'; }, 150);
</script></body>"""
START_MS = FIXED_CLOCK_START.timestamp() * 1000


def eventually(condition: str) -> str:
    """A promise (for the harness's isolated world, whose timers no app patches) that resolves once `condition` holds."""
    return f"new Promise(resolve => {{ const check = () => ({condition}) ? resolve(true) : setTimeout(check, 20); check(); }})"


def iso_ms(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


async def test_a_fixed_clock_starts_at_the_fixed_instant_and_then_runs_in_real_time():
    assert FIXED_CLOCK_START == datetime(2025, 1, 15, 10, 0, tzinfo=timezone.utc)
    async with AppEnv(FAST) as env:
        await env.reset(CLOCK, "Look", fixed_clock=True)
        page = env.page  # page.evaluate runs in the app's own (main) world
        loaded = await page.evaluate("window.loadedAt")
        # The clock started at the fixed instant when the init script ran, after the document's monotonic clock
        # started: by the page's own clock, it can have run at most `performance.now()` ms by the app's script
        # (2 ms for whole milliseconds and the wall and monotonic clocks' rounding), whatever the machine's load.
        for key in ("iso", "origin"):
            assert START_MS <= iso_ms(loaded[key]) <= START_MS + loaded["perf"] + 2, (key, loaded)
        assert START_MS <= loaded["now"] <= START_MS + loaded["perf"] + 2, loaded
        # It runs at the real pace: the page's time between two readings lies between the test's wall-clock time
        # between the two answers and between the two questions (2 ms for whole milliseconds).
        asked_first = time.time()
        first = await page.evaluate("Date.now()")
        answered_first = time.time()
        await asyncio.sleep(0.4)
        asked_later = time.time()
        later = await page.evaluate("new Date().getTime()")
        answered_later = time.time()
        inner_ms, outer_ms = (asked_later - answered_first) * 1000, (answered_later - asked_first) * 1000
        assert inner_ms - 2 <= later - first <= outer_ms + 2, (later - first, inner_ms, outer_ms)
        checks = await page.evaluate("""() => {
          class Stamp extends Date {}
          return {
            explicit: new Date(2020, 0, 2, 3, 4, 5).getFullYear(), fromMs: new Date(0).toISOString(),
            parse: Date.parse('2001-02-03T04:05:06Z'), utc: Date.UTC(2001, 1, 3), call: typeof Date(),
            callYear: Date().includes('2025'), instance: new Date() instanceof Date, ctor: new Date().constructor === Date,
            subclass: new Stamp() instanceof Stamp && new Stamp().getUTCFullYear(), length: Date.length,
            intl: new Intl.DateTimeFormat('en-US', {year: 'numeric', timeZone: 'UTC'}).format(),
            parts: new Intl.DateTimeFormat('en-US', {year: 'numeric', timeZone: 'UTC'}).formatToParts()[0].value,
            intlGiven: new Intl.DateTimeFormat('en-US', {year: 'numeric', timeZone: 'UTC'}).format(new Date(0)),
          };
        }""")
        assert checks == {
            "explicit": 2020, "fromMs": "1970-01-01T00:00:00.000Z", "parse": 981173106000, "utc": 981158400000,
            "call": "string", "callYear": True, "instance": True, "ctor": True, "subclass": 2025, "length": 7,
            "intl": "2025", "parts": "2025", "intlGiven": "1970",
        }
        # The harness's isolated world keeps the real clock: read between two readings of the test's.
        before = time.time() * 1000
        real = await isolated_world(page).evaluate("Date.now()")
        after = time.time() * 1000
        assert before - 1 <= real <= after + 1, (before, real, after)


# A renderer whose monotonic clock maps to a wall clock 30 s behind Date: what Chromium shows after the
# machine's clock was stepped while the renderer lived (it maps the two once per process).
SKEWED_ORIGIN = """Object.defineProperty(performance, 'timeOrigin',
  {value: performance.timeOrigin - 30000, configurable: true, enumerable: true});"""
ORIGIN_LAG = "performance.timeOrigin + performance.now() - Date.now()"


@pytest.mark.parametrize("fixed_clock", [False, True])
async def test_a_fixed_clocks_time_origin_follows_its_date_whatever_the_browsers_origin_says(fixed_clock):
    # Once in CI, timeOrigin + performance.now() read 30 s past the fixed Date: the app's origin was the
    # browser's plus an offset, and the browser's had drifted from the wall clock. Under a fixed clock the
    # two now agree by construction; without one the page keeps the browser's own (skewed) origin.
    async with open_app("<!doctype html><p>clock</p>", BrowserConfig(reuse_pages=False)) as app:
        await app.page.add_init_script(script=SKEWED_ORIGIN)
        if fixed_clock:
            await app.page.add_init_script(script=seeding_script(None, True))
        await app.page.goto(APP_URL)
        lag = await app.page.evaluate(ORIGIN_LAG)
        if fixed_clock:
            # timeOrigin + performance.now() lies between two readings of Date.now() around it (2 ms for whole
            # milliseconds): the same clock, however long the page is held between the readings.
            before, origin_now, after = await app.page.evaluate(
                "[Date.now(), performance.timeOrigin + performance.now(), Date.now()]")
            assert before - 2 <= origin_now <= after + 2, (before, origin_now, after)
            # The document began (its origin) before the init script started the fixed clock, by no more than
            # the document's monotonic clock has run since.
            origin, since_origin = await app.page.evaluate("[performance.timeOrigin, performance.now()]")
            assert START_MS - since_origin <= origin <= START_MS, (origin, since_origin)
        else:
            assert -31_000 < lag < -29_000  # the skew is really there to follow


@pytest.mark.parametrize("seed, fixed_clock", [(5, True), (None, True), (5, False)])
async def test_the_apps_own_timers_and_intervals_still_fire(seed, fixed_clock):
    async with AppEnv(FAST) as env:
        await env.reset(CLOCK, "Look", seed=seed, fixed_clock=fixed_clock)
        observation, _, _ = await env.step(Action(kind="wait"))  # watches the page; the interval's ticks end it early
        world = isolated_world(env.page)
        # They fire: waited for (the limit only ends a wait for timers that never fire), not slept on and hoped.
        await world.evaluate(eventually("document.getElementById('timeout').textContent === 'fired' && "
                                        "Number(document.getElementById('ticks').textContent) >= 5"), timeout_ms=30_000)
        year = (await world.evaluate("document.getElementById('at').textContent"))[:4]
        assert (year == "2025") is fixed_clock or datetime.now().year == 2025


async def test_a_rollout_records_a_fixed_clock_and_the_trajectory_keeps_it(tmp_path):
    policy = get_policy("scripted", script=[Action(kind="wait")])
    trajectory = await rollout(CLOCK, "Look", policy, None, tmp_path, FAST, seed=3, fixed_clock=True)
    assert trajectory.final_text.startswith("2025-01-15T10:00:")
    saved = Trajectory.load(tmp_path)
    assert (saved.seed, saved.fixed_clock) == (3, True)


SELECT = """<!doctype html><body style="margin:0;font:16px sans-serif;padding:24px">
<label>Country <select id="country"><option>France</option><option>Germany</option><option value="it">Italy</option></select></label>
<p id="chosen">nothing</p><p id="r"></p>
<script>document.getElementById('r').textContent = String(Math.random());
document.getElementById('country').onchange = e => { chosen.textContent = e.target.value + (e.isTrusted ? ' (trusted)' : ''); };</script>
</body>"""


async def test_the_in_page_select_picker_and_the_harness_still_work_on_a_seeded_page():
    async with AppEnv(FAST) as env:
        await env.reset(SELECT, "Choose Italy", seed=11, fixed_clock=True)
        world = isolated_world(env.page)
        assert float(await world.evaluate("document.getElementById('r').textContent")) == mulberry32(11, 1)[0]
        box = await env.page.locator("#country").bounding_box()
        opened = await env.step(Action(kind="click", point=Point(x=box["x"] + box["width"] / 2, y=box["y"] + box["height"] / 2)))
        assert opened.step.dom_changed is not None and opened.step.screen_changed
        assert await world.evaluate("document.querySelector('#country').matches(':open')")
        x, y = await world.evaluate(
            "(() => { const r = document.querySelectorAll('#country option')[2].getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        picked = await env.step(Action(kind="click", point=Point(x=x, y=y)))
        assert picked.step.target.tag == "option"
        assert await world.evaluate("document.querySelector('#chosen').textContent") == "it (trusted)"
