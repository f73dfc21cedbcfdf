"""The JSON in a model's reply: found, parsed and checked against a schema, one way for every role.

Models asked for "one JSON object only" send it in a ```json fence, inside a sentence, or bare;
they write `NaN`, stop mid-object when the reply is cut short, or break the schema they were shown.
The judge, the detector, the commenter, the verifier, the translator and the task proposer all read
their replies with `parse_json_reply`, so a reply that one role accepts another reads the same way,
and every unusable reply raises `JsonReplyError`, whose message says what is wrong in words a repair
prompt can quote back to the model.

Where the JSON is, in order:

1. the first ```` ``` ```` (or ```` ```json ````) fence whose body is one whole object, `{` … `}`;
2. else the first fence's body from `{` to the first `}` that a fence follows, or, with no such
   fence, from the first `{` to the last `}` of the reply (prose before and after is dropped);
3. else, when the reply has a `{` but no `}` after it (a reply cut short), from that `{` to the
   end, so that the parser's message says where the object stops.

When nothing parses, the error is the parser's on the text of step 2 or 3.

With `allow_array=True` a reply whose object cannot be read is tried once more for an array, the
same three ways with `[` … `]`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

import jsonschema
import pydantic

Model = TypeVar("Model", bound=pydantic.BaseModel)

JsonReplyProblem = Literal["no_json", "unclosed", "invalid_json", "schema"]
"""Why a reply is unusable: no `{` at all; a `{` with no `}` after it (a reply cut short); JSON the
parser refuses (NaN and Infinity included, unless allowed); JSON that breaks the schema or model."""


@dataclass(frozen=True)
class _Shape:
    """Where a JSON object (or array) may sit in a reply."""

    opening: str
    closing: str
    fence_opening: re.Pattern[str]
    """A fence (```` ``` ```` or ```` ```json ````) right before the opening bracket."""
    fenced: re.Pattern[str]
    """A fenced body from the opening bracket to the first closing one that a fence follows."""


_OBJECT = _Shape("{", "}", fence_opening=re.compile(r"```(?:json)?\s*(?=\{)"),
                 fenced=re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL))
_ARRAY = _Shape("[", "]", fence_opening=re.compile(r"```(?:json)?\s*(?=\[)"),
                fenced=re.compile(r"```(?:json)?\s*(\[.*?\])\s*```", re.DOTALL))
_FENCE_CLOSING = re.compile(r"\s*```")


class JsonReplyError(ValueError):
    """A model reply without usable JSON; the message says what is wrong (meant to be quoted in a repair).

    Messages: "the reply contains no JSON object", "the reply is not valid JSON (Expecting ',' delimiter
    at line 1 column 9)", "the reply is not valid JSON (NaN is not a JSON number)", "the JSON breaks
    the schema: (root): 'reason' is a required property; confidence: 1.5 is greater than the maximum of 1".
    """

    def __init__(
        self,
        message: str,
        *,
        problem: JsonReplyProblem,
        candidate: str | None = None,
        parse_error: ValueError | None = None,
        schema_errors: tuple[jsonschema.ValidationError, ...] = (),
        problems: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.problem: JsonReplyProblem = problem
        self.candidate = candidate
        """The text that was parsed as JSON (None when the reply has no `{`)."""
        self.parse_error = parse_error
        """What the parser raised: a `json.JSONDecodeError`, or a ValueError for NaN/Infinity or an
        integer too long to convert (None unless the problem is 'unclosed' or 'invalid_json')."""
        self.schema_errors = schema_errors
        """The JSON Schema's errors in the validator's order (empty for a pydantic model's)."""
        self.problems = problems
        """Each schema violation as `"path: what is wrong"`, sorted by path (root first); the message joins them."""

    @property
    def detail(self) -> str:
        """What the parser said, with its position: `Expecting ',' delimiter at line 1 column 9`."""
        return _parser_says(self.parse_error) if self.parse_error is not None else ""


@overload
def parse_json_reply(text: str, schema: type[Model], *, allow_nan: bool = False,
                     allow_array: bool = False) -> Model: ...
@overload
def parse_json_reply(text: str, schema: Mapping[str, Any] | None = None, *, allow_nan: bool = False,
                     allow_array: bool = False) -> Any: ...


def parse_json_reply(text: str, schema: Mapping[str, Any] | type[pydantic.BaseModel] | None = None, *,
                     allow_nan: bool = False, allow_array: bool = False) -> Any:
    """The JSON object in a model reply (see the module docstring for where it is looked for), checked.

    `schema`: a JSON Schema (a mapping; its `$schema` picks the draft, 2020-12 by default), and then
    the parsed JSON is returned; or a pydantic model class, and then the validated model is returned.
    `allow_nan`: read `NaN`, `Infinity` and `-Infinity` as floats, as Python's `json` does; by
    default they are refused, for they are not JSON. `allow_array`: a reply whose object cannot be
    read may be a bare or fenced array instead (returned as a list).

    Raises:
        JsonReplyError: no JSON object, JSON the parser refuses, or JSON that breaks `schema`;
            `problem` says which, and the message says what and where.
    """
    decoder = json.JSONDecoder() if allow_nan else json.JSONDecoder(parse_constant=_refuse_constant)
    try:
        data = _read(text, _OBJECT, decoder)
    except JsonReplyError as object_error:
        if not allow_array:
            raise
        try:
            data = _read(text, _ARRAY, decoder)
        except JsonReplyError:
            raise object_error from None  # the reply was asked for an object: say what is wrong with that
    if schema is None:
        return data
    if isinstance(schema, Mapping):
        return _checked_by_json_schema(data, schema)
    return _checked_by_model(data, schema)


def _read(text: str, shape: _Shape, decoder: json.JSONDecoder) -> Any:
    """The first fenced JSON of `shape` that parses whole, else the one candidate, parsed or its error."""
    # Parsing from each fence's bracket, rather than cutting at a "}" and a fence, reads a string that
    # holds "}```" (code in a verifier's checker), and a second fenced block when the first is broken.
    for fence in shape.fence_opening.finditer(text):
        try:
            value, end = decoder.raw_decode(text, fence.end())
        except ValueError:
            continue
        if _FENCE_CLOSING.match(text, end):
            return value
    candidate = _candidate(text, shape)
    if candidate is None:
        raise JsonReplyError("the reply contains no JSON object", problem="no_json")
    try:
        return decoder.decode(candidate)
    except ValueError as exc:  # a JSONDecodeError, a refused constant, or an integer past Python's digit limit
        raise JsonReplyError(f"the reply is not valid JSON ({_parser_says(exc)})", candidate=candidate,
                             problem="invalid_json" if candidate.endswith(shape.closing) else "unclosed",
                             parse_error=exc) from None


def _candidate(text: str, shape: _Shape) -> str | None:
    """The text to parse when no fenced block parses, so that the parser's error points into it."""
    fenced = shape.fenced.search(text)
    if fenced:
        return fenced.group(1)
    start = text.find(shape.opening)
    if start < 0:
        return None
    end = text.rfind(shape.closing)
    return text[start : end + 1] if end > start else text[start:]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _parser_says(error: ValueError) -> str:
    # the message without "(char 41)": line and column are what a model (or a person) can find
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno} column {error.colno}"
    return str(error)


def _checked_by_json_schema(data: Any, schema: Mapping[str, Any]) -> Any:
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = tuple(validator_class(schema).iter_errors(data))
    if not errors:
        return data
    in_order = sorted(errors, key=lambda error: [str(part) for part in error.absolute_path])
    problems = tuple(f"{_path(error.absolute_path)}: {error.message}" for error in in_order)
    raise JsonReplyError("the JSON breaks the schema: " + "; ".join(problems), problem="schema",
                         schema_errors=errors, problems=problems)


def _checked_by_model(data: Any, model: type[Model]) -> Model:
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        located = sorted(exc.errors(), key=lambda error: [str(part) for part in error["loc"]])
        problems = tuple(f"{_path(error['loc'])}: {error['msg']}" for error in located)
        raise JsonReplyError("the JSON breaks the schema: " + "; ".join(problems), problem="schema",
                             problems=problems) from None


def _path(parts: Any) -> str:
    return "/".join(str(part) for part in parts) or "(root)"
