"""The offline judge: an honest baseline that reads the final page's text, not pixels.

It decides from `Trajectory.final_text` (the page's visible text when the rollout ended) and the
task's expected outcome:

1. **Facts** of the expected outcome: quoted strings (`"05:00"`, `'Unlocked!'`, “…”, `…`) and
   the numbers outside them (`$1,717.83` → 1717.83, `5.00%` → 5, `120`). A quoted string is found
   when its text (case, whitespace, quote and dash styles normalised) is a substring of the page's;
   a number when the page shows a number of the same value (`5.00` = `5`, `1,200` = `1200`).
2. **Decision**: success when at least `SUCCESS_SHARE` (3/4) of the facts are on the page — all of
   them would be too strict, since `innerText` leaves out form fields' values, and one missing fact
   in four is often such a field. confidence = 0.5 + 0.5 × distance × n/(n+1), where distance is
   how far the share lies from the threshold towards 0 or 1 (0 at the threshold, 1 at the ends)
   and n/(n+1) discounts thin evidence: one fact found gives 0.75, four of four 0.9.
3. **No facts** (an outcome in words only, e.g. "the card is face up"): the share of its content
   words (four letters or more, not stop words) among the page's words, same threshold, half the
   confidence gain (at most 0.75) — words like "running" or "highlighted" name states a page
   rarely prints, so this is weak evidence. No content words at all: `success=None`, with the
   reason.

It is a baseline and it is wrong in known ways: a number that is on the page for another reason
(a default, a label, a step number) counts as found, and an outcome worded differently from the
page ("ticked" for a checkbox, "Mon" for "Monday") counts as missing. A trajectory without
`final_text` (recorded before rollouts kept it) is an error naming what to do, never a guess.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from cua import Trajectory

from ._records import Judgement, JudgeMode, TrajectoryJudge

OFFLINE_JUDGE = "offline"
OFFLINE_VERSION = "offline-judge-1"
SUCCESS_SHARE = 0.75
"""The share of the expected outcome's facts (or content words) that must be on the final page."""
MODE: JudgeMode = "screenshot"
"""The offline judge looks at the final state only: recorded as the final-state ('screenshot') mode."""

_QUOTES = [
    re.compile(r'"([^"\n]{1,120})"'),
    re.compile(r"“([^”\n]{1,120})”"),
    re.compile(r"(?<!\w)'([^'\n]{1,120}?)'(?!\w)"),
    re.compile(r"(?<!\w)‘([^’\n]{1,120}?)’(?!\w)"),
    re.compile(r"`([^`\n]{1,120})`"),
]
# A number not glued to a word or to another number's digits: optional sign (not after a word, so
# "1-50" is 1 and 50), thousands groups with commas or plain digits, optional decimals.
_NUMBER = re.compile(r"(?<![\w.,])(?:[-−](?=\d))?(?:\d{1,3}(?:,\d{3})+(?![\d])|\d+)(?:\.\d+)?(?![\d])")
_WORD = re.compile(r"[^\W\d_]+")
_STOP_WORDS = frozenset("""
about above after again against also among another area before being below between both card cards come does
down each even every field from have here into item items just like made make many more most much must near
next only other over page same screen section shown shows should show some still such than that their them
then there these they this those through under until upon very well were what when where which while whose
will with within without would your value values reads read says say appears appear visible displayed display
""".split())
_SOURCE_SHA = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def normalise(text: str) -> str:
    """Text as compared: NFKC, case-folded, one style of quote and dash, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.translate(str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "−": "-"}))
    return " ".join(text.split())


def _number_value(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", "").replace("−", "-"))
    except InvalidOperation:
        return None


@dataclass
class OutcomeFacts:
    """What the expected outcome says the final page shows, in forms that can be looked up."""

    quotes: list[str] = field(default_factory=list)
    numbers: list[tuple[str, Decimal]] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    """Content words, used only when there are no quotes and numbers."""

    @property
    def count(self) -> int:
        return len(self.quotes) + len(self.numbers)


def outcome_facts(expected_outcome: str) -> OutcomeFacts:
    """The quoted strings, the numbers outside them and the content words of an expected outcome (each once)."""
    facts = OutcomeFacts()
    rest = expected_outcome
    for pattern in _QUOTES:
        for match in pattern.finditer(rest):
            quoted = match.group(1).strip()
            if quoted and normalise(quoted) not in (normalise(q) for q in facts.quotes):
                facts.quotes.append(quoted)
        rest = pattern.sub(" ", rest)  # a number inside a quote is part of that fact, not another
    for match in _NUMBER.finditer(rest):
        value = _number_value(match.group(0))
        if value is not None and value not in (v for _, v in facts.numbers):
            facts.numbers.append((match.group(0), value))
    words = _WORD.findall(normalise(expected_outcome))
    facts.words = list(dict.fromkeys(w for w in words if len(w) >= 4 and w not in _STOP_WORDS))
    return facts


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") else word


@dataclass(frozen=True)
class FactCheck:
    """Which facts (or content words) of the expected outcome the final page shows."""

    kind: str  # "facts" or "words"
    found: list[str]
    missing: list[str]

    @property
    def share(self) -> float:
        total = len(self.found) + len(self.missing)
        return len(self.found) / total if total else 0.0


def check_facts(expected_outcome: str, page_text: str) -> FactCheck | None:
    """The outcome's facts looked up in the page text; None when the outcome names nothing to look for."""
    facts = outcome_facts(expected_outcome)
    page = normalise(page_text)
    if facts.count:
        values = {value for match in _NUMBER.finditer(page) if (value := _number_value(match.group(0))) is not None}
        found, missing = [], []
        for quoted in facts.quotes:
            (found if normalise(quoted) in page else missing).append(f'"{quoted}"')
        for text, value in facts.numbers:
            (found if value in values else missing).append(text)
        return FactCheck("facts", found, missing)
    if not facts.words:
        return None
    page_words = {_stem(word) for word in _WORD.findall(page)}
    found = [w for w in facts.words if _stem(w) in page_words]
    return FactCheck("words", found, [w for w in facts.words if w not in found])


