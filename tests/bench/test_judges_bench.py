"""`bench/judges.py`'s summary of the planted corpus, on fabricated outcomes (no browser, no run)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from verifier.testing import PlantedOutcome

BENCH = Path(__file__).resolve().parents[2] / "bench" / "judges.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_judges", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _outcome(task: str, proof: str, kind: str = "constant false") -> PlantedOutcome:
    return PlantedOutcome(kind=kind, app="unit-converter", task=task, expected="claimed", proof=proof)


def test_an_escaped_planted_checker_is_named_not_a_crash():
    summary = _bench().summarise_planted([_outcome("a", "claimed"), _outcome("b", "unsupported"),
                                          _outcome("c", "proven", kind="selector never rendered")])
    assert summary == {"planted_caught": 2, "planted_total": 3,
                       "planted_escaped": ["unit-converter/c (selector never rendered)"]}


def test_all_caught_escape_nothing():
    summary = _bench().summarise_planted([_outcome("a", "claimed"), _outcome("b", "unsupported")])
    assert summary == {"planted_caught": 2, "planted_total": 2, "planted_escaped": []}
