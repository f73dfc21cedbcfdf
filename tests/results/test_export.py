"""`results.export_dataset` / `aui export`: a run of the offline loop out as a dataset, read back table by table.

The run is one bundled app, v0 and one offline revision, heuristic agent (≈ 50 steps). Its steps table must hold
every step of every trajectory, each screenshot byte for byte the trajectory's PNG, each action in three forms that
the project's parsers read back to the executed action; tasks and revisions must agree with results.json; a damaged
run folder is one error naming the file, and leaves nothing behind.
"""

from __future__ import annotations

import io
import json
import math
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image
from typer.testing import CliRunner

from aui import app as cli
from cua import (
    Action,
    Point,
    RolloutConfig,
    Step,
    Trajectory,
    action_to_screen,
    parse_computer_action,
    parse_uitars,
)
from results import DATASET_COLUMNS, ExportError, export_dataset, read_results
from results._export_rows import action_columns

APP = "unit-converter"
TABLES = ("steps", "tasks", "revisions")
# A point comes back from UI-TARS text within this many screen pixels: the text keeps one decimal of the
# smart-resized space (±0.05 of its pixels, ×1280/1288 on screen), `from_screen` three, `to_screen` two (±0.005).
UITARS_TOLERANCE_PX = 0.06


@pytest.fixture(scope="session")
async def offline_run(tmp_path_factory) -> Path:
    from experiment import make_config
    from flows import sweep_without_prefect
    from tests.built_once import built_once

    async def build(out: Path) -> None:
        config = make_config({"name": "export-run", "app_ids": [APP], "rounds": 1, "out_dir": str(out), "max_steps": 10})
        await sweep_without_prefect(config)

    return await built_once(tmp_path_factory, "export-runs", build) / "export-run"


