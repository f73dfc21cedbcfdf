"""A run's judges compared pair by pair, `aui report`'s agreement section and agreement.json, `aui label import`."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aui import app as cli
from verifier.judge import AgreementReport, Judgement, Label, agreement_report, append_labels

from .conftest import dashboard_of, trajectory_id

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
OFFLINE = "offline judge (screenshot)"
MODEL = "gpt-5 judge (flow)"

# The checker (conftest.CHECKER): t1 t2 t3 success, t4 t5 t6 t7 failure, t8 no valid checker.
OFFLINE_SAYS = {"t1": True, "t2": False, "t3": True, "t4": False, "t5": True, "t6": False, "t7": None, "t8": True}
MODEL_SAYS = {"t1": True, "t4": True}
# ana and bo: t1 both success; t2 ana failure, bo success (a conflict → unsure); t4 ana success, then failure;
# t5 ana unsure (abstains), bo success.  Merged: t1 success, t2 unsure, t4 failure, t5 success.
LABELS = [("t1", "success", "ana", 0), ("t2", "failure", "ana", 0), ("t4", "success", "ana", 0), ("t4", "failure", "ana", 5),
          ("t5", "unsure", "ana", 0), ("t1", "success", "bo", 0), ("t2", "success", "bo", 0), ("t5", "success", "bo", 0)]


def _judgement(task: str, success: bool | None, judge: str = "offline", mode: str = "screenshot") -> Judgement:
    return Judgement(trajectory_id=trajectory_id(task), app_id="todo", task_id=task, judge=judge, offline=judge == "offline",
                     mode=mode, success=success, reason="seen" if success is not None else "",
                     error=None if success is not None else "reply was not JSON after one repair")


def _write_judgements(run_dir: Path) -> None:
    lines = [_judgement("t5", False)]  # judged again below (success): the later line wins
    lines += [_judgement(task, success) for task, success in OFFLINE_SAYS.items()]
    lines += [_judgement(task, success, judge="gpt-5", mode="flow") for task, success in MODEL_SAYS.items()]
    text = "".join(line.model_dump_json() + "\n" for line in lines)
    text += json.dumps({**_judgement("t1", True).model_dump(mode="json"), "success": "perhaps"}) + "\n"  # fails validation
    text += _judgement("t1", True).model_copy(update={"trajectory_id": "apps/elsewhere/t1"}).model_dump_json() + "\n"
    text += _judgement("t3", False).model_dump_json()[:40]  # a torn last line
    (run_dir / "judgements.jsonl").write_text(text)


def _write_labels(run_dir: Path) -> None:
    append_labels(run_dir, [Label(trajectory_id=trajectory_id(task), label=label, who=who, when=T0 + timedelta(minutes=minutes))
                            for task, label, who, minutes in LABELS])


@pytest.fixture()
def judged_run(tiny_run) -> Path:
    _write_judgements(tiny_run)
    _write_labels(tiny_run)
    return tiny_run


def _pair(report: AgreementReport, reference: str, other: str):
    return next(p for p in report.pairs if (p.reference, p.other) == (reference, other))


def test_every_two_judges_are_a_pair_with_the_reference_first(judged_run):
    report = agreement_report(judged_run)
    assert [(j.name, j.kind, j.decided, j.undecided) for j in report.judges] == [
        ("human", "human", 3, 1), ("checker", "checker", 7, 0), (MODEL, "model", 2, 0), (OFFLINE, "offline", 7, 1)]
    assert [(p.reference, p.other) for p in report.pairs] == [
        ("human", "checker"), ("human", MODEL), ("human", OFFLINE), ("checker", MODEL), ("checker", OFFLINE), (MODEL, OFFLINE)]


def test_checker_against_the_offline_judge_matches_the_hand_count(judged_run):
    pair = _pair(agreement_report(judged_run), "checker", OFFLINE)
    # Both decided t1..t6 (t7: the judge erred; t8: no valid checker). SS t1 t3, SF t2, FS t5 (re-judged success), FF t4 t6.
    assert (pair.n, pair.left_out_unsure, pair.left_out_missing) == (6, 1, 1)
    assert (pair.confusion.success_success, pair.confusion.success_failure,
            pair.confusion.failure_success, pair.confusion.failure_failure) == (2, 1, 1, 2)
    # p_o = 4/6; p_e = (3/6)(3/6) + (3/6)(3/6) = 1/2; κ = (2/3 − 1/2) / (1/2) = 1/3; balanced accuracy (2/3 + 2/3) / 2
    assert pair.agreement == pytest.approx(2 / 3) and pair.kappa == pytest.approx(1 / 3)
    assert pair.balanced_accuracy == pytest.approx(2 / 3)
    assert pair.disagreements == [trajectory_id("t2"), trajectory_id("t5")]


def test_people_against_the_checker_use_merged_labels(judged_run):
    report = agreement_report(judged_run)
    pair = _pair(report, "human", "checker")
    # Merged labels decided t1 S, t4 F, t5 S (t2 is unsure); the checker: t1 S, t4 F, t5 F; t3 t6 t7 unlabelled.
    assert (pair.n, pair.left_out_unsure, pair.left_out_missing) == (3, 1, 3)
    # p_o = 2/3; p_e = (2/3)(1/3) + (1/3)(2/3) = 4/9; κ = (2/3 − 4/9) / (5/9) = 2/5; recalls 1/2 and 1/1
    assert pair.kappa == pytest.approx(0.4) and pair.balanced_accuracy == pytest.approx(0.75)
    assert pair.reference_success_other_failure == [trajectory_id("t5")]
    assert [(c.trajectory_id, c.labels) for c in report.label_conflicts] == [(trajectory_id("t2"), {"ana": "failure", "bo": "success"})]
    # a model judge that only ever says success: κ 0 against people, balanced accuracy one half
    assert _pair(report, "human", MODEL).kappa == pytest.approx(0.0)
    assert _pair(report, MODEL, OFFLINE).balanced_accuracy_note.startswith("recall on the reference's successes only")


def test_bad_judgement_lines_are_reported_not_fatal(judged_run):
    problems = agreement_report(judged_run).problems
    assert len(problems) == 3
    assert re.search(r"judgements\.jsonl:12: success: Input should be a valid boolean.*; line skipped", problems[0])
    assert re.search(r"judgements\.jsonl:14: torn last line", problems[1])
    assert "judgements.jsonl: 1 trajectory id(s) not in this run's results.json ignored (e.g. 'apps/elsewhere/t1')" in problems[2]


def test_a_run_without_judgements_or_labels_has_an_empty_report(tiny_run):
    report = agreement_report(tiny_run)
    assert report.empty and report.pairs == [] and report.judges == []


def test_aui_report_adds_the_section_agreement_json_and_the_printed_table(judged_run):
    result = CliRunner().invoke(cli, ["report", str(judged_run)])
    assert result.exit_code == 0, result.output
    page = (judged_run / "report.html").read_text()
    assert '<h2 id="agreement">Agreement between judges</h2>' in page
    row = re.search(rf"<tr><td>checker</td><td>{re.escape(OFFLINE)}</td>(.*?)</tr></tbody>", page, re.S)
    assert row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[:5] == ["6", "1 / 1", "66.7", "0.333", "66.7"]
    # the disagreeing trajectories link to their dashboards, relative to report.html
    for task in ("t2", "t5"):
        assert f'<a href="{dashboard_of(task)}"><code>{trajectory_id(task)}</code></a>' in page
        assert (judged_run / dashboard_of(task)).is_file()
    assert "Labels people disagree on" in page and "ana failure, bo success" in page
    saved = AgreementReport.model_validate_json((judged_run / "agreement.json").read_text())
    assert saved == agreement_report(judged_run)
    assert saved.dashboards[trajectory_id("t5")] == dashboard_of("t5")
    assert "Agreement between judges" in result.stdout and "0.333" in result.stdout and "0.400" in result.stdout
    assert "judgements.jsonl:14: torn last line" in result.stderr


def test_aui_report_with_labels_only_compares_people_and_the_checker(tiny_run):
    _write_labels(tiny_run)
    result = CliRunner().invoke(cli, ["report", str(tiny_run)])
    assert result.exit_code == 0, result.output
    saved = AgreementReport.model_validate_json((tiny_run / "agreement.json").read_text())
    assert [(p.reference, p.other, p.n) for p in saved.pairs] == [("human", "checker", 3)]
    assert "Agreement between judges" in (tiny_run / "report.html").read_text()


def test_aui_report_without_judgements_or_labels_has_no_section(tiny_run):
    (tiny_run / "agreement.json").write_text("{}")  # left from labels since removed: it no longer describes the run
    result = CliRunner().invoke(cli, ["report", str(tiny_run)])
    assert result.exit_code == 0, result.output
    assert "Agreement between judges" not in (tiny_run / "report.html").read_text()
    assert "Agreement between judges" not in result.output
    assert not (tiny_run / "agreement.json").exists()


def test_aui_label_import_appends_and_says_from_whom(tiny_run, tmp_path, monkeypatch):
    file = tmp_path / "labels.csv"
    file.write_text("trajectory_id,label,who\n" + "".join(f"{trajectory_id(t)},success,{who}\n"
                                                          for t, who in (("t1", "ana"), ("t2", "ana"), ("t3", "bo"))))
    monkeypatch.chdir(tiny_run)  # RUN_DIR defaults to the current folder
    result = CliRunner().invoke(cli, ["label", "import", str(file)])
    assert result.exit_code == 0, result.output
    assert "appended 3 label(s)" in result.stdout and "from 2 person(s): ana 2, bo 1" in result.stdout
    assert len((tiny_run / "labels.jsonl").read_text().splitlines()) == 3


def test_aui_label_import_of_a_bad_file_lists_the_lines_and_exits_2(tiny_run, tmp_path):
    append_labels(tiny_run, [Label(trajectory_id=trajectory_id("t1"), label="success", who="ana")])
    before = (tiny_run / "labels.jsonl").read_bytes()
    file = tmp_path / "labels.jsonl"
    file.write_text(json.dumps({"trajectory_id": trajectory_id("t2"), "label": "success", "who": "bo"}) + "\n"
                    + json.dumps({"trajectory_id": "apps/todo/nope", "label": "success", "who": "bo"}) + "\n"
                    + json.dumps({"trajectory_id": trajectory_id("t3"), "label": "yes", "who": "bo"}) + "\n")
    result = CliRunner().invoke(cli, ["label", "import", str(file), str(tiny_run)])
    assert result.exit_code == 2
    assert f"{file}:2: trajectory_id: 'apps/todo/nope' is not a trajectory of the run" in result.stderr
    assert f"{file}:3: label: 'yes' is not one of" in result.stderr
    assert "2 problem(s)" in result.stderr and "nothing appended" in result.stderr
    assert (tiny_run / "labels.jsonl").read_bytes() == before


def test_aui_label_import_into_a_folder_that_is_not_a_run_exits_2(tmp_path):
    file = tmp_path / "labels.csv"
    file.write_text("trajectory_id,label,who\nx,success,ana\n")
    result = CliRunner().invoke(cli, ["label", "import", str(file), str(tmp_path)])
    assert result.exit_code == 2 and "no results.json here" in result.stderr
