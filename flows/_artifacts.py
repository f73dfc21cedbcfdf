"""What the flows show in the Prefect UI: per-round tables and summaries, progress, the FC/SR table."""

from __future__ import annotations

from urllib.parse import quote

from prefect.artifacts import (
    acreate_markdown_artifact,
    acreate_progress_artifact,
    acreate_table_artifact,
    aupdate_progress_artifact,
)

from experiment import ExperimentConfig
from results import (DOMAINS, GAP_FACTOR, AppRoundResult, Insights, TableRow, VariationRow, interval_text, p_value, pct,
                     track_text)


def viewer_url(base: str, run_name: str, trajectory_id: str | None = None, app_id: str | None = None,
               track: str | None = None) -> str:
    """A link into the run viewer (`aui view`, at `base`): a run, an app of it (and a track), or a trajectory."""
    url = f"{base.rstrip('/')}/runs/{quote(run_name)}"
    if trajectory_id:
        return f"{url}/t/{quote(trajectory_id)}"
    if app_id:
        return f"{url}/apps/{quote(app_id)}" + (f"?track={quote(track, safe='')}" if track else "")
    return url


def artifact_key(*parts: object) -> str:
    """A Prefect artifact key (lower case, letters, digits and dashes) from `parts`."""
    text = "-".join(str(p) for p in parts).lower()
    return "".join(c if c.isalnum() else "-" for c in text).strip("-")[:200]


async def publish_round(config: ExperimentConfig, result: AppRoundResult) -> None:
    """A table artifact for this app's round (FC/SR) and a markdown summary with dashboard links."""
    base = config.viewer_url
    rows = [{"task": t.task_id, "checker": t.proof or ("valid" if t.checker_valid else "none"), "success": t.success,
             "termination": t.termination or "", "steps": t.steps} for t in result.tasks]
    await acreate_table_artifact(
        table=rows,
        key=artifact_key(result.app_id, result.coder, result.cua, result.mode, "round", result.round, result.commenter_mode or ""),
        description=f"**{result.app_id}** round {result.round}: FC {100 * result.fc:.1f}% · SR {100 * result.sr:.1f}%",
    )
    track = track_text(result.track_key)
    files = f"{base.rstrip('/')}/files/{config.name}"
    app_page = viewer_url(base, config.name, app_id=result.app_id, track=result.track.folder.as_posix())
    lines = [f"### {result.app_id} — round {result.round} ({track})",
             f"FC **{100 * result.fc:.1f}%** · SR **{100 * result.sr:.1f}%** · [in the viewer]({app_page}) · "
             f"[app version]({files}/{result.html}) — links work while `aui view` runs", ""]
    if result.screenshot:
        lines.append(f"![{result.app_id} round {result.round}]({files}/{result.screenshot})")
    for task in result.tasks:
        if task.trajectory and not task.success:
            lines.append(f"- `{task.task_id}` {task.termination}: [step through it]({viewer_url(base, config.name, task.trajectory)})"
                         + (f" · [dashboard]({files}/{task.dashboard})" if task.dashboard else ""))
    await acreate_markdown_artifact(markdown="\n".join(lines),
                                    key=artifact_key("summary", result.app_id, result.coder, result.cua, result.mode, result.round,
                                                     result.commenter_mode or ""))


class Progress:
    """A progress artifact for the sweep, advanced as app tracks finish."""

    def __init__(self, config: ExperimentConfig):
        self.config, self.tracks, self.done, self.artifact_id = config, 0, 0, None

    async def start(self, tracks: int) -> None:
        self.tracks = tracks
        self.artifact_id = await acreate_progress_artifact(
            progress=0.0, key=artifact_key("progress", self.config.name),
            description=f"{self.tracks} app tracks × {self.config.rounds + 1} rounds")

    async def track_done(self) -> None:
        self.done += 1
        await aupdate_progress_artifact(self.artifact_id, progress=100.0 * self.done / self.tracks)


async def publish_table(config: ExperimentConfig, rows: list[TableRow]) -> None:
    """One FC/SR table per round (rows: coder × CUA × mode; columns: the domains with tasks, overall)."""
    for round_ in sorted({r.round for r in rows}):
        await acreate_table_artifact(
            table=round_table(rows, round_),
            key=artifact_key("fc-sr", config.name, "round", round_),
            description=f"FC, SR and the weighted score per domain, each with its 95 % interval, round {round_} "
                        f"({config.name})",
        )


