"""The variations by name (OpenApps' idea: the same app and tasks, another look or other words).

A variation is a deterministic, named change of any app version made when it is served: CSS for
the appearance ones, a script for the content ones (`_content.js`), both in one
`cua.PageTransform`. Names compose with `+` (`dark+long`: the styles in order, then the scripts
in order); a seed fixes everything a content variation draws (which sentence, which control a
tooltip misnames, where decoys go), so a variant is the same page in every rollout and repeat.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from apps_prompts import SolutionStep
from cua import INJECTED_ATTRIBUTE, PageTransform
from llm import Registry
from verifier import AppVerdicts, compile_checker

from . import _appearance as appearance
from . import _texts as texts

DEFAULT = "default"
"""The app as it is: no transform."""

_CONTENT_JS = Path(__file__).with_name("_content.js").read_text(encoding="utf-8")


class VariationError(ValueError):
    """A variation name (or what it needs) is wrong; the message names the part and the known names."""


@dataclass(frozen=True)
class Variation:
    """One named change of how an app looks (`appearance`: CSS only) or what it says (`content`: a script)."""

    name: str
    kind: Literal["appearance", "content"]
    summary: str
    style: str = ""
    content: dict[str, Any] | None = None
    """The op `_content.js` runs (its texts included), without the seed."""
    needs_role: str | None = None
    """The model role it needs (the `german` variation's translator); refused offline."""
    solution_prefix: tuple[SolutionStep, ...] = field(default=())
    """Steps a reference solution takes first on this variation (dismissing the pop-up)."""


VARIATIONS: Registry[Variation] = Registry("variation")


def _add(variation: Variation) -> None:
    VARIATIONS.add(variation.name, variation)


_add(Variation("dark", "appearance", "dark theme: lightness inverted, hues and pictures kept", style=appearance.DARK))
_add(Variation("black-white", "appearance", "grayscale at high contrast: colour-only state is lost",
               style=appearance.BLACK_WHITE))
_add(Variation("hard-font", "appearance", "a decorative script font with tighter spacing", style=appearance.HARD_FONT))
_add(Variation("zoom-125", "appearance", "the page at 125 % (layout reflows)", style=appearance.zoom(1.25)))
_add(Variation("zoom-80", "appearance", "the page at 80 % (layout reflows)", style=appearance.zoom(0.8)))
_add(Variation("long", "content", "long descriptive text in headings and before each group of controls",
               content={"op": "long", "heading_tails": texts.HEADING_TAILS, "paragraphs": texts.PARAGRAPHS}))
_add(Variation("misleading", "content", "tooltips and helper texts that describe the wrong control",
               content={"op": "misleading", "tooltips": texts.TOOLTIPS, "helpers": texts.HELPERS}))
_add(Variation("adversarial", "content", "a banner and decoy buttons telling the agent to do something else",
               content={"op": "adversarial", "banners": texts.BANNERS, "decoy_labels": texts.DECOY_LABELS,
                        "decoys": 3}))
_add(Variation("popup", "content", "a modal over the page at load that must be dismissed",
               content={"op": "popup", "messages": [list(m) for m in texts.POPUP_MESSAGES],
                        "accept": texts.POPUP_ACCEPT, "dismiss": texts.POPUP_DISMISS},
               solution_prefix=(SolutionStep(action="click", selector=f'[{INJECTED_ATTRIBUTE}="popup-close"]'),)))
_add(Variation("german", "content", "visible UI text translated into German (needs the translator role)",
               content={"op": "german"}, needs_role="translator"))


def variation_names() -> list[str]:
    """Every single variation's name (compose them with `+`), `default` first."""
    return [DEFAULT, *VARIATIONS.names()]


def offline_variation_names() -> list[str]:
    """The variations that need no model: `default` and every one without a `needs_role`."""
    return [name for name in variation_names() if name == DEFAULT or VARIATIONS.get(name).needs_role is None]


def resolve(name: str) -> list[Variation]:
    """The parts of a (composed) variation name, in order; [] for `default`.

    Raises:
        VariationError: a part is unknown (the known names are listed), repeated or empty, or
            `default` is composed with something.
    """
    if not isinstance(name, str) or not name.strip():
        raise VariationError("a variation name is empty; known: " + ", ".join(variation_names()))
    parts = [part.strip() for part in name.split("+")]
    if parts == [DEFAULT]:
        return []
    if DEFAULT in parts:
        raise VariationError(f"variation {name!r}: '{DEFAULT}' is the app as it is and composes with nothing")
    if len(set(parts)) < len(parts) or "" in parts:
        raise VariationError(f"variation {name!r}: each part once, none empty (e.g. 'dark+long')")
    if (unknown := next((part for part in parts if part not in VARIATIONS), None)) is not None:
        raise VariationError(f"unknown variation {unknown!r} in {name!r}; known: {', '.join(variation_names())} "
                             "(compose with '+', e.g. 'dark+long')")
    return [VARIATIONS.get(part) for part in parts]


def needed_roles(name: str) -> list[str]:
    """The model roles a (composed) variation needs (e.g. ['translator'] for anything with `german`)."""
    return sorted({part.needs_role for part in resolve(name) if part.needs_role})


def solution_prefix(name: str) -> list[SolutionStep]:
    """What a reference solution does first on this variation (e.g. dismiss the pop-up)."""
    return [step for part in resolve(name) for step in part.solution_prefix]


class KeptForCheckers(BaseModel):
    """What an app version's checkers read: elements (CSS selectors) and attribute names."""

    model_config = ConfigDict(frozen=True)

    selectors: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()


def checker_reads(verdicts: AppVerdicts) -> KeptForCheckers:
    """The selectors the valid checkers name and the translatable attributes their text mentions."""
    selectors: dict[str, None] = {}
    attributes = set()
    for verdict in verdicts.verdicts:
        if not verdict.checker_valid or not verdict.checker_source:
            continue
        try:
            compiled = compile_checker(verdict.checker_source, verdict.checker_kind)
        except Exception:  # a checker that compiled at the gate compiles here; whatever else: nothing kept for it
            continue
        selectors.update(dict.fromkeys(compiled.selectors))
        attributes |= {a for a in TRANSLATED_ATTRIBUTES if a in verdict.checker_source}
    return KeptForCheckers(selectors=tuple(selectors), attributes=tuple(sorted(attributes)))


def _op_seed(seed: int, part: str) -> int:
    """A 32-bit seed per part, so `dark+long` and `long` with one seed draw the same words. (Not `_defects`'
    derived_seed, the same derivation: importing that module would put cua, Pillow with it, in the code and
    packages the variation proofs' cache follows.)"""
    digest = hashlib.sha256(f"{int(seed)}:{part}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


TRANSLATED_ATTRIBUTES = ("placeholder", "title", "aria-label", "alt")
"""The attributes the `german` variation translates (people read them); every other attribute is kept."""


def variation_transform(name: str, seed: int = 0, translations: dict[str, str] | None = None, *,
                        keep: KeptForCheckers | None = None) -> PageTransform | None:
    """The serve-time transform of a (composed) variation with its seed; None for `default`.

    `translations` (original visible text → translated) is what the `german` part applies; the
    translator makes it (`perturb.translate_app`). `keep` (`checker_reads(verdicts)`) names what
    the app's checkers read: the `german` part leaves the text inside those elements, and those
    attributes, as they are, so a checker reads what it was written for.

    Raises:
        VariationError: the name is wrong, or `german` is asked for without translations.
    """
    parts = resolve(name)
    if not parts:
        return None
    ops = []
    for part in parts:
        if part.content is None:
            continue
        op = {**part.content, "seed": _op_seed(seed, part.name)}
        if part.name == "german":
            if translations is None:
                raise VariationError(f"variation {name!r}: 'german' needs the app's translations (the translator role)")
            op["translations"] = dict(translations)
            op["keep_selectors"] = list(keep.selectors) if keep else []
            op["attributes"] = [a for a in TRANSLATED_ATTRIBUTES if not keep or a not in keep.attributes]
        ops.append(op)
    style = "".join(part.style for part in parts)
    label = name if not ops else f"{name}@seed={int(seed)}"
    return PageTransform(name=label, style=style, script=_CONTENT_JS if ops else None,
                         args=[ops, INJECTED_ATTRIBUTE] if ops else [])
