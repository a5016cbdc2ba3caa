"""The cold-mask benchmark's order of engines (``benchmarks/cold_masks.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def cold_masks(monkeypatch):
    """The benchmark module, imported as its script imports its neighbours."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import cold_masks

    yield cold_masks
    for name in ("cold_masks", "fsm_compile", "_common"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("engines", [1, 2, 5])
def test_each_engine_is_asked_first_in_turn(cold_masks, engines):
    """Each turn asks every engine once, in the same cyclic order, and over as many
    turns as there are engines each is asked first once: no engine is always first
    (the engine asked first ran 10-15% slower in an A/A run)."""
    workers = {f"engine{k}": object() for k in range(engines)}
    names = list(workers)
    firsts = []
    for turn in range(2 * engines):
        order = [name for name, _ in cold_masks._rotated(workers, turn)]
        assert sorted(order) == sorted(names)
        start = names.index(order[0])
        assert order == names[start:] + names[:start]
        firsts.append(order[0])
    assert firsts[:engines] == names and firsts[engines:] == names