@pytest.fixture(scope="session")
def exported(offline_run, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exports") / "dataset"
    export_dataset([offline_run], out, batch_rows=7)
    return out


def trajectories(run: Path) -> list[tuple[str, Trajectory]]:
    found = []
    for result in read_results(run).apps:
        for _, outcomes in result.every_repeat():
            found += [(o.trajectory, Trajectory.load(run / o.trajectory)) for o in outcomes if o.trajectory]
    return found


def test_the_steps_table_holds_every_step_with_its_screenshots_byte_for_byte(offline_run, exported):
    rows = pq.read_table(exported / "steps").to_pylist()
    episodes = trajectories(offline_run)
    assert len(rows) == sum(len(trajectory.steps) for _, trajectory in episodes) > 20
    assert {row["episode"] for row in rows} == {folder for folder, t in episodes if t.steps}
    by_step = {(row["episode"], row["step"]): row for row in rows}
    for folder, trajectory in episodes:
        seen = trajectory.initial_screenshot
        for step in trajectory.steps:
            row = by_step[(folder, step.index)]
            expected = (offline_run / folder / seen).read_bytes()
            assert row["screenshot"] == expected and row["screenshot_file"] == seen  # the screen it acted on
            assert Image.open(io.BytesIO(row["screenshot"])).size == (1280, 720)
            last = step.index == len(trajectory.steps)
            assert row["final_screenshot"] == ((offline_run / folder / step.screenshot).read_bytes() if last else None)
            assert row["done"] is last and row["termination"] == (trajectory.termination.value if last else None)
            assert row["instruction"] == trajectory.task and row["steps"] == len(trajectory.steps)
            seen = step.screenshot
        rewards = [by_step[(folder, step.index)]["reward"] for step in trajectory.steps]
        assert rewards == [1.0 if step.checker_passed and not any(s.checker_passed for s in trajectory.steps[:i]) else 0.0
                           for i, step in enumerate(trajectory.steps)]
        assert sum(rewards) == (1.0 if trajectory.success else 0.0)


def test_every_action_reads_back_through_the_parsers(exported):
    rows = [row for row in pq.read_table(exported / "steps").to_pylist() if row["action_json"]]
    kinds = set()
    for row in rows:
        action = Action.model_validate_json(row["action_json"])
        kinds.add(action.kind)
        assert_round_trips(action, row, row["viewport_width"], row["viewport_height"])
    assert {"click", "finished"} <= kinds


def assert_round_trips(action: Action, columns: dict, width: int, height: int) -> None:
    """UI-TARS text → screen within the tolerance; the computer-use item and the JSON exactly."""
    reply = parse_uitars(columns["action_uitars"])
    assert len(reply.actions) == 1 and reply.thought == (columns["thought"] or "").strip()
    back = action_to_screen(reply.actions[0], "uitars-1.5", width, height)
    for field in ("point", "end"):
        sent, read = getattr(action, field), getattr(back, field)
        assert (sent is None) == (read is None)
        if sent is not None:  # `to_screen` holds a point in the last column / row at that pixel's edge (width − 1)
            assert math.isclose(read.x, min(sent.x, width - 1), abs_tol=UITARS_TOLERANCE_PX), (action, back)
            assert math.isclose(read.y, min(sent.y, height - 1), abs_tol=UITARS_TOLERANCE_PX), (action, back)
    if action.kind == "finished":  # a finished without an answer is written content='' and read back as ''
        assert (back.text or None) == (action.text or None)
        assert columns["action_computer_use"] is None
        return
    unplaced = {"point": None, "end": None, "amount": None}  # UI-TARS's grammar has no scroll distance
    assert back.model_copy(update=unplaced) == action.model_copy(update=unplaced)
    executed = action
    if action.kind == "scroll" and action.amount is None:
        executed = action.model_copy(update={"amount": float(RolloutConfig().scroll_px)})
    assert parse_computer_action(json.loads(columns["action_computer_use"])) == executed


@pytest.mark.parametrize("action", [
    Action(kind="click", point=Point(x=0, y=0)),
    Action(kind="click", point=Point(x=1279.5, y=719.25)),
    Action(kind="left_double", point=Point(x=640.4, y=360.6)),
    Action(kind="right_single", point=Point(x=17, y=700)),
    Action(kind="move", point=Point(x=333.33, y=222.22)),
    Action(kind="drag", point=Point(x=10, y=20), end=Point(x=1270, y=710)),
    Action(kind="scroll", point=Point(x=640, y=400), direction="down"),
    Action(kind="scroll", point=Point(x=640, y=400), direction="left", amount=120),
    Action(kind="hotkey", keys=["ctrl", "a"]),
    Action(kind="hotkey", keys=["enter"]),
    Action(kind="type", text="It's 5 o'clock\nnext \\ line"),
    Action(kind="wait"),
    Action(kind="finished", text="The total is 42"),
    Action(kind="finished"),
], ids=lambda action: action.describe())
def test_every_kind_of_action_round_trips_through_its_three_forms(action):
    trajectory = Trajectory(app_id="a", task_id="t", task="x", policy="scripted")
    step = Step(index=1, screen_action=action, model_action=action, thought="Because the task says so.")
    columns = {**action_columns(step, trajectory), "thought": step.thought}
    assert Action.model_validate_json(columns["action_json"]) == action
    assert_round_trips(action, columns, trajectory.viewport_width, trajectory.viewport_height)


def test_tasks_and_revisions_agree_with_the_run(offline_run, exported):
    results = read_results(offline_run)
    tasks = pq.read_table(exported / "tasks").to_pylist()
    assert len(tasks) == sum(len(result.tasks) for result in results.apps)
    for row in tasks:
        assert row["checker_valid"] and row["proven"] and row["proof"] == "proven"  # the bundled tasks are proven
        assert row["checker"] and json.loads(row["reference_solution"]) and row["description"]
    revisions = pq.read_table(exported / "revisions").to_pylist()
    assert len(revisions) == 1
    revision = revisions[0]
    before, after = sorted(results.apps, key=lambda r: r.round)
    assert (revision["round_from"], revision["round_to"]) == (0, 1)
    assert revision["html_before"] == (offline_run / before.html).read_text()
    assert revision["html_after"] == (offline_run / after.html).read_text()
    assert revision["sr_before"] == pytest.approx(before.sr) and revision["sr_after"] == pytest.approx(after.sr)
    gained = {t.task_id for t in after.tasks if t.passed} - {t.task_id for t in before.tasks if t.passed}
    assert set(revision["tasks_gained"]) == gained and revision["coder_offline"] is True
    assert json.loads(revision["feedback"])["actionable_changes"]
    assert revision["changes"] is None  # no insights.json in this run: the change log is not there to read


def test_the_card_lists_the_configs_says_offline_providers_and_documents_every_column(exported):
    text = (exported / "README.md").read_text()
    header = yaml.safe_load(text.split("---\n")[1])
    assert header["configs"] == [{"config_name": t, "data_files": [{"split": "train", "path": f"{t}/*.parquet"}],
                                  **({"default": True} if t == "steps" else {})} for t in TABLES]
    assert header["license"] == "other" and header["task_categories"] and "offline-providers" in header["tags"]
    assert "**offline providers** played these roles" in text and "cua (heuristic)" in text
    assert "the project's bundled apps" in text
    assert "each app's reference HTML, as the offline coder gives it" in text  # the run's coder is offline
    for table in TABLES:
        schema = pq.read_schema(next((exported / table).glob("*.parquet")))
        assert schema.names == [name for name, _, _ in DATASET_COLUMNS[table]]
        assert all(f"| `{name}` |" in text for name in schema.names)


def test_rows_are_written_in_bounded_row_groups_and_shards(offline_run, tmp_path):
    report = export_dataset([offline_run], tmp_path / "small-groups", batch_rows=7, shard_bytes=1)
    files = sorted((tmp_path / "small-groups" / "steps").glob("*.parquet"))
    assert [f"steps/{path.name}" for path in files] == report.files["steps"]
    assert files[0].name == f"train-00000-of-{len(files):05d}.parquet" and len(files) == math.ceil(report.rows["steps"] / 7)
    assert all(pq.ParquetFile(path).metadata.row_group(0).num_rows <= 7 for path in files)
    export_dataset([offline_run], tmp_path / "by-bytes", batch_bytes=1)  # every row its own group
    metadata = pq.ParquetFile(next((tmp_path / "by-bytes" / "steps").glob("*.parquet"))).metadata
    assert metadata.num_row_groups == metadata.num_rows == report.rows["steps"]


def damage(run: Path, how: str) -> Path:
    """Damage a copy of the run; returns the file named in the error."""
    outcome = read_results(run).apps[0].tasks[0]
    folder = run / outcome.trajectory
    if how == "missing trajectory":
        (folder / "trajectory.json").unlink()
        return folder / "trajectory.json"
    if how == "missing screenshot":
        (folder / "step_001.png").unlink()
        return folder / "step_001.png"
    if how == "truncated screenshot":
        data = (folder / "step_001.png").read_bytes()
        (folder / "step_001.png").write_bytes(data[: len(data) // 2])
        return folder / "step_001.png"
    if how == "corrupt trajectory":
        (folder / "trajectory.json").write_text('{"app_id": "x", "steps": [')
        return folder / "trajectory.json"
    if how == "corrupt results":
        (run / "results.json").write_text("{")
        return run / "results.json"
    (run / Path(read_results(run).apps[0].html).parent / "verdicts.json").unlink()  # missing verdicts
    return run / Path(read_results(run).apps[0].html).parent / "verdicts.json"


@pytest.mark.parametrize("how", ["missing trajectory", "missing screenshot", "truncated screenshot", "corrupt trajectory",
                                 "corrupt results", "missing verdicts"])
def test_a_damaged_run_is_one_error_naming_the_file_and_leaves_nothing_behind(offline_run, tmp_path, how):
    run = tmp_path / "export-run"
    shutil.copytree(offline_run, run)
    named = damage(run, how)
    out = tmp_path / "out" / "dataset"
    with pytest.raises(ExportError) as error:
        export_dataset([run], out)
    assert str(named) in str(error.value)
    assert not (tmp_path / "out").exists()  # no dataset, no hidden staging folder, not even the folder made for them
    result = CliRunner().invoke(cli, ["export", str(run), "--out", str(out)])
    assert result.exit_code == 2 and result.output.startswith("error: ") and str(named) in " ".join(result.output.split())
    assert not out.exists()


def test_a_non_empty_out_is_refused_unless_forced_and_kept_when_the_forced_export_fails(offline_run, tmp_path):
    out = tmp_path / "dataset"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(ExportError, match="not empty"):
        export_dataset([offline_run], out)
    broken = tmp_path / "broken"
    shutil.copytree(offline_run, broken)
    damage(broken, "missing screenshot")
    with pytest.raises(ExportError):
        export_dataset([broken], out, force=True)
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []
    assert (out / "keep.txt").read_text() == "mine"  # a failed forced export leaves the old folder as it was
    export_dataset([offline_run], out, force=True)
    assert not (out / "keep.txt").exists() and (out / "README.md").is_file()
    with pytest.raises(ExportError, match="holds the run folder"):
        export_dataset([offline_run], offline_run.parent, force=True)
    with pytest.raises(ExportError, match="inside the run folder"):  # --force would have replaced the run's apps/
        export_dataset([offline_run], offline_run / "apps", force=True)
    with pytest.raises(ExportError, match="already exported"):
        export_dataset([offline_run, offline_run], tmp_path / "twice")



def test_one_run_folder_may_be_given_alone_and_a_licence_must_be_an_id(offline_run, tmp_path):
    assert export_dataset(str(offline_run), tmp_path / "one").rows["steps"] > 0  # not the letters of its name
    with pytest.raises(ExportError, match="not a licence id"):
        export_dataset([offline_run], tmp_path / "bad", license="mit\nconfigs: []")
    assert not (tmp_path / "bad").exists()
    export_dataset([offline_run], tmp_path / "mit", license="mit")
    assert yaml.safe_load((tmp_path / "mit" / "README.md").read_text().split("---\n")[1])["license"] == "mit"

def test_aui_export_prints_what_it_wrote(offline_run, tmp_path):
    result = CliRunner().invoke(cli, ["export", str(offline_run), "--out", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "steps of" in output and "offline providers played" in output and "aui insights" in output


def test_the_datasets_library_loads_every_config(exported, tmp_path, monkeypatch):
    """Hugging Face's own loader reads the card's configs (a dev dependency; skipped without it)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    datasets = pytest.importorskip("datasets")
    for table in TABLES:
        loaded = datasets.load_dataset(str(exported), table, split="train", cache_dir=str(tmp_path / "cache"))
        assert loaded.num_rows == pq.read_table(exported / table).num_rows
    steps = datasets.load_dataset("parquet", data_files={"steps": str(exported / "steps" / "*.parquet")},
                                  cache_dir=str(tmp_path / "cache"))["steps"]
    assert steps.num_rows == pq.read_table(exported / "steps").num_rows
    assert Image.open(io.BytesIO(steps[0]["screenshot"])).format == "PNG"
