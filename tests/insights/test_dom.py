"""What counts as a change to a named element: its markup, what sits beside it, its CSS rules, the scripts naming it."""

from __future__ import annotations

import pytest

from insights import Version, element_changed, named_selectors, selector_tokens

BEFORE = """<style>#swap{width:22px} .row{gap:8px} #swap-2{color:red}</style>
<div class=row><button id=swap>S</button></div><p><input id=precision type=range></p><span id=out>1</span>
<script>document.getElementById('out').textContent = '1';</script>"""


@pytest.mark.parametrize("after, selector, changed", [
    (BEFORE.replace("<button id=swap>", "<button id=swap aria-label=Swap>"), "#swap", True),   # its markup
    (BEFORE.replace("#swap{width:22px}", "#swap{width:44px}"), "#swap", True),                 # a rule naming it
    (BEFORE.replace("#swap-2{color:red}", "#swap-2{color:blue}"), "#swap", False),             # another id's rule
    (BEFORE.replace("type=range></p>", "type=range><input id=n type=number></p>"), "#precision", True),  # beside it
    (BEFORE.replace("textContent = '1'", "textContent = '2'"), "#out", True),                  # a script naming it
    (BEFORE.replace(".row{gap:8px}", ".row{gap:4px}"), ".row", True),                          # a class's rule
    (BEFORE, "#swap", False),                                                                  # nothing
    (BEFORE, "#missing", None),                                                                # nothing to compare
    (BEFORE.replace("<span id=out>1</span>", ""), "#out", True),                               # gone
    (BEFORE + "<!-- a comment -->", "body", True),                                             # the page itself
])
def test_a_named_element_changed_only_when_the_two_versions_differ_around_it(after, selector, changed):
    assert element_changed(Version(BEFORE), Version(after), selector) is changed


def test_selectors_are_read_from_feedback_lines_facts_and_css_details():
    assert named_selectors("Enlarge `#swap` (22×22 px), and `#copy-result` — interaction robustness.") == [
        "#swap", "#copy-result"]
    assert named_selectors("fact small_target at #swap", "nav {gap: 28px -> 12px}") == ["#swap", "nav"]
    # the page counts only when nothing else is named
    assert named_selectors("Fit the page (`body`) within 1280×720 beside `#go`") == ["#go"]
    assert named_selectors("Fit the page (`body`) within 1280×720") == ["body"]
    assert named_selectors("<button> id=btn-save", "#go named 'Go'") == ["#btn-save", "#go"]  # add_ids' details
    assert selector_tokens("div.row > #swap") == frozenset({".row", "#swap"})
