"""The static pass: checkers that can never be true are flagged; the bundled reference checkers are not."""

from __future__ import annotations

import pytest

from apps_prompts import load_apps, reference_html_path
from verifier import compile_checker, static_warnings

from .conftest import COUNTER_HTML

BUNDLED = load_apps().apps


@pytest.mark.parametrize(
    ("checker", "says"),
    [
        ("return false;", "constant falsy value (`return false`)"),
        ("return 0", "`return 0`"),
        ("return null;", "`return null`"),
        ("return '';", "`return ''`"),
        ("return undefined;", "`return undefined`"),
        ("if (document.querySelector('#count')?.textContent === '3') { return false; }\nreturn null;", "`return false`, `return null`"),
        ("return\n  document.querySelector('#count')?.textContent === '3';", "a bare `return`"),
        ("() => false", "`return false`"),
        ("function () { return 0; }", "`return 0`"),
        ("return (false);", "`return false`"),
    ],
    ids=["false", "zero", "null", "empty-string", "undefined", "every-return", "line-break", "arrow", "function", "parenthesised"],
)
def test_constant_false_returns_are_flagged(checker, says):
    warnings = static_warnings(checker, COUNTER_HTML)
    assert len(warnings) == 1 and says in warnings[0] and "can never be true" in warnings[0]


@pytest.mark.parametrize(
    "checker",
    [
        "return document.querySelector('#count')?.textContent === '3';",
        # a nested function's `return false` is not the checker's own return
        "return [...document.querySelectorAll('p')].some(p => { if (!p.id) return false; return p.textContent === '3'; });",
        "if (!document.querySelector('#count')) return false; return document.querySelector('#count').textContent === '3';",
        "const n = Number(document.querySelector('#count')?.textContent); return n > 2 && n < 4;",
        "return document.querySelector('#count')?.textContent === '3' || document.querySelector('#count')?.textContent === '4';",
    ],
    ids=["plain", "nested-false", "guard-then-test", "satisfiable-bounds", "or"],
)
def test_checkers_that_can_turn_true_are_not_flagged(checker):
    assert static_warnings(checker, COUNTER_HTML) == []


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ("#count == 'a' AND #count == 'b'", "the value would have to be \"a\""),
        ("#count == 3 AND NOT #count == 3", "'#count == 3' AND 'NOT #count == 3'"),
        ("#count > 5 AND #count < 3", "no number satisfies them"),
        ("#count >= 5 AND #count <= 5 AND #count != 5", "no number satisfies them"),
        ("#count == '7' AND #count > 9", "the value would have to be \"7\""),
        ("#greeting == 'Hello' AND #greeting contains 'Ada'", "the value would have to be \"Hello\""),
        ("NOT #greeting exists AND #greeting text contains 'Ada'", "both present and missing"),
        ("#inc visible AND NOT #inc visible", "'#inc visible' AND 'NOT #inc visible'"),
        ("NOT (#count == 3 OR NOT #count == 3)", "'#count == 3'"),
        ("(#count > 5 AND #count < 3) OR (#name == 'a' AND #name == 'b')", "every alternative is impossible"),
    ],
    ids=["two-strings", "x-and-not-x", "empty-range", "excluded-point", "string-vs-number", "string-test",
         "missing-and-read", "visible-and-not", "de-morgan", "every-alternative"],
)
def test_contradictory_rules_are_flagged(rule, says):
    warnings = static_warnings(rule, COUNTER_HTML)
    assert len(warnings) == 1 and warnings[0].startswith("the rule can never be true") and says in warnings[0], warnings


