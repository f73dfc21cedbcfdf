"""The report's "Reliability across variations" section (issue 17, OpenApps' axis), per track and round.

Each section says over which tasks each figure is computed, since a variant may exclude a task its
proof shows it breaks (`results._variation_table`): the heatmap and the spread are over the **common
tasks** (per app, the tasks with a valid checker on the default look that every variant kept); the
"kept" column over each variation's own kept tasks; the failure modes over every rollout of a
variation. Colours come from classes (`heat-0` … `heat-10`, tenths of SR), not inline styles, so
the viewer's pages, whose CSP forbids inline styles, draw the same cells the same way.
"""

from __future__ import annotations

from cua import FAILURE_MODES

from ._format import esc, pct, track_text
from ._outcomes import AppRoundResult
from ._variation_table import GAP_FACTOR, VariationRow, gap_label

# Red (0 %) through amber to green (100 %), one per tenth of SR; light enough for dark text.
HEAT_COLOURS = ["#f8b4b4", "#f9c0ad", "#facca6", "#fbd89f", "#fce498", "#fdf09a",
                "#e8f09a", "#d2ec9c", "#bce69f", "#a6dfa3", "#90d8a8"]

STYLE = ("table.heatmap td.heat{min-width:72px}table.heatmap td small{display:block;color:#444}"
         + "".join(f".heat-{index}{{background:{colour}}}" for index, colour in enumerate(HEAT_COLOURS))
         + ".gap-yes{color:#a11;font-weight:bold}.gap-no{color:#176d2f}.variant-pair{display:flex;gap:4px}"
         ".variant-pair img{width:300px}")


def heat_class(value: float | None) -> str:
    """The cell's colour class: `heat-0` … `heat-10` by tenths of SR, `heat-none` without a figure."""
    return "heat-none" if value is None else f"heat-{round(10 * value)}"


def variation_section_html(rows: list[VariationRow], results: list[AppRoundResult]) -> str:
    """The whole section ("" for a run with no other variation than the default look)."""
    if not rows:
        return ""
    parts = ["<h2 id=variations>Reliability across variations (OpenApps' axis)</h2>"
             "<p class=note>The same app versions and tasks in other looks and wordings (<code>variations:</code>); the "
             "loop revises on one of them (<code>revise_on</code>, the default look unless set) and every variation is "
             "evaluated on every round's version. A variant is proven before it is used: a task whose reference "
             "solution no longer passes on it is excluded for that variation, with the reason.</p>"]
    parts += [_row_section(row, [r for r in results if r.track_key == row.track_key and r.round == row.round])
              for row in rows]
    return "".join(parts)


def _row_section(row: VariationRow, group: list[AppRoundResult]) -> str:
    return (f'<section class="variations" data-round="{row.round}"><h3>{esc(track_text(row.track_key))} · round '
            f"{row.round}</h3>"
            f"{_spread(row)}{_heatmap(row)}{_failure_modes(row)}{_exclusions(row, group)}{_screenshots(row, group)}"
            "</section>")


def _spread(row: VariationRow) -> str:
    gap = gap_label(row)
    return (f'<p class="spread">Over the <b>common tasks</b> ({row.tasks_common} of the {row.tasks_valid} tasks with a '
            f"valid checker on the default look; {row.repeats} repeat(s) pooled) — across variations: mean "
            f"<b>{pct(row.mean)}</b> · std <b>{pct(row.std)}</b> · MAD {pct(row.mad)} · min–max {pct(row.min)}–"
            f"{pct(row.max)}; within a variation (std across repeats, averaged): {pct(row.std_within)} · "
            f'<span class="gap gap-{"unknown" if gap == "?" else gap}">reliability gap: {gap}</span></p>'
            f"<p class=note>Gap: std across variations &gt; {GAP_FACTOR:g} × std within (OpenApps' rule of thumb); "
            "'?' with a single repeat. Std is the population std, MAD the median absolute deviation from the median.</p>")