def round_table(rows: list[TableRow], round_: int) -> list[dict[str, str]]:
    """The Prefect table of one round: per track, FC, FC proven, SR and the weighted score per domain (the domains
    with tasks, then overall), SR (supported) and SR (proven) overall, and SR per task level — FC, SR and the
    weighted score each followed by its 95 % interval ("<figure> <domain> 95% CI", `results._error_bars`)."""
    domains = [d for d in DOMAINS if any(r.tasks.get(d) for r in rows)] + ["overall"]

    def with_ci(label: str, row: TableRow, figure: str) -> dict[str, str]:
        return {key: value for d in domains for key, value in (
            (f"{label} {d}", pct(getattr(row, figure).get(d))),
            (f"{label} {d} 95% CI", interval_text(getattr(row, f"{figure}_ci95").get(d)) or "–"))}

    return [{"coder": r.coder, "cua": r.cua, "mode": r.mode, "commenter": r.commenter_mode or "–",
             **with_ci("FC", r, "fc"), **{f"FC proven {d}": pct(r.fc_proven.get(d)) for d in domains},
             **with_ci("SR", r, "sr"), **with_ci("weighted", r, "weighted"),
             "SR supported": pct(r.sr_supported.get("overall")), "SR proven": pct(r.sr_proven.get("overall")),
             **{f"SR {level}": pct(value) for level, value in r.sr_per_level.items()}}
            for r in rows if r.round == round_]


async def publish_variations(config: ExperimentConfig, rows: list[VariationRow]) -> None:
    """One table of SR per variation per round (rows: the tracks; `results._variation_table`), linking the viewer."""
    run_page = viewer_url(config.viewer_url, config.name)
    for round_ in sorted({r.round for r in rows}):
        await acreate_table_artifact(
            table=variation_round_table(rows, round_),
            key=artifact_key("variations", config.name, "round", round_),
            description=f"SR per variation (%) over the common tasks, round {round_} ({config.name}): the tasks with a "
                        f"valid checker on the default look that every variant kept; the spread across variations and "
                        f"the reliability gap (std across > {GAP_FACTOR:g} × std within). Heatmap, failure modes and "
                        f"exclusions: [in the viewer]({run_page}#variations) (while `aui view` runs) and report.html.")


def variation_round_table(rows: list[VariationRow], round_: int) -> list[dict[str, str]]:
    """The Prefect table of one round's variations: per track, SR per variation (common tasks), the spread across
    variations, the std within (across repeats), the gap flag and the common tasks."""
    names = list(dict.fromkeys(name for row in rows if row.round == round_ for name in row.variations))
    return [{"coder": r.coder, "cua": r.cua, "mode": r.mode, "commenter": r.commenter_mode or "–",
             **{f"SR {name}": pct(r.sr.get(name)) for name in names},
             "mean": pct(r.mean), "std": pct(r.std), "MAD": pct(r.mad), "min": pct(r.min), "max": pct(r.max),
             "std within": pct(r.std_within),
             "gap": "?" if r.reliability_gap is None else ("yes" if r.reliability_gap else "no"),
             "common tasks": f"{r.tasks_common}/{r.tasks_valid}"}
            for r in rows if r.round == round_]


async def publish_insights(config: ExperimentConfig, insights: Insights) -> None:
    """The principle table as a Prefect table artifact (association: the note says so)."""
    await acreate_table_artifact(
        table=[{"principle": r.principle, "applied": str(r.applied), "unverifiable": str(r.unverifiable),
                "revisions": str(r.revisions), "apps": str(r.apps), "tasks touched": str(r.tasks),
                "gained": str(r.gained), "lost": str(r.lost), "net (pts)": pct(r.net),
                "95% CI": interval_text(r.net_ci95) or "–", "McNemar p": p_value(r.mcnemar_p)}
               for r in sorted(insights.principles, key=lambda r: -(r.net or 0))],
        key=artifact_key("insights", config.name),
        description=f"Design principles of {config.name}: {insights.note}",
    )