def decide(check: FactCheck) -> tuple[bool, float]:
    """(success, confidence) from a fact check; see the module's docstring for the rule."""
    share, n = check.share, len(check.found) + len(check.missing)
    success = share >= SUCCESS_SHARE
    distance = (share - SUCCESS_SHARE) / (1 - SUCCESS_SHARE) if success else (SUCCESS_SHARE - share) / SUCCESS_SHARE
    gain = 0.5 if check.kind == "facts" else 0.25
    return success, round(0.5 + gain * distance * n / (n + 1), 3)


def _listing(items: list[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


class OfflineJudge(TrajectoryJudge):
    """The offline baseline judge (no model, no browser): final page text vs the expected outcome's facts."""

    offline = True
    name = OFFLINE_JUDGE
    mode: JudgeMode = MODE
    prompt_version = OFFLINE_VERSION
    prompt_sha256 = _SOURCE_SHA
    """sha256 of this module: a change to the rules is a new judge for the cache."""

    async def decide_on(self, judgement: Judgement, trajectory: Trajectory, folder: Path, shown: None) -> None:
        """The final page's text against the expected outcome's facts (see the module's docstring)."""
        if trajectory.final_text is None:
            why = f"the page could not be read ({trajectory.final_text_error})" if trajectory.final_text_error \
                else "it was recorded before rollouts kept the final page's text"
            judgement.error = (f"{folder / 'trajectory.json'} has no final_text ({why}); the offline judge reads "
                               "nothing else — re-run the rollout to judge it")
            return
        check = check_facts(trajectory.expected_outcome, trajectory.final_text)
        if check is None:
            judgement.error = (f"the expected outcome names nothing the offline judge can look for "
                               f"({trajectory.expected_outcome.strip()[:120]!r}): no quoted text, numbers or content words")
            return
        judgement.success, judgement.confidence = decide(check)
        what = "facts of the expected outcome" if check.kind == "facts" else \
            "content words of the expected outcome (it quotes no text and names no number)"
        reason = f"{len(check.found)}/{len(check.found) + len(check.missing)} {what} on the final page"
        if check.found:
            reason += f"; found {_listing(check.found)}"
        if check.missing:
            reason += f"; missing {_listing(check.missing)}"
        if trajectory.final_text_truncated:
            reason += f" (page text cut at {len(trajectory.final_text)} characters)"
        judgement.reason = reason
