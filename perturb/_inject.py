"""A defect set: which defects were injected where, and what their proofs showed (`defects.json`).

`inject_defects` plans K defects per app and type (seeds `seed` … `seed+K-1`), each bound to a step
of a task whose reference solution is proven on the defect-free app, proves every one on the page
(`prove_defect`) and keeps the dropped ones with their reasons. The same apps, types, K and seed
give the same file, byte for byte: the plan is drawn from the seeds, the proofs' reasons are worded
without timings, and nothing in the file depends on the clock or the machine's speed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from apps_prompts import AppSpec, SolutionStep, Task
from cua import BrowserConfig, DefectKind, PageTransform, write_atomic
from llm import first_problem
from verifier import gate_and_prove_all

from ._defect_proof import DefectProof, dropped, prove_defect
from ._defects import DEFECTS, DefectSpec, binds_to, defect_design, defect_transform, defect_types, derived_seed, draw_params

DEFECTS_FILE = "defects.json"
FORMAT = 1
PROOF_CONCURRENCY = 3  # proofs in flight: each holds one or two pages; the machine has few cores


class DefectRecord(BaseModel):
    """One planned defect: where it is bound, its seeded choices, and whether it was proven (or why dropped)."""

    app_id: str
    html_sha256: str = Field(description="The app version the defect was injected into.")
    task_id: str | None = Field(description="The task whose reference solution step it is bound to (None: no task fit).")
    type: str
    kind: DefectKind
    seed: int
    step: int | None = Field(default=None, description="The bound step's 1-based position in the reference solution.")
    action: str | None = Field(default=None, description="The bound step's action (click, fill, …).")
    selector: str | None = Field(default=None, description="The bound element: the step's CSS selector.")
    params: dict[str, Any] = Field(default_factory=dict, description="The defect's seeded choices.")
    transform: str | None = Field(default=None, description="The transform's name (`defect:<type>@<selector>@seed=<n>`).")
    transform_sha256: str | None = None
    status: Literal["proven", "dropped"]
    reason: str
    region: dict[str, int] | None = None
    failed_step: int | None = None

    @property
    def id(self) -> str:
        """`<app>/<task>/<type>-s<seed>`: its folder in the defect set's dataset."""
        return f"{self.app_id}/{self.task_id or '-'}/{self.type}-s{self.seed}"

    @property
    def proven(self) -> bool:
        return self.status == "proven"

    def spec(self) -> DefectSpec:
        """The defect as `defect_transform` serves it. Raises ValueError for a record bound to nothing."""
        if self.selector is None:
            raise ValueError(f"defect {self.id} is bound to no element ({self.reason})")
        return DefectSpec(type=self.type, selector=self.selector, seed=self.seed, params=self.params)

    def transform_object(self) -> PageTransform:
        return defect_transform(self.spec())


