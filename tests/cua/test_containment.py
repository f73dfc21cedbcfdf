"""The app cannot reach the network or stall the harness, and what it tried is in the trajectory."""

from cua import Action, Point, RolloutConfig, TerminationReason, isolated_world, rollout
from cua.policies import get_policy

CONFIG = RolloutConfig(max_steps=4, step_timeout_s=20, episode_timeout_s=60)

PHONES_HOME = """<!doctype html><head>
<link rel="stylesheet" href="https://cdn.example.com/theme.css">
<script src="https://cdn.example.com/lib.js"></script></head>
<body style="margin:0">
<img src="http://tracker.example.net/pixel.gif" width="1" height="1">
<button id="go" style="position:absolute;left:20px;top:20px;width:120px;height:40px">Go</button><span id="n">0</span>
<script>
  fetch('https://api.example.org/data').catch(() => {});
  document.getElementById('go').onclick = () => { const n = document.getElementById('n'); n.textContent = String(+n.textContent + 1); };
</script></body>"""

ASKS_QUESTIONS = """<!doctype html><body style="margin:0">
<button id="ask" style="position:absolute;left:20px;top:20px;width:120px;height:40px">Delete all</button>
<span id="state">kept</span>
<script>
  document.getElementById('ask').onclick = () => {
    alert('Are you sure?');
    const name = prompt('Type your name');
    if (confirm('Really delete?')) document.getElementById('state').textContent = 'deleted:' + name;
  };
</script></body>"""


def click(x, y):
    return Action(kind="click", point=Point(x=x, y=y))


async def counter_at_least_one(page) -> bool:
    return bool(await isolated_world(page).evaluate("Number(document.querySelector('#n').textContent) >= 1"))


async def deleted(page) -> bool:
    return bool(await isolated_world(page).evaluate("document.querySelector('#state').textContent.startsWith('deleted')"))


async def test_external_requests_are_blocked_and_logged_and_the_app_still_works(tmp_path):
    policy = get_policy("scripted", script=[click(80, 40)])
    trajectory = await rollout(PHONES_HOME, "Press Go", policy, counter_at_least_one, tmp_path, CONFIG)
    assert trajectory.termination == TerminationReason.success
    blocked = {r.url for r in trajectory.blocked_requests}
    assert {"https://cdn.example.com/theme.css", "https://cdn.example.com/lib.js",
            "http://tracker.example.net/pixel.gif", "https://api.example.org/data"} <= blocked


async def test_alert_prompt_and_confirm_are_answered_and_logged_without_stalling(tmp_path):
    policy = get_policy("scripted", script=[click(80, 40)])
    config = CONFIG.model_copy(update={"step_timeout_s": 10})
    trajectory = await rollout(ASKS_QUESTIONS, "Delete everything", policy, deleted, tmp_path, config)
    assert trajectory.termination == TerminationReason.success  # confirm answered yes, so the click took effect
    assert [(d.kind, d.message) for d in trajectory.dialogs] == [
        ("alert", "Are you sure?"), ("prompt", "Type your name"), ("confirm", "Really delete?")
    ]
    assert trajectory.steps[0].timings.total_ms < 10_000


OPENS_WINDOWS = """<!doctype html><body style="margin:0">
<button id="go" style="position:absolute;left:20px;top:20px;width:120px;height:40px"
 onclick="window.open('https://ads.example.com/'); window.open('about:blank'); n.textContent = String(+n.textContent + 1)">Go</button>
<span id="n">0</span></body>"""


async def test_popups_are_closed_and_counted_and_the_app_keeps_working(tmp_path):
    policy = get_policy("scripted", script=[click(80, 40)])
    trajectory = await rollout(OPENS_WINDOWS, "Press Go", policy, counter_at_least_one, tmp_path, CONFIG)
    assert trajectory.termination == TerminationReason.success
    assert trajectory.popups_closed == 2
