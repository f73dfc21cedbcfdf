"""`llm.parse_json_reply`: the JSON object in a model reply, found, parsed and checked, or one clear error."""

from __future__ import annotations

import json
import math

import pytest
from pydantic import BaseModel, Field

from llm import JsonReplyError, parse_json_reply

VERDICT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["success", "confidence"],
    "properties": {"success": {"type": "boolean"}, "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
}


class Verdict(BaseModel):
    success: bool
    confidence: float = Field(ge=0, le=1)


@pytest.mark.parametrize("reply", [
    '```json\n{"success": true, "confidence": 0.5}\n```',
    '```\n{"success": true, "confidence": 0.5}\n```',
    'Here it is: ```json {"success": true, "confidence": 0.5}``` — done.',
])
def test_a_fenced_object_is_read(reply):
    assert parse_json_reply(reply, VERDICT) == {"success": True, "confidence": 0.5}


def test_the_first_fenced_object_is_read_when_there_are_two():
    reply = 'Draft:\n```json\n{"n": 1, "inner": {"m": 2}}\n```\nAnd again:\n```json\n{"n": 3}\n```'
    assert parse_json_reply(reply) == {"n": 1, "inner": {"m": 2}}


def test_a_fenced_string_holding_a_fence_is_read_whole():
    reply = '```json\n{"checker": "return `}```` ;", "n": 1}\n```'
    assert parse_json_reply(reply) == {"checker": "return `}```` ;", "n": 1}


def test_a_broken_fenced_object_gives_way_to_a_later_whole_one():
    reply = '```json\n{"n": 1,}\n```\nSorry, corrected:\n```json\n{"n": 2}\n```'
    assert parse_json_reply(reply) == {"n": 2}


def test_when_no_fenced_object_parses_the_error_is_the_first_fence_s():
    with pytest.raises(JsonReplyError, match=r"\(Expecting property name enclosed in double quotes at line 1 column 9\)$"):
        parse_json_reply('```json\n{"n": 1,}\n```\nand\n```json\n{"n": 2,,}\n```')


def test_a_bare_object_is_read():
    assert parse_json_reply('{"success": false, "confidence": 1}', VERDICT) == {"success": False, "confidence": 1}


def test_prose_around_the_object_is_dropped():
    reply = 'I looked at the page. {"success": true, "confidence": 0.9} That is my verdict.'
    assert parse_json_reply(reply, VERDICT) == {"success": True, "confidence": 0.9}


def test_a_reply_without_json_says_so():
    with pytest.raises(JsonReplyError) as caught:
        parse_json_reply("I cannot judge this page.")
    assert str(caught.value) == "the reply contains no JSON object"
    assert caught.value.problem == "no_json" and caught.value.candidate is None


def test_invalid_json_names_the_place():
    with pytest.raises(JsonReplyError) as caught:
        parse_json_reply('Verdict: {"success": true, "confidence": 0.5,}')
    error = caught.value
    assert str(error) == ("the reply is not valid JSON "
                          "(Expecting property name enclosed in double quotes at line 1 column 37)")
    assert error.problem == "invalid_json" and isinstance(error.parse_error, json.JSONDecodeError)
    assert error.candidate == '{"success": true, "confidence": 0.5,}'


def test_a_reply_cut_short_is_parsed_to_its_end():
    with pytest.raises(JsonReplyError) as caught:
        parse_json_reply('```json\n{"success": true, "confidence": 0.5')
    assert caught.value.problem == "unclosed"
    assert str(caught.value) == "the reply is not valid JSON (Expecting ',' delimiter at line 1 column 36)"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(constant):
    with pytest.raises(JsonReplyError, match=rf"^the reply is not valid JSON \({constant} is not a JSON number\)$"):
        parse_json_reply(f'{{"success": true, "confidence": {constant}}}')


def test_nan_is_read_when_allowed():
    assert math.isnan(parse_json_reply('{"confidence": NaN}', allow_nan=True)["confidence"])


def test_a_schema_violation_names_each_field_root_first():
    with pytest.raises(JsonReplyError) as caught:
        parse_json_reply('{"confidence": 1.5, "extra": 1}', VERDICT)
    error = caught.value
    assert error.problem == "schema"
    assert error.problems == (
        "(root): Additional properties are not allowed ('extra' was unexpected)",
        "(root): 'success' is a required property",
        "confidence: 1.5 is greater than the maximum of 1",
    )
    assert str(error) == "the JSON breaks the schema: " + "; ".join(error.problems)
    assert len(error.schema_errors) == 3


def test_the_schema_s_own_draft_is_used():
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"n": {"type": "number", "maximum": 1, "exclusiveMaximum": True}}}
    # draft 4 reads exclusiveMaximum as a flag on maximum; a 2020-12 validator would say "the maximum of True"
    with pytest.raises(JsonReplyError, match="n: 1 is greater than or equal to the maximum of 1"):
        parse_json_reply('{"n": 1}', draft4)


def test_a_pydantic_model_gives_the_model():
    verdict = parse_json_reply('```json\n{"success": true, "confidence": 0.25}\n```', Verdict)
    assert verdict == Verdict(success=True, confidence=0.25)


def test_a_pydantic_violation_names_the_fields():
    with pytest.raises(JsonReplyError) as caught:
        parse_json_reply('{"confidence": 2}', Verdict)
    assert caught.value.problem == "schema"
    assert caught.value.problems == ("confidence: Input should be less than or equal to 1", "success: Field required")


def test_an_array_is_read_only_when_allowed():
    reply = 'The tasks:\n```json\n[{"d": "one"}, {"d": "two"}]\n```'
    assert parse_json_reply(reply, allow_array=True) == [{"d": "one"}, {"d": "two"}]
    with pytest.raises(JsonReplyError, match="not valid JSON"):  # `{"d": "one"}, {"d": "two"}` is no object
        parse_json_reply(reply)


def test_an_object_is_preferred_to_an_array():
    assert parse_json_reply('[see below] {"tasks": [1]}', allow_array=True) == {"tasks": [1]}


def test_when_neither_is_read_the_object_s_error_is_raised():
    with pytest.raises(JsonReplyError, match=r"^the reply contains no JSON object$"):
        parse_json_reply("[1, 2", allow_array=True)
