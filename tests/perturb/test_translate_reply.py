"""The translator's reply reading: what its repair request says about an unusable reply (it is quoted verbatim)."""

from __future__ import annotations

import json

import pytest

from perturb._translate import parse_translations


def test_a_fenced_reply_is_read_and_stripped():
    assert parse_translations('```json\n{"translations": [" Speichern ", "Abbrechen"]}\n```', 2) == ["Speichern", "Abbrechen"]


@pytest.mark.parametrize("reply, problem", [
    ("Ich kann das nicht übersetzen.", "the reply contains no JSON object"),
    # a reply cut short is no object to the translator (the other roles let the parser say where it stops)
    ('{"translations": ["Speichern", "Abbre', "the reply contains no JSON object"),
    ('{"translations": ["Speichern",]}', "the reply is not valid JSON (Expecting value at line 1 column 31)"),
    ('{"translations": ["Speichern"]}',
     "the JSON breaks the schema (2 translations expected): translations: ['Speichern'] is too short"),
    # NaN is read as a number, so the schema names it, as it always has
    ('{"translations": ["Speichern", NaN]}',
     "the JSON breaks the schema (2 translations expected): translations/1: nan is not of type 'string'"),
])
def test_an_unusable_reply_says_what_is_wrong(reply, problem):
    with pytest.raises(ValueError) as caught:
        parse_translations(reply, 2)
    assert str(caught.value) == problem


def test_schema_problems_come_in_the_validator_s_order_three_at_most():
    reply = json.dumps({"translations": list(range(12)), "note": "x"})
    with pytest.raises(ValueError) as caught:
        parse_translations(reply, 12)
    assert str(caught.value) == (
        "the JSON breaks the schema (12 translations expected): "
        "(root): Additional properties are not allowed ('note' was unexpected); "
        "translations/0: 0 is not of type 'string'; translations/1: 1 is not of type 'string'"
    )
