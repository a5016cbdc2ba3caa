"""Importing a script of ``benchmarks/`` the way the script imports its neighbours."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import fsm

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
BYTES = fsm.Vocabulary.from_raw([bytes([byte]) for byte in range(256)] + [None], eos_ids=256)


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


@pytest.fixture
def read_document(benchmark_script) -> Callable[[dict, Any], tuple[fsm.TokenIndex, int]]:
    """Reads the document ``{"a": value}`` of a spec (``length_products.document_schema``,
    which ``length_products`` and ``bounded_numbers`` walk) byte by byte: the index and
    the state reached from its start (-1 once it dies)."""
    document_schema = benchmark_script("length_products").document_schema

    def read(spec: dict, value: Any) -> tuple[fsm.TokenIndex, int]:
        index = fsm.compile_index(fsm.JsonSchema(document_schema(spec)), BYTES)
        data = json.dumps({"a": value}).encode()
        return index, index.step_bytes(index.initial_state, data)

    return read
