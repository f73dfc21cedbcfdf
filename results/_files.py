"""A run folder's result files: `results.json` / `.csv` / `.md` written and read, and `manifest.json` read."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from cua import write_atomic
from llm import first_problem

from ._error_bars import COMPARISON_NOTE, ERROR_BARS, INTERVAL_NOTE, Comparison, comparisons
from ._outcomes import AppRoundResult
from ._tables import (
    DEFAULT_WEIGHTS,
    SCORING_NOTE,
    TableRow,
    best_rounds,
    by_commenter_mode_table,
    by_cua_table,
    comparisons_markdown,
    csv_table,
    interval_records,
    markdown_table,
    pass_counts,
    records_markdown,
    scoring_table,
    table_rows,
)
from ._variation_table import VARIATION_NOTE, variation_markdown, variation_rows


def write_results(run_dir: Path, results: list[AppRoundResult], usage: dict | None = None,
                  offline_roles: list[str] | None = None, weights: dict[str, float] | None = None,
                  cache: dict | None = None) -> list[TableRow]:
    """Write results.json / results.csv / results.md atomically; returns the table rows.

    `cache` (`flows._cache`): per stage kind, the stage runs this invocation ran and reused.
    """
    rows = table_rows(results, weights)
    by_cua, by_commenter = by_cua_table(rows), by_commenter_mode_table(rows, usage)
    scoring = scoring_table(rows)
    found = comparisons(results)
    payload = {
        "offline_roles": offline_roles or [],
        "weights": {**DEFAULT_WEIGHTS, **(weights or {})},
        "table": [r.model_dump() for r in rows],
        "by_cua": by_cua,
        "by_commenter_mode": by_commenter,
        "scoring": scoring,
        "pass_counts": [{"app_id": r.app_id, "coder": r.coder, "cua": r.cua, "mode": r.mode,
                         "commenter_mode": r.commenter_mode, "round": r.round, "task_id": task, "passed": k, "repeats": n}
                        for r in results if r.repeats for task, (k, n) in pass_counts(r).items()],
        "best_round": {"/".join(part for part in k if part): v for k, v in best_rounds(rows).items()},
        "comparisons": [comparison.model_dump() for comparison in found],
        "error_bars": ERROR_BARS,
        "apps": [r.model_dump() for r in results],
        "usage": usage or {},
    }
    if cache is not None:
        payload["cache"] = cache
    varied = variation_rows(results)
    if varied:
        payload["variations"] = [row.model_dump() for row in varied]
    write_atomic(run_dir / "results.json", json.dumps(payload, indent=1, sort_keys=True).encode())
    write_atomic(run_dir / "results.csv", csv_table(rows).encode())
    sections = [markdown_table(rows), "", "The same figures with their 95 % intervals, %:", "",
                records_markdown(interval_records(rows)), "", INTERVAL_NOTE]
    if found:
        sections += ["", "Paired comparisons of SR on the same tasks:", "", comparisons_markdown(found), "", COMPARISON_NOTE]
    sections += ["", "SR (FC) per CUA, % (paper Table 4 shape):", "", records_markdown(by_cua)]
    if by_commenter:
        sections += ["", "Per commenter mode: SR (FC) pooled over its tracks' last rounds, and commenter tokens (paper Table 5 shape):", "",
                     records_markdown(by_commenter)]
    sections += ["", "Weighted score and SR per level, % (OSUniverse's scoring):", "", records_markdown(scoring), "", SCORING_NOTE]
    if varied:
        sections += ["", "Reliability across variations, % (OpenApps' axis):", "", variation_markdown(varied), "",
                     VARIATION_NOTE]
    if offline_roles:
        sections += ["", f"_Offline providers were used for: {', '.join(offline_roles)} (no model endpoint)._"]
    write_atomic(run_dir / "results.md", ("\n".join(sections) + "\n").encode())
    return rows


class RunResults(BaseModel):
    """A run's `results.json`, as `write_results` writes it: read it through this model, never by key names."""

    offline_roles: list[str] = Field(default_factory=list)
    weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS), description="Level → weight of the run.")
    scoring: list[dict] = Field(default_factory=list, description="`scoring_table`: weighted score, SR per level, spread.")
    pass_counts: list[dict] = Field(default_factory=list, description="With repeats: per task, app round and track, "
                                    "how many repeats passed (k of N).")
    table: list[TableRow] = Field(default_factory=list)
    by_cua: list[dict] = Field(default_factory=list, description="Table 4's shape (`by_cua_table`).")
    by_commenter_mode: list[dict] = Field(default_factory=list, description="Table 5's shape (`by_commenter_mode_table`).")
    best_round: dict[str, int] = Field(default_factory=dict)
    apps: list[AppRoundResult] = Field(default_factory=list)
    usage: dict = Field(default_factory=dict, description="The usage ledger: calls, tokens and cost per role.")
    cache: dict[str, dict[str, int]] = Field(default_factory=dict, description="Per stage kind, the stage runs the "
                                             "last invocation ran and reused from the cache (`flows._cache`).")
    variations: list[dict] = Field(default_factory=list, description="Reliability across variations per track and "
                                   "round (`results._variation_table.VariationRow`); empty without other variations.")
    comparisons: list[Comparison] = Field(default_factory=list, description="Paired comparisons of SR on the same tasks "
                                          "(`results._error_bars`): rounds of a track, tracks that differ in one setting.")
    error_bars: dict = Field(default_factory=dict, description="Which interval and test each `_ci95` field and "
                             "comparison uses (`results._error_bars.ERROR_BARS`); empty in a run from before them.")


def read_results(run_dir: Path | str) -> RunResults:
    """Read a run folder's results.json.

    Raises:
        FileNotFoundError: no results.json (not a finished run), naming the folder.
        ValueError: the file is not JSON or not in the shape `write_results` writes, naming the file.
    """
    path = Path(run_dir) / "results.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no results.json here — is '{run_dir}' a finished run folder?")
    try:
        return RunResults.model_validate_json(path.read_bytes())
    except ValueError as exc:
        raise ValueError(f"{path}: not a valid results file: {first_problem(exc)}") from None


def read_manifest(run_dir: Path | str) -> dict:
    """A run folder's manifest.json as written by `write_manifest` (a record of facts: no defaults are invented).

    Raises:
        FileNotFoundError: no manifest.json in the folder.
        ValueError: the file is not a JSON object, naming the file.
    """
    path = Path(run_dir) / "manifest.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no manifest.json here")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise ValueError(f"{path}: not a JSON object")
    return manifest
