"""Small test apps with known geometry: every control sits at a fixed viewport position."""

from __future__ import annotations

# Fixed positions (viewport pixels of the 1280×720 default) the tests aim at.
INC_BUTTON = (100, 60)  # #inc: 120×40 at (40,40)
NAME_INPUT = (200, 160)  # #name: 300×36 at (50,142)
HANDLE = (90, 290)  # #handle: 60×60 at (60,260)
DROP_ZONE = (500, 290)  # #zone: 200×120 at (400,230)
LIST_POINT = (900, 200)  # inside #list: 300×200 at (750,100), scrollable
DOUBLE_TARGET = (1000, 420)  # #dbl: 160×50 at (920,395)
RIGHT_TARGET = (1000, 520)  # #ctx: 160×50 at (920,495)

LAB = """<!doctype html>
<html><head><style>
  body { margin: 0; font: 16px sans-serif; height: 2000px; }
  .abs { position: absolute; box-sizing: border-box; }
  #inc { left: 40px; top: 40px; width: 120px; height: 40px; }
  #count { left: 200px; top: 48px; }
  form { position: absolute; left: 50px; top: 142px; margin: 0; }
  #name { width: 300px; height: 36px; box-sizing: border-box; }
  #greeting { left: 400px; top: 150px; }
  #handle { left: 60px; top: 260px; width: 60px; height: 60px; background: #36c; cursor: grab; }
  #zone { left: 400px; top: 230px; width: 200px; height: 120px; border: 2px dashed #888; }
  #list { left: 750px; top: 100px; width: 300px; height: 200px; overflow: auto; border: 1px solid #000; }
  #list div { height: 40px; }
  #dbl { left: 920px; top: 395px; width: 160px; height: 50px; background: #eee; }
  #ctx { left: 920px; top: 495px; width: 160px; height: 50px; background: #ddd; }
  #keys { left: 40px; top: 600px; }
</style></head><body>
<button id="inc" class="abs">Add one</button><span id="count" class="abs">0</span>
<form id="greet-form"><input id="name" placeholder="Your name" autocomplete="off"></form>
<span id="greeting" class="abs"></span>
<div id="handle" class="abs"></div><div id="zone" class="abs">Drop here</div>
<div id="list" class="abs"></div>
<div id="dbl" class="abs">Double-click me</div><div id="ctx" class="abs">Right-click me</div>
<div id="keys" class="abs"></div>
<script>
  const $ = id => document.getElementById(id);
  $('inc').onclick = () => { $('count').textContent = String(Number($('count').textContent) + 1); };
  $('greet-form').onsubmit = e => { e.preventDefault(); $('greeting').textContent = 'Hello, ' + $('name').value; };
  for (let i = 0; i < 40; i++) { const d = document.createElement('div'); d.textContent = 'Item ' + i; $('list').appendChild(d); }
  $('list').addEventListener('scroll', () => { $('list').dataset.top = String($('list').scrollTop); });
  let dragging = null;
  $('handle').addEventListener('mousedown', e => { dragging = {dx: e.clientX - 60, dy: e.clientY - 260}; });
  document.addEventListener('mousemove', e => {
    if (!dragging) return;
    $('handle').style.left = (e.clientX - dragging.dx) + 'px'; $('handle').style.top = (e.clientY - dragging.dy) + 'px';
  });
  document.addEventListener('mouseup', e => {
    if (!dragging) return;
    dragging = null;
    const z = $('zone').getBoundingClientRect();
    const inside = e.clientX >= z.left && e.clientX <= z.right && e.clientY >= z.top && e.clientY <= z.bottom;
    $('zone').textContent = inside ? 'Dropped' : 'Missed';
  });
  $('dbl').ondblclick = () => { $('dbl').textContent = 'Double-clicked'; };
  $('ctx').oncontextmenu = e => { e.preventDefault(); $('ctx').textContent = 'Right-clicked'; };
  document.addEventListener('keydown', e => {
    if (e.ctrlKey && e.key.toLowerCase() === 'k') { e.preventDefault(); $('keys').textContent = 'ctrl+k'; }
    if (e.key === 'Escape') $('keys').textContent = 'escape';
  });
</script></body></html>"""

COUNT_AT_LEAST_3 = "return Number(document.querySelector('#count').textContent) >= 3;"


async def count_checker(page) -> bool:
    """The lab's checker: the counter reached 3 (read through the harness world like a real checker)."""
    from cua import isolated_world

    return bool(await isolated_world(page).evaluate("Number(document.querySelector('#count').textContent) >= 3"))
