"""Variations by name and what each does to a page (perturb), on one small app in real Chromium.

The bundled apps are proven variant by variant in test_bundled_variants.py; here each variation's
effect is checked where it can be seen exactly: the style served, the elements added and marked,
the text rewritten, the pop-up that blocks the page until dismissed, and the decoy an agent clicks.
"""

from __future__ import annotations

import pytest

from cua import (
    INJECTED_ATTRIBUTE,
    Action,
    BrowserConfig,
    PageTransform,
    Point,
    RolloutConfig,
    failure_modes,
    isolated_world,
    open_app,
    rollout,
    serve_html,
    settle,
)
from cua.policies import get_policy
from perturb import (
    KeptForCheckers,
    VariationError,
    checker_reads,
    offline_variation_names,
    resolve,
    solution_prefix,
    variation_names,
    variation_transform,
)

APP = """<!doctype html><html><head><title>Counter</title>
<style>body{font:16px sans-serif;margin:20px} .row{display:flex;gap:8px}</style></head>
<body>
<h1>Counter</h1>
<p>Count things you see.</p>
<label for="name">Name</label> <input id="name" placeholder="Your name" value="Ada">
<div class="row"><button id="inc">Add one</button><button id="reset" title="Start over">Reset</button></div>
<p>Total: <span id="count">0</span></p>
<script>
  const count = document.getElementById('count');
  document.getElementById('inc').onclick = () => { count.textContent = String(Number(count.textContent) + 1); };
  document.getElementById('reset').onclick = () => { count.textContent = '0'; };
</script>
</body></html>"""

READ = """() => ({
  text: document.body.innerText,
  injected: Array.from(document.querySelectorAll('[data-aui-inject]')).map(el => el.getAttribute('data-aui-inject')),
  titles: Array.from(document.querySelectorAll('button')).filter(b => !b.closest('[data-aui-inject]')).map(b => [b.id, b.title]),
  filter: getComputedStyle(document.documentElement).filter,
  zoom: getComputedStyle(document.documentElement).zoom,
  font: getComputedStyle(document.getElementById('inc')).fontFamily,
  ids: Array.from(document.querySelectorAll('[id]')).map(el => el.id),
  value: document.getElementById('name').value,
  placeholder: document.getElementById('name').placeholder,
  top: (() => { const el = document.elementFromPoint(innerWidth / 2, innerHeight / 2); const m = el && el.closest('[data-aui-inject]'); return m ? m.getAttribute('data-aui-inject') : null; })(),
})"""


async def _read(transform: PageTransform | None) -> dict:
    async with open_app(APP, BrowserConfig(transform=transform)) as app:
        await settle(app.page)
        found = await isolated_world(app.page).call(READ)
        found["errors"] = list(app.events.page_errors)
        found["report"] = app.events.transform_report
        return found


def test_names_compose_and_wrong_ones_are_named():
    assert variation_names()[0] == "default"
    assert {"dark", "black-white", "hard-font", "zoom-125", "zoom-80", "long", "misleading", "adversarial", "popup",
            "german"} <= set(variation_names())
    assert "german" not in offline_variation_names()
    assert [v.name for v in resolve("dark+long")] == ["dark", "long"]
    assert resolve("default") == []
    for bad, says in [("drak", "unknown variation 'drak'"), ("dark+dark", "each part once"),
                      ("default+dark", "composes with nothing"), ("", "empty")]:
        with pytest.raises(VariationError, match=says):
            resolve(bad)
    assert variation_transform("default") is None
    with pytest.raises(VariationError, match="translations"):
        variation_transform("german")
    assert [step.selector for step in solution_prefix("dark+popup")] == [f'[{INJECTED_ATTRIBUTE}="popup-close"]']


def test_a_variation_is_the_same_page_for_a_seed_and_another_for_another_seed():
    assert variation_transform("long", 3) == variation_transform("long", 3)
    assert variation_transform("long", 3).sha256 != variation_transform("long", 4).sha256
    assert variation_transform("dark", 3) == variation_transform("dark", 4)  # nothing drawn: no seed in it
    composed = variation_transform("dark+long", 3)
    assert composed.style == variation_transform("dark").style and composed.args == variation_transform("long", 3).args


def test_the_style_goes_before_the_end_of_head_or_in_front_of_a_headless_page():
    transform = PageTransform(name="t", style="p{color:red}")
    served = serve_html(b"<html><head><title>x</title></head><body><p>x</p></body></html>", transform)
    assert served.index(b"p{color:red}") < served.index(b"</head>")
    assert serve_html(b"<p>bare</p>", transform).startswith(b'<style data-aui-inject="style">')
    assert serve_html(b"<p>bare</p>", None) == b"<p>bare</p>"


async def test_appearance_variations_restyle_the_page_and_keep_its_text():
    plain = await _read(None)
    dark, grey, font, big = [await _read(variation_transform(name)) for name in ("dark", "black-white", "hard-font", "zoom-125")]
    assert "invert(1)" in dark["filter"] and "grayscale(1)" in grey["filter"]
    assert "Dancing Script" in font["font"] and float(big["zoom"]) == 1.25
    for seen in (dark, grey, font, big):
        assert seen["text"] == plain["text"] and seen["ids"] == plain["ids"] and seen["injected"] == ["style"]


