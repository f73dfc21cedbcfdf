"""The rule language: parsed with real precedence, compiled to JS, judged against a real page."""

from __future__ import annotations

import pytest

from cua import open_app, settle
from verifier import RuleSyntaxError, compile_checker, compile_rule, looks_like_rule, run_checker

PAGE = """<!doctype html><html><body>
  <p id="score">Score: 12</p>
  <p id="status">
     Task   Done
  </p>
  <input id="name" value="Ada">
  <p id="label">Name</p>
  <input id="agree" type="checkbox" checked>
  <input id="spam" type="checkbox">
  <select id="unit"><option value="km">km</option><option value="mi" selected>mi</option></select>
  <div id="gone" style="display:none">secret</div>
  <div id="faint" style="opacity:0">faint</div>
  <button id="toggle" aria-pressed="true" data-mode="dark">T</button>
  <ul><li class="item">a</li><li class="item">b</li><li class="item done">c</li></ul>
  <span id="price">$1,234.50</span>
  <span id="temp">-3 °C</span>
  <div id="1st">first</div>
  <p id="quote">It's "quoted"</p>
</body></html>"""

# (rule, expected on PAGE). Each operator, each reading, precedence and parentheses.
RULES = [
    # equality reads text (collapsed) or an input's value
    ("#status == 'Task Done'", True),
    ("#status == 'Task  Done'", False),
    ("#name == 'Ada'", True),
    ("#name text == 'Ada'", False),  # an input has no text: `text` never reads the value
    ("#name value == 'Ada'", True),
    ("#label value == 'Name'", False),  # `value` of a non-control is null
    ("#unit == 'mi'", True),
    ("#status != 'Open'", True),
    ("#status != 'Task Done'", False),
    ("#missing != 'x'", False),  # a missing element makes every comparison false
    ("NOT (#missing == 'x')", True),
    # text tests
    ("#status text contains 'Done'", True),
    ("#status contains 'done'", False),  # case-sensitive
    ("#score startswith 'Score'", True),
    ("#score endswith '12'", True),
    ("#quote == 'It\\'s \"quoted\"'", True),
    ('#quote contains "\\"quoted\\""', True),
    # numbers: the first number in the text or value
    ("#score > 10", True),
    ("#score > 12", False),
    ("#score >= 12", True),
    ("#score < 13", True),
    ("#score <= 11.5", False),
    ("#score == 12", True),
    ("#score != 12", False),
    ("#price > 1234", True),  # thousands separators are read
    ("#price == 1234.5", True),
    ("#temp < 0", True),
    ("#score > '10'", True),  # a quoted number is still a number
    ("#status > 0", False),  # no number in the text: false, not an error
    # attributes, presence, visibility, checked, counts
    ("#toggle[aria-pressed] == 'true'", True),
    ("#toggle[data-mode] != 'light'", True),
    ("#toggle[title] == ''", False),  # an absent attribute is null
    ("#toggle[data-mode] exists", True),
    ("#toggle[title] exists", False),
    ("#score exists", True),
    ("#missing exists", False),
    ("#score visible", True),
    ("#gone visible", False),
    ("#gone exists", True),
    ("#faint visible", False),
    ("#missing visible", False),
    ("#agree checked", True),
    ("#spam checked", False),
    (".item count == 3", True),
    (".item.done count >= 1", True),
    (".item.done == 'c'", True),
    ("#1st == 'first'", True),  # an id starting with a digit is escaped for CSS
    # logic: AND binds tighter than OR, NOT tighter than AND
    ("#score exists OR #missing exists AND #missing exists", True),  # a OR (b AND c)
    ("(#score exists OR #missing exists) AND #missing exists", False),
    ("#missing exists AND #missing exists OR #score exists", True),
    ("NOT #score exists AND #missing exists", False),  # (NOT a) AND b
    ("NOT (#score exists AND #missing exists)", True),
    ("NOT NOT #score exists", True),
    ("#score > 10 AND #status contains 'Done' AND #agree checked", True),
    ("#score > 10 AND (#gone visible OR #faint visible)", False),
    ("((#score exists))", True),
    ("#score exists and #name == 'Ada'", True),  # keywords in any case
    ("#score exists && #missing exists || #name == 'Ada'", True),
]


@pytest.fixture(scope="module")
def compiled_rules():
    return [(rule, expected, compile_rule(rule)) for rule, expected in RULES]


async def test_rule_table_evaluates_as_expected_on_a_real_page(compiled_rules):
    wrong = []
    async with open_app(PAGE) as app:
        await settle(app.page)
        for rule, expected, compiled in compiled_rules:
            outcome = await run_checker(app.page, compiled.javascript)
            if not outcome.ok:
                wrong.append(f"{rule}: {outcome.reason}")
            elif outcome.passed is not expected:
                wrong.append(f"{rule}: got {outcome.passed}, expected {expected}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    ("rule", "position", "message"),
    [
        ("", 0, "empty rule"),
        ("#a ==", 5, "expected a quoted string or a number"),
        ("#a == 'x' #b exists", 10, "expected AND, OR or the end"),
        ("(#a exists", 10, "expected ')' to close the '(' at position 0"),
        ("#a exists)", 9, "expected AND, OR or the end"),
        ("#a > 'many'", 5, "compares numbers"),
        ("#a == 'open", 6, "string is not closed"),
        ("#a frobs", 3, "expected a test"),
        ("score > 0", 0, "expected a selector"),
        ("#a exists AND", 13, "expected a selector"),
        ("#a text visible", 8, "applies to an element"),
        ("#a @ 1", 3, "unexpected character '@'"),
        ("#a[ == 1", 2, "attribute name in brackets"),
    ],
)
def test_rule_that_does_not_parse_reports_the_position(rule, position, message):
    with pytest.raises(RuleSyntaxError) as caught:
        compile_rule(rule)
    assert caught.value.position == position
    assert message in str(caught.value)
    assert "^" in str(caught.value)  # the message points at the spot


def test_compiled_rule_lists_the_selectors_it_reads():
    compiled = compile_rule("#a exists AND (.b count > 2 OR NOT #a[title] == 'x') AND #1st visible")
    assert compiled.selectors == ["#a", ".b", "#\\31 st"]


@pytest.mark.parametrize(
    ("text", "is_rule"),
    [
        ("#score > 0", True),
        (".item count >= 3", True),
        ("NOT #a exists", True),
        ("(#a exists OR #b exists)", True),
        ("(#a == 'x;y' OR #b == 'return {')", True),  # JS-looking text inside quotes is still a rule
        ("return document.querySelector('#a') !== null;", False),
        ("(document.querySelector('#a'))", False),
        ("const x = 1; return x > 0", False),
    ],
)
def test_rules_are_told_apart_from_javascript_bodies(text, is_rule):
    assert looks_like_rule(text) is is_rule
    assert compile_checker(text).kind == ("rule" if is_rule else "js")
