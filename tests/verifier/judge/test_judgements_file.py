"""judgements.jsonl: one write per line, a line cut by a crash skipped and never glued to the next."""

from __future__ import annotations

import json

from verifier.judge import JUDGEMENTS_FILE, Judgement, append_judgement, latest_judgements, read_judgements


def _judgement(task_id: str, success: bool | None = True) -> Judgement:
    return Judgement(trajectory_id=f"apps/a/rollouts/{task_id}", app_id="a", task_id=task_id, judge="offline",
                     offline=True, mode="screenshot", success=success)


def test_a_line_cut_by_a_crash_is_skipped_and_the_next_append_stays_whole(tmp_path):
    append_judgement(tmp_path, _judgement("one"))
    whole = (tmp_path / JUDGEMENTS_FILE).read_bytes()
    cut = _judgement("two").model_dump_json().encode()[:40]  # the crash came mid-write: no newline
    (tmp_path / JUDGEMENTS_FILE).write_bytes(whole + cut)
    assert [j.task_id for j in read_judgements(tmp_path)] == ["one"]
    append_judgement(tmp_path, _judgement("three"))
    assert [j.task_id for j in read_judgements(tmp_path)] == ["one", "three"]
    lines = (tmp_path / JUDGEMENTS_FILE).read_bytes().split(b"\n")
    assert lines[1] == cut and json.loads(lines[2])["task_id"] == "three"


def test_a_line_that_is_json_but_no_judgement_is_skipped_as_the_agreement_report_skips_it(tmp_path):
    append_judgement(tmp_path, _judgement("one"))
    with (tmp_path / JUDGEMENTS_FILE).open("a") as handle:
        handle.write(json.dumps({"trajectory_id": "x"}) + "\n")
    append_judgement(tmp_path, _judgement("two"))
    assert [j.task_id for j in read_judgements(tmp_path)] == ["one", "two"]


def test_the_latest_line_of_a_trajectory_is_its_judgement(tmp_path):
    assert read_judgements(tmp_path) == []
    append_judgement(tmp_path, _judgement("one", success=None))
    append_judgement(tmp_path, _judgement("one", success=False))
    [(key, latest)] = latest_judgements(read_judgements(tmp_path)).items()
    assert key == ("apps/a/rollouts/one", "offline", "screenshot") and latest.success is False