async def test_long_adds_marked_text_to_headings_and_before_controls():
    plain, seen = await _read(None), await _read(variation_transform("long", 0))
    assert seen["report"] == [{"op": "long", "changed": seen["report"][0]["changed"]}] and seen["report"][0]["changed"] >= 3
    assert seen["injected"].count("text") >= 3 and len(seen["text"]) > len(plain["text"]) + 300
    assert seen["ids"] == plain["ids"] and seen["value"] == "Ada"


async def test_misleading_tooltips_describe_another_control():
    seen = await _read(variation_transform("misleading", 0))
    titles = dict(seen["titles"])
    assert "Reset" in titles["inc"] or "Name" in titles["inc"] or "Ada" in titles["inc"]
    assert "Add one" not in titles["inc"]  # never its own label
    assert "text" in seen["injected"]


async def test_adversarial_adds_a_banner_and_decoys_that_do_nothing():
    seen = await _read(variation_transform("adversarial", 0))
    assert seen["injected"].count("banner") == 1 and seen["injected"].count("decoy") >= 1
    assert "finish" in seen["text"].lower()


async def test_a_popup_covers_the_page_until_it_is_dismissed():
    transform = variation_transform("popup", 0)
    async with open_app(APP, BrowserConfig(transform=transform)) as app:
        await settle(app.page)
        assert (await isolated_world(app.page).call(READ))["top"] == "popup"
        with pytest.raises(Exception, match="intercepts pointer events"):
            await app.page.click("#inc", timeout=1_500)
        for step in solution_prefix("popup"):
            await app.page.locator(step.selector).first.click()
        await app.page.click("#inc")
        assert await app.page.text_content("#count") == "1"


async def test_german_rewrites_visible_text_only():
    texts = {"Counter": "Zähler", "Add one": "Eins hinzufügen", "Your name": "Ihr Name", "Start over": "Neu beginnen",
             "Total:": "Summe:"}
    seen = await _read(variation_transform("german", 0, texts))
    plain = await _read(None)
    assert "Zähler" in seen["text"] and "Eins hinzufügen" in seen["text"] and "Summe:" in seen["text"]
    assert seen["placeholder"] == "Ihr Name" and dict(seen["titles"])["reset"] == "Neu beginnen"
    assert seen["ids"] == plain["ids"] and seen["value"] == "Ada"  # ids and values kept
    assert "Reset" in seen["text"]  # no translation given: left as it was
    # What the checkers read keeps its words: here a heading and the title attribute.
    kept = await _read(variation_transform("german", 0, texts, keep=KeptForCheckers(selectors=("h1",), attributes=("title",))))
    assert "Counter" in kept["text"] and "Zähler" not in kept["text"] and "Eins hinzufügen" in kept["text"]
    assert dict(kept["titles"])["reset"] == "Start over" and kept["placeholder"] == "Ihr Name"


def test_what_the_checkers_read_is_found_in_their_source():
    from verifier import AppVerdicts, Verdict

    def verdict(task_id: str, source: str) -> Verdict:
        from verifier import GateResult  # an accepted gate is what makes a checker valid

        return Verdict(task_id=task_id, solvable=True, checker=source, checker_source=source, checker_kind="js",
                       gate=GateResult(accepted=True), model="offline")

    verdicts = AppVerdicts(app_id="a", domain="tool", html_sha256="-", verifier="offline", offline=True, verdicts=[
        verdict("one", "return document.querySelector('#count').textContent === '1';"),
        verdict("two", "return document.querySelector('#name').getAttribute('placeholder') === 'x';")])
    reads = checker_reads(verdicts)
    assert set(reads.selectors) == {"#count", "#name"} and reads.attributes == ("placeholder",)


async def test_a_script_that_fails_is_a_page_error_naming_the_transform():
    broken = PageTransform(name="broken", script="() => { throw new Error('no such element'); }")
    seen = await _read(broken)
    assert any(error.startswith("transform 'broken':") and "no such element" in error for error in seen["errors"])


async def test_an_agent_that_clicks_a_decoy_is_recorded_as_acting_on_it(tmp_path):
    transform = variation_transform("adversarial", 0)
    async with open_app(APP, BrowserConfig(transform=transform)) as app:
        await settle(app.page)
        box = await app.page.locator(f'[{INJECTED_ATTRIBUTE}="decoy"]').first.bounding_box()
    decoy = Point(x=box["x"] + box["width"] / 2, y=box["y"] + box["height"] / 2)
    config = RolloutConfig(max_steps=3, browser=BrowserConfig(transform=transform))
    trajectory = await rollout(APP, "Add one to the count", get_policy("scripted", script=[Action(kind="click", point=decoy)] * 3),
                               None, tmp_path, config)
    assert trajectory.transform == transform.name and trajectory.transform_sha256 == transform.sha256
    assert trajectory.steps[0].target.injected == "decoy"
    assert "decoy" in failure_modes(trajectory) and "action_loop" in failure_modes(trajectory)
