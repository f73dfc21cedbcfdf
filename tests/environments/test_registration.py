"""Registering apps as environments, and which tasks an environment offers (only checkers proven on its page)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium
import pytest
import yaml

import environments
from environments import TaskNotOffered, register_apps
from environments import _proofs
from tests.environments.tiny_apps import write_counter_app

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_room_registers_the_bundled_apps_and_starts_no_thread_nor_browser():
    probe = ("import threading, psutil, gymnasium, environments; "
             "print(threading.active_count(), len(psutil.Process().children(recursive=True)), "
             "sorted(k for k in gymnasium.registry if k.startswith('aui/')))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    threads, children, ids = out.stdout.strip().split(" ", 2)
    assert (threads, children) == ("1", "0")
    bundled = sorted(path.name for path in (ROOT / "apps_prompts" / "bundled").iterdir() if (path / "app.yaml").is_file())
    assert eval(ids) == [f"aui/{app_id}-v0" for app_id in bundled] == sorted(environments.BUNDLED_IDS)


def test_one_call_registers_every_app_of_a_folder_and_returns_the_ids(tmp_path):
    write_counter_app(tmp_path, "counter-a")
    write_counter_app(tmp_path, "counter-b")
    ids = register_apps(tmp_path, namespace="reg-test")
    assert ids == ["reg-test/counter-a-v0", "reg-test/counter-b-v0"]
    spec = gymnasium.spec("reg-test/counter-a-v0")
    assert spec.kwargs["app_id"] == "counter-a" and spec.kwargs["apps"] == str(tmp_path.resolve())
    assert register_apps(tmp_path, namespace="reg-test") == ids  # the same inputs again: nothing changes


def test_register_apps_refuses_what_cannot_be_an_environment(tmp_path):
    apps = write_counter_app(tmp_path / "apps")
    with pytest.raises(NotADirectoryError, match="v0_dir"):
        register_apps(apps, v0_dir=tmp_path / "nowhere")
    (tmp_path / "v0").mkdir()
    with pytest.raises(ValueError, match="no page at .*counter/index.html"):
        register_apps(apps, v0_dir=tmp_path / "v0", namespace="reg-none")


@pytest.mark.shared_data
def test_the_gpt5_apps_register_with_their_v0_pages_and_tasks_file(shared_data):
    ids = register_apps(shared_data / "aui-gym-apps", v0_dir=shared_data / "gpt5-apps",
                        tasks_file=ROOT / "configs" / "gpt5-tasks.yaml", namespace="gpt5")
    keyed = yaml.safe_load((ROOT / "configs" / "gpt5-tasks.yaml").read_text(encoding="utf-8"))
    assert sorted(ids) == sorted(f"gpt5/{app_id}-v0" for app_id in keyed)  # the other 40 prompts have no tasks there
    env = gymnasium.make(ids[0])
    try:
        observation, info = env.reset(seed=0)
        assert observation["screenshot"].shape == (720, 1280, 3)
        assert info["task_id"] == keyed[info["app_id"]][0]["id"]  # the default: the first offered task
        assert Path(env.unwrapped.app.html_path) == shared_data / "gpt5-apps" / info["app_id"] / "index.html"
    finally:
        env.close()


def test_only_tasks_whose_checker_is_proven_on_the_page_are_offered(tmp_path):
    [name] = register_apps(write_counter_app(tmp_path, tag="offered"), namespace="offer-test")
    env = gymnasium.make(name, task="all")
    try:
        offered = env.unwrapped
        assert [task.id for task in offered.tasks] == ["add-two", "name-ada"]
        assert list(offered.unoffered) == ["always-true"] and "true" in offered.unoffered["always-true"]
    finally:
        env.close()
    with pytest.raises(TaskNotOffered, match=r"\(served as it is\) does not offer .* not proven .*'always-true': .*already true"):
        gymnasium.make(name, task="always-true")
    with pytest.raises(TaskNotOffered, match="always-true"):
        gymnasium.make(name, task=["add-two", "always-true"])
    with pytest.raises(TaskNotOffered, match="'no-solution'.*no reference solution"):
        gymnasium.make(name, task="no-solution")
    with pytest.raises(TaskNotOffered, match="no task 'nope' .*known: add-two"):
        gymnasium.make(name, task="nope")
    default = gymnasium.make(name)
    try:
        assert [task.id for task in default.unwrapped.tasks] == ["add-two"]  # the first offered task
        with pytest.raises(TaskNotOffered, match="'name-ada' is not offered"):
            default.reset(options={"task": "name-ada"})
    finally:
        default.close()


def test_a_proof_is_kept_on_disk_and_read_back_in_a_new_process(tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AUI_ENV_PROOF_CACHE", raising=False)
    [name] = register_apps(write_counter_app(tmp_path / "apps", tag=f"disk {tmp_path.name}"), namespace="disk-test")
    gymnasium.make(name, task="add-two").close()
    [entry] = list((tmp_path / "cache" / "environments").rglob("*.json"))
    assert json.loads(entry.read_text())["proven"] is True
    # A new process knows nothing but the disk: what it offers is what the file says.
    _proofs._proven.clear()
    entry.write_text(json.dumps({**json.loads(entry.read_text()), "reason": "read from the disk"}))
    env = gymnasium.make(name, task="add-two")
    try:
        assert env.unwrapped.offers["add-two"].reason == "read from the disk"
    finally:
        env.close()


def test_with_the_disk_cache_off_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("AUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("AUI_ENV_PROOF_CACHE", "off")
    [name] = register_apps(write_counter_app(tmp_path / "apps", tag=f"no disk {tmp_path.name}"), namespace="nodisk-test")
    gymnasium.make(name, task="name-ada").close()
    assert not (tmp_path / "cache").exists()
