"""The viewer shows the offline labels the manifest recorded (`experiment.offline_roles`), never a guess of its own."""

from __future__ import annotations

import json

from experiment import check_config, make_config
from flows import write_manifest
from tests.experiment.test_offline_roles import EVERY_OFFLINE, _models
from viewer import load_run


def test_the_manifest_records_the_labels_and_the_viewer_shows_them_not_its_own_guess(tmp_path):
    models = _models(tmp_path)
    config = make_config({"models_config": models, "coders": ["rules"], "out_dir": str(tmp_path / "runs"),
                          "name": "labelled"})
    run_dir = config.run_dir
    run_dir.mkdir(parents=True)
    write_manifest(config, check_config(config, probe_endpoints=False), run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["offline"] is True and manifest["offline_roles"] == EVERY_OFFLINE
    assert manifest["models"] == {}  # no role called a model
    run = load_run(run_dir)
    assert run.offline and run.offline_roles == EVERY_OFFLINE

    # only the agent offline: the viewer no longer calls the run offline because its CUA was
    online = make_config({"models_config": models, "verifier": "remote", "out_dir": str(tmp_path / "runs"),
                          "name": "mixed"})
    online.run_dir.mkdir(parents=True)
    write_manifest(online, check_config(online, probe_endpoints=False), online.run_dir)
    run = load_run(online.run_dir)
    assert not run.offline and "cua (heuristic)" in run.offline_roles and "verifier" not in run.offline_roles
