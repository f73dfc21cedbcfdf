"""The LLM coder's prompts, in our own words, carrying the paper's requirements.

`PROMPT_VERSION` is recorded with every version the coder writes: change it when the text below
changes, so readers can tell the wordings apart. (Cached generations made with older wording are
never reused: the stages' cache keys cover this file itself, `flows._cache`.) The viewport the app must fit is
the run's (`RevisionRequest.viewport`, `generate(viewport=...)`); at `cua.DEFAULT_VIEWPORT` the
text is the same as before the viewport could be configured.
"""

from __future__ import annotations

from collections.abc import Sequence

from apps_prompts import AppSpec
from cua import DEFAULT_VIEWPORT, Viewport
from llm import Message, system_message, user_message

from ._models import ContractResult, Feedback, Regression, RevisionMode, UnsupportedTask

PROMPT_VERSION = "coder-v2"

SYSTEM = """You are a front-end engineer who builds complete, working single-page web apps.
Every answer is one self-contained HTML file, in one ```html code block, and nothing is left out."""


def requirements(viewport: Viewport = DEFAULT_VIEWPORT) -> str:
    """What every generated or revised file must be, for an app shown in `viewport`."""
    return f"""Requirements for the file:
- One self-contained HTML file: all CSS in <style>, all JavaScript in <script>, no build step.
- No external libraries, fonts, images, CDNs or network requests of any kind; draw icons with inline SVG or text.
- Every interactive element (buttons, inputs, selects, toggles, links that act, canvas controls) has a unique, descriptive id.
- The app works in a {viewport} browser viewport; its main controls are visible without scrolling where possible.
- State changes show in the page at once (text, classes, attributes), not only in colours or animations.
- The app starts in a neutral, predictable state on every load (no randomness unless the app is a game that needs it; then seed it).
- The file must be complete: it starts with <!DOCTYPE html> and ends with </html>."""


def style_rules(viewport: Viewport = DEFAULT_VIEWPORT) -> str:
    """The agent-centric style rules (de-stylisation), for an app shown in `viewport`."""
    return f"""Agent-friendly style (follow it even where the app's theme says otherwise):
- Plain, solid colours with strong text contrast; no gradients, shadows, blur or decorative images.
- No animations or transitions; state changes apply at once.
- Click targets at least 44x44 px, with visible text labels; icon-only buttons get a text label too.
- Every range slider has a number input and -/+ step buttons beside it that set the same value.
- Menus, tooltips and tools are visible without hovering; nothing important appears only on hover.
- All critical controls fit inside a {viewport} viewport without scrolling; keep spacing compact.
- Status and error messages stay on screen (a persistent status line), not in toasts that vanish."""


STYLE_BLOCK = style_rules()
"""The style block at `cua.DEFAULT_VIEWPORT`."""

REVISION_RULES = """Rules for this revision:
- Keep input validation permissive: accept reasonable variants (case, spaces, units, separators) instead of rejecting them.
- Start no flow by itself on load: nothing plays, advances, submits or opens until the user acts.
- Change surgically: touch only what this message names (regressions, tasks, feedback, style rules) and keep everything else as it is.
- Add no confirmation steps (dialogs, "are you sure?", extra clicks) to actions that work without them.
- Never show a state without the state change behind it: status text, counters and badges change only in the code that really changes the data, when it does."""

_MODE_INTRO = {
    "unsupported": "Some user tasks cannot be done with the current version. Add what they need.",
    "cua": "A computer-use agent tried tasks on the current version and failed. "
    "Reviewers studied its attempts; apply their feedback.",
    "integrated": "Some user tasks cannot be done with the current version, and a computer-use agent "
    "failed other tasks. Add what the unsupported tasks need and apply the reviewers' feedback.",
}


def generation_messages(app: AppSpec, viewport: Viewport = DEFAULT_VIEWPORT) -> list[Message]:
    """The messages that ask for the first version of `app`, to be shown in `viewport`."""
    user = (
        f"Build this {app.domain.value} web app.\n\n"
        f"{app.prompt_text().strip()}\n\n"
        f"{requirements(viewport)}\n\n"
        "Answer with the complete HTML file in one ```html code block."
    )
    return [system_message(SYSTEM), user_message(user)]