class DefectSet(BaseModel):
    """The defects of one `inject_defects` call, in plan order (apps, then types, then seeds)."""

    format: int = FORMAT
    apps: list[str]
    types: list[str]
    per_app: int
    seed: int
    records: list[DefectRecord] = Field(default_factory=list)

    @property
    def proven(self) -> list[DefectRecord]:
        return [r for r in self.records if r.proven]

    def record(self, defect_id: str) -> DefectRecord:
        for record in self.records:
            if record.id == defect_id:
                return record
        raise KeyError(f"no defect {defect_id!r} in the set")

    def write(self, folder: Path | str) -> Path:
        """Write `defects.json` into `folder` (atomically; the same set gives the same bytes)."""
        text = json.dumps(self.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"
        return write_atomic(Path(folder) / DEFECTS_FILE, text.encode("utf-8"))

    @classmethod
    def read(cls, folder: Path | str) -> "DefectSet":
        """Read `defects.json` of a folder. Raises FileNotFoundError / ValueError naming the file."""
        path = Path(folder) / DEFECTS_FILE
        if not path.is_file():
            raise FileNotFoundError(f"no {DEFECTS_FILE} in '{folder}' (make one with `aui defects inject`)")
        try:
            return cls.model_validate_json(path.read_bytes())
        except ValueError as exc:
            raise ValueError(f"{path}: not a defect set: {first_problem(exc)}") from None


@dataclass(frozen=True)
class _Binding:
    task: Task
    step: int
    solution_step: SolutionStep


def check_types(types: Sequence[str] | None) -> list[str]:
    """The implemented types asked for, in the taxonomy's order (all when None).

    Raises:
        DefectError: a type is not implemented (naming it and the known ones).
    """
    if not types:
        return defect_types()
    for name in types:
        defect_design(name)
    return [name for name in defect_types() if name in set(types)]


async def inject_defects(apps: Sequence[tuple[AppSpec, str]], types: Sequence[str] | None = None, per_app: int = 1,
                         seed: int = 0, config: BrowserConfig | None = None,
                         concurrency: int = PROOF_CONCURRENCY) -> DefectSet:
    """Plan and prove `per_app` defects of each type in each app ((spec, html) pairs).

    Raises:
        DefectError: an unknown type. ValueError: `per_app` below 1.
    """
    if per_app < 1:
        raise ValueError(f"per_app must be at least 1, got {per_app}")
    chosen = check_types(types)
    config = config or BrowserConfig()
    ordered = sorted(apps, key=lambda pair: pair[0].id)
    defect_set = DefectSet(apps=[spec.id for spec, _ in ordered], types=chosen, per_app=per_app, seed=seed)
    slots = asyncio.Semaphore(max(1, concurrency))

    async def prove(html: str, record: DefectRecord, binding: _Binding | None) -> DefectProof:
        if binding is None:  # planned unbound: dropped with the plan's reason
            return dropped(record.reason)
        async with slots:  # `_plan` binds to steps of proven tasks only
            return await prove_defect(html, binding.task.checker, binding.task.solution, binding.step, record.spec(),
                                      clean_proven=True, config=config)

    for app, html in ordered:
        sha = hashlib.sha256(html.encode("utf-8")).hexdigest()
        proven_tasks = await _clean_proofs(app, html, config)
        planned = [item for defect_type in chosen for item in _plan(app, sha, defect_type, per_app, seed, proven_tasks)]
        proofs = await asyncio.gather(*(prove(html, *item) for item in planned))
        for (record, _), proof in zip(planned, proofs):
            defect_set.records.append(record.model_copy(update={
                "status": proof.status, "reason": proof.reason, "region": proof.region, "failed_step": proof.failed_step}))
    return defect_set


async def _clean_proofs(app: AppSpec, html: str, config: BrowserConfig) -> set[str]:
    """The ids of the app's tasks whose reference solution is proven on the defect-free app."""
    solvable = {task.id: (task.checker, task.solution) for task in app.tasks if task.checker and task.solution}
    if not solvable:
        return set()
    proofs = await gate_and_prove_all(html, solvable, config=config)
    return {task_id for task_id, (gate, proof) in proofs.items() if gate.accepted and proof is not None and proof.proven}


def _plan(app: AppSpec, sha: str, defect_type: str, per_app: int, seed: int,
          proven_tasks: set[str]) -> list[tuple[DefectRecord, _Binding | None]]:
    """`per_app` bindings of `defect_type` in `app`, one per seed, distinct while there are enough."""
    design = DEFECTS.get(defect_type)
    candidates = [_Binding(task, number, step) for task in app.tasks if task.id in proven_tasks
                  for number, step in enumerate(task.solution, start=1) if binds_to(defect_type, step)]
    used: set[tuple[str, int]] = set()
    planned = []
    for offset in range(per_app):
        current = seed + offset
        base = DefectRecord(app_id=app.id, html_sha256=sha, task_id=None, type=defect_type, kind=design.kind,
                            seed=current, status="dropped", reason="")
        if not candidates:
            actions = ", ".join(sorted(design.binds_to))
            base.reason = (f"no step of a proven task's reference solution can carry it (it binds to {actions} steps)"
                           if proven_tasks else "no task of the app has a reference solution proven on it")
            planned.append((base, None))
            continue
        start = derived_seed(current, app.id, defect_type) % len(candidates)
        order = candidates[start:] + candidates[:start]
        binding = next((b for b in order if (b.task.id, b.step) not in used), None)
        if binding is None:
            base.reason = f"every one of the {len(candidates)} step(s) it can be bound to is taken by an earlier seed"
            planned.append((base, None))
            continue
        used.add((binding.task.id, binding.step))
        params = draw_params(defect_type, derived_seed(current, app.id, binding.task.id, defect_type))
        record = base.model_copy(update={"task_id": binding.task.id, "step": binding.step,
                                         "action": binding.solution_step.action,
                                         "selector": binding.solution_step.selector, "params": params})
        transform = record.transform_object()
        record.transform, record.transform_sha256 = transform.name, transform.sha256
        planned.append((record, binding))
    return planned
