"""labels.jsonl: atomic appends from concurrent processes, torn lines, merging people, importing CSV/JSONL."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pytest

from verifier.judge import (
    Label,
    LabelImportError,
    append_labels,
    import_labels,
    label_conflicts,
    merged_labels,
    read_labels,
)
from verifier.judge._labels import MAX_PROBLEMS_SHOWN

from .conftest import trajectory_id

T0 = datetime(2026, 11, 25, 10, 0, tzinfo=timezone.utc)
WRITERS, LINES_EACH = 4, 150


def _label(task: str, label: str, who: str, minutes: int = 0, note: str = "") -> Label:
    return Label(trajectory_id=trajectory_id(task), label=label, who=who, note=note, when=T0 + timedelta(minutes=minutes))


# Each writer is a fresh Python process (not a fork: by the time this runs, the suite's process
# holds Prefect's and Playwright's threads, and a forked child of it may die or hang).
# Long notes make each line ~4 KB, so interleaved writes would show as broken JSON.
_WRITER = textwrap.dedent("""
    import sys
    from verifier.judge import Label, append_labels
    run_dir, writer, lines = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for index in range(lines):
        note = f"{writer}:{index}:" + "x" * 4000
        append_labels(run_dir, [Label(trajectory_id=f"w{writer}/{index}", label="success", who=f"writer-{writer}", note=note)])
