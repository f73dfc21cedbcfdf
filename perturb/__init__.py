"""Serve-time changes of an app: variations (OpenApps' appearance and content) and their proofs.

    variation_transform("dark+long", seed=0)          # the cua.PageTransform the browser applies (None: default)
    await prove_variant(html, verdicts, "popup", t)   # which tasks still pass their reference solutions on it
    await translate_app(html, client)                 # the `german` variation's texts (the translator role)
    resolve("dark+long")                              # its parts; a wrong name is a VariationError naming it

The browser environment only applies what it is given (`cua.BrowserConfig.transform`); what a
variation is, which ones exist and whether a variant keeps a task is decided here (design.md §11).
"""

from ._catalogue import (
    DEFAULT,
    TRANSLATED_ATTRIBUTES,
    KeptForCheckers,
    checker_reads,
    VARIATIONS,
    Variation,
    VariationError,
    needed_roles,
    offline_variation_names,
    resolve,
    solution_prefix,
    variation_names,
    variation_transform,
)
from ._measure import CELL, changed_cells, changed_share, text_cells
from ._proof import VariantProof, VariantTask, prove_variant
from ._translate import (
    PROMPT_VERSION as TRANSLATOR_PROMPT_VERSION,
    TranslationError,
    Translations,
    collect_texts,
    parse_translations,
    translate_app,
    translation_schema,
)
from ._translate import prompt_sha256 as translator_prompt_sha256

__all__ = [
    "CELL",
    "KeptForCheckers",
    "TRANSLATED_ATTRIBUTES",
    "checker_reads",
    "DEFAULT",
    "changed_cells",
    "changed_share",
    "text_cells",
    "TRANSLATOR_PROMPT_VERSION",
    "TranslationError",
    "Translations",
    "collect_texts",
    "parse_translations",
    "translate_app",
    "translation_schema",
    "translator_prompt_sha256",
    "VARIATIONS",
    "VariantProof",
    "VariantTask",
    "Variation",
    "VariationError",
    "needed_roles",
    "offline_variation_names",
    "prove_variant",
    "resolve",
    "solution_prefix",
    "variation_names",
    "variation_transform",
]
