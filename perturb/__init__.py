"""Serve-time changes of an app: variations (OpenApps' appearance and content), injected GUI defects, their proofs.

    variation_transform("dark+long", seed=0)          # the cua.PageTransform the browser applies (None: default)
    await prove_variant(html, verdicts, "popup", t)   # which tasks still pass their reference solutions on it
    await translate_app(html, client)                 # the `german` variation's texts (the translator role)
    resolve("dark+long")                              # its parts; a wrong name is a VariationError naming it

    defect_transform(make_defect("no-response", "#save", seed=1))       # one GTArena defect bound to one element
    await prove_defect(html, checker, solution, step, spec, clean_proven=True)   # observable, or dropped and why
    defect_set = await inject_defects([(spec, html)], types, per_app=2)  # planned, proven → defects.json
    await roll_out_dataset(run_dir, defect_set, apps)                    # labelled tuples on and off the defects

The browser environment only applies what it is given (`cua.BrowserConfig.transform`); what a
variation is, which ones exist and whether a variant keeps a task is decided here (design.md §11);
so is what a defect is (`_defects.py`: GTArena's taxonomy, bound to an element a task acts on),
whether it is observable (`_defect_proof.py`) and the labelled dataset of a defect set (`_dataset.py`).
"""

from ._catalogue import (
    DEFAULT,
    VARIATIONS,
    KeptForCheckers,
    Variation,
    VariationError,
    checker_reads,
    needed_roles,
    offline_variation_names,
    resolve,
    solution_prefix,
    variation_names,
    variation_transform,
)
from ._dataset import DATASET_DIR, DatasetTrajectory, dataset_folder, dataset_trajectories, roll_out_dataset
from ._defect_proof import DefectProof, prove_defect
from ._defects import (
    DEFECTS,
    DefectDesign,
    DefectError,
    DefectSpec,
    binds_to,
    defect_transform,
    defect_types,
    draw_params,
    make_defect,
)
from ._inject import DEFECTS_FILE, DefectRecord, DefectSet, inject_defects
from ._measure import changed_share, text_cells
from ._proof import VariantProof, VariantTask, prove_variant
from ._solution_policy import SolutionPolicy
from ._translate import (
    NO_TRANSLATOR,
    PROMPT_VERSION as TRANSLATOR_PROMPT_VERSION,
    TranslationError,
    Translations,
    parse_translations,
    translate_app,
)
from ._translate import (
    prompt_sha256 as translator_prompt_sha256,
)

__all__ = [
    "DATASET_DIR",
    "DEFAULT",
    "DEFECTS",
    "DEFECTS_FILE",
    "NO_TRANSLATOR",
    "TRANSLATOR_PROMPT_VERSION",
    "VARIATIONS",
    "binds_to",
    "changed_share",
    "checker_reads",
    "dataset_folder",
    "dataset_trajectories",
    "DatasetTrajectory",
    "DefectDesign",
    "defect_transform",
    "defect_types",
    "DefectError",
    "DefectProof",
    "DefectRecord",
    "DefectSet",
    "DefectSpec",
    "draw_params",
    "inject_defects",
    "KeptForCheckers",
    "make_defect",
    "needed_roles",
    "offline_variation_names",
    "parse_translations",
    "prove_defect",
    "prove_variant",
    "resolve",
    "roll_out_dataset",
    "solution_prefix",
    "SolutionPolicy",
    "text_cells",
    "translate_app",
    "TranslationError",
    "Translations",
    "translator_prompt_sha256",
    "VariantProof",
    "VariantTask",
    "Variation",
    "variation_names",
    "variation_transform",
    "VariationError",
]
