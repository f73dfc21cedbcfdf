"""The change log of a run: every change a coder was asked for and every change it made, per revision.

One schema for both coders. An offline revision's transforms are what it *made* (`revision.json`:
name, principle, the feedback lines and facts that called for it, its details); the commenter's
actionable changes are what *was asked* of any coder (`feedback-round-N.json`). Whether a change
happened is read from the two versions as loaded, never from the coder's word: a change is applied
when at least one element it names changed (`insights._dom`); a page-wide one (a style sheet for
every element or every button, a rule for the page itself, a line naming no element) when the style
it sets changed on an element the tasks acted on (`insights._page`). A transform also needs to have
reported a change and not to have been reverted by the non-regression contract. A change nothing on
the pages can confirm or refute (it names no element and sets no style the page shows) is
*unverifiable*: never counted as applied. `principle_status` is the one decision per revision and
principle that the principle table and the ablations both read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from coder import principle_of
from results import PAGE_WIDE, AppRoundResult, Change, ChangeStatus, revised_pairs

from ._dom import Version, element_changed, selector_tokens
from ._page import acted_on, claim_checks, on_the_page, script_only, transform_checks
from ._render import Renderer

NO_PRINCIPLE = "(no principle named)"
"""The row of applied changes that answer to no principle (a model coder's unasked changes)."""
PAGE_ITSELF = ("body", "html", ":root")  # read on every version: a page-wide rule may set them alone
_BACKTICKED = re.compile(r"`([^`]+)`")
_ID_OR_CLASS = re.compile(r"(?<![\w`-])([#.][A-Za-z_][\w-]*)")
_ID_ATTRIBUTE = re.compile(r"(?<![\w-])id=[\"']?([A-Za-z_][\w-]*)")  # add_ids' "<button> id=btn-save"
_CSS_DETAIL = re.compile(r"^\s*([^{}]+?)\s*\{")  # "nav {gap: 28px -> 12px}" names `nav`


def named_selectors(*texts: str) -> list[str]:
    """Selectors named in feedback lines, facts and transform details (backticked, `#id`, `.class`, `id=name`, a CSS
    rule's head).

    The page itself (`body`, `html`) counts only when nothing else is named: every revision changes the page, so
    naming it beside an element would tie the change to every task."""
    found: list[str] = []
    for text in texts:
        unquoted = _BACKTICKED.sub(" ", text)
        candidates = (_BACKTICKED.findall(text) + _ID_OR_CLASS.findall(unquoted)
                      + [f"#{name}" for name in _ID_ATTRIBUTE.findall(unquoted)])
        head = _CSS_DETAIL.match(text)
        if head and "->" in text:
            candidates.append(head.group(1))
        found += [c.strip() for c in candidates if c.strip()]
    found = list(dict.fromkeys(found))
    return [s for s in found if s not in PAGE_WIDE] or found



def revision_changes(run_dir: Path, result: AppRoundResult, before: AppRoundResult, old: Version, new: Version,
                     acted: list[str]) -> list[Change]:
    """The changes of the revision that made `result`'s version (`new`, as loaded) from `before`'s (`old`); `acted`:
    the elements the revision's tasks acted on (page-wide changes are checked on them)."""
    revision, feedback = _inputs(run_dir, result, before)
    if revision is None or "kept" in revision:
        return []  # a kept version (its revision failed) changed nothing
    track = result.track
    common = {"app_id": result.app_id, "track": str(track), "round": result.round, "revised_from": before.round}
    prefix = f"{result.app_id}/{track}/r{result.round}"
    made_by_coder = bool(revision.get("transforms")) or bool(revision.get("offline"))
    reverted = (revision.get("contract") or {}).get("status") == "kept_after_retry" and not revision.get("changed")
    changes: list[Change] = []
    for transform in revision.get("transforms") or []:
        status, elements, changed, how = _made(transform, revision, reverted, old, new, acted)
        changes.append(Change(id=f"{prefix}/made-{transform['name']}", **common, kind="made",
                              text="; ".join(transform.get("details") or []) or transform["name"],
                              transform=transform["name"], principle=transform.get("principle"), elements=elements,
                              changed_elements=changed, status=status, how=how, counted=True))
    for number, line in enumerate(feedback.get("actionable_changes") or [], 1):
        status, elements, changed, how = _asked(line, old, new, acted)
        changes.append(Change(id=f"{prefix}/asked-{number}", **common, kind="asked", text=line,
                              principle=principle_of(line), elements=elements, changed_elements=changed,
                              status=status, how=how, counted=not made_by_coder))
    if not made_by_coder:
        changes += _unasked(prefix, common, old, new, changes)
    return changes


def _made(transform: dict, revision: dict, reverted: bool, old: Version, new: Version,
          acted: list[str]) -> tuple[ChangeStatus, list[str], list[str], str]:
    """(verdict, elements named, elements changed, how) of an offline transform: by the DOM diff of the elements it
    names, or, page-wide, by the computed style of the elements the tasks acted on; never by its own count."""
    name, details = transform["name"], transform.get("details") or []
    elements = named_selectors(*transform.get("triggered_by", []), *details)
    made = int(transform.get("changes") or 0)
    said = f"offline transform {name}: {made} change(s)"
    if not made:
        return "not applied", elements, [], "offline transform found nothing to change"
    if reverted:
        return "not applied", elements, [], "reverted by the non-regression contract"
    if not revision.get("changed"):
        return "not applied", elements, [], f"{said}, but the revision kept the version it revised"
    if old.html == new.html:
        return "not applied", elements, [], f"{said}, but the two versions are the same as loaded"
    in_details = named_selectors(*details)
    checks = transform_checks(name, details, new) if set(in_details) <= PAGE_WIDE else []
    if checks:
        status, changed, seen = on_the_page(old, new, [*acted, *elements, *in_details], checks)
        return status, elements, changed, f"{said}, page-wide; {seen}"
    if set(in_details) <= PAGE_WIDE and script_only(name, new):  # the elements its triggers name change by chance
        return "unverifiable", elements, [], (f"{said}, a script that changes what the page does at run time: "
                                              "neither the DOM diff nor the computed style shows that")
    if elements:
        changed = [s for s in elements if element_changed(old, new, s)]
        return ("applied" if changed else "not applied"), elements, changed, (
            f"{said}; DOM diff: {len(changed)} of {len(elements)} named element(s) changed")
    return "unverifiable", elements, [], f"{said}, naming no element: neither the DOM diff nor the page can tell"


def _asked(line: str, old: Version, new: Version, acted: list[str]) -> tuple[ChangeStatus, list[str], list[str], str]:
    """(verdict, elements named, elements changed, how) of a feedback line: the DOM diff of the elements it names
    (and their computed style, when it asks for a style); a line naming none (or only the page) is page-wide: the
    style it asks for, on the elements the tasks acted on."""
    elements = named_selectors(line)
    checks = claim_checks(line)
    named = [e for e in elements if e not in PAGE_WIDE]
    if old.html == new.html:
        return "not applied", elements, [], "the two versions are the same as loaded"
    if named:
        changed = [s for s in named if element_changed(old, new, s)]
        how = f"DOM diff: {len(changed)} of {len(named)} named element(s) changed"
        if not changed and checks:  # a rule for every element (or every button) is not seen by naming
            styled, changed, seen = on_the_page(old, new, named, checks)
            how += f"; {seen}" if styled == "applied" else ""
        return ("applied" if changed else "not applied"), elements, changed, how
    if checks:
        status, changed, seen = on_the_page(old, new, [*acted, *elements], checks)
        return status, elements, changed, f"names {'only the page' if elements else 'no element'}: page-wide; {seen}"
    return "unverifiable", elements, [], ("names no element and asks for no style the page shows: neither the DOM "
                                          "diff nor the page can tell")


def _unasked(prefix: str, common: dict, old: Version, new: Version, asked: list[Change]) -> list[Change]:
    """What a model coder changed that nobody asked for: each element with an id whose markup, surroundings, rules or
    scripts changed and that no asked change named (kind `made`, no principle)."""
    named = {token for change in asked for element in change.elements for token in selector_tokens(element)}
    ids = sorted({f"#{tag['id']}" for version in (old, new) for tag in version.soup.find_all(id=True)} - named)
    return [Change(id=f"{prefix}/made-{element[1:]}", **common, kind="made", text=f"{element} changed, unasked",
                   elements=[element], changed_elements=[element], status="applied",
                   how="DOM diff: changed, and no asked change named it", counted=True)
            for element in ids if element_changed(old, new, element)]


@dataclass(frozen=True)
class Revision:
    """One revision of a run: the version it made, the one it revised, both as loaded, and its changes."""

    result: AppRoundResult
    before: AppRoundResult
    old: Version
    new: Version
    changes: list[Change]

    @property
    def key(self) -> str:
        return f"{self.result.app_id}/{self.result.track}/r{self.result.round}"


def principle_changes(revision: Revision, principle: str) -> list[Change]:
    """The revision's counted changes answering to `principle` (NO_PRINCIPLE: to none)."""
    return [c for c in revision.changes if c.counted and (c.principle or NO_PRINCIPLE) == principle]


_PRECEDENCE: tuple[ChangeStatus, ...] = ("applied", "unverifiable", "not applied")
"""A revision's verdict on a principle from its changes': one applied change applies it; else one that cannot be
told leaves it unverifiable; only changes all seen not to happen make it not applied."""


def principle_status(revision: Revision, principle: str) -> ChangeStatus | None:
    """Whether the revision applied `principle`: applied when one of its counted changes of it was, else unverifiable
    when one of them is, else not applied; None when it has none. The principle table's revisions and an ablation's
    choice of revisions are this decision."""
    found = {c.status for c in principle_changes(revision, principle)}
    return next((status for status in _PRECEDENCE if status in found), None)


async def revisions(run_dir: Path, results: list[AppRoundResult], renderer: Renderer,
                    pairs: list[tuple[AppRoundResult, AppRoundResult]] | None = None) -> list[Revision]:
    """Every revision of the run (or those of `pairs`: (version made, version revised)) with its changes decided, the
    versions compared as the agent met them (`Renderer`: one load per version, with the computed style of the
    elements the revisions' tasks acted on and their changes name)."""
    planned = []
    probes: dict[str, list[str]] = {}
    for result, before in revised_pairs(results) if pairs is None else pairs:
        acted = acted_on(run_dir, [*before.tasks, *result.tasks])
        named = [*_named(*_inputs(run_dir, result, before)), *PAGE_ITSELF]
        htmls = [(run_dir / version.html).read_text(encoding="utf-8") for version in (before, result)]
        for html in htmls:
            probes.setdefault(html, []).extend([*acted, *named])
        planned.append((result, before, acted, htmls))
    for html, wanted in probes.items():
        await renderer.version(html, wanted)
    found = []
    for result, before, acted, (old_html, new_html) in planned:
        old, new = await renderer.version(old_html), await renderer.version(new_html)
        found.append(Revision(result=result, before=before, old=old, new=new,
                              changes=revision_changes(run_dir, result, before, old, new, acted)))
    return found


def _inputs(run_dir: Path, result: AppRoundResult, before: AppRoundResult) -> tuple[dict | None, dict]:
    """The revision's record (revision.json; None when unreadable) and the feedback it answered."""
    feedback = run_dir / "apps" / result.app_id / result.track.folder / f"feedback-round-{before.round}.json"
    return _read_json(run_dir / Path(result.html).parent / "revision.json"), _read_json(feedback) or {}


def _named(revision: dict | None, feedback: dict) -> list[str]:
    """Every element the revision's transforms and feedback lines name (their computed style may be read)."""
    texts = [text for t in (revision or {}).get("transforms") or [] for text in (*t.get("triggered_by", []),
                                                                               *(t.get("details") or []))]
    return named_selectors(*texts, *(feedback.get("actionable_changes") or []))


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
