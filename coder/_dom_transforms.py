"""Offline rewrites of the app's markup, and the fixes that are injected scripts.

`add_ids` edits the markup the file ships with. Transient messages, sliders and fields are often
created by the app's own scripts after load, which no static rewrite can see, so the persistent
status log and the input-permissiveness fixes (values can be typed, not only dragged or confirmed
with a special key) are small injected scripts, written without globals or named functions so
they never collide with the app's own.
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
    if doc.inject("persistent_status", STATUS_CSS, script_calling(STATUS_JS)):
        outcome.note("messages the app shows are logged in #aui-status-log")
    return outcome


# The slider and commit scripts are function expressions, run once at load (see `script_calling`).
SLIDER_JS = Path(__file__).with_name("_slider_companions.js").read_text(encoding="utf-8")

SLIDER_CSS = """/* aui: slider companions */
.aui-range-group { display: inline-flex; flex-wrap: wrap; align-items: center; gap: 4px; max-width: 100%; }
.aui-range-group > input[type=range] { flex: 1 1 80px; min-width: 60px; }
.aui-stepper { display: inline-flex; align-items: center; gap: 2px; }
.aui-stepper .aui-step { min-width: 44px; min-height: 44px; font-size: 18px; background: #ffffff; color: #111111;
  border: 1px solid #555555; border-radius: 4px; cursor: pointer; }
.aui-stepper .aui-number { width: 64px; min-height: 44px; font-size: 15px; background: #ffffff; color: #111111;
  border: 1px solid #555555; border-radius: 4px; padding: 0 4px; }
"""


def slider_companions(doc: AppDocument) -> TransformOutcome:
    """Number inputs and step buttons beside sliders (input permissiveness)."""
    outcome = TransformOutcome()
    static = doc.soup.find_all("input", attrs={"type": re.compile("^range$", re.I)})
    scripted = len(re.findall(r"""type\s*=\s*\\?["']?range|\.type\s*=\s*["']range""", _scripts_text(doc)))
    if not static and not scripted:
        return outcome
    outcome.details += ["a slider without an id gets one at run time" for slider in static if not slider.get("id")]
    if doc.inject("slider_companions", SLIDER_CSS, script_calling(SLIDER_JS)):
        outcome.note(f"number input and -/+ buttons for {len(static)} sliders in the markup"
                     + (" and sliders the scripts create" if scripted else ""), max(1, len(static)))
    return outcome


COMMIT_JS = Path(__file__).with_name("_commit_typed_values.js").read_text(encoding="utf-8")
_ENTER_HANDLING = re.compile(r"""['"]Enter['"]|keyCode\s*===?\s*13|which\s*===?\s*13""")


def commit_typed_values(doc: AppDocument) -> TransformOutcome:
    """Fields that act only on Enter also act when left for another control (input permissiveness)."""
    outcome = TransformOutcome()
    if not _ENTER_HANDLING.search(_scripts_text(doc)):
        return outcome  # nothing in the app waits for Enter
    if doc.inject("commit_typed_values", script=script_calling(COMMIT_JS)):
        outcome.note("fields that act on Enter also act when the agent moves on to another control")
    return outcome


def _scripts_text(doc: AppDocument) -> str:
    return "\n".join(s.get_text() for s in doc.soup.find_all("script") if not s.has_attr(MARKER))


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
