"""Importing a script of ``benchmarks/`` the way the script imports its neighbours."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def benchmark_script(monkeypatch) -> Iterator[Callable[[str], ModuleType]]:
    """Imports a script's module by name with ``benchmarks/`` on the path (its
    neighbours, ``_common`` and ``fsm_compile``, are imported by plain name), and
    forgets every module of ``benchmarks/`` the test brought in once it ends."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    before = set(sys.modules)
    yield importlib.import_module
    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None)
        if path is not None and Path(path).resolve().parent == BENCHMARKS:
            del sys.modules[name]
