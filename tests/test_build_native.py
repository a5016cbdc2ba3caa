"""``scripts/build_native.py``: the trashcan comes out of acyclic classes' deallocators,
and only out of theirs."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def build_native() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("build_native", ROOT / "scripts/build_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _deallocator(name: str, tracked: bool, indent: str) -> str:
    """A deallocator as mypyc 2.x writes it; a class with the header untracks first."""
    lines = [
        f"{name}_dealloc({name}Object *self)",
        "{",
        *(["    PyObject_GC_UnTrack(self);"] if tracked else []),
        f"    CPy_TRASHCAN_BEGIN(self, {name}_dealloc)",
        f"    CPyDef_{name}_clear((PyObject *)self);",
        "    Py_TYPE(self)->tp_free((PyObject *)self);",
        "    CPy_TRASHCAN_END(self)",
        "    done: ;",
        "}",
    ]
    return "".join(f"{indent}{line}\n" for line in lines)


@pytest.mark.parametrize("indent", ["", "        "])  # a shared library's C is indented
def test_the_trashcan_leaves_acyclic_deallocators_only(build_native, indent) -> None:
    source = (
        _deallocator("Row", False, indent)
        + _deallocator("Term", True, indent)
        + _deallocator("Walk", False, indent)
    )
    patched, count = build_native.without_trashcan_for_acyclic(source)
    assert count == 2
    assert patched.count("CPy_TRASHCAN_BEGIN(self, Term_dealloc)") == 1
    assert patched.count("CPy_TRASHCAN_END(self)") == 1
    assert "Row_dealloc)" not in patched and "Walk_dealloc)" not in patched
    # the bodies stay, in order
    for name in ("Row", "Walk"):
        assert f"{indent}    CPyDef_{name}_clear((PyObject *)self);\n{indent}    Py_TYPE" in patched
    assert build_native.without_trashcan_for_acyclic(patched) == (patched, 0)


def test_a_deallocator_in_another_shape_is_left_alone_and_reported(build_native) -> None:
    """An acyclic class's deallocator in a shape the patch does not know (here a line
    before its trashcan) is not changed, and it is reported, so the build stops; a
    tracked class's deallocator is neither changed nor reported."""
    tracked = _deallocator("Term", True, "")
    reshaped = _deallocator("Row", False, "").replace("{\n", "{\n    other();\n", 1)
    assert build_native.without_trashcan_for_acyclic(tracked) == (tracked, 0)
    assert build_native.without_trashcan_for_acyclic(reshaped) == (reshaped, 0)
    assert build_native.trashcans_without_header(tracked + reshaped) == ["Row_dealloc"]


def test_a_patched_source_reports_nothing(build_native) -> None:
    source = _deallocator("Row", False, "    ") + _deallocator("Term", True, "    ")
    assert build_native.trashcans_without_header(source) == ["Row_dealloc"]
    patched, _ = build_native.without_trashcan_for_acyclic(source)
    assert build_native.trashcans_without_header(patched) == []
