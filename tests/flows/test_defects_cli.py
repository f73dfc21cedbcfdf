"""`aui defects inject | eval` on a small app: the set, its labelled tuples, detectors' figures, the report."""

from __future__ import annotations

import html
import json
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from apps_prompts import load_app, reference_html_path
from aui import app as cli
from commenter.detector import REFERENCE_NOTE, DetectorMetrics, read_detections
from cua import Trajectory, read_tuples
from llm.testing import ScriptedOpenAIServer, reply_text
from perturb import DefectSet, dataset_trajectories


@pytest.fixture(scope="module")
def small_apps(tmp_path_factory):
    """unit-converter with two of its tasks: enough for one display and one interaction defect, and quick."""
    spec = load_app("unit-converter")
    folder = tmp_path_factory.mktemp("apps") / "unit-converter"
    folder.mkdir()
    shutil.copy(reference_html_path(spec), folder / "index.html")
    data = spec.model_dump(mode="json", exclude_none=True, exclude={"source"})
    data["tasks"] = [t for t in data["tasks"] if t["id"] in ("swap-to-feet-metres", "miles-to-km")]
    (folder / "app.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return folder.parent


def _inject(small_apps, out, *extra):
    return CliRunner().invoke(cli, ["defects", "inject", "--apps", str(small_apps), "--app", "unit-converter",
                                    "--types", "misalignment,no-response", "--out", str(out), *extra])


@pytest.fixture(scope="module")
def injected(small_apps, tmp_path_factory):
    """One defect set with its dataset (its rollouts are the slow part), injected once: a test copies it (`_copy`)."""
    run = tmp_path_factory.mktemp("injected") / "defects"
    result = _inject(small_apps, run)
    assert result.exit_code == 0, result.output
    return run, result.output


def _copy(injected, tmp_path) -> Path:
    return Path(shutil.copytree(injected[0], tmp_path / "defects"))


def test_inject_then_eval_make_a_labelled_dataset_scored_in_the_report(small_apps, injected, tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_LLM_CACHE", "off")
    run = _copy(injected, tmp_path)
    assert "2 / 2 defects proven" in injected[1]
    defect_set = DefectSet.read(run)
    assert [r.type for r in defect_set.proven] == ["misalignment", "no-response"]
    entries = dataset_trajectories(defect_set)
    labels = {entry.folder: [t.defect for t in read_tuples(run / entry.folder)] for entry in entries}
    for entry in entries:
        if entry.defect_id is None:
            assert set(labels[entry.folder]) == {"none"}  # the defect-free app
        else:  # the steps on the bound element carry its type, the others none
            record = defect_set.record(entry.defect_id)
            assert record.type in labels[entry.folder] and set(labels[entry.folder]) <= {record.type, "none"}

    # The default: the offline rules compared with the defect-free app (labelled reference-assisted), and blind.
    result = CliRunner().invoke(cli, ["defects", "eval", str(run)])
    assert result.exit_code == 0, result.output
    assert "offline (offline baseline, reference-assisted): " in result.output and "Recall-D" in result.output
    assert "offline-blind (offline baseline): " in result.output
    assert result.output.count(REFERENCE_NOTE) == 1  # beside the reference-assisted figures only
    detections = read_detections(run, "offline")
    assert len(detections) == sum(len(v) for v in labels.values())
    assert all(d.error is None and d.offline for d in detections)
    metrics = DetectorMetrics.model_validate_json((run / "defect-metrics-offline.json").read_bytes())
    assert metrics.overall.tuples == len(detections) and metrics.overall.defective >= 2
    assert metrics.reference_assisted and metrics.overall.detected >= 1
    # a true positive: a tuple labelled defective that the detector called defective, not only defective tuples
    assert any(d.truth not in (None, "none") and d.defect for d in detections)
    blind = DetectorMetrics.model_validate_json((run / "defect-metrics-offline-blind.json").read_bytes())
    blind_detections = read_detections(run, "offline-blind")
    assert not blind.reference_assisted and blind.overall.tuples == len(detections)
    assert any(d.truth not in (None, "none") and d.defect for d in blind_detections)
    # no rule of the blind detector compared with the defect-free version
    assert not any("defect-free" in d.evidence for d in blind_detections)
    report = (run / "report.html").read_text(encoding="utf-8")
    assert "Recall-D" in report and "Confusion matrix" in report and "2 / 2 proven / attempted" in report
    assert "Detector: offline (offline baseline, reference-assisted)" in report
    assert html.escape(REFERENCE_NOTE) in report
    assert "Detector: offline-blind (offline baseline)</h3>" in report

    # A model that always answers "no defect" (GTArena's Qwen2-VL): Recall-D 0, Recall-N 100, in the same report.
    never = json.dumps({"defect": False, "type": None, "evidence": "Nothing looks wrong."})
    # A time limit a loaded machine meets: a call the client timed out and sent again would be counted twice.
    with ScriptedOpenAIServer(default=reply_text(never)) as server:
        models = tmp_path / "models.yaml"
        models.write_text(textwrap.dedent(f"""\
            roles: {{detector: local-vlm}}
            models:
              - {{name: local-vlm, provider: openai-compatible, model: vlm, base_url: "{server.base_url}", timeout_s: 120}}
            """), encoding="utf-8")
        result = CliRunner().invoke(cli, ["defects", "eval", str(run), "--detector", "detector", "--models-config",
                                          str(models)])
    assert result.exit_code == 0, result.output
    assert len(server.requests) == len(detections)  # one call per tuple
    assert "local-vlm: " in result.output and "local-vlm (" not in result.output and "Recall-D 0.0, Recall-N 100.0" in result.output
    assert "Detector: local-vlm" in (run / "report.html").read_text(encoding="utf-8")

    again = tmp_path / "again"
    result = _inject(small_apps, again, "--no-rollouts")
    assert result.exit_code == 0, result.output
    assert (again / "defects.json").read_bytes() == (run / "defects.json").read_bytes()  # deterministic
    assert not (again / "dataset").exists()


def test_bad_input_is_refused_naming_it(small_apps, tmp_path):
    result = CliRunner().invoke(cli, ["defects", "inject", "--apps", str(small_apps), "--types", "wobble",
                                      "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "unknown defect type 'wobble'" in result.output
    result = CliRunner().invoke(cli, ["defects", "inject", "--apps", str(small_apps), "--app", "nope",
                                      "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "--app: no app 'nope'" in result.output
    result = CliRunner().invoke(cli, ["defects", "inject", "--apps", "unit-converter,mortgage-calculator",  # ids, not a folder
                                      "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "no app specs at 'unit-converter,mortgage-calculator'" in result.output, result.output
    assert "name each with --app ID" in " ".join(result.output.split()), result.output
    result = CliRunner().invoke(cli, ["defects", "eval", str(tmp_path)])
    assert result.exit_code == 2 and "no defects.json" in result.output


def test_a_different_set_injected_over_an_earlier_one_takes_its_dataset_and_scores_away(small_apps, injected, tmp_path):
    """The same set again is a re-run: its dataset (it resumes) and the detectors' scores of it stay. A different set
    removes the earlier set's trajectories, detections and metrics, which would sit beside it as if of it; a file of
    the user's stays."""
    run = _copy(injected, tmp_path)
    assert CliRunner().invoke(cli, ["defects", "eval", str(run), "--detector", "offline"]).exit_code == 0
    (run / "notes.txt").write_text("the user's", encoding="utf-8")

    def files():
        return sorted(path.relative_to(run).as_posix() for path in run.rglob("*") if path.is_file())

    before = files()
    assert "defect-metrics-offline.json" in before and any(name.startswith("dataset/") for name in before)
    result = _inject(small_apps, run, "--no-rollouts")
    assert result.exit_code == 0, result.output
    assert files() == before
    result = _inject(small_apps, run, "--seed", "1", "--no-rollouts")
    assert result.exit_code == 0, result.output
    assert DefectSet.read(run).seed == 1
    # report.html stays: in a loop run's folder it is the loop's report (`defects eval` writes a defect run's again)
    assert files() == ["apps/unit-converter/index.html", "defects.json", "notes.txt", "report.html"]
    assert sorted(path.name for path in run.iterdir()) == ["apps", "defects.json", "notes.txt", "report.html"]


def test_a_re_run_rolls_a_cut_short_trajectory_out_again_without_its_earlier_screenshots(small_apps, injected, tmp_path):
    run = _copy(injected, tmp_path)
    folder = run / dataset_trajectories(DefectSet.read(run))[0].folder
    cut_short = json.loads((folder / "trajectory.json").read_text(encoding="utf-8")) | {"termination": None}
    (folder / "trajectory.json").write_text(json.dumps(cut_short), encoding="utf-8")  # as a killed run leaves it
    shutil.copy(folder / "step_000.png", folder / "step_099.png")
    result = _inject(small_apps, run)
    assert result.exit_code == 0, result.output
    assert Trajectory.load(folder).finished and not (folder / "step_099.png").exists()
