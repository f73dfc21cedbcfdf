"""The viewer's GUI defects pages (issue 18): defect runs and every detector scored on them.

    /defects                         the defect runs under the viewer's folders (folders with defects.json)
    /defects/{run}                   one: proven / attempted per type, each detector's Accuracy, Recall-D,
                                     Recall-N per kind and type, its confusion matrix, and every proven
                                     defect's tuple on the bound element (before / after) with each detector's answer
    /defects/{run}/files/{path}      a PNG of the run's dataset, nothing outside the folder

Read through the models the flows write (`perturb.DefectSet`, `cua.TransitionTuple`,
`commenter.detector.DetectorMetrics` and `Detection`), never by parsing JSON by hand.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse

from commenter.detector import REFERENCE_NOTE, percent, read_detections
from cua import DEFECT_TYPES, read_tuples
from perturb import DefectSet, dataset_folder
from results import read_defect_metrics

from ._files import inside

DEFECTS_MARKER = "defects.json"
MAX_SHOWN = 200  # defects listed with their pictures on one page


def defect_runs(roots: list[Path]) -> dict[str, Path]:
    """Folder name → folder, for every defect run at or directly under the roots."""
    found: dict[str, Path] = {}
    for root in roots:
        for folder in [root] + (sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []):
            if (folder / DEFECTS_MARKER).is_file():
                found.setdefault(folder.name, folder.resolve())
    return found


def defects_page(name: str, folder: Path) -> dict:
    """What `defects.html` shows for one defect run."""
    problems: list[str] = []
    try:
        defect_set = DefectSet.read(folder)
    except (FileNotFoundError, ValueError) as exc:
        return {"name": name, "problems": [str(exc)], "types": [], "detectors": [], "defects": []}
    attempted = Counter(r.type for r in defect_set.records)
    proven = Counter(r.type for r in defect_set.proven)
    types = [{"type": t, "kind": DEFECT_TYPES[t], "proven": proven[t], "attempted": attempted[t]}
             for t in DEFECT_TYPES if attempted[t]]
    metrics = read_defect_metrics(folder)
    detectors = []
    answers: dict[str, dict[tuple[str, int], object]] = {}
    for item in metrics:
        rows = [("all", item.overall)] + [(f"{k} (+ normal)", r) for k, r in item.by_kind.items()] + list(item.by_type.items())
        detectors.append({
            "name": item.detector, "offline": item.offline, "unknown": item.unknown,
            "reference_assisted": item.reference_assisted, "reference_note": REFERENCE_NOTE,
            "rows": [{"label": label, "tuples": r.tuples, "defective": r.defective, "normal": r.normal,
                      "accuracy": percent(r.accuracy), "recall_d": percent(r.recall_d), "recall_n": percent(r.recall_n),
                      "type_accuracy": percent(r.type_accuracy), "errors": r.errors} for label, r in rows],
            "columns": item.columns,
            "matrix": [{"truth": row, "cells": [item.confusion.get(row, {}).get(c, 0) for c in item.columns]}
                       for row in item.rows]})
        try:
            answers[item.detector] = {d.key: d for d in read_detections(folder, item.detector)}
        except (FileNotFoundError, ValueError) as exc:
            problems.append(str(exc))
    defects = []
    for record in defect_set.proven[:MAX_SHOWN]:
        trajectory = str(dataset_folder(record))
        try:
            tuples = read_tuples(folder / trajectory)
        except (FileNotFoundError, ValueError):
            defects.append({"record": record, "tuple": None, "answers": []})
            continue
        hit = next((t for t in tuples if t.defect == record.type), None)
        said = [{"detector": d, "answer": found.get((trajectory, hit.step)) if hit else None} for d, found in answers.items()]
        defects.append({"record": record, "tuple": hit, "folder": trajectory, "answers": said})
    return {"name": name, "problems": problems, "types": types, "detectors": detectors, "defects": defects,
            "total": len(defect_set.records), "proven_total": len(defect_set.proven), "set": defect_set,
            "more": max(0, len(defect_set.proven) - MAX_SHOWN)}


def add_defect_routes(app: FastAPI, roots: list[Path], page) -> None:
    """Register the defects pages on the viewer's app; `page(request, template, context)` renders a template."""

    def get(name: str) -> Path:
        folder = defect_runs(roots).get(name)
        if folder is None:
            raise HTTPException(404, f"no defect run '{name}' here")
        return folder

    @app.get("/defects")
    def defect_index(request: Request):
        return page(request, "defects_index.html", {"runs": sorted(defect_runs(roots))})

    @app.get("/defects/{name}")
    def defect_run(request: Request, name: str):
        return page(request, "defects.html", defects_page(name, get(name)))

    @app.get("/defects/{name}/files/{relative:path}")
    def defect_file(name: str, relative: str):
        target = inside(get(name), relative)
        if target is None or target.suffix.lower() != ".png":
            raise HTTPException(404, "not found")
        return FileResponse(target, media_type="image/png", headers={"X-Content-Type-Options": "nosniff"})
