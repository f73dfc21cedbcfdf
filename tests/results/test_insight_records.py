"""insights.json keeps reading: a file written before a change had three verdicts (`applied: bool` alone, no
`unverifiable` column) reads with the same meaning, and a new file carries both `status` and `applied`."""

from __future__ import annotations

import json

from results import INSIGHTS_FILE, Change, read_insights

OLD_CHANGE = {"id": "demo/offline/r1/made-enlarge_targets", "app_id": "demo", "track": "offline", "round": 1,
              "revised_from": 0, "kind": "made", "text": "44 px minimum", "applied": True, "how": "DOM diff",
              "counted": True}
OLD_ROW = {"principle": "interaction robustness", "applied": 1, "apps": 1, "revisions": 1, "tasks": 2, "gained": 1,
           "lost": 0, "net": 0.5}


def test_an_old_insights_file_reads_with_its_applied_flag_as_the_verdict(tmp_path):
    not_applied = {**OLD_CHANGE, "id": OLD_CHANGE["id"] + "-2", "applied": False}
    (tmp_path / INSIGHTS_FILE).write_text(json.dumps({
        "runs": [str(tmp_path)], "offline": True, "pairs": 2, "left_out": 0, "flips_total": 0, "flips_attributed": 0,
        "flips_attributed_ratio": None, "principles": [OLD_ROW], "flips": [], "changes": [OLD_CHANGE, not_applied]}))

    found = read_insights(tmp_path)

    assert [(c.status, c.applied) for c in found.changes] == [("applied", True), ("not applied", False)]
    assert found.principles[0].unverifiable == 0


def test_a_change_is_written_with_its_verdict_and_the_applied_flag_and_reads_back_the_same():
    change = Change.model_validate({**OLD_CHANGE, "status": "unverifiable"})
    written = json.loads(change.model_dump_json())
    assert (written["status"], written["applied"]) == ("unverifiable", False)
    assert Change.model_validate_json(change.model_dump_json()) == change
