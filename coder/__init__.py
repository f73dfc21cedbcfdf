"""The coder: first versions of apps, the three revision modes, and the non-regression contract.

    coder = get_coder("gpt-5", client)          # an LLM coder; get_coder("offline") needs no model
    v0 = await coder.generate(app)              # viewport=...: the run's window (cua.DEFAULT_VIEWPORT)
    v1 = await coder.revise(RevisionRequest(mode="integrated", app=app, html=v0.html,
                                            unsupported=[...], feedback=[...], checkers=[...],
                                            regressions=[...]))   # style_block: None = the mode's default;
                                                                  # viewport: the size the app must fit
    v1.contract.status                          # "kept" | "kept_after_retry" | "violated"
"""

from ._contract import checker_ids, named_functions, plan_contract, protected_ids
from ._document import MARKER as INJECTED_MARK  # the attribute naming each <style>/<script> a transform injects
from ._extract import extract_html
from ._llm import LLMCoder
from ._models import (
    AppliedTransform,
    Coder,
    CoderError,
    CoderUsage,
    ContractResult,
    Feedback,
    GenerationResult,
    HtmlExtractionError,
    MeasuredFact,
    Regression,
    RevisionMode,
    RevisionRequest,
    RevisionResult,
    UnsupportedTask,
    style_block_default,
)
from ._offline import OFFLINE_VERSION, OfflineCoder
from ._plan import PRINCIPLES, TRANSFORMS, plan_transforms, principle_of
from ._prompts import PROMPT_VERSION, REVISION_RULES, STYLE_BLOCK
from ._registry import CODERS, get_coder

__all__ = [
    "CODERS",
    "INJECTED_MARK",
    "OFFLINE_VERSION",
    "PRINCIPLES",
    "PROMPT_VERSION",
    "REVISION_RULES",
    "STYLE_BLOCK",
    "TRANSFORMS",
    "AppliedTransform",
    "Coder",
    "CoderError",
    "CoderUsage",
    "ContractResult",
    "Feedback",
    "GenerationResult",
    "HtmlExtractionError",
    "LLMCoder",
    "MeasuredFact",
    "OfflineCoder",
    "Regression",
    "RevisionMode",
    "RevisionRequest",
    "RevisionResult",
    "UnsupportedTask",
    "checker_ids",
    "extract_html",
    "get_coder",
    "named_functions",
    "plan_contract",
    "plan_transforms",
    "principle_of",
    "protected_ids",
    "style_block_default",
]
