"""Input permissiveness: values can be typed, not only dragged or confirmed with a special key.

Both fixes are small injected scripts, because sliders and fields are often created by the
app's own scripts after load, where no static rewrite can reach; they are written without
globals or named functions so they never collide with the app's own.
"""

from __future__ import annotations

import re
from pathlib import Path

from ._document import AppDocument, TransformOutcome, script_calling

# Both scripts are function expressions, run once at load (see `script_calling`).
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
    changed = doc.inject_style("slider_companions", SLIDER_CSS)
    changed = doc.inject_script("slider_companions", script_calling(SLIDER_JS)) or changed
    if changed:
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
    if doc.inject_script("commit_typed_values", script_calling(COMMIT_JS)):
        outcome.note("fields that act on Enter also act when the agent moves on to another control")
    return outcome


def _scripts_text(doc: AppDocument) -> str:
    return "\n".join(s.get_text() for s in doc.soup.find_all("script") if not s.has_attr("data-aui"))
