"""Offline rewrites of the app's markup, and the persistent status log.

`add_ids` edits the markup the file ships with. Transient messages are created by the app's
scripts at run time, which no static rewrite can see, so that fix is a tiny injected script
that watches the DOM, written without globals or named functions so it never collides with the
app's own.
"""

from __future__ import annotations

import re
from pathlib import Path

from bs4 import Tag

from ._document import MARKER, AppDocument, TransformOutcome, script_calling

_INTERACTIVE_TAGS = ["button", "a", "input", "select", "textarea", "summary"]
_INTERACTIVE_ROLES = {"button", "link", "tab", "menuitem", "switch", "checkbox", "radio", "option", "slider",
                      "spinbutton", "textbox", "combobox"}
_PREFIX = {"button": "btn", "a": "link", "input": "input", "select": "select", "textarea": "text", "summary": "toggle"}


def add_ids(doc: AppDocument) -> TransformOutcome:
    """Stable ids for interactive elements that lack one, and names for icon-only buttons.

    Ids come from what a user reads (aria-label, title, name, placeholder, text), so they are
    the same on every run and meaningful to a checker writer; clashes get `-2`, `-3`, ...
    """
    outcome = TransformOutcome()
    taken = {str(tag["id"]) for tag in doc.soup.find_all(id=True)}
    for tag in _interactive(doc):
        icon_only = (tag.name in ("button", "a") or tag.get("role") == "button") and not tag.get_text(strip=True) \
            and not (tag.get("aria-label") or "").strip() and not (tag.get("title") or "").strip()
        name = _name_from(tag) if icon_only else ""
        if not tag.get("id"):
            base = _slug(name or _label_text(tag)) or _slug(" ".join(tag.get("class") or [])) or "control"
            prefix = _PREFIX.get(tag.name, "control")
            candidate = (base if base.startswith(prefix + "-") else f"{prefix}-{base}")[:48].rstrip("-")
            element_id, number = candidate, 2
            while element_id in taken:
                element_id, number = f"{candidate[:44].rstrip('-')}-{number}", number + 1
            tag["id"] = element_id
            taken.add(element_id)
            outcome.note(f"<{tag.name}> id={element_id}")
        if name:
            tag["aria-label"] = name
            tag["title"] = name
            outcome.note(f"#{tag['id']} named {name!r}")
    return outcome


# The status log, run once at load (a function expression; see `script_calling`).
STATUS_JS = Path(__file__).with_name("_status_log.js").read_text(encoding="utf-8")

STATUS_CSS = """/* aui: persistent status */
#aui-status-log { position: fixed; right: 8px; bottom: 8px; z-index: 2147483000; max-width: 360px; margin: 0;
  padding: 6px 10px; list-style: none; background: #ffffff; color: #111111; border: 2px solid #111111;
  font: 14px/1.4 sans-serif; pointer-events: none; }
#aui-status-log:empty { display: none; }
#aui-status-log li:not(:last-child) { display: none; }
"""
# The app's own toasts are left as they are: forcing them visible would also show the ones that
# are hidden on load with their text already in the markup ("Saved!") before anything happened.


def persistent_status(doc: AppDocument) -> TransformOutcome:
    """Log the messages the app shows, as it shows them, in `#aui-status-log` (state visibility).

    Only what the app itself writes or reveals is copied (see `_status_log.js`); a message that
    is hidden on load stays hidden, so the log never shows a state the app did not reach.
    """
    outcome = TransformOutcome()
    changed = doc.inject_style("persistent_status", STATUS_CSS)
    changed = doc.inject_script("persistent_status", script_calling(STATUS_JS)) or changed
    if changed:
        outcome.note("messages the app shows are logged in #aui-status-log")
    return outcome


def _interactive(doc: AppDocument) -> list[Tag]:
    found = doc.soup.find_all(_INTERACTIVE_TAGS)
    found += [t for t in doc.soup.find_all(attrs={"role": True}) if t["role"] in _INTERACTIVE_ROLES]
    found += doc.soup.find_all(onclick=True) + doc.soup.find_all(contenteditable=True)
    # bs4 tags compare equal by content (two "<button>Add</button>"), so dedupe by identity.
    unique = {id(tag): tag for tag in found}.values()
    return [tag for tag in unique if not (tag.name == "input" and (tag.get("type") or "").lower() == "hidden")
            and not tag.has_attr(MARKER) and not any(p.has_attr(MARKER) for p in tag.parents if isinstance(p, Tag))]


def _label_text(tag: Tag) -> str:
    for attribute in ("aria-label", "title", "name", "placeholder", "alt"):
        value = tag.get(attribute)
        if isinstance(value, str) and value.strip():
            return value
    if tag.name == "input" and (tag.get("type") or "").lower() in ("button", "submit", "reset") and tag.get("value"):
        return str(tag["value"])
    text = " ".join(tag.get_text(" ", strip=True).split()[:5])
    return text or str(tag.get("data-action") or tag.get("value") or "")


def _name_from(tag: Tag) -> str:
    """A name for an icon-only control: its SVG title, id, click handler, action or class."""
    svg_title = tag.find("title")
    if svg_title is not None and svg_title.get_text(strip=True):
        return svg_title.get_text(strip=True)
    handler = re.match(r"\s*([A-Za-z_$][\w$]*)\s*\(", tag.get("onclick") or "")
    for source in (tag.get("id"), handler.group(1) if handler else None, tag.get("data-action"),
                   " ".join(c for c in tag.get("class") or [] if not re.fullmatch(r"(btn|button|icon)", c, re.I))):
        if not source:
            continue
        words = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(source))
        words = re.sub(r"^(btn|button|link|icon)[-_ ]+|[-_ ]+(btn|button|icon)$", "", words, flags=re.I)
        words = re.sub(r"[-_]+", " ", words).strip().lower()
        if words:
            return words[:1].upper() + words[1:]
    return ""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-")
