"""The dependency direction of the design, checked from the source (see
``tests/import_graph.py``): every import counts, inside functions and under
``TYPE_CHECKING`` included.

- no module import cycles in ``seqstate``, ``fsm`` or ``backends``;
- ``fsm`` never imports ``backends``, torch or transformers, and from ``seqstate`` only
  the error root (``seqstate.errors``);
- ``seqstate`` never imports ``backends``, except the one declared upward edge below;
- ``import seqstate`` executes no import of torch, transformers, numba or ``fsm``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.import_graph import Edge, cycles, import_edges, module_files

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("seqstate", "fsm", "backends")
HEAVY = ("torch", "transformers", "numba", "fsm", "backends")

# ``ss.load_model`` / ``ss.Model`` are served lazily from here (module ``__getattr__``).
DECLARED_UPWARD_EDGES = {("seqstate", "backends.model")}


def package(module: str) -> str:
    return module.partition(".")[0]


def forbidden(edge: Edge) -> str | None:
    """Why ``edge`` breaks the layering, or None."""
    source, target = package(edge.source), package(edge.target)
    if source == "fsm" and target in ("backends", "torch", "transformers"):
        return "fsm never imports backends, torch or transformers"
    if source == "fsm" and target == "seqstate" and edge.target != "seqstate.errors":
        return "fsm imports only the error root from seqstate"
    if source == "seqstate" and target == "backends":
        if (edge.source, edge.target) not in DECLARED_UPWARD_EDGES:
            return "seqstate never imports backends (outside the declared edge)"
        if edge.eager:
            return "the declared upward edge must stay lazy"
    return None


def eager_closure(edges: list[Edge], start: str) -> dict[str, Edge]:
    """Modules (and outside packages) executed by importing ``start``, each with the
    edge that first reaches it; importing ``a.b`` runs ``a/__init__`` first."""
    by_source: dict[str, list[Edge]] = {}
    for edge in edges:
        if edge.eager:
            by_source.setdefault(edge.source, []).append(edge)
    reached: dict[str, Edge] = {}
    todo = [start]
    while todo:
        module = todo.pop()
        parents = [module.rsplit(".", i)[0] for i in range(1, module.count(".") + 1)]
        for edge in by_source.get(module, []) + [Edge(module, p, True, 0) for p in parents]:
            if edge.target not in reached and edge.target != start:
                reached[edge.target] = edge
                todo.append(edge.target)
    return reached


@pytest.fixture(scope="module")
def tree() -> tuple[dict[str, Path], list[Edge]]:
    modules = module_files(ROOT, PACKAGES)
    return modules, import_edges(modules)


def test_no_module_import_cycles(tree):
    modules, edges = tree
    assert cycles(edges, modules) == []


def test_no_forbidden_edges(tree):
    _, edges = tree
    broken = [f"{e.source}:{e.line} -> {e.target}: {why}" for e in edges if (why := forbidden(e))]
    assert broken == []


def test_declared_upward_edges_exist(tree):
    """The declaration stays in step with the code (a stale entry would hide nothing)."""
    _, edges = tree
    actual = {(e.source, e.target) for e in edges if package(e.target) == "backends"}
    assert DECLARED_UPWARD_EDGES <= actual


def test_import_seqstate_executes_nothing_heavy(tree):
    _, edges = tree
    reached = eager_closure(edges, "seqstate")
    heavy = {m: f"{e.source}:{e.line}" for m, e in reached.items() if package(m) in HEAVY}
    assert heavy == {}


# --- the checker itself must be able to fail ---------------------------------------


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_checker_sees_cycles_through_functions_and_type_checking(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def f():\n    from pkg import b\n",
            "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import X\n",
            "pkg/c.py": "from . import a\n",
            "pkg/d.py": "import pkg.a\n",
        },
    )
    modules = module_files(tmp_path, ["pkg"])
    assert cycles(import_edges(modules), modules) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_checker_tells_eager_from_lazy_imports(tmp_path):
    write(
        tmp_path,
        {
            "seqstate/__init__.py": "from seqstate import light\n"
            "def __getattr__(name):\n    import backends.model\n",
            "seqstate/light.py": "import numpy\nif False:\n    import torch\n",
            "backends/__init__.py": "",
            "backends/model.py": "import torch\n",
        },
    )
    edges = import_edges(module_files(tmp_path, ["seqstate", "backends"]))
    assert set(eager_closure(edges, "seqstate")) == {"seqstate.light", "numpy", "torch"}
    upward = [e for e in edges if e.target == "backends.model"]
    assert [(e.source, e.eager, forbidden(e)) for e in upward] == [("seqstate", False, None)]