def revision_messages(
    mode: RevisionMode,
    app: AppSpec,
    html: str,
    unsupported: list[UnsupportedTask],
    feedback: list[str],
    contract: ContractResult,
    style_block: bool,
    regressions: Sequence[Regression] = (),
    viewport: Viewport = DEFAULT_VIEWPORT,
) -> list[Message]:
    """The messages of one revision; `feedback` is already merged and de-duplicated.

    `style_block` is the resolved choice (see `RevisionRequest.resolved_style_block`); the
    revision rules are sent in every mode, and `regressions` (if any) come first, to fix first.
    The requirements and the style block ask for an app that fits `viewport`.
    """
    parts = [
        f"You wrote this {app.domain.value} web app earlier. {_MODE_INTRO[mode]}",
        f"The app's brief:\n{app.prompt_text().strip()}",
    ]
    if regressions:
        lines = [f"- [{r.task_id}] {r.description}" + (f"\n  What the agent did now: {r.agent_attempt}" if r.agent_attempt else "")
                 for r in regressions]
        parts.append("Fix these first: they worked before your last change and fail now.\n" + "\n".join(lines))
    if unsupported:
        lines = [f"- [{t.task_id}] {t.description}" + (f"\n  Why it is not supported: {t.reason}" if t.reason else "")
                 for t in unsupported]
        parts.append("Tasks the current version does not support:\n" + "\n".join(lines))
    if feedback:
        parts.append("Reviewer feedback from the failed attempts:\n" + "\n".join(f"- {line}" for line in feedback))
    parts += [requirements(viewport), style_rules(viewport) if style_block else "", REVISION_RULES,
              _contract_text(contract), f"The current version:\n```html\n{html.strip()}\n```",
              "Answer with the complete revised HTML file in one ```html code block."]
    return [system_message(SYSTEM), user_message("\n\n".join(p for p in parts if p))]


def html_retry_text(attempt: int, truncated: bool) -> str:
    """Follow-up after a reply that stopped before </html> (`truncated`) or held no HTML document; the attempt
    number keeps cache keys apart."""
    if truncated:
        return (f"(Attempt {attempt}.) Your previous answer was cut off before </html>. Send the whole file again, "
                "complete this time: keep it compact (short CSS, no comments, no repeated markup) so it fits.")
    return (f"(Attempt {attempt}.) Your previous answer held no HTML document. Reply with the complete app as one "
            "```html code block, from <!DOCTYPE html> to </html>, and nothing else.")


def contract_retry_text(missing_ids: list[str], missing_functions: list[str]) -> str:
    """Follow-up listing what the revision dropped."""
    lines = ["Your revision dropped things the existing tests rely on. Put them back and keep them working:"]
    if missing_ids:
        lines.append("Element ids that must exist again: " + ", ".join(f"#{i}" for i in missing_ids))
    if missing_functions:
        lines.append("Named functions that must exist again: " + ", ".join(f"{f}()" for f in missing_functions))
    lines.append("Keep every other change. Answer with the complete HTML file in one ```html code block.")
    return "\n".join(lines)


def _contract_text(contract: ContractResult) -> str:
    if not contract.protected_ids and not contract.protected_functions:
        return ""
    lines = ["Do not break what already works:"]
    if contract.protected_ids:
        lines.append("- Keep these element ids, on elements with the same role: "
                     + ", ".join(f"#{i}" for i in contract.protected_ids))
    if contract.protected_functions:
        lines.append("- Keep these named functions (you may change their bodies): "
                     + ", ".join(contract.protected_functions))
    return "\n".join(lines)


def merge_feedback(feedback: list[Feedback], viewport: Viewport = DEFAULT_VIEWPORT) -> list[str]:
    """One de-duplicated list of feedback lines from many failed rollouts, most actionable first
    (a `fit_within_screen` request names `viewport`)."""
    lines = [change.strip() for item in feedback for change in item.actionable_changes]
    lines += [f"Issue: {issue.strip()}" for item in feedback for issue in item.issues]
    lines += [f"GUI defect: {defect.strip()}" for item in feedback for defect in item.defects]
    by_kind: dict[str, list[str]] = {}
    for item in feedback:
        for fact in item.facts:
            by_kind.setdefault(fact.kind, [])
            where = fact.selector or fact.detail
            if where and where not in by_kind[fact.kind]:
                by_kind[fact.kind].append(where)
    for kind, places in by_kind.items():
        shown = ", ".join(places[:4]) + (f" (+{len(places) - 4} more)" if len(places) > 4 else "")
        lines.append(f"Measured {kind.replace('_', ' ')}" + (f": {shown}" if shown else ""))
    if any(item.fit_within_screen for item in feedback):
        lines.append(f"Bring every control the tasks need inside the {viewport} viewport without scrolling.")
    if any(item.avoid_regressions for item in feedback):
        lines.append("Parts of the app already work for the agent: keep them, with their ids and functions.")
    merged: dict[str, str] = {}  # the first wording of each line, ignoring case and spacing
    for line in filter(None, lines):
        merged.setdefault(" ".join(line.lower().split()), line)
    return list(merged.values())
