"""Which tasks an environment offers: those whose checker is proven on the page it serves.

A task is offered only when its reference checker is false at load and true after its reference
solution, shown in Chromium on the page as the environment serves it — the loop's own proofs:

- the app as it is: the offline verifier (`verifier.verify_app`: the reference checker through the
  gate, its solution replayed), verdict `proven`;
- a variation: that, then `perturb.prove_variant` on the variant (the variation's own first steps,
  such as dismissing its pop-up, before the solution);
- an injected defect: that, then `perturb.prove_defect` (the defect is observable), then the checker
  gated and proven on the defect page (`verifier.gate_and_prove`) — which an interaction defect, made
  to break the task, never passes: such a task is not offered.

Proofs are made once per (app page, task, serving, viewport, code) and kept in the process; proven
ones are also kept on disk (`$AUI_CACHE_DIR/environments`, else `.cache/environments` in the project),
keyed by the sha256 of all of it and of the code that proves (the `cua`, `verifier` and `perturb`
files): a change there proves again. `AUI_ENV_PROOF_CACHE=off` keeps them in the process only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from apps_prompts import SolutionStep, Task
from code_version import PROJECT_ROOT, digest, file_hashes
from cua import BrowserConfig, PageTransform, write_atomic
from perturb import (
    DEFAULT,
    DefectRecord,
    DefectSpec,
    binds_to,
    defect_transform,
    make_defect,
    needed_roles,
    prove_defect,
    prove_variant,
    solution_prefix,
    variation_transform,
)
from verifier import gate_and_prove, verify_app

from ._apps import LoadedApp

PROOF_FORMAT = 1
_CODE_FOLDERS = ("cua", "verifier", "perturb")
_OFF = {"off", "0", "false", "no"}


class Offer(BaseModel):
    """One task on one served page: proven (offered) or not, why, and the gated checker the environment runs."""

    task_id: str
    proven: bool
    reason: str
    checker: str | None = None


@dataclass(frozen=True)
class Serving:
    """How the environment serves the app: as it is, in a variation, or with one injected defect."""

    variation: str = DEFAULT
    defect: DefectSpec | None = None
    defect_step: int | None = None  # the reference solution step the defect is bound to (1-based)
    transform: PageTransform | None = None  # a defect's is named after the defect
    prefix: tuple[SolutionStep, ...] = ()

    @property
    def name(self) -> str:
        return self.transform.name if self.transform is not None else DEFAULT


def serving_for(tasks: list[Task], variation: str = DEFAULT, variation_seed: int = 0,
                defect: str | DefectSpec | DefectRecord | None = None, defect_seed: int = 0) -> Serving:
    """The serving of `variation` or `defect` for `tasks` (a defect needs exactly one task).

    `defect` is a `perturb.DefectSpec` or `DefectRecord` (e.g. from a defects.json), `"<type>@<selector>"`,
    or `"<type>"` (bound to the first step of the task's reference solution it can bind to), drawn with `defect_seed`.

    Raises:
        ValueError (perturb.VariationError, perturb.DefectError among them): an unknown variation or defect
            type, a variation that needs a model (`german`), both a variation and a defect, a defect with
            other than one task, or a defect that binds to no step of the task's reference solution.
    """
    if defect is None:
        if needed_roles(variation):
            raise ValueError(f"variation {variation!r} needs the {', '.join(needed_roles(variation))} role (a model): "
                             "environments serve the variations that need none")
        transform = variation_transform(variation, variation_seed)
        return Serving(variation=variation, transform=transform, prefix=tuple(solution_prefix(variation)))
    if variation != DEFAULT:
        raise ValueError(f"a variation ({variation!r}) and a defect at once: serve one of them")
    if len(tasks) != 1:
        raise ValueError(f"a defect is bound to an element of one task's reference solution: give one task, not {len(tasks)}")
    spec, step = _bind(defect, tasks[0], defect_seed)
    return Serving(defect=spec, defect_step=step, transform=defect_transform(spec))


def _bind(defect: str | DefectSpec | DefectRecord, task: Task, seed: int) -> tuple[DefectSpec, int]:
    if isinstance(defect, DefectRecord):
        defect = defect.spec
    if isinstance(defect, DefectSpec):
        steps = [number for number, step in enumerate(task.solution, 1) if step.selector == defect.selector]
        if not steps:
            raise ValueError(f"defect {defect.name}: no step of the reference solution of task '{task.id}' acts on {defect.selector}")
        return defect, steps[0]
    if not isinstance(defect, str) or not defect.strip():
        raise ValueError(f"defect must be '<type>', '<type>@<selector>' or a perturb.DefectSpec; got {defect!r}")
    defect_type, _, selector = defect.partition("@")
    defect_type = defect_type.strip()
    for number, step in enumerate(task.solution, 1):
        if (step.selector == selector if selector else True) and binds_to(defect_type, step):
            return make_defect(defect_type, step.selector, seed), number
    where = f" on {selector}" if selector else ""
    raise ValueError(f"defect {defect_type!r}: no step of the reference solution of task '{task.id}' can carry it{where}")


_proven: dict[str, Offer] = {}


async def prove_offers(app: LoadedApp, tasks: list[Task], serving: Serving, browser: BrowserConfig) -> dict[str, Offer]:
    """Each task's offer on the page `app` served under `serving` (see the module docstring).

    Raises only what the browser raises (no browser, no context).
    """
    browser = browser.model_copy(update={"transform": serving.transform})
    offers: dict[str, Offer] = {}
    keys = {task.id: _key(app, task, serving, browser) for task in tasks}
    for task in tasks:
        known = _proven.get(keys[task.id]) or _read(keys[task.id])
        if known is not None:
            offers[task.id] = _proven[keys[task.id]] = known
    unknown = [task for task in tasks if task.id not in offers]
    if unknown:
        made = await _prove(app, unknown, serving, browser)
        for task in unknown:
            offers[task.id] = _proven[keys[task.id]] = made[task.id]
            if made[task.id].proven:
                _write(keys[task.id], made[task.id])
    return {task.id: offers[task.id] for task in tasks}


async def _prove(app: LoadedApp, tasks: list[Task], serving: Serving, browser: BrowserConfig) -> dict[str, Offer]:
    clean = browser.model_copy(update={"transform": None})
    verdicts = await verify_app(app.spec.model_copy(update={"tasks": tasks}), app.html, browser=clean)
    offers = {}
    for task in tasks:
        verdict = verdicts.verdict(task.id)
        if verdict.proof != "proven":
            offers[task.id] = Offer(task_id=task.id, proven=False, reason="; ".join(verdict.reasons) or f"checker {verdict.proof}")
        else:
            offers[task.id] = Offer(task_id=task.id, proven=True, checker=verdict.checker,
                                    reason="the checker is false at load and true after the reference solution")
    proven = [task for task in tasks if offers[task.id].proven]
    if serving.defect is not None and proven:
        offers[proven[0].id] = await _prove_defect(app, proven[0], serving, clean, offers[proven[0].id])
    elif serving.transform is not None and proven:
        variant = await prove_variant(app.html, verdicts, serving.variation, serving.transform, clean)
        for item in variant.tasks:
            if item.task_id in offers and offers[item.task_id].proven and item.status != "proven":
                offers[item.task_id] = Offer(task_id=item.task_id, proven=False,
                                             reason=f"on the {serving.name} variant: {item.reason}")
    return offers


async def _prove_defect(app: LoadedApp, task: Task, serving: Serving, clean: BrowserConfig, offer: Offer) -> Offer:
    observable = await prove_defect(app.html, task.checker, task.solution, serving.defect_step, serving.defect,
                                    clean_proven=True, config=clean)
    if not observable.proven:
        return Offer(task_id=task.id, proven=False, reason=f"the defect {serving.defect.name} is not proven: {observable.reason}")
    defective = clean.model_copy(update={"transform": serving.transform})
    gate, replay = await gate_and_prove(app.html, offer.checker or task.checker, task.solution, config=defective)
    if not gate.accepted or replay is None or not replay.proven:
        why = gate.reason if not gate.accepted else replay.reason if replay is not None else "not replayed"
        kind = f"kind {serving.defect.kind}" + (", which breaks the task by design" if serving.defect.kind == "interaction" else "")
        return Offer(task_id=task.id, proven=False, reason=f"the checker is not proven on the page with "
                     f"{serving.defect.name} ({kind}): {why}")
    return offer.model_copy(update={"reason": f"{offer.reason}, also with {serving.defect.name} ({observable.reason})"})


# ---- the keys and the disk ------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _code_sha256() -> str:
    """The sha256 of the files that prove (every .py and .js of cua, verifier and perturb, and this module)."""
    files = [path for folder in _CODE_FOLDERS for path in sorted((PROJECT_ROOT / folder).rglob("*"))
             if path.suffix in (".py", ".js") and path.is_file()]
    return digest(file_hashes([*files, Path(__file__).resolve()]))


def _key(app: LoadedApp, task: Task, serving: Serving, browser: BrowserConfig) -> str:
    executable = Path(browser.executable_path)
    stamp = executable.stat().st_mtime_ns if executable.exists() else None
    material = {
        "format": PROOF_FORMAT, "code": _code_sha256(), "html": hashlib.sha256(app.html.encode("utf-8")).hexdigest(),
        "task": task.model_dump(mode="json", include={"checker", "solution", "checks"}),
        "transform": serving.transform.sha256 if serving.transform else None,
        "prefix": [step.model_dump(mode="json") for step in serving.prefix],
        "defect": serving.defect.model_dump(mode="json") if serving.defect else None, "step": serving.defect_step,
        "viewport": str(browser.viewport), "chromium": [browser.executable_path, stamp],
        "still_animations": browser.still_animations,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest()


def _file(key: str) -> Path | None:
    if os.environ.get("AUI_ENV_PROOF_CACHE", "").strip().lower() in _OFF:
        return None
    root = os.environ.get("AUI_CACHE_DIR")
    return (Path(root) / "environments" if root else PROJECT_ROOT / ".cache" / "environments") / key[:2] / f"{key}.json"


def _read(key: str) -> Offer | None:
    path = _file(key)
    with contextlib.suppress(OSError, ValueError):  # missing or unreadable: prove again
        return Offer.model_validate_json(path.read_bytes()) if path is not None else None
    return None


def _write(key: str, offer: Offer) -> None:
    path = _file(key)
    if path is not None:
        with contextlib.suppress(OSError):  # a read-only or full disk: the proof stays in the process
            write_atomic(path, offer.model_dump_json().encode("utf-8"))
