"""The static report: `report.html` beside the results, readable straight from disk.

Everything is linked by relative paths inside the run folder (screenshots, dashboards, the plot),
so the report opens with a browser and no server; `aui serve` serves the same folder over HTTP
for Prefect artifacts, whose links need a URL.
"""

from __future__ import annotations

import io
from pathlib import Path

from cua import write_atomic

from ._error_bars import COMPARISON_NOTE, INTERVAL_NOTE, Comparison, comparisons, shown_records
from ._format import esc, pct, track_text
from ._insight_records import insights_section_html
from ._outcomes import DOMAINS, AppRoundResult
from ._report_agreement import agreement_section_html, write_agreement
from ._report_defects import defects_section_html
from ._report_variations import STYLE as VARIATION_STYLE
from ._report_variations import variation_section_html
from ._tables import (
    SCORING_NOTE,
    TableRow,
    best_rounds,
    by_commenter_mode_table,
    by_cua_table,
    cell_figures,
    interval_records,
    markdown_table,
    pass_counts,
    scoring_table,
)
from ._variation_table import variation_rows

PLOT_FILE = "fc_sr_by_round.png"


def write_plot(run_dir: Path, rows: list[TableRow]) -> Path | None:
    """FC and SR (overall) across rounds, one line per coder × CUA × mode. Deterministic PNG."""
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "aui"
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    series: dict[tuple, list[TableRow]] = {}
    for row in rows:
        series.setdefault(tuple(part for part in row.track_key if part), []).append(row)
    for key, points in sorted(series.items()):
        points.sort(key=lambda r: r.round)
        rounds = [p.round for p in points]
        label = " / ".join(key)
        for axis, metric in zip(axes, ("fc", "sr")):
            values = [100 * (getattr(p, metric)["overall"] or 0) for p in points]
            line, = axis.plot(rounds, values, marker="o", label=label)
            # the 95 % interval of each point as a band (a results file from before intervals has none)
            bands = [getattr(p, f"{metric}_ci95").get("overall") for p in points]
            if all(bands):
                axis.fill_between(rounds, [100 * b[0] for b in bands], [100 * b[1] for b in bands],
                                  color=line.get_color(), alpha=0.15, linewidth=0)
    for axis, title in zip(axes, ("Function completeness (FC, %, 95 % band)", "CUA success rate (SR, %, 95 % band)")):
        axis.set_title(title)
        axis.set_xlabel("round")
        axis.set_ylim(0, 100)
        axis.grid(alpha=0.3)
        axis.xaxis.get_major_locator().set_params(integer=True)
    axes[1].legend(fontsize=8, loc="best")
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", metadata={"Software": None})
    plt.close(fig)
    return write_atomic(run_dir / PLOT_FILE, png.getvalue())


def _table_html(rows: list[TableRow]) -> str:
    best = best_rounds(rows)
    head = "".join(f"<th>{d}</th>" for d in [*DOMAINS, "overall"])
    body = []
    for row in rows:
        star = " ★" if best.get(row.track_key) == row.round else ""
        cells = "".join(
            "<td>{}<br><small>{}</small><br><b>{}</b><br><i>{}</i></td>".format(*cell_figures(row, d))
            for d in [*DOMAINS, "overall"]
        )
        body.append(
            f"<tr><td>{esc(row.coder)}</td><td>{esc(row.cua)}</td><td>{esc(row.mode)}</td><td>{esc(row.commenter_mode or '–')}</td>"
            f"<td>{row.round}{star}</td>{cells}<td>{pct(row.sr_supported.get('overall'))}</td>"
            f"<td>{pct(row.sr_proven.get('overall'))}</td><td>{row.tasks['overall']}</td></tr>"
        )
    return (
        '<table class="results"><thead><tr><th>coder</th><th>CUA</th><th>mode</th><th>commenter</th><th>round</th>'
        f"{head}<th>SR (supported)</th><th>SR (proven)</th><th>tasks</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
        "<p class=note>Each cell, top to bottom, in %: FC (tasks with a valid checker, the paper's definition), "
        "<small>FC proven</small> (checker false at load and true after its reference solution), <b>SR</b> and "
        "<i>the weighted score</i> (Σ w·passed / Σ w·n by task level, see Scoring); SR is over all tasks (the paper's "
        "definition), SR (supported) over the tasks with a valid checker (the reference code's), SR (proven) over the "
        "tasks with a proven checker. ★ marks the best round.</p>"
    )


