"""The `german` variation's texts: an app's visible text, translated by a model (the `translator` role).

A translation cannot be faked offline, so there is no offline translator: a run that asks for
`german` without a model is refused before it starts. The app's visible text at load (text nodes
and the attributes people read: placeholder, title, aria-label, alt) is collected in the page,
sent as a JSON list, and must come back as a JSON object `{"translations": [...]}` with one
string per text, in order (JSON Schema-checked; one repair round-trip quoting what was wrong,
then a `TranslationError`). Ids, classes, values and scripts are never sent, so they cannot change;
text the app writes later (a status line set by its code) stays in its own language.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from cua import BrowserConfig, isolated_world, open_app, settle
from llm import CALL_FAILURES, JsonReplyError, ModelClient, Repair, RoleClient, ask_json, parse_json_reply

PROMPT_VERSION = "translator-1"
DEFAULT_ROLE = "translator"
NO_TRANSLATOR = "offline"
"""The config's `translator` when no model translates (its default): a variation that needs one is refused."""
TARGET_LANGUAGE = "German"
MAX_TEXTS = 400
MAX_REPAIRS = 1
_COLLECT_JS = Path(__file__).with_name("_collect_texts.js").read_text(encoding="utf-8")

SYSTEM_PROMPT = (
    f"You translate the visible text of a web app's user interface into {TARGET_LANGUAGE}, as a professional "
    "localiser would: natural, concise UI wording, the same tone, numbers, units, currency signs, emoji, "
    "punctuation and placeholders such as {name} or %s kept as they are. Brand and product names stay as they "
    "are. Reply with one JSON object only: {\"translations\": [...]}, exactly one string per input text, in "
    "the same order."
)


class TranslationError(RuntimeError):
    """The translator's replies could not be used (after the repair), or the call failed; says why."""


class Translations(BaseModel):
    """One app version's visible texts and their translations (what the `german` variation applies)."""

    language: str = TARGET_LANGUAGE
    model: str = Field(description="The registry model that translated.")
    prompt_version: str = PROMPT_VERSION
    html_sha256: str
    texts: dict[str, str] = Field(default_factory=dict, description="Original visible text → translation.")
    tokens: int = 0

    @property
    def sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.texts, sort_keys=True).encode("utf-8")).hexdigest()


def translation_schema(count: int) -> dict[str, Any]:
    """The reply's JSON Schema for `count` texts."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["translations"],
        "properties": {"translations": {"type": "array", "minItems": count, "maxItems": count,
                                        "items": {"type": "string", "maxLength": 2_000}}},
    }


async def collect_texts(html: str, config: BrowserConfig | None = None, max_texts: int = MAX_TEXTS) -> list[str]:
    """The app's distinct visible texts at load, in page order (at most `max_texts`)."""
    async with open_app(html, config) as app:
        await settle(app.page)
        found = await isolated_world(app.page).call(_COLLECT_JS, max_texts, timeout_ms=5_000)
    return [str(text) for text in found or []]


def parse_translations(text: str, count: int) -> list[str]:
    """The translations in a reply. Raises ValueError saying what is wrong (quoted in the repair)."""
    # NaN is read as a number, as this reading always has (the schema then refuses it as no string), so
    # the repair request for such a reply stays what it was.
    try:
        data = parse_json_reply(text, translation_schema(count), allow_nan=True)
    except JsonReplyError as error:
        raise ValueError(_what_is_wrong(error, count)) from error
    return [item.strip() for item in data["translations"]]


def _what_is_wrong(error: JsonReplyError, count: int) -> str:
    """The translator's own words for an unusable reply, as its repair request has always quoted them."""
    if error.problem in ("no_json", "unclosed"):  # an object cut short is no object to a translator
        return "the reply contains no JSON object"
    if error.problem == "schema":  # the validator's order, each cut, the first three
        problems = [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"[:300]
                    for e in error.schema_errors]
        return f"the JSON breaks the schema ({count} translations expected): " + "; ".join(problems[:3])
    return str(error)


async def translate_app(html: str, client: ModelClient, model: str = DEFAULT_ROLE,
                        config: BrowserConfig | None = None) -> Translations:
    """Collect the app's visible text and translate it (one model call, one repair at most).

    Raises:
        TranslationError: the model call failed, or its replies were not usable after the repair.
    """
    texts = await collect_texts(html, config)
    translator = RoleClient(client, model)
    sha = hashlib.sha256(html.encode("utf-8")).hexdigest()
    result = Translations(model=translator.model, html_sha256=sha)
    if not texts:
        return result
    repair = Repair(f"That reply cannot be used: {{problem}}. Reply again with the JSON object only, with exactly "
                    f"{len(texts)} translations in the order of the texts.", resend="question", reply_chars=20_000)
    messages = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": json.dumps({"texts": texts}, ensure_ascii=False)}]
    answer = await ask_json(translator, messages, parse=lambda text: parse_translations(text, len(texts)),
                            repair=repair, attempts=1 + MAX_REPAIRS, call_errors=CALL_FAILURES)
    result.tokens = answer.tokens
    if answer.call_error is not None:
        raise TranslationError(f"translating the app ({translator.model}) failed: {answer.call_error}") from answer.call_error
    if not answer.ok:
        raise TranslationError(f"the translator ({translator.model}) gave no usable reply after {1 + MAX_REPAIRS} "
                               f"attempts: {answer.attempts[-1].error}")
    result.texts = {original: out for original, out in zip(texts, answer.value) if out}
    return result


def prompt_sha256() -> str:
    """The translator prompt's hash (recorded in the run's manifest with the other roles')."""
    return hashlib.sha256((PROMPT_VERSION + SYSTEM_PROMPT).encode("utf-8")).hexdigest()
