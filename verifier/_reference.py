"""Proving a spec's tasks solvable: checker passes the gate at load, true after the reference solution.

This is how we know the bundled apps, tasks and reference checkers agree before any agent is
judged by them. Solutions act through selectors (a spec author's shortcut); agents never do.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from apps_prompts import AppSpec, SolutionStep, Task, reference_html_path
from cua import BrowserConfig, open_app, settle

from ._gate import GateResult, gate_checker, precompile
from ._runtime import run_checker

STEP_TIMEOUT_MS = 10_000  # an upper bound: a loaded machine is slow, a wrong selector still fails
WAIT_DEFAULT_S = 10.0


class TaskProof(BaseModel):
    """Whether one task's checker and solution agree with its app."""

    app_id: str
    task_id: str
    false_at_load: bool = False
    true_after_solution: bool = False
    problems: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.false_at_load and self.true_after_solution and not self.problems


async def prove_task(html: str, app_id: str, task: Task, config: BrowserConfig | None = None) -> TaskProof:
    """Load the app fresh, check the checker is false, replay the solution, check it is true."""
    proof = TaskProof(app_id=app_id, task_id=task.id)
    if not task.checker:
        proof.problems.append("no reference checker")
        return proof
    if not task.solution:
        proof.problems.append("no reference solution")
        return proof
    compiled = precompile(task.checker)
    if isinstance(compiled, GateResult):
        proof.problems.append(f"checker: {compiled.reason}")
        return proof
    async with open_app(html, config) as app:
        await settle(app.page)
        gate = await gate_checker(app.page, compiled)
        if not gate.accepted:
            proof.false_at_load = gate.initial is not None and gate.initial.ok and not gate.initial.passed
            proof.problems.append(f"checker fails the gate at load: {gate.reason}")
            return proof
        proof.false_at_load = True
        for number, step in enumerate(task.solution, start=1):
            try:
                await _replay(app.page, step)
            except Exception as exc:
                message = str(exc).splitlines()[0][:200]
                proof.problems.append(f"solution step {number} ({step.action} {step.selector}) failed: {message}")
                return proof
            await settle(app.page)
        final = await run_checker(app.page, compiled.javascript)
        if not final.ok:
            proof.problems.append(f"checker after solution: {final.reason}")
        proof.true_after_solution = final.passed
        if not final.passed and final.ok:
            proof.problems.append("checker is still false after the reference solution")
    return proof


async def prove_app(spec: AppSpec, html: str | None = None, config: BrowserConfig | None = None) -> list[TaskProof]:
    """Prove every task of `spec` against `html` (default: the spec's reference HTML)."""
    if html is None:
        path = reference_html_path(spec)
        if path is None:
            return [TaskProof(app_id=spec.id, task_id=t.id, problems=["app has no reference_html"]) for t in spec.tasks]
        html = Path(path).read_text(encoding="utf-8")
    return [await prove_task(html, spec.id, task, config) for task in spec.tasks]


async def _replay(page, step: SolutionStep) -> None:
    locator = page.locator(step.selector).first
    match step.action:
        case "click":
            await locator.click(timeout=STEP_TIMEOUT_MS)
        case "dblclick":
            await locator.dblclick(timeout=STEP_TIMEOUT_MS)
        case "hover":
            await locator.hover(timeout=STEP_TIMEOUT_MS)
        case "wait":
            # for what the app does by itself (a timer running out): wait on the app's state, not a clock
            seconds = float(step.value) if step.value is not None else WAIT_DEFAULT_S
            await locator.wait_for(state="visible", timeout=seconds * 1000)
        case "check":
            await locator.check(timeout=STEP_TIMEOUT_MS)
        case "fill":
            await locator.fill(step.value or "", timeout=STEP_TIMEOUT_MS)
        case "press":
            await locator.press(step.value or "", timeout=STEP_TIMEOUT_MS)
        case "select":
            await locator.select_option(step.value, timeout=STEP_TIMEOUT_MS)