def _records_html(records: list[dict], note: str) -> str:
    if not records:
        return ""
    records = shown_records(records)  # each `X_ci95` printed after its figure in column X
    head = "".join(f"<th>{esc(column)}</th>" for column in records[0])
    body = "".join("<tr>" + "".join(f"<td>{esc(value)}</td>" for value in record.values()) + "</tr>" for record in records)
    return f'<table class="summary"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table><p class=note>{note}</p>'


def _comparisons_html(found: list[Comparison]) -> str:
    """The paired comparisons, one sentence each, under what each pair shares."""
    if not found:
        return ""
    items = "".join(f"<li>{esc(comparison.context)} — <b>{esc(comparison.compared)} vs {esc(comparison.baseline)}</b>: "
                    f"{esc(comparison.summary())}</li>" for comparison in found)
    return f'<h2>Paired comparisons of SR</h2><ul class="comparisons">{items}</ul><p class=note>{esc(COMPARISON_NOTE)}</p>'


def _usage_html(usage: dict) -> str:
    """Token use and cost per role (and per commenter mode) as a table."""
    rows = [(role, entry) for role, entry in (usage.get("by_role") or {}).items()]
    rows += [(f"commenter ({mode})", entry) for mode, entry in (usage.get("by_commenter_mode") or {}).items()]
    if not rows:
        return ("<h2>Token use and cost per role</h2><p class=note>No model calls: every role ran on an offline "
                "provider (or every answer came from the call cache).</p>")
    body = "".join(
        f"<tr><td>{esc(role)}</td><td>{int(entry.get('calls', 0))}</td><td>{int(entry.get('prompt_tokens', 0))}</td>"
        f"<td>{int(entry.get('completion_tokens', 0))}</td><td>{entry.get('cost_usd', 0):.4f}</td></tr>"
        for role, entry in rows)
    return ('<h2>Token use and cost per role</h2><table class="summary"><thead><tr><th>role</th><th>calls</th>'
            f"<th>prompt tokens</th><th>completion tokens</th><th>cost (USD)</th></tr></thead><tbody>{body}</tbody></table>")


def _app_sections(results: list[AppRoundResult]) -> str:
    by_track: dict[tuple, list[AppRoundResult]] = {}
    for result in results:
        by_track.setdefault((result.app_id, *result.track_key), []).append(result)
    sections = []
    for (app_id, *track), rounds in sorted(by_track.items()):
        rounds.sort(key=lambda r: r.round)
        first, last = rounds[0], rounds[-1]
        best = max(rounds, key=lambda r: (r.sr, -r.round))
        shown = list({id(r): r for r in (first, best, last)}.values())
        shots = "".join(
            f'<figure><img src="{esc(r.screenshot)}" alt="{esc(app_id)} round {r.round}" loading="lazy">'
            f"<figcaption>round {r.round}{' (best)' if r is best else ''}: FC {100 * r.fc:.0f}% · SR {100 * r.sr:.0f}%</figcaption></figure>"
            for r in sorted(shown, key=lambda r: r.round) if r.screenshot
        )
        failed = [t for t in last.tasks if not t.success]
        dashboards = "".join(
            f'<figure class="dash"><a href="{esc(t.dashboard)}"><img src="{esc(t.dashboard)}" alt="dashboard {esc(t.task_id)}" loading="lazy"></a>'
            f"<figcaption>{esc(t.task_id)}: {esc(t.termination or t.reason or 'no checker')}{_trace_link(t.trace)}</figcaption></figure>"
            for t in failed if t.dashboard
        )
        # Every other kept trace (`trace: all` keeps successes'; earlier rounds' failures): listed, not drawn.
        shown_traces = {t.trace for t in failed if t.dashboard}
        traces = "".join(f"<li>round {r.round} · {esc(t.task_id)} ({'success' if t.success else esc(t.termination or 'failure')})"
                         f"{_trace_link(t.trace)}</li>"
                         for r in rounds for t in r.tasks if t.trace and t.trace not in shown_traces)
        unsolvable = "".join(f"<li>{esc(t.task_id)}: {esc(t.reason or 'unsolvable')}</li>" for t in last.tasks if not t.checker_valid)
        claimed = "".join(f"<li>{esc(t.task_id)}: {esc(t.proof_reason or 'not proven')}</li>"
                          for t in last.tasks if t.checker_valid and t.proof == "claimed")
        contract = _contract_note(last.contract)
        repeated = _pass_counts(rounds)
        sections.append(
            f'<section><h3>{esc(app_id)} <small>{esc(first.domain)} · {esc(track_text(track))}</small></h3>'
            f'<div class="shots">{shots}</div>{contract}{_carry_note(rounds)}{_regressions(rounds)}{_gaming(rounds)}'
            + (f"<h4>Failed tasks in the last round ({len(failed)})</h4><div class=dashes>{dashboards}</div>" if failed else "")
            + (f"<h4>Other Playwright traces</h4><ul>{traces}</ul>" if traces else "")
            + (f"<h4>Tasks without a valid checker</h4><ul>{unsolvable}</ul>" if unsolvable else "")
            + (f"<h4>Checkers claimed, not proven (counted in FC, not in FC proven)</h4><ul>{claimed}</ul>" if claimed else "")
            + repeated
            + _stage_errors(rounds)
            + "</section>"
        )
    return "".join(sections)


