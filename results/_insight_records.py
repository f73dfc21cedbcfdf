"""What a run folder holds of its design insights: `insights.json` (the change log, the flips and what touched
them, the principle table) and `ablations/<name>/ablation.json` (a principle or change left out, on the same
tasks). `insights` computes the first and `flows.ablate` the second; the report, the viewer and the
command read them here, and the report's "Design insights" section is written here: the principle table
(association), the flips and the changes that touched them, and every ablation of the run (cause).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, computed_field, model_validator

from ._error_bars import interval_text
from ._format import esc, p_value, pct

PAGE_WIDE = frozenset({"body", "html", ":root", "*"})
"""Selectors that stand for the whole page."""
INSIGHTS_FILE = "insights.json"
ASSOCIATION_NOTE = ("Association, not cause: every change of a revision ships with the others. A principle's net is SR "
                    "after − SR before over the tasks its applied changes touched (valid checker on both versions, "
                    "repeat 0), with Newcombe's paired 95 % interval and McNemar's exact p; `aui insights ablate` "
                    "measures cause by leaving the principle out.")
ABLATION_FILE = "ablation.json"
ChangeStatus = Literal["applied", "not applied", "unverifiable"]
CHANGE_STATUSES: tuple[ChangeStatus, ...] = ("applied", "not applied", "unverifiable")
"""A change's verdict: seen on the two versions; looked for there and not seen; or nothing on the pages could tell
(it names no element and sets nothing the loaded page shows on the elements the tasks acted on)."""
ABLATION_SELECTION = ("The revisions where the change log (`insights`) finds it applied: the decision behind the "
                      "principle table's applied and revisions columns, so this ablation's revisions are that "
                      "table's revisions for this run (its applied column counts changes: a revision can have "
                      "several of one principle). The others are listed as skipped, with the change log's verdict.")


class Change(BaseModel):
    """One change of one revision, asked for or made, with whether it happened."""

    id: str = Field(description="app/track/rROUND/asked-N or …/made-NAME: unique within the run.")
    app_id: str
    track: str = Field(description="coder · CUA · mode · commenter mode.")
    round: int = Field(description="The version the revision made.")
    revised_from: int = Field(description="The version it revised.")
    kind: Literal["asked", "made"] = Field(description="asked: a commenter's actionable change; made: an offline "
                                           "coder's transform.")
    text: str
    transform: str | None = None
    principle: str | None = Field(default=None, description="The agent-centric principle it answers to, if named.")
    elements: list[str] = Field(default_factory=list, description="The selectors it names.")
    changed_elements: list[str] = Field(default_factory=list, description="Those seen to change: by the DOM diff, or "
                                        "(a page-wide change) in their computed style on the loaded page.")
    status: ChangeStatus = Field(description="applied: seen on the two versions; not applied: looked for and not "
                                 "seen; unverifiable: nothing on the pages could tell (never counted as applied).")
    how: str = Field(description="How it was applied, or why it counts as not applied or unverifiable.")
    counted: bool = Field(description="Counted in the principle table: what the coder made (an offline revision's "
                          "transforms) or, for a model coder, what it was asked for.")

    @model_validator(mode="before")
    @classmethod
    def _status_of_old_files(cls, data: Any) -> Any:
        """insights.json written before the three verdicts had `applied: bool` alone."""
        if isinstance(data, dict) and "status" not in data and "applied" in data:
            return {**data, "status": "applied" if data["applied"] else "not applied"}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def applied(self) -> bool:
        return self.status == "applied"

    @property
    def page_wide(self) -> bool:
        return any(element in PAGE_WIDE for element in self.changed_elements)


class ElementCrop(BaseModel):
    """One element a flip is linked through, as it looked on each version after load (run-relative PNGs)."""

    element: str
    before: str | None = Field(default=None, description="None: the element is not on that version.")
    after: str | None = None


class TaskFlip(BaseModel):
    run: str = Field(default="", description="The run folder it belongs to (insights may pool several runs).")
    app_id: str
    track: str
    round: int
    revised_from: int
    task_id: str
    direction: Literal["gained", "lost"]
    elements: list[str] = Field(description="What the task touches: trajectory targets (both versions), checker reads.")
    changes: list[str] = Field(default_factory=list, description="Ids of the applied changes that touched it.")
    principles: list[str] = Field(default_factory=list)
    trajectories: list[str] = Field(default_factory=list, description="Before, after (run-relative folders).")
    crops: list[ElementCrop] = Field(default_factory=list, description="The linked elements before and after.")


class PrincipleRow(BaseModel):
    principle: str
    applied: int = Field(description="Applied changes answering to it (counted ones: see `Change.counted`).")
    unverifiable: int = Field(default=0, description="Its counted changes nothing on the pages could confirm or "
                              "refute: not in applied, nor in the tasks touched.")
    apps: int
    revisions: int = Field(description="Revisions that applied it (`insights.principle_status`): the ones an "
                           "ablation of it makes again.")
    tasks: int = Field(description="Task pairs (valid checker on both versions) its changes touched.")
    gained: int
    lost: int
    net: float | None = Field(description="SR after − SR before over those tasks (association, not cause).")
    net_ci95: list[float] | None = None
    mcnemar_p: float | None = None


class AblatedRevision(BaseModel):
    app_id: str
    track: str
    round: int
    left_out: list[str] = Field(description="What this revision had of the ablated principle or change (each one the "
                                "change log did not find applied says so).")
    changes: list[str] = Field(default_factory=list, description="Ids of the applied changes that selected it.")
    html: str = Field(description="The ablated version, relative to the ablation's folder.")
    full_sr: float | None
    ablated_sr: float | None
    tasks: int = Field(description="Tasks with a valid checker on both versions (the paired comparison's).")


class Ablation(BaseModel):
    run: str
    principle: str | None = None
    change: str | None = None
    folder: str
    offline: bool
    revisions: list[AblatedRevision] = Field(default_factory=list)
    selection: str = ABLATION_SELECTION
    skipped: list[str] = Field(default_factory=list, description="Revisions not made again, and why (the change "
                               "log's verdict).")
    tasks: int = 0
    both: int = 0
    full_only: int = Field(default=0, description="Passed with the full revision only: lost by leaving it out.")
    ablated_only: int = 0
    neither: int = 0
    full_sr: float | None = None
    ablated_sr: float | None = None
    paired_diff: float | None = Field(default=None, description="SR(ablated) − SR(full) on the same tasks.")
    ci95: list[float] | None = None
    mcnemar_p: float | None = None
    cache: dict[str, dict[str, int]] = Field(default_factory=dict, description="Per stage kind, the stage runs this "
                                             "invocation ran and reused from the cache (the Prefect flow only).")
    note: str = ("Cause, not association: the same revision made again with only this left out, on the same tasks; "
                 "repeat 0's rollouts compared.")


class Insights(BaseModel):
    runs: list[str]
    offline: bool = Field(description="Every role of every run was played by an offline provider.")
    note: str = ASSOCIATION_NOTE
    pairs: int = Field(description="Task pairs compared: valid checker on both versions of a revision.")
    left_out: int = Field(description="Tasks of revised versions left out: no valid checker on one of the versions.")
    flips_total: int
    flips_attributed: int = Field(description="Flips with at least one applied change that touched them.")
    flips_attributed_ratio: float | None
    principles: list[PrincipleRow]
    flips: list[TaskFlip]
    changes: list[Change]


def read_insights(run_dir: Path | str) -> Insights | None:
    """The run folder's insights.json, None when `aui insights` has not been run on it.

    Raises:
        ValueError: the file is not in the shape `insights` writes, naming it.
    """
    path = Path(run_dir) / INSIGHTS_FILE
    if not path.is_file():
        return None
    try:
        return Insights.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        raise ValueError(f"{path}: not an insights file: {error.errors()[0]['msg']}") from None


def read_ablations(run_dir: Path | str) -> list[Ablation]:
    """Every ablation of the run folder (`ablations/*/ablation.json`), by name; unreadable ones are skipped."""
    found = []
    for path in sorted(Path(run_dir).glob(f"ablations/*/{ABLATION_FILE}")):
        try:
            found.append(Ablation.model_validate_json(path.read_text(encoding="utf-8")))
        except (OSError, ValidationError, json.JSONDecodeError):
            continue
    return found


PRINCIPLE_COLUMNS = ("principle", "applied", "unverifiable", "revisions", "apps", "tasks touched", "gained", "lost",
                     "net (pts)", "95 % CI", "McNemar p")
"""The principle table's columns (report.html, `principles_markdown`): applied and unverifiable count changes,
revisions the revisions that applied the principle (what an ablation of it makes again)."""


def principle_cells(insights: Insights) -> list[list[str]]:
    """Each principle's row as every table shows it, in `PRINCIPLE_COLUMNS`' order, the largest net first."""
    return [[r.principle, str(r.applied), str(r.unverifiable), str(r.revisions), str(r.apps), str(r.tasks),
             str(r.gained), str(r.lost), pct(r.net), interval_text(r.net_ci95) or "–", p_value(r.mcnemar_p)]
            for r in sorted(insights.principles, key=lambda r: -(r.net or 0))]


def _markdown(columns: tuple[str, ...], rule: str, rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(columns) + " |", rule, *("| " + " | ".join(cells) + " |" for cells in rows)])


def _html(columns: tuple[str, ...], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{esc(column)}</th>" for column in columns)
    body = "".join("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in cells) + "</tr>" for cells in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def principles_markdown(insights: Insights) -> str:
    """The principle table as Markdown (the report's, cell for cell)."""
    rule = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
    return _markdown(PRINCIPLE_COLUMNS, rule, principle_cells(insights))


def principles_html(insights: Insights) -> str:
    ratio = "–" if insights.flips_attributed_ratio is None else pct(insights.flips_attributed_ratio)
    return (f"<p class=note>{esc(insights.note)} Over {insights.pairs} task pairs ({insights.left_out} left out: "
            f"no valid checker on one version); {insights.flips_attributed} of {insights.flips_total} flips "
            f"({ratio} %) have a change that touched them. Applied and unverifiable count changes (unverifiable: "
            "nothing on the pages could tell; never counted as applied); revisions: those that applied the principle, "
            "what an ablation of it makes again.</p>" + _html(PRINCIPLE_COLUMNS, principle_cells(insights)))


def flips_html(insights: Insights) -> str:
    if not insights.flips:
        return ""
    rows = "".join(
        f"<tr><td>{esc(f.app_id)}</td><td>{esc(f.task_id)}</td><td>{f.revised_from} → {f.round}</td>"
        f"<td>{esc(f.direction)}</td><td>{esc(', '.join(f.principles) or '–')}</td><td>{len(f.changes)}</td><td>"
        + " ".join(f'<a href="{esc(t)}/dashboard.png">{label}</a>'
                   for t, label in zip(f.trajectories, ("before", "after")))
        + "</td></tr>" for f in insights.flips)
    return ("<h3>Tasks that flipped, and the changes that touched them</h3><table><tr><th>app</th><th>task</th>"
            f"<th>rounds</th><th>flip</th><th>principles</th><th>changes</th><th>dashboards</th></tr>{rows}</table>")


ABLATION_COLUMNS = ("left out", "revisions", "tasks", "SR full", "SR ablated", "difference (pts)", "95 % CI",
                    "McNemar p", "gained", "lost")
"""The ablation table's columns (report.html, `ablations_markdown`): gained = passed only without it (ablated only),
lost = passed only with it (full only)."""


def ablation_cells(ablation: Ablation) -> list[str]:
    """One ablation's row as every table shows it, in `ABLATION_COLUMNS`' order."""
    a = ablation
    return [str(a.principle or a.change), str(len(a.revisions)), str(a.tasks), pct(a.full_sr), pct(a.ablated_sr),
            pct(a.paired_diff), interval_text(a.ci95) or "–", p_value(a.mcnemar_p), str(a.ablated_only),
            str(a.full_only)]


def ablations_html(ablations: list[Ablation]) -> str:
    if not ablations:
        return ""
    return (f"<h3>Ablations</h3><p class=note>{esc(ablations[0].note)} {esc(ablations[0].selection)}</p>"
            + _html(ABLATION_COLUMNS, [ablation_cells(a) for a in ablations]))


def ablations_markdown(ablations: list[Ablation]) -> str:
    """The ablation table as Markdown (the report's, cell for cell); "" without ablations."""
    if not ablations:
        return ""
    return _markdown(ABLATION_COLUMNS, "|---|" + "---:|" * (len(ABLATION_COLUMNS) - 1),
                     [ablation_cells(a) for a in ablations])


def insights_section_html(run_dir: Path) -> str:
    """The section, or "" when the run has neither insights nor ablations."""
    insights, ablations = read_insights(run_dir), read_ablations(run_dir)
    if insights is None and not ablations:
        return ""
    body = (principles_html(insights) + flips_html(insights) if insights else "") + ablations_html(ablations)
    return f"<h2>Design insights</h2>{body}"
