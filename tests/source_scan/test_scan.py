"""The one scanner of JavaScript and CSS source: what it blanks, what it keeps, how deep each bracket is."""

from __future__ import annotations

import pytest

from source_scan import closing, mask, scan


def test_brackets_inside_strings_are_blanked_and_the_quotes_and_offsets_stay():
    code = "f('{', \"(]\");\nif (x) { y = '}'; }"
    masked = mask(code)
    assert masked == "f(' ', \"  \");\nif (x) { y = ' '; }"
    assert len(masked) == len(code) and masked.index("\n") == code.index("\n")
    assert closing(masked, masked.index("{")) == len(code) - 1


def test_an_escaped_quote_does_not_end_the_string():
    assert mask(r"a = 'it\'s {'; b = {}") == "a = '       '; b = {}"
    assert mask(r'"a\\" + {}') == '"   " + {}'  # an escaped backslash, then the real closing quote


def test_line_and_block_comments_are_blanked_to_their_end_and_newlines_kept():
    code = "a(); // } )\nb(/* { */ 1);"
    assert mask(code) == "a();" + " " * 7 + "\nb(" + " " * 8 + "1);"
    assert mask("x /* never closed {") == "x                  "


def test_a_template_literal_is_blanked_with_its_substitutions():
    code = "s = `a ${ {k: '}'}.k } b`; f(1)"
    masked = mask(code)
    assert masked == "s = `" + " " * 19 + "`; f(1)"
    assert closing(masked, masked.index("(")) == len(code) - 1


def test_a_regular_expression_is_a_literal_but_a_division_is_not():
    masked = mask("ok = /[)}/]+\\//g.test(s) && (a / b) / (c)")
    assert masked.startswith("ok = /") and ")" not in masked[5:15] and "}" not in masked
    assert masked.endswith("(a / b) / (c)")  # after `)` and names a slash divides
    assert mask("return /{/.test(s)") == "return / /.test(s)"  # after `return` it starts a regular expression


def test_unbalanced_input_gives_minus_one_and_depths_below_zero_unless_clamped():
    assert closing("f((1)", 1) == -1
    assert [depth for _, _, depth in scan("a)(b)")] == [-1, 0, -1]
    assert [depth for _, _, depth in scan("a)(b)", clamp=True)] == [0, 1, 0]
    with pytest.raises(ValueError, match="no opening bracket at 0"):
        closing("x(", 0)


def test_scan_gives_each_bracket_asked_for_and_each_match_with_the_depth_after_it():
    masked = "{a[(b;)];c}"
    assert list(scan(masked, ";")) == [(0, "{", 1), (2, "[", 2), (3, "(", 3), (5, ";", 3), (6, ")", 2), (7, "]", 1),
                                       (8, ";", 1), (10, "}", 0)]
    assert list(scan(masked, ";", 3, brackets="(")) == [(3, "(", 1), (5, ";", 1), (6, ")", 0), (8, ";", 0)]
    assert [token for _, token, _ in scan("a ==> b", "=>|==|>")] == ["==", ">"]  # matches never overlap
    assert closing(masked, 0) == 10 and closing(masked, 2) == 7 and closing(masked, 3) == 6


def test_css_knows_only_block_comments_and_quoted_strings():
    css = "a { background: url(http://x.org/a.png); content: '}' } /* } */ b { }"
    masked = mask(css, "css")
    assert "url(http://x.org/a.png)" in masked  # `//` is no comment in CSS
    assert masked.count("}") == 2 and closing(masked, 2) == css.index("} /*")
    assert mask("a { x: `}` }", "css") == "a { x: `}` }"  # a backtick is no quote in CSS


def test_a_string_left_open_ends_with_its_line():
    # CSS blanks it to the line's end; JavaScript keeps its last character, as the verifier always read it.
    assert mask("a { content: 'x;\n color: red }", "css") == "a { content: '  \n color: red }"
    assert mask("f('x;\n)") == "f(' ;\n)"


def test_without_comments_only_literals_are_blanked():
    assert mask("a: '/*'; /* b; */ c", "css", comments=False) == "a: '  '; /* b; */ c"
    assert mask("x('//'); // y", comments=False) == "x('  '); // y"
