"""The viewer's GUI defect pages over a defect run folder written through the flows' own models (no browser)."""

from __future__ import annotations

import io

from fastapi.testclient import TestClient
from PIL import Image

from commenter.detector import Detection, metrics_path, score_detections, write_detections
from cua import Action, ElementInfo, Point, TransitionTuple, write_atomic
from perturb import DefectRecord, DefectSet, dataset_folder, defect_transform, make_defect
from viewer import create_app


def _png(colour: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 18), colour).save(out, format="PNG")
    return out.getvalue()


def _defect_run(root):
    run = root / "defects-run"
    spec = make_defect("no-response", "#swap", seed=0)
    transform = defect_transform(spec)
    proven = DefectRecord(app_id="unit-converter", html_sha256="ab" * 32, task_id="swap", type="no-response",
                          kind="interaction", seed=0, step=1, action="click", selector="#swap", params=spec.params,
                          transform=transform.name, transform_sha256=transform.sha256, status="proven",
                          reason="after the reference solution on the defect app the checker is not true")
    dropped = proven.model_copy(update={"type": "input-keyboard", "status": "dropped", "task_id": None, "selector": None,
                                        "reason": "no step of a proven task's reference solution can carry it"})
    DefectSet(apps=["unit-converter"], types=["no-response", "input-keyboard"], per_app=1, seed=0,
              records=[proven, dropped]).write(run)
    folder = run / dataset_folder(proven)
    folder.mkdir(parents=True)
    (folder / "step_000.png").write_bytes(_png("white"))
    (folder / "step_001.png").write_bytes(_png("navy"))
    item = TransitionTuple(app_id="unit-converter", task_id="swap", step=1, before="step_000.png", after="step_001.png",
                           action=Action(kind="click", point=Point(x=5, y=5)), action_text="click(5,5)",
                           element=ElementInfo(tag="button", id="swap"), dom_changed=False, defect="no-response",
                           viewport_width=32, viewport_height=18)
    write_atomic(folder / "tuples.jsonl", (item.model_dump_json() + "\n").encode())
    detections = [Detection(trajectory=str(dataset_folder(proven)), step=1, detector="offline", offline=True,
                            defect=True, type="no-response", evidence="click(5,5) changed nothing", truth="no-response")]
    write_detections(run, "offline", detections)
    write_atomic(metrics_path(run, "offline"), score_detections("offline", detections, offline=True,
                                                               reference_assisted=True).model_dump_json().encode())
    blind = [item.model_copy(update={"detector": "offline-blind"}) for item in detections]
    write_detections(run, "offline-blind", blind)
    write_atomic(metrics_path(run, "offline-blind"), score_detections("offline-blind", blind, offline=True).model_dump_json().encode())
    return run


def test_the_defect_run_page_shows_the_set_the_figures_and_each_defects_tuple(tmp_path):
    run = _defect_run(tmp_path)
    client = TestClient(create_app([tmp_path], "ada"))
    index = client.get("/defects")
    assert index.status_code == 200 and "/defects/defects-run" in index.text
    page = client.get("/defects/defects-run")
    assert page.status_code == 200
    text = page.text
    assert "1 / 2 defects proven" in text and "Detector: offline" in text and "offline baseline" in text
    # the figures of the detector given the defect-free app say so; the blind one's do not
    headings = {part.split("</h2>")[0].split(" <")[0]: part.split("<table")[0]
                for part in text.split('<h2 class="detector">Detector: ')[1:]}
    assert set(headings) == {"offline", "offline-blind"}
    assert "reference-assisted" in headings["offline"] and "given the defect-free app to compare with" in headings["offline"]
    assert "reference-assisted" not in headings["offline-blind"]
    assert "100.0" in text and "click(5,5) changed nothing" in text  # Recall-D, and the detector's answer
    image = f"/defects/defects-run/files/{dataset_folder(DefectSet.read(run).proven[0])}/step_001.png"
    assert image in text
    assert client.get(image).content == _png("navy")
    assert client.get("/defects/defects-run/files/defects.json").status_code == 404  # pictures only
    assert client.get("/defects/defects-run/files/../../etc/passwd").status_code == 404
    assert client.get("/defects/nope").status_code == 404
