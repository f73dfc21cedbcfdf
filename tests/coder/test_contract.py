from coder import checker_ids, named_functions, plan_contract
from coder._contract import missing_items

from .conftest import page


def test_checker_ids_come_from_selectors_not_from_compared_hex_colours():
    checker = "return document.querySelector('#hex-value').textContent.trim() === '#FF0000';"
    assert checker_ids(checker) == ["hex-value"]


def test_checker_ids_cover_get_element_by_id_attribute_selectors_and_helper_arguments():
    checker = ("const v = s => Number(document.querySelector(s)?.value);\n"
               "return document.getElementById('total').textContent && v('#r-slider') === 5"
               " && !!document.querySelector('[id=\"summary\"] .row') && document.querySelector(\"#list li.done\");")
    assert checker_ids(checker) == ["total", "r-slider", "summary", "list"]


def test_ids_built_by_concatenation_or_template_are_not_taken_as_whole_ids():
    checker = "const m = t => document.querySelector('#track-' + t); return m('hat') && document.querySelector(`#row-${n} .x`);"
    assert checker_ids(checker) == []


def test_named_functions_cover_declarations_arrows_and_function_expressions():
    html = page("", script="function a() {}\nasync function b(x) {}\nconst c = (x, y) => x;\nlet d = async e => e;\n"
                           "var f = function () {};\nwindow.g = function () {};\nif (x) { y(); }")
    assert named_functions(html) == ["a", "b", "c", "d", "f", "g"]


def test_injected_helper_scripts_are_not_part_of_the_app_functions():
    html = page("", script="function mine() {}").replace(
        "</body>", "<script data-aui='x'>function helper() {}</script></body>")
    assert named_functions(html) == ["mine"]


def test_ids_only_created_at_run_time_from_computed_strings_are_unchecked(counter_html):
    plan = plan_contract(counter_html, ["return !!document.querySelector('#count') && !!document.querySelector('#row-7');"])
    assert plan.protected_ids == ["count"]
    assert plan.unchecked_ids == ["row-7"]
    assert plan.protected_functions == ["increment", "reset"]


def test_missing_items_finds_a_dropped_id_and_a_renamed_function(counter_html):
    plan = plan_contract(counter_html, ["return document.querySelector('#count').textContent === '3';"])
    revised = counter_html.replace("id='count'", "id='counter'").replace("function increment()", "function bump()")
    assert missing_items(plan, counter_html, revised) == (["count"], ["increment"])
    assert missing_items(plan, counter_html, counter_html) == ([], [])
