"""What the loop's stages take and return: small frozen records that hash the same in every process.

Prefect's `INPUTS` cache policy keys a stage on its arguments. Plain strings made that key easy to
get wrong (two `*_sha` strings swapped go unnoticed), so a file travels as one `FileRef` (its path
*and* the hash of its content), the run's constants as one `RunContext`, and stages take them by
keyword. Everything here is a pydantic model of strings and numbers: Prefect hashes it through
JSON, identically in every process (a test proves it), and it pickles for Dask workers (the one class among
them, the policy the plan looked up, is left out of that JSON and of every file).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cua import DEFAULT_VIEWPORT, PageTransform, Viewport, write_atomic
from verifier import CheckOutcome

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def sha256_bytes(data: str | bytes) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


class FileRef(BaseModel):
    """A file a stage wrote or reads: where it is (relative to the run folder) and what it holds."""

    model_config = _FROZEN

    path: str = Field(description="Relative to the run folder.")
    sha: str = Field(description="sha256 of the content: the cache key changes when the content does.")


class RunContext(BaseModel):
    """What every stage of one run shares: where the run lives and which specs and models it uses."""

    model_config = _FROZEN

    run_key: str = Field(description="The run folder's random id: deleting the folder retires its cache entries.")
    run_dir: str = Field(description="Absolute path of the run folder.")
    apps: str = Field(description="The app specs (a folder or a file).")
    models: str | None = Field(default=None, description="The model registry YAML (None: configs/models.yaml).")
    v0_dir: str | None = Field(default=None, description="Existing first versions as ID/index.html (offline coder).")

    @property
    def root(self) -> Path:
        return Path(self.run_dir)

    def file(self, ref: FileRef) -> Path:
        return self.root / ref.path

    def read_text(self, ref: FileRef) -> str:
        return self.file(ref).read_text(encoding="utf-8")

    def write(self, relative: str | Path, data: str | bytes) -> FileRef:
        """Write `data` atomically under the run folder; its `FileRef`."""
        payload = data.encode("utf-8") if isinstance(data, str) else data
        write_atomic(self.root / relative, payload)
        return FileRef(path=str(relative), sha=sha256_bytes(payload))

    def ref(self, relative: str | Path) -> FileRef:
        """The `FileRef` of a file already in the run folder."""
        return FileRef(path=str(relative), sha=sha256_bytes((self.root / relative).read_bytes()))


class AgentSettings(BaseModel):
    """Which computer-use agent tries the tasks, and in what window."""

    model_config = _FROZEN

    policy: str = Field(description="A policy name of `cua.policies`: heuristic, uitars, openai-cua, …")
    model: str | None = Field(default=None, description="Registry model name or role (model policies; None: the policy's default).")
    calls: str | None = Field(default=None, exclude=True, description="The registry model or role the policy calls, as "
                              "the run's plan resolved it (`model` or the policy's default; None: offline). Not among the "
                              "rollout's recorded inputs, which stay as they were; the stage's cache key names its model.")
    policy_class: type[Any] | None = Field(default=None, exclude=True, description="The policy's class as the run's "
                                           "plan looked `policy` up (None: the stage looks the name up).")
    max_steps: int = 20
    viewport: Viewport = DEFAULT_VIEWPORT
    options: dict[str, str | int | float | bool] = Field(default_factory=dict, description="The policy's own options.")
    trace: str = Field(default="off", description="Playwright trace: off, failures (kept for failed rollouts) or all.")
    seed: int | None = Field(default=None, description="Seeds the app's Math.random and the model's sampling (where the "
                             "provider takes a seed); the run's seed plus the repeat's number. None: unseeded.")
    fixed_clock: bool = Field(default=False, description="The app's clock starts at `cua.FIXED_CLOCK_START`.")


class VersionRef(BaseModel):
    """One version of one app, on disk under the run folder."""

    app_id: str
    round: int
    html: FileRef = Field(description="The version's index.html.")
    coder: str
    offline: bool
    contract: dict | None = None
    revised_from: int | None = Field(default=None, description="The round whose version this one revises.")
    transforms: list[str] = Field(default_factory=list)
    usage: dict = Field(default_factory=dict)

    @property
    def folder(self) -> Path:
        """The version's folder (relative to the run folder): its verdicts and rollouts live there."""
        return Path(self.html.path).parent


class TasksRef(BaseModel):
    app_id: str
    file: FileRef = Field(description="The app's tasks as a JSON list of `apps_prompts.Task`.")
    count: int
    offline: bool


class VerifyRef(BaseModel):
    app_id: str
    file: FileRef = Field(description="verdicts.json, a `verifier.AppVerdicts`.")
    valid: dict[str, bool]
    reasons: dict[str, str]
    offline: bool
    proof: dict[str, str] = Field(default_factory=dict, description="Task id → proven | claimed | unsupported.")
    proof_reasons: dict[str, str] = Field(default_factory=dict)


class RolloutRef(BaseModel):
    app_id: str
    task_id: str
    trajectory: str
    dashboard: str | None
    trace: str | None = None
    termination: str | None
    success: bool = Field(description="Every check of the task passed (the DOM checker, and an answer or a judge's "
                          "verdict where the task has them).")
    steps: int
    error: str | None = None
    checks: list[CheckOutcome] = Field(default_factory=list, description="Each check's result, and why.")
    answer: str | None = Field(default=None, description="The agent's final answer, if it gave one.")
    repeat: int = 0
    failure_modes: list[str] = Field(default_factory=list, description="How it went wrong (`cua.failure_modes`).")
    variation: str = Field(default="default", description="The variation the app was shown in.")


class FeedbackRef(BaseModel):
    app_id: str
    file: FileRef = Field(description="feedback-round-N.json, a `commenter.Feedback`.")
    items: int
    offline: bool
    errors: list[str] = Field(default_factory=list, description="Comments that failed (model call or reply), per task.")


class VariantRef(BaseModel):
    """One variation of one app version, proven: the transform to serve it with and the tasks it keeps."""

    app_id: str
    round: int
    variation: str
    transform: PageTransform | None = Field(description="What the browser applies (None: the app as it is).")
    proof: FileRef | None = Field(default=None, description="proof.json, a `perturb.VariantProof`.")
    kept: list[str] = Field(default_factory=list, description="Tasks rolled out on this variant.")
    excluded: dict[str, str] = Field(default_factory=dict, description="Task id → why the variant breaks it.")
    unproven: list[str] = Field(default_factory=list, description="Kept tasks without a reference solution to replay.")
    error: str | None = Field(default=None, description="Why the variant could not be made (e.g. its translation failed).")
