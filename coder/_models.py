"""The coder's seam: the interface every coder implements (`Coder`; the registry is in `_registry.py`), what a
revision is asked to do, and what generation and revision return.

The flows build a `RevisionRequest` from the verifier's verdicts (unsolvable tasks with reasons)
and the commenter's feedback (merged per app from failed rollouts); every coder, LLM or offline,
answers with a `RevisionResult` carrying the non-regression `ContractResult`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, Field, field_validator

from apps_prompts import AppSpec
from cua import DEFAULT_VIEWPORT, Viewport
from llm import PicklesKeywordFields


RevisionMode = Literal["unsupported", "cua", "integrated"]
"""What a revision is driven by (design.md §7): the tasks the verifier found no valid checker for, with its
reasons (`unsupported`); the commenter's feedback on failed CUA rollouts (`cua`); both (`integrated`). The one
definition: the experiment's `revision_modes` and every coder take these names."""


def style_block_default(mode: RevisionMode | str) -> bool:
    """Whether a revision in `mode` de-stylises (adds the agent-centric style block) unless told otherwise.

    The paper's setting: on for the `cua` and `integrated` modes, whose feedback comes from the
    agent's attempts, and off for `unsupported`, which only adds what missing tasks need.

    Raises:
        ValueError: `mode` is not a revision mode.
    """
    if mode not in get_args(RevisionMode):
        raise ValueError(f"{mode!r} is not a revision mode ({', '.join(get_args(RevisionMode))})")
    return mode in ("cua", "integrated")


class UnsupportedTask(BaseModel):
    """A task the current version cannot support, and why the verifier said so."""

    task_id: str
    description: str
    reason: str = ""


class Regression(BaseModel):
    """A task that passed in the previous round and fails on the current version."""

    task_id: str
    description: str
    agent_attempt: str = Field(
        default="", description="What the agent did on the current version, when known (its last actions, how it ended)."
    )


class MeasuredFact(BaseModel):
    """One measured problem on the page (the offline commenter's raw observations).

    `kind` is a short tag such as `offscreen`, `small_target`, `low_contrast`, `missing_id`,
    `slider_only`, `animation`, `hover_only`, `transient_status`, `no_effect`.
    """

    kind: str
    selector: str | None = None
    detail: str = ""


# The offline commenter's measured-facts object (commenter.OfflineFacts): list fields
# and the fact kind each becomes. `live_regions` is not a problem, so it is not listed.
OFFLINE_FACT_KINDS = {
    "off_viewport_controls": "offscreen",
    "task_controls_off_viewport": "offscreen",
    "obscured_controls": "obscured",
    "small_targets": "small_target",
    "missing_ids": "missing_id",
    "slider_only_inputs": "slider_only",
    "animations": "animation",
    "transitions": "animation",
    "low_contrast": "low_contrast",
    "unnamed_controls": "unnamed",
    "toast_like": "toast",
    "transient_status": "transient_status",
    "no_effect_steps": "no_effect",
}