""")


def test_appends_from_processes_at_once_keep_every_line_whole(tmp_path):
    workers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(writer), str(LINES_EACH)],
                                stderr=subprocess.PIPE) for writer in range(WRITERS)]
    errors = [worker.communicate(timeout=120)[1].decode() for worker in workers]
    assert [worker.returncode for worker in workers] == [0] * WRITERS, errors
    read = read_labels(tmp_path)
    assert read.problems == []
    assert len(read.labels) == WRITERS * LINES_EACH
    seen = {(label.who, label.note.split(":")[1]) for label in read.labels}
    assert seen == {(f"writer-{w}", str(i)) for w in range(WRITERS) for i in range(LINES_EACH)}
    assert all(label.note.endswith("x" * 4000) for label in read.labels)


def test_a_torn_last_line_is_ignored_and_reported(tmp_path):
    append_labels(tmp_path, [_label("t1", "success", "ana"), _label("t2", "failure", "ana"), _label("t3", "unsure", "bo")])
    whole = _label("t4", "success", "bo").model_dump_json().encode()
    with (tmp_path / "labels.jsonl").open("ab") as handle:
        handle.write(whole[: len(whole) // 2])  # a writer died mid-line
    read = read_labels(tmp_path)
    assert [label.trajectory_id for label in read.labels] == [trajectory_id(t) for t in ("t1", "t2", "t3")]
    assert len(read.problems) == 1
    assert "labels.jsonl:4: torn last line" in read.problems[0]


def test_an_append_after_a_torn_line_starts_on_a_line_of_its_own(tmp_path):
    append_labels(tmp_path, [_label("t1", "success", "ana")])
    with (tmp_path / "labels.jsonl").open("ab") as handle:
        handle.write(b'{"trajectory_id": "apps/x", "lab')
    append_labels(tmp_path, [_label("t2", "failure", "ana")])
    read = read_labels(tmp_path)
    assert [label.label for label in read.labels] == ["success", "failure"]
    assert len(read.problems) == 1 and "labels.jsonl:2: not valid JSON" in read.problems[0]


def test_a_line_that_is_not_a_label_is_skipped_and_named(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"trajectory_id": "a", "label": "maybe", "who": "ana"}) + "\n"
                    + _label("t1", "success", "ana").model_dump_json() + "\n")
    read = read_labels(tmp_path)
    assert len(read.labels) == 1
    assert read.problems == [f"{path}:1: label: 'maybe' is not one of 'success', 'failure' or 'unsure'; line skipped"]


def test_no_labels_file_is_no_labels(tmp_path):
    read = read_labels(tmp_path)
    assert read.labels == [] and read.problems == []


def test_two_people_merge_agree_disagree_and_unsure_abstains():
    labels = [
        _label("t1", "success", "ana"), _label("t1", "success", "bo"),   # agree
        _label("t2", "failure", "ana"), _label("t2", "success", "bo"),   # disagree → unsure, a conflict
        _label("t3", "unsure", "ana"), _label("t3", "failure", "bo"),    # unsure abstains → failure
        _label("t5", "unsure", "ana"), _label("t5", "unsure", "bo"),     # nobody decided → unsure
        _label("t6", "success", "ana"),                                  # one person
    ]
    assert merged_labels(labels) == {trajectory_id("t1"): "success", trajectory_id("t2"): "unsure",
                                     trajectory_id("t3"): "failure", trajectory_id("t5"): "unsure",
                                     trajectory_id("t6"): "success"}
    conflicts = label_conflicts(labels)
    assert [(c.trajectory_id, c.labels) for c in conflicts] == [(trajectory_id("t2"), {"ana": "failure", "bo": "success"})]


def test_a_person_changing_their_mind_counts_their_latest_label():
    labels = [
        _label("t1", "success", "ana", minutes=0), _label("t1", "failure", "ana", minutes=5),  # later: failure
        _label("t2", "failure", "ana", minutes=9), _label("t2", "success", "ana", minutes=1),  # imported later, older
        _label("t3", "success", "ana", minutes=2), _label("t3", "unsure", "ana", minutes=2),   # same time: later line
        _label("t4", "success", "ana", minutes=0), _label("t4", "failure", "bo", minutes=1),
        _label("t4", "success", "bo", minutes=7),  # bo changes their mind: no conflict any more
    ]
    merged = merged_labels(labels)
    assert merged[trajectory_id("t1")] == "failure"
    assert merged[trajectory_id("t2")] == "failure"
    assert merged[trajectory_id("t3")] == "unsure"
    assert merged[trajectory_id("t4")] == "success" and label_conflicts(labels) == []


def test_import_csv_appends_every_label_with_defaults_for_empty_cells(tiny_run, tmp_path):
    file = tmp_path / "ana.csv"
    file.write_text("\ufeffWho,Trajectory_ID,label,note,when\n"  # a byte-order mark and any column order
                    f"ana,{trajectory_id('t1')},Success,\"looks done, list shows it\",2026-11-25T10:00:00Z\n"
                    f"ana,{trajectory_id('t2')},failure,,\n"
                    "\n"
                    f"ana,{trajectory_id('t3')}, unsure ,nothing visible,2026-11-25 11:00\n")
    started = datetime.now(timezone.utc)
    labels = import_labels(file, tiny_run)
    assert [(label.trajectory_id, label.label) for label in labels] == [
        (trajectory_id("t1"), "success"), (trajectory_id("t2"), "failure"), (trajectory_id("t3"), "unsure")]
    read = read_labels(tiny_run)
    assert read.labels == labels and read.problems == []
    assert read.labels[0].note == "looks done, list shows it" and read.labels[1].note == ""
    assert read.labels[0].when == datetime(2026, 11, 25, 10, 0, tzinfo=timezone.utc)
    assert read.labels[2].when == datetime(2026, 11, 25, 11, 0, tzinfo=timezone.utc)  # no zone given: UTC
    assert started <= read.labels[1].when <= datetime.now(timezone.utc)  # an empty cell: the time of the import


def test_import_jsonl_appends_after_what_is_there(tiny_run, tmp_path):
    append_labels(tiny_run, [_label("t1", "success", "ana")])
    file = tmp_path / "bo.jsonl"
    file.write_text(json.dumps({"trajectory_id": trajectory_id("t1"), "label": "failure", "who": "bo"}) + "\n\n"
                    + json.dumps({"trajectory_id": trajectory_id("t4"), "label": "failure", "who": "bo", "note": "n"}) + "\n")
    labels = import_labels(file, tiny_run)
    assert len(labels) == 2
    read = read_labels(tiny_run)
    assert [(label.who, label.label) for label in read.labels] == [("ana", "success"), ("bo", "failure"), ("bo", "failure")]
    assert [c.trajectory_id for c in label_conflicts(read.labels)] == [trajectory_id("t1")]


def test_bad_csv_lines_are_named_by_file_line_and_field_and_nothing_is_appended(tiny_run, tmp_path):
    append_labels(tiny_run, [_label("t1", "success", "ana")])
    before = (tiny_run / "labels.jsonl").read_bytes()
    file = tmp_path / "bad.csv"
    file.write_text("trajectory_id,label,note,who,when\n"
                    f"{trajectory_id('t1')},success,,bo,\n"
                    f"{trajectory_id('t2')},maybe,,bo,\n"
                    f"{trajectory_id('t3')},failure,,,\n"
                    "apps/todo/offline/round-0/rollouts/heuristic/t99,failure,,bo,\n"
                    f"{trajectory_id('t4')},failure,,bo,yesterday\n"
                    f"{trajectory_id('t5')},failure,bo\n")
    with pytest.raises(LabelImportError) as caught:
        import_labels(file, tiny_run)
    problems = caught.value.problems
    assert problems[0] == f"{file}:3: label: 'maybe' is not one of 'success', 'failure' or 'unsure'"
    assert problems[1].startswith(f"{file}:4: who: ")
    assert problems[2].startswith(f"{file}:5: trajectory_id: 'apps/todo/offline/round-0/rollouts/heuristic/t99' "
                                  "is not a trajectory of the run")
    assert problems[3].startswith(f"{file}:6: when: ")
    assert problems[4] == f"{file}:7: row: 3 cells, the header names 5 columns"
    assert len(problems) == 5
    assert (tiny_run / "labels.jsonl").read_bytes() == before


def test_bad_jsonl_lines_are_named_and_an_unknown_field_is_refused(tiny_run, tmp_path):
    file = tmp_path / "bad.jsonl"
    file.write_text(json.dumps({"trajectory_id": trajectory_id("t1"), "label": "success", "who": "bo"}) + "\n"
                    + json.dumps({"trajectory_id": trajectory_id("t2"), "label": "success", "who": "bo", "notes": "x"}) + "\n"
                    + "{not json\n" + "[1, 2]\n")
    with pytest.raises(LabelImportError) as caught:
        import_labels(file, tiny_run)
    assert caught.value.problems == [f"{file}:2: notes: unknown field",
                                     f"{file}:3: record: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
                                     f"{file}:4: record: not a JSON object (got list)"]
    assert not (tiny_run / "labels.jsonl").exists()


def test_a_csv_header_without_a_required_column_or_with_an_unknown_one_is_refused(tiny_run, tmp_path):
    file = tmp_path / "bad-header.csv"
    file.write_text(f"trajectory_id,lable,who\n{trajectory_id('t1')},success,ana\n")
    with pytest.raises(LabelImportError) as caught:
        import_labels(file, tiny_run)
    assert caught.value.problems == [f"{file}:1: header: missing column 'label'",
                                     f"{file}:1: header: unknown column 'lable' (columns: trajectory_id,label,note,who,when)"]


def test_an_unknown_extension_and_an_empty_file_are_refused(tiny_run, tmp_path):
    other = tmp_path / "labels.txt"
    other.write_text("whatever")
    with pytest.raises(LabelImportError, match=r"unknown format '\.txt' — give a \.csv file"):
        import_labels(other, tiny_run)
    header_only = tmp_path / "empty.csv"
    header_only.write_text("trajectory_id,label,who\n")
    with pytest.raises(LabelImportError, match="no labels in the file"):
        import_labels(header_only, tiny_run)
    assert not (tiny_run / "labels.jsonl").exists()


def test_many_bad_lines_are_all_kept_and_the_message_is_capped(tiny_run, tmp_path):
    bad = MAX_PROBLEMS_SHOWN + 10
    file = tmp_path / "many.csv"
    file.write_text("trajectory_id,label,who\n" + "".join(f"{trajectory_id('t1')},nope,ana\n" for _ in range(bad)))
    with pytest.raises(LabelImportError) as caught:
        import_labels(file, tiny_run)
    assert len(caught.value.problems) == bad
    assert caught.value.listing[-1] == "… and 10 more" and len(caught.value.listing) == MAX_PROBLEMS_SHOWN + 1
    assert f"{file}:{bad + 1}: label" in caught.value.problems[-1]  # the last data line is line bad + 1
    assert str(caught.value).count("\n") == MAX_PROBLEMS_SHOWN + 1


def test_a_note_over_several_lines_keeps_the_line_numbers_of_the_file(tiny_run, tmp_path):
    file = tmp_path / "multiline.csv"
    file.write_text("trajectory_id,label,note,who\n"
                    f'{trajectory_id("t1")},success,"first line\nsecond line",ana\n'   # lines 2–3
                    "\n"                                                               # line 4
                    f"{trajectory_id('t2')},nope,,ana\n")                              # line 5
    with pytest.raises(LabelImportError) as caught:
        import_labels(file, tiny_run)
    assert [problem.split(": ")[0] for problem in caught.value.problems] == [f"{file}:5"]