_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1280px;color:#111;padding:0 16px}
table.results,table.summary{border-collapse:collapse;font-size:13px}
table.results td,table.results th,table.summary td,table.summary th{border:1px solid #ccc;padding:4px 8px;text-align:center}
.note{color:#555;font-size:13px}.shots,.dashes{display:flex;flex-wrap:wrap;gap:12px}
.bad{color:#a11}
figure{margin:0}figure img{width:400px;border:1px solid #ccc}.dash img{width:600px}
section{border-top:1px solid #ddd;margin-top:24px}small{color:#666;font-weight:normal}
.offline{background:#fff4d6;border:1px solid #e0b84c;padding:8px 12px}
"""


def write_report(run_dir: Path, rows: list[TableRow], results: list[AppRoundResult], offline_roles: list[str], usage: dict | None = None) -> Path:
    """Write `report.html` (tables, plot, per-app before/after screenshots, failed dashboards)."""
    plot = write_plot(run_dir, rows)
    offline = ""
    if offline_roles:
        offline = (
            f'<p class="offline">Offline providers (no model endpoint) were used for: <b>{esc(", ".join(offline_roles))}</b>. '
            "They are honest baselines — the heuristic agent reads the page and clicks by coordinates; the offline "
            "commenter measures the DOM; the offline coder applies deterministic agent-centric rewrites.</p>"
        )
    usage_html = _usage_html(usage or {})
    by_cua = _records_html(by_cua_table(rows), "Each cell: SR (FC) overall, in %, per CUA (the paper's Table 4 shape).")
    by_commenter = _records_html(by_commenter_mode_table(rows, usage), "One row per commenter mode: SR (FC), in %, pooled over "
                                 "the last rounds of the tracks with that mode, and the model commenter's tokens in "
                                 "thousands in that mode, from the usage ledger (the paper's Table 5 shape).")
    document = (
        f"<!doctype html><html><head><meta charset=utf-8><title>AUI loop — {esc(run_dir.name)}</title>"
        f"<style>{_STYLE}{VARIATION_STYLE}</style></head><body><h1>AUI loop report: {esc(run_dir.name)}</h1>{offline}"
        f"<h2>Results (paper Table 3 shape)</h2>{_table_html(rows)}"
        f"<h3>With 95 % intervals</h3>{_records_html(interval_records(rows), esc(INTERVAL_NOTE))}"
        f"{_comparisons_html(comparisons(results))}<h2>By CUA</h2>{by_cua}"
        + (f"<h2>By commenter mode</h2>{by_commenter}" if by_commenter else "")
        + f"<h2>Scoring: weighted score, SR per level, repeats</h2>{_records_html(scoring_table(rows), esc(SCORING_NOTE))}"
        + variation_section_html(variation_rows(results), results)
        + (f'<h2>FC and SR across rounds</h2><img id="plot" src="{PLOT_FILE}" alt="FC and SR across rounds" width="1000">' if plot else "")
        + agreement_section_html(write_agreement(run_dir))  # and agreement.json, when there are judges to compare
        + defects_section_html(run_dir)
        + insights_section_html(run_dir)
        + f"{usage_html}<h2>Apps</h2>{_app_sections(results)}"
        f"<details><summary>Markdown table</summary><pre>{esc(markdown_table(rows))}</pre></details>"
        "</body></html>"
    )
    return write_atomic(run_dir / "report.html", document.encode("utf-8"))


def _contract_note(contract: dict | None) -> str:
    """The last revision's non-regression outcome in one line: kept / violated, what it guarded, what went missing."""
    if not contract:
        return ""
    status = contract.get("status", "?")
    ids, functions = contract.get("protected_ids") or [], contract.get("protected_functions") or []
    parts = [f"<b>{esc(status)}</b>: guarded {len(ids)} checker id(s) and {len(functions)} function(s)"]
    if contract.get("retried"):
        first = (contract.get("first_missing_ids") or []) + [f"{f}()" for f in contract.get("first_missing_functions") or []]
        parts.append(f"retried once after the first reply dropped {esc(', '.join(first[:8]) or 'some')}")
    missing = (contract.get("missing_ids") or []) + [f"{f}()" for f in contract.get("missing_functions") or []]
    if missing:
        parts.append(f"still missing: {esc(', '.join(missing[:8]))}")
    if contract.get("unchecked_ids"):
        parts.append(f"{len(contract['unchecked_ids'])} id(s) built at run time, not checkable in the source")
    return f"<p class=note>Non-regression contract of the last revision — {'; '.join(parts)}.</p>"


def _pass_counts(rounds: list[AppRoundResult]) -> str:
    """With repeats: per task and round, in how many of the N repeats it passed (k of N, behind pass^k)."""
    if not any(r.repeats for r in rounds):
        return ""
    counts = {r.round: pass_counts(r) for r in rounds}
    tasks = list(dict.fromkeys(t for c in counts.values() for t in c))
    head = "".join(f"<th>round {r}</th>" for r in counts)
    body = "".join(f"<tr><td>{esc(task)}</td>" + "".join(
        f"<td>{counts[r][task][0]}/{counts[r][task][1]}</td>" if task in counts[r] else "<td>–</td>" for r in counts)
        + "</tr>" for task in tasks)
    return (f'<h4>Passes across repeats (k of N)</h4><table class="summary"><thead><tr><th>task</th>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def _stage_errors(rounds: list[AppRoundResult]) -> str:
    """Model stages that failed for good and degraded a round (see `AppRoundResult.errors`)."""
    items = "".join(f"<li>round {r.round}: {esc(error[:300])}</li>" for r in rounds for error in r.errors)
    return f"<h4 class=bad>Stages that failed after their retries</h4><ul>{items}</ul>" if items else ""


def _trace_link(trace: str | None) -> str:
    """A rollout's Playwright trace: the file and the command that opens it."""
    if not trace:
        return ""
    return f' · <a href="{esc(trace)}">trace</a> <code>playwright show-trace {esc(trace)}</code>'


def _carry_note(rounds: list[AppRoundResult]) -> str:
    """Rounds that revised an earlier round's version than the one just before (`carry: best`)."""
    items = [f"round {r.round} revises round {r.revised_from}" for r in rounds
             if r.revised_from is not None and r.revised_from != r.round - 1]
    return f"<p class=note>Best version carried: {esc('; '.join(items))}.</p>" if items else ""


def _regressions(rounds: list[AppRoundResult]) -> str:
    """Tasks that succeeded in a round and failed in the next (passed to the next revision as feedback)."""
    items = "".join(f"<li>round {r.round}: {esc(', '.join(r.regressions))}</li>" for r in rounds if r.regressions)
    return f"<h4 class=bad>Regressions (succeeded the round before, failed in this one)</h4><ul>{items}</ul>" if items else ""


def _gaming(rounds: list[AppRoundResult]) -> str:
    """Successes the static gaming audit doubts: the revision changed what the checker reads, not what writes it."""
    items = "".join(f"<li>round {r.round}: <b>{esc(s.task_id)}</b> — {esc(s.reason)}</li>" for r in rounds for s in r.gaming_suspects)
    return (f"<h4 class=bad>Successes to check by hand (the revision may show a state without the change behind it)</h4>"
            f"<ul>{items}</ul>") if items else ""
