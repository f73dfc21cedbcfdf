"""Results in the shape of the paper's Table 3: rows coder × CUA × mode × round, columns domains.

FC = tasks with a valid checker / all tasks; SR = tasks whose checker turned true / all tasks
(a task without a valid checker is a CUA failure). Both are pooled over tasks within a cell.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, Field

from apps_prompts import Domain
from cua import write_atomic

DOMAINS = [d.value for d in Domain]


class TaskOutcome(BaseModel):
    task_id: str
    solvable: bool
    checker_valid: bool
    success: bool = False
    termination: str | None = None
    steps: int = 0
    trajectory: str | None = Field(default=None, description="Trajectory folder, relative to the run folder.")
    dashboard: str | None = None
    reason: str | None = Field(default=None, description="Why unsolvable, or the rollout's error.")


class AppRoundResult(BaseModel):
    """One app version judged by one CUA."""

    app_id: str
    domain: str
    coder: str
    cua: str
    mode: str
    round: int
    html: str = Field(description="The app version's HTML, relative to the run folder.")
    html_sha: str
    screenshot: str | None = None
    tasks: list[TaskOutcome] = Field(default_factory=list)
    contract: dict | None = Field(default=None, description="Non-regression outcome of the revision that made this version.")
    offline_roles: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list, description=(
        "Model stages that failed for good (after their retries) and degraded this round: its "
        "verification, or the commenting/revision that should have made this version (then the "
        "previous version is kept), or for a round that could not be judged at all, the first "
        "version or the task list."))

    @property
    def fc(self) -> float:
        return _ratio(sum(t.checker_valid for t in self.tasks), len(self.tasks))

    @property
    def sr(self) -> float:
        return _ratio(sum(t.success and t.checker_valid for t in self.tasks), len(self.tasks))


class TableRow(BaseModel):
    coder: str
    cua: str
    mode: str
    round: int
    fc: dict[str, float | None]
    sr: dict[str, float | None]
    tasks: dict[str, int]


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def table_rows(results: list[AppRoundResult]) -> list[TableRow]:
    """Aggregate app results to rows; a domain with no tasks in a row is None (shown as –)."""
    cells: dict[tuple, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    for result in results:
        key = (result.coder, result.cua, result.mode, result.round)
        for domain in (result.domain, "overall"):
            counts = cells[key][domain]
            counts[0] += len(result.tasks)
            counts[1] += sum(t.checker_valid for t in result.tasks)
            counts[2] += sum(t.success and t.checker_valid for t in result.tasks)
    rows = []
    for (coder, cua, mode, round_), by_domain in sorted(cells.items()):
        fc, sr, tasks = {}, {}, {}
        for domain in [*DOMAINS, "overall"]:
            total, valid, success = by_domain.get(domain, [0, 0, 0])
            tasks[domain] = total
            fc[domain] = valid / total if total else None
            sr[domain] = success / total if total else None
        rows.append(TableRow(coder=coder, cua=cua, mode=mode, round=round_, fc=fc, sr=sr, tasks=tasks))
    return rows


def best_rounds(rows: list[TableRow]) -> dict[tuple[str, str, str], int]:
    """For each coder × CUA × mode, the round with the highest overall SR (ties: the earlier)."""
    best: dict[tuple[str, str, str], TableRow] = {}
    for row in rows:
        key = (row.coder, row.cua, row.mode)
        if key not in best or (row.sr["overall"] or 0) > (best[key].sr["overall"] or 0):
            best[key] = row
    return {key: row.round for key, row in best.items()}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def markdown_table(rows: list[TableRow]) -> str:
    header = ["coder", "CUA", "mode", "round", *(f"{d} FC/SR" for d in DOMAINS), "overall FC/SR", "tasks"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    best = best_rounds(rows)
    for row in rows:
        mark = " ★" if best.get((row.coder, row.cua, row.mode)) == row.round else ""
        cells = [row.coder, row.cua, row.mode, f"{row.round}{mark}"]
        cells += [f"{_pct(row.fc[d])} / {_pct(row.sr[d])}" for d in [*DOMAINS, "overall"]]
        cells.append(str(row.tasks["overall"]))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("FC = function completeness (% tasks with a valid checker); SR = CUA success rate (% of all tasks). ★ = best round.")
    return "\n".join(lines)


def csv_table(rows: list[TableRow]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["coder", "cua", "mode", "round", "domain", "tasks", "fc", "sr"])
    for row in rows:
        for domain in [*DOMAINS, "overall"]:
            fc, sr = row.fc[domain], row.sr[domain]
            writer.writerow([row.coder, row.cua, row.mode, row.round, domain, row.tasks[domain],
                             "" if fc is None else f"{fc:.4f}", "" if sr is None else f"{sr:.4f}"])
    return buffer.getvalue()


def write_results(run_dir: Path, results: list[AppRoundResult], usage: dict | None = None, offline_roles: list[str] | None = None) -> list[TableRow]:
    """Write results.json / results.csv / results.md atomically; returns the table rows."""
    rows = table_rows(results)
    payload = {
        "offline_roles": offline_roles or [],
        "table": [r.model_dump() for r in rows],
        "best_round": {"/".join(k): v for k, v in best_rounds(rows).items()},
        "apps": [r.model_dump() for r in results],
        "usage": usage or {},
    }
    write_atomic(run_dir / "results.json", json.dumps(payload, indent=1, sort_keys=True).encode())
    write_atomic(run_dir / "results.csv", csv_table(rows).encode())
    note = ""
    if offline_roles:
        note = f"\n\n_Offline providers were used for: {', '.join(offline_roles)} (no model endpoint)._"
    write_atomic(run_dir / "results.md", (markdown_table(rows) + note + "\n").encode())
    return rows
