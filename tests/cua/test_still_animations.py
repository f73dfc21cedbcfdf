"""`BrowserConfig.still_animations`: infinite animations are stopped as they start (a CSS one: the element is drawn
with its own style; a scripted one: paused at its start), so the same page state gives the same pixels whenever it
is observed; finite animations and transitions run as ever."""

import asyncio

from cua import BrowserConfig, capture_png, open_app, settle

# A floating box (CSS, infinite), a spinning box (Web Animations, infinite) and a box that fades in once (finite).
MOVING = """<!doctype html><html><head><style>
  body { margin: 0 }
  @keyframes float { 50% { transform: translateY(-40px) } }
  @keyframes fade { from { opacity: 0 } to { opacity: 1 } }
  #float { position: absolute; left: 40px; top: 100px; width: 80px; height: 80px; background: teal;
           animation: float 1.2s ease-in-out infinite }
  #spin { position: absolute; left: 200px; top: 100px; width: 80px; height: 80px; background: orange }
  #fade { position: absolute; left: 360px; top: 100px; width: 80px; height: 80px; background: navy;
          animation: fade .3s ease-out 1 forwards }
</style></head><body><div id="float"></div><div id="spin"></div><div id="fade"></div>
<script>
  document.getElementById('spin').animate([{transform: 'rotate(0deg)'}, {transform: 'rotate(360deg)'}],
                                          {duration: 900, iterations: Infinity});
</script></body></html>"""

STATE = """() => ({
  float: getComputedStyle(document.getElementById('float')).transform,
  spin: document.getElementById('spin').getAnimations().map(a => [a.playState, a.currentTime]),
  fade: getComputedStyle(document.getElementById('fade')).opacity,
})"""


async def _frames(still: bool) -> tuple[list[bytes], dict]:
    async with open_app(MOVING, BrowserConfig(still_animations=still)) as app:
        await settle(app.page)
        frames = []
        for _ in range(3):
            frames.append(await capture_png(app.page))
            await asyncio.sleep(0.35)
        return frames, await app.page.evaluate(STATE)


async def test_infinite_animations_stand_still_and_finite_ones_run_to_their_end():
    frames, state = await _frames(still=True)
    assert frames[0] == frames[1] == frames[2]
    assert state["float"] == "none" and state["spin"] == [["paused", 0]]  # its own style; the start
    assert state["fade"] == "1"  # the finite fade-in ran to its end


async def test_without_it_the_same_page_gives_other_pixels_over_time():
    frames, state = await _frames(still=False)
    assert len(set(frames)) > 1
    assert state["spin"][0][0] == "running"