class Feedback(BaseModel):
    """Commenter feedback as the coder reads it: the commenter's merged JSON per app.

    Unknown fields are ignored, so `Feedback.model_validate(commenter_feedback.model_dump())`
    works; `facts` also accepts the offline commenter's measured-facts objects and flattens them.
    """

    issues: list[str] = Field(default_factory=list)
    actionable_changes: list[str] = Field(default_factory=list)
    fit_within_screen: bool = Field(
        default=False, description="True when the revision must bring the task controls inside the viewport "
        "(`RevisionRequest.viewport`)."
    )
    avoid_regressions: bool = Field(default=False, description="True when working parts must be kept.")
    facts: list[MeasuredFact] = Field(default_factory=list)
    defects: list[str] = Field(default_factory=list, description="GUI defects a detector found in the failed "
                               "rollouts' steps (`--feedback +defects`), one statement each.")
    task_id: str | None = None
    """The failed task this feedback came from, when known."""

    @field_validator("facts", mode="before")
    @classmethod
    def _flatten_offline_facts(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        flat: list[Any] = []
        for item in value:
            if hasattr(item, "model_dump"):
                item = item.model_dump()
            if isinstance(item, dict) and "kind" not in item:
                flat += _facts_from_measurements(item)
            else:
                flat.append(item)
        return flat


def _facts_from_measurements(measured: dict[str, Any]) -> list[MeasuredFact]:
    facts = []
    for key, kind in OFFLINE_FACT_KINDS.items():
        for element in measured.get(key) or []:
            if not isinstance(element, dict):
                continue
            detail = element.get("detail") or element.get("text") or element.get("name") or element.get("action") or ""
            facts.append(MeasuredFact(kind=kind, selector=element.get("selector"), detail=str(detail)[:120]))
    return facts


class RevisionRequest(BaseModel):
    """One revision of one app version."""

    mode: RevisionMode
    app: AppSpec
    html: str = Field(description="The current version's full HTML.")
    unsupported: list[UnsupportedTask] = Field(
        default_factory=list, description="Used by the `unsupported` and `integrated` modes."
    )
    feedback: list[Feedback] = Field(
        default_factory=list, description="Commenter feedback of failed rollouts; used by `cua` and `integrated`."
    )
    checkers: list[str] = Field(
        default_factory=list,
        description="The current valid checkers (JS bodies); the ids they use are protected by the contract.",
    )
    protected_ids: list[str] = Field(default_factory=list, description="Extra ids that must survive.")
    regressions: list[Regression] = Field(
        default_factory=list, description="Tasks that passed in the previous round and fail now; fixed first, in every mode."
    )
    style_block: bool | None = Field(
        default=None,
        description="Add the agent-centric style requirements; None means the paper's default for the mode "
        "(`style_block_default`), True or False overrides it.",
    )
    viewport: Viewport = Field(
        default=DEFAULT_VIEWPORT,
        description="The browser viewport the agent uses the app in (the run's): the prompt asks for an app that "
        "fits it, and the offline rewrites fit the app to it.",
    )

    omit_principles: list[str] = Field(
        default_factory=list,
        description="An ablation: changes answering to these principles are left out (the offline coder skips their "
        "transforms; the feedback reaching any coder is filtered by whoever builds the request).",
    )
    omit_transforms: list[str] = Field(default_factory=list, description="An ablation: offline transforms left out.")

    def omits(self, transform: str, principle: str) -> bool:
        """Whether an ablation leaves out `transform` (by its name or its principle)."""
        return transform in self.omit_transforms or principle in self.omit_principles

    def resolved_style_block(self) -> bool:
        """Whether this revision de-stylises: the explicit `style_block`, else the mode's default."""
        return style_block_default(self.mode) if self.style_block is None else self.style_block

    def has_inputs(self) -> bool:
        """True when there is something to fix: regressions, or unsupported tasks or feedback this mode acts on.

        The style block alone is not an input unless it was asked for explicitly (`style_block=True`):
        a version without failures or unsupported tasks is carried over, not restyled by default.
        """
        feedback = any(item.issues or item.actionable_changes or item.facts or item.defects or item.fit_within_screen
                       or item.avoid_regressions for item in self.active_feedback())
        return bool(self.regressions or self.active_unsupported() or feedback)

    def needs_revision(self) -> bool:
        """True when a coder should change the version at all: `has_inputs()`, or an explicit style block."""
        return self.has_inputs() or self.style_block is True

    def active_unsupported(self) -> list[UnsupportedTask]:
        """The unsupported tasks this mode acts on."""
        return self.unsupported if self.mode in ("unsupported", "integrated") else []

    def active_feedback(self) -> list[Feedback]:
        """The feedback this mode acts on."""
        return self.feedback if self.mode in ("cua", "integrated") else []


ContractStatus = Literal["kept", "kept_after_retry", "violated"]


class ContractResult(BaseModel):
    """The non-regression contract's outcome for one revision (shown in the report)."""

    protected_ids: list[str] = Field(default_factory=list)
    protected_functions: list[str] = Field(default_factory=list)
    unchecked_ids: list[str] = Field(
        default_factory=list,
        description="Checker ids that the current version only creates at run time from computed strings; "
        "they cannot be checked in the source and are not enforced.",
    )
    missing_ids: list[str] = Field(default_factory=list, description="Missing in the final version.")
    missing_functions: list[str] = Field(default_factory=list, description="Missing in the final version.")
    first_missing_ids: list[str] = Field(default_factory=list, description="Missing before the retry, if any.")
    first_missing_functions: list[str] = Field(default_factory=list)
    retried: bool = False
    status: ContractStatus = "kept"

    @property
    def kept(self) -> bool:
        return self.status != "violated"


class CoderUsage(BaseModel):
    """Model use of one coder call (zeros for offline coders)."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0


class AppliedTransform(BaseModel):
    """One deterministic rewrite the offline coder applied, and why."""

    name: str
    principle: str
    triggered_by: list[str] = Field(default_factory=list, description="The feedback lines or facts behind it.")
    changes: int = Field(default=0, description="How many elements or rules it changed.")
    details: list[str] = Field(default_factory=list)


class GenerationResult(BaseModel):
    """An initial version (v0) of an app."""

    app_id: str
    html: str
    coder: str
    model: str | None = None
    offline: bool = False
    source: str = Field(description="Where the HTML came from: 'model', 'reference:<path>' or 'v0-dir:<path>'.")
    prompt_version: str
    attempts: int = 1
    truncated_attempts: int = 0
    usage: CoderUsage = Field(default_factory=CoderUsage)


class RevisionResult(BaseModel):
    """A revised version and the record of how it was made.

    When the contract is still violated after the retry, `html` is the retry's output and
    `contract.status` is `violated`: the caller decides whether to keep the previous version.
    """

    app_id: str
    mode: RevisionMode
    html: str
    coder: str
    model: str | None = None
    offline: bool = False
    prompt_version: str
    style_block: bool = Field(default=False, description="Whether the revision was asked to de-stylise (resolved).")
    contract: ContractResult
    regression_task_ids: list[str] = Field(default_factory=list, description="The regressions the revision was told of.")
    unsupported_task_ids: list[str] = Field(default_factory=list)
    feedback_lines: int = Field(default=0, description="Merged feedback lines the revision acted on.")
    transforms: list[AppliedTransform] = Field(default_factory=list, description="Offline coder only.")
    changed: bool = Field(default=True, description="False when the HTML is byte-identical to the input.")
    attempts: int = 1
    truncated_attempts: int = 0
    usage: CoderUsage = Field(default_factory=CoderUsage)


class CoderError(RuntimeError):
    """A coder could not produce an app version; the message says which app, model or file."""


class HtmlExtractionError(PicklesKeywordFields, CoderError):
    """A model reply held no complete HTML document."""

    def __init__(self, message: str, *, model: str | None, truncated: bool, excerpt: str = "") -> None:
        super().__init__(message)
        self.model = model
        self.truncated = truncated
        """True when the reply looked like HTML cut off before `</html>` (worth a retry)."""
        self.excerpt = excerpt


class Coder(ABC):
    """Writes an app's first version and revises it. One instance may serve many apps."""

    offline: ClassVar[bool] = False
    name: str

    @abstractmethod
    async def generate(self, app: AppSpec, *, viewport: Viewport = DEFAULT_VIEWPORT) -> GenerationResult:
        """The first version of `app`, for an agent working in `viewport` (the run's).

        Raises:
            CoderError: no usable HTML could be produced (the message names the model or file).
        """

    @abstractmethod
    async def revise(self, request: RevisionRequest) -> RevisionResult:
        """The next version (fitting `request.viewport`), with the non-regression contract checked and recorded.

        Raises:
            CoderError: no usable HTML could be produced.
        """
