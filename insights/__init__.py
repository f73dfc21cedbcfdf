"""Design insights: which changes made the apps better for agents, with evidence — and, by ablation, cause.

    insights = await insights_of([Path("runs/demo")])       # the change log, the flips, the principle table
    print(principle_table(insights))                         # markdown; write_insights(...) → insights.json

A revision's changes are logged in one schema for every coder (`Change`: asked for by the commenter,
or made by the offline coder's transforms), each checked against the two versions as the agent met
them (the DOM after load in Chromium; a page-wide change by the computed style of the elements the
tasks acted on), never taken on the coder's word: applied, not applied, or unverifiable when nothing
on the pages can tell. `principle_status` decides per revision and principle whether it applied:
the principle table's revisions and the ablations' choice of revisions both read it. A task that flips between
the versions is linked to the applied changes that touched what it acted on or what its checker
reads (`TaskFlip`); per principle, the tasks its changes touched give an association with a paired
95 % interval (`PrincipleRow`). Ablations (`flows.ablate`) give cause. The records and the files they
live in (`insights.json`, `ablations/*/ablation.json`) are the `results` package's.
"""

from results import principles_markdown as principle_table  # the report's table, as Markdown

from ._attribution import attribute, touches
from ._changes import (
    NO_PRINCIPLE,
    Revision,
    named_selectors,
    principle_changes,
    principle_status,
    revised_pairs,
    revisions,
)
from ._dom import Version, element_changed, selector_tokens
from ._insights import insights_of, write_insights
from ._page import MOTION, motion_seconds, style_changed
from ._render import Renderer

__all__ = [
    "MOTION", "NO_PRINCIPLE", "Renderer", "Revision", "Version", "attribute", "element_changed", "insights_of",
    "motion_seconds", "named_selectors", "principle_changes", "principle_status", "principle_table", "revised_pairs", "revisions",
    "selector_tokens", "style_changed", "touches", "write_insights",
]
