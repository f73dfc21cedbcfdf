"""Did a change happen? Named elements compared between two versions of an app, by their markup and their CSS.

A coder's word is not evidence: a change counts as applied to an element when the element's markup
differs between the versions (tag, attributes, text; the element found by the same selector in both),
when something was put beside it or taken away (its parent's children differ: a typed companion
next to a slider), when a stylesheet rule that names it (its id, one of its classes, or the selector
itself) was added, removed or rewritten, when an inline script that names its id changed (the code
that handles it), or when it exists in only one of the versions. Page-wide selectors (`body`,
`html`, `:root`) compare the whole page's markup and stylesheets. A version loaded in Chromium also
carries the computed style of the elements asked for (`Version.styles`), which `insights._page` reads
for the changes naming by id or class cannot see.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, Tag
from soupsieve import SelectorSyntaxError

from results import PAGE_WIDE

_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_TOKEN = re.compile(r"([#.][A-Za-z_][\w-]*)")


def css_rules(css: str) -> list[tuple[str, str]]:
    """(selector list, declarations) of each innermost rule of `css`, comments left out, whitespace folded."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    return [(head.strip(), " ".join(body.split())) for head, body in _RULE.findall(css)]


def names_id_or_class(selector: str) -> bool:
    return bool(_TOKEN.findall(selector))


def selector_tokens(selector: str) -> frozenset[str]:
    """The ids and classes a selector names (`#swap`, `.btn`), or the bare selector when it names neither."""
    return frozenset(_TOKEN.findall(selector)) or frozenset({selector.strip()})


@dataclass(frozen=True)
class Version:
    """One version of an app, parsed once: its elements and its stylesheet rules; loaded, the computed style of the
    elements asked for (selector → property → value; a selector that found nothing is absent)."""

    html: str
    styles: Mapping[str, Mapping[str, str]] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        soup = BeautifulSoup(self.html, "html.parser")
        object.__setattr__(self, "soup", soup)
        object.__setattr__(self, "rules", css_rules("\n".join(style.get_text() for style in soup.find_all("style"))))
        object.__setattr__(self, "scripts", [" ".join(script.get_text().split()) for script in soup.find_all("script")])

    def element(self, selector: str) -> Tag | None:
        try:
            return self.soup.select_one(selector)  # type: ignore[attr-defined]
        except (SelectorSyntaxError, NotImplementedError, ValueError):
            return None

    def rules_naming(self, selector: str) -> frozenset[tuple[str, str]]:
        tokens = selector_tokens(selector)
        return frozenset((head, body) for head, body in self.rules  # type: ignore[attr-defined]
                         if any(_names(head, token) for token in tokens))

    def scripts_naming(self, selector: str) -> frozenset[str]:
        ids = [token[1:] for token in selector_tokens(selector) if token.startswith("#")]
        return frozenset(script for script in self.scripts if any(name in script for name in ids))  # type: ignore[attr-defined]


def _names(head: str, token: str) -> bool:
    """Whether a rule's selector list names `token` as a whole id/class/tag (not `#swap` inside `#swap-2`)."""
    return re.search(re.escape(token) + r"(?![\w-])", head) is not None and (
        token[0] in "#." or re.search(r"(?<![\w#.-])" + re.escape(token), head) is not None)


def _markup(tag: Tag) -> str:
    return " ".join(str(tag).split())


def _beside(tag: Tag) -> list[tuple[str, str | None]]:
    parent = tag.parent
    return [] if parent is None else [(child.name, child.get("id")) for child in parent.find_all(recursive=False)]


def element_changed(before: Version, after: Version, selector: str) -> bool | None:
    """Whether the element `selector` names changed from `before` to `after` (markup or its CSS rules);
    None when neither version has it and no rule names it (nothing to compare)."""
    selector = selector.strip()
    if selector in PAGE_WIDE:
        return _markup(before.soup) != _markup(after.soup) or before.rules != after.rules  # type: ignore[attr-defined]
    old, new = before.element(selector), after.element(selector)
    old_rules, new_rules = before.rules_naming(selector), after.rules_naming(selector)
    if old is None and new is None and not old_rules and not new_rules:
        return None
    if (old is None) != (new is None):
        return True
    if old is not None and (_markup(old) != _markup(new) or _beside(old) != _beside(new)):
        return True
    return old_rules != new_rules or before.scripts_naming(selector) != after.scripts_naming(selector)