def _heatmap(row: VariationRow) -> str:
    apps = list(row.by_app)
    head = "".join(f"<th>{esc(app)}</th>" for app in apps)
    body = []
    for name in row.variations:
        cells = []
        for app in apps:
            if name not in row.by_app[app]:  # not made for this app, or nothing rolled out on it
                cells.append('<td class="heat heat-none">–</td>')
                continue
            value = row.by_app[app][name]  # `variation_rows` gives every figure of `by_app` its n in `by_app_n`
            cells.append(f'<td class="heat {heat_class(value)}" data-app="{esc(app)}">{pct(value)}'
                         f"<small>n={row.by_app_n[app][name]}</small></td>")
        pooled = row.sr.get(name)
        n_all = sum(found.get(name, 0) for found in row.by_app_n.values())
        cells.append(f'<td class="heat {heat_class(pooled)}" data-app="all"><b>{pct(pooled)}</b><small>n={n_all}</small></td>')
        cells.append(f"<td>{pct(row.sr_kept.get(name))}<small>n={row.rollouts.get(name, 0)}</small></td>")
        body.append(f'<tr data-variation="{esc(name)}"><th>{esc(name)}</th>{"".join(cells)}</tr>')
    return (f'<table class="summary heatmap"><thead><tr><th>variation</th>{head}<th>all apps (common)</th>'
            f'<th>kept tasks</th></tr></thead><tbody>{"".join(body)}</tbody></table>'
            "<p class=note>SR in %. Each app's cell is over that app's common tasks; <b>all apps</b> pools every app's "
            "common tasks (the figure the spread above is computed from); <b>kept tasks</b> is over the variation's "
            "own kept tasks, so a variation that excluded a task is not compared on the same set there. n = rollouts "
            "(tasks × repeats). –: no figure — with n=0 the app has no common task left (some variant excluded "
            "them all: see the exclusions), without n the variation could not be made for that app (see below).</p>")


def _failure_modes(row: VariationRow) -> str:
    seen = {mode for found in row.failure_modes.values() for mode in found}
    modes = [mode for mode in FAILURE_MODES if mode in seen] + sorted(seen - set(FAILURE_MODES))
    head = "".join(f"<th>{esc(mode.replace('_', ' '))}</th>" for mode in modes)
    body = "".join(
        f'<tr data-variation="{esc(name)}"><th>{esc(name)}</th><td>{row.rollouts.get(name, 0)}</td>'
        f"<td>{row.failures.get(name, 0)}</td>"
        + "".join(f"<td>{row.failure_modes.get(name, {}).get(mode, 0) or ''}</td>" for mode in modes) + "</tr>"
        for name in row.variations)
    return ('<h4>Failure modes per variation</h4><table class="summary failure-modes"><thead><tr><th>variation</th>'
            f"<th>rollouts</th><th>failed</th>{head}</tr></thead><tbody>{body}</tbody></table>"
            "<p class=note>Over every rollout of each variation's kept tasks (all repeats); a rollout may show several "
            "modes (read off its trajectory: <code>cua.failure_modes</code>)."
            + ("" if modes else " No failed rollout showed a failure mode.") + "</p>")


def _exclusions(row: VariationRow, group: list[AppRoundResult]) -> str:
    total = sum(row.excluded.values())
    items = [f"<li><b>{esc(result.app_id)}</b> · {esc(variation.variation)} · {esc(task)}: {esc(reason)}</li>"
             for result in sorted(group, key=lambda r: r.app_id) for variation in result.variations
             for task, reason in variation.excluded.items()]
    errors = [f"<li><b>{esc(result.app_id)}</b> · {esc(variation.variation)}: {esc(variation.error)}</li>"
              for result in sorted(group, key=lambda r: r.app_id) for variation in result.variations if variation.error]
    counts = ", ".join(f"{esc(name)} {count}" for name, count in row.excluded.items() if count)
    parts = [f'<details class="exclusions"><summary>Excluded tasks: <b>{total}</b>'
             + (f" ({counts})" if counts else "") + " — left out of that variation's figures and of the common tasks"
             "</summary>" + (f"<ul>{''.join(items)}</ul>" if items else "<p class=note>none</p>") + "</details>"]
    if errors:
        parts.append(f'<details class="variant-errors" open><summary class=bad>Variations not made: {len(errors)}'
                     f"</summary><ul>{''.join(errors)}</ul></details>")
    return "".join(parts)


def _screenshots(row: VariationRow, group: list[AppRoundResult]) -> str:
    """Before / after: the default look's first screenshot beside each variant's, for one app (the one showing the
    most variants; the first by name on a tie)."""
    shown = [r for r in group if r.screenshot and any(v.screenshot for v in r.variations)]
    if not shown:
        return ""
    app = max(sorted(shown, key=lambda r: r.app_id), key=lambda r: sum(bool(v.screenshot) for v in r.variations))
    pairs = "".join(
        f'<figure class="variant-shot" data-variation="{esc(v.variation)}"><div class="variant-pair">'
        f'<img src="{esc(app.screenshot)}" alt="{esc(app.app_id)} default look" loading="lazy">'
        f'<img src="{esc(v.screenshot)}" alt="{esc(app.app_id)} {esc(v.variation)}" loading="lazy"></div>'
        f"<figcaption>default → <b>{esc(v.variation)}</b> (SR {pct(row.by_app.get(app.app_id, {}).get(v.variation))} "
        f"over common tasks)</figcaption></figure>"
        for v in app.variations if v.screenshot)
    return (f"<h4>Before / after: {esc(app.app_id)} in each variation (round {row.round}, at load)</h4>"
            f'<div class="shots">{pairs}</div>')
