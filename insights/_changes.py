"""The change log of a run: every change a coder was asked for and every change it made, per revision.

One schema for both coders. An offline revision's transforms are what it *made* (`revision.json`:
name, principle, the feedback lines and facts that called for it, its details); the commenter's
actionable changes are what *was asked* of any coder (`feedback-round-N.json`). Whether a change
happened is read from the two HTML versions (`insights._dom`), never from the coder's word: a change
is applied when at least one element it names changed; a transform also needs to have reported a
change and not to have been reverted by the non-regression contract.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from coder import principle_of
from results import PAGE_WIDE, AppRoundResult, Change, Track, revised_pairs

from ._dom import Version, element_changed, selector_tokens
from ._render import Renderer

_BACKTICKED = re.compile(r"`([^`]+)`")
_ID_OR_CLASS = re.compile(r"(?<![\w`-])([#.][A-Za-z_][\w-]*)")
_CSS_DETAIL = re.compile(r"^\s*([^{}]+?)\s*\{")  # "nav {gap: 28px -> 12px}" names `nav`


def named_selectors(*texts: str) -> list[str]:
    """Selectors named in feedback lines, facts and transform details (backticked, `#id`, `.class`, a CSS rule's head).

    The page itself (`body`, `html`) counts only when nothing else is named: every revision changes the page, so
    naming it beside an element would tie the change to every task."""
    found: list[str] = []
    for text in texts:
        candidates = _BACKTICKED.findall(text) + _ID_OR_CLASS.findall(_BACKTICKED.sub(" ", text))
        head = _CSS_DETAIL.match(text)
        if head and "->" in text:
            candidates.append(head.group(1))
        found += [c.strip() for c in candidates if c.strip() and c.strip() not in found]
    found = list(dict.fromkeys(found))
    return [s for s in found if s not in PAGE_WIDE] or found


def track_of(result: AppRoundResult) -> Track:
    return Track(coder=result.coder, cua=result.cua, mode=result.mode, commenter_mode=result.commenter_mode or None)


def revision_changes(run_dir: Path, result: AppRoundResult, before: AppRoundResult, old: Version,
                     new: Version) -> list[Change]:
    """The changes of the revision that made `result`'s version (`new`, as loaded) from `before`'s (`old`)."""
    folder = run_dir / Path(result.html).parent
    revision = _read_json(folder / "revision.json")
    if revision is None or "kept" in revision:
        return []  # a kept version (its revision failed) changed nothing
    track = track_of(result)
    feedback = _read_json(run_dir / "apps" / result.app_id / track.folder / f"feedback-round-{before.round}.json") or {}
    prefix = f"{result.app_id}/{track}/r{result.round}"
    made_by_coder = bool(revision.get("transforms")) or bool(revision.get("offline"))
    reverted = (revision.get("contract") or {}).get("status") == "kept_after_retry" and not revision.get("changed")
    changes: list[Change] = []

    def diffed(selectors: list[str]) -> list[str]:
        return [s for s in selectors if element_changed(old, new, s)]

    for transform in revision.get("transforms") or []:
        elements = named_selectors(*transform.get("triggered_by", []), *transform.get("details", []))
        changed = diffed(elements)
        made = int(transform.get("changes") or 0)
        applied = made > 0 and not reverted and bool(revision.get("changed")) and (bool(changed) or not elements)
        how = (f"offline transform {transform['name']}: {made} change(s); DOM diff: {len(changed)} of {len(elements)} "
               "named element(s) changed" if applied else
               "reverted by the non-regression contract" if reverted and made else
               f"offline transform {transform['name']}: {made} change(s), none of its {len(elements)} named element(s) "
               "changed" if made else "offline transform found nothing to change")
        changes.append(Change(id=f"{prefix}/made-{transform['name']}", app_id=result.app_id, track=str(track),
                              round=result.round, revised_from=before.round, kind="made",
                              text="; ".join(transform.get("details") or []) or transform["name"],
                              transform=transform["name"], principle=transform.get("principle"), elements=elements,
                              changed_elements=changed, applied=applied, how=how, counted=True))
    for number, line in enumerate(feedback.get("actionable_changes") or [], 1):
        elements = named_selectors(line)
        changed = diffed(elements)
        how = (f"DOM diff: {len(changed)} of {len(elements)} named element(s) changed" if elements
               else "names no element: the DOM diff cannot tell")
        changes.append(Change(id=f"{prefix}/asked-{number}", app_id=result.app_id, track=str(track), round=result.round,
                              revised_from=before.round, kind="asked", text=line, principle=principle_of(line),
                              elements=elements, changed_elements=changed, applied=bool(changed), how=how,
                              counted=not made_by_coder))
    if not made_by_coder:
        changes += _unasked(prefix, result, before, track, old, new, changes)
    return changes


def _unasked(prefix: str, result: AppRoundResult, before: AppRoundResult, track: Track, old: Version, new: Version,
             asked: list[Change]) -> list[Change]:
    """What a model coder changed that nobody asked for: each element with an id whose markup, surroundings, rules or
    scripts changed and that no asked change named (kind `made`, no principle)."""
    named = {token for change in asked for element in change.elements for token in selector_tokens(element)}
    ids = sorted({f"#{tag['id']}" for version in (old, new) for tag in version.soup.find_all(id=True)} - named)
    found = []
    for element in ids:
        if element_changed(old, new, element):
            found.append(Change(id=f"{prefix}/made-{element[1:]}", app_id=result.app_id, track=str(track),
                                round=result.round, revised_from=before.round, kind="made",
                                text=f"{element} changed, unasked", elements=[element], changed_elements=[element],
                                applied=True, how="DOM diff: changed, and no asked change named it", counted=True))
    return found


@dataclass(frozen=True)
class Revision:
    """One revision of a run: the version it made, the one it revised, both as loaded, and its changes."""

    result: AppRoundResult
    before: AppRoundResult
    old: Version
    new: Version
    changes: list[Change]


async def revisions(run_dir: Path, results: list[AppRoundResult], renderer: Renderer) -> list[Revision]:
    """Every revision of the run with its changes, the versions compared as the agent met them (`Renderer`)."""
    found = []
    for result, before in revised_pairs(results):
        old = Version(await renderer.dom((run_dir / before.html).read_text(encoding="utf-8")))
        new = Version(await renderer.dom((run_dir / result.html).read_text(encoding="utf-8")))
        found.append(Revision(result=result, before=before, old=old, new=new,
                              changes=revision_changes(run_dir, result, before, old, new)))
    return found


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