@pytest.mark.parametrize(
    "rule",
    ["#count == 3", "#count > 2 AND #count < 4", "(#count > 5 AND #count < 3) OR #count == 1", "NOT #count == 3 AND NOT #count != 3",
     "#count == '3' AND #count >= 3", "NOT #greeting exists OR #greeting == 'Hi'", "#name == 'Ada' AND #greeting contains 'Ada'"],
    ids=["plain", "satisfiable-range", "one-possible-alternative", "missing-satisfies-both", "string-and-number", "or", "two-subjects"],
)
def test_rules_that_can_turn_true_are_not_flagged(rule):
    assert static_warnings(rule, COUNTER_HTML) == []


@pytest.mark.parametrize(
    ("checker", "says"),
    [
        ("return document.querySelector('#count')?.textContent === '3' && document.querySelector('#count')?.textContent === '4';",
         "cannot strictly equal two different literals"),
        ("const v = document.querySelector('#name')?.value; return v === 'Ada' && v !== 'Ada';", "both equal and differ"),
        ("const n = Number(document.querySelector('#count')?.textContent); return n > 5 && n < 3;", "no number satisfies these bounds"),
        ("const n = Number(document.querySelector('#count')?.textContent); return 3 === n && n >= 4;", "no number satisfies"),
    ],
    ids=["two-strings", "equal-and-not", "empty-range", "literal-on-the-left"],
)
def test_contradictory_js_comparisons_are_flagged(checker, says):
    warnings = static_warnings(checker, COUNTER_HTML)
    assert len(warnings) == 1 and says in warnings[0], warnings


@pytest.mark.parametrize(
    ("checker", "name"),
    [
        ("return document.querySelector('#banner')?.textContent === 'Saved';", "'banner'"),
        ("return !!document.getElementById('confetti');", "'confetti'"),
        ("return document.querySelectorAll('.toast-item').length > 0;", "'toast-item'"),
        ("#success-message visible", "'success-message'"),
    ],
    ids=["query-selector", "get-element-by-id", "class", "rule"],
)
def test_a_selector_nothing_in_the_app_could_produce_is_flagged(checker, name):
    warnings = static_warnings(checker, COUNTER_HTML)
    assert len(warnings) == 1 and name in warnings[0] and "appears nowhere" in warnings[0]


BUILDING_HTML = """<ul id="list"></ul><script>
  for (const name of ['read', 'walk']) list.insertAdjacentHTML('beforeend', `<li id="habit-${name}" class="row${name.length}"></li>`);
  document.body.classList.add('is-' + 'ready');
  const toast = document.createElement('div'); toast.className = `${'saved'}-toast`;
</script>"""


@pytest.mark.parametrize(
    "checker",
    [
        "return !!document.querySelector('#habit-swim');",  # 'habit-' + name
        "return !!document.querySelector('.row7');",  # 'row' + number
        "return !!document.querySelector('body.is-busy');",  # 'is-' + state
        "return !!document.querySelector('.error-toast');",  # `${kind}-toast`
        "return !!document.querySelector('#list li:not(.gone)');",  # :not() needs no such class
        "return !!document.querySelector('li[data-state=\"x.y\"]');",  # not a class: inside an attribute test
    ],
    ids=["prefix", "digits", "class-prefix", "suffix", "not", "attribute"],
)
def test_names_the_scripts_can_build_or_need_not_exist_are_not_flagged(checker):
    assert static_warnings(checker, BUILDING_HTML) == []


def test_a_checker_that_does_not_compile_has_no_static_warnings():
    assert static_warnings("#count >", COUNTER_HTML) == []
    assert static_warnings(compile_checker("#count == 'a' AND #count == 'b'"), COUNTER_HTML)


def test_no_bundled_reference_checker_is_flagged():
    checked, flagged = 0, {}
    for spec in BUNDLED:
        html = reference_html_path(spec).read_text(encoding="utf-8")
        for task in spec.tasks:
            if task.checker:
                checked += 1
                warnings = static_warnings(task.checker, html)
                if warnings:
                    flagged[f"{spec.id}/{task.id}"] = warnings
    assert checked >= 90
    assert flagged == {}  # false positives: 0 of all bundled reference checkers
