"""The static import graph of a source tree, read from the AST of every module.

Every ``import`` counts: at module level, inside functions, and under
``TYPE_CHECKING``. Each edge records whether it is *eager* (executed when the importing
module is imported: module level, outside functions) so that rules about what
``import seqstate`` loads can be checked without running anything.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` (a module of the tree, or an outside top-level name)."""

    source: str
    target: str
    eager: bool
    line: int


def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of ``packages`` under ``root``."""
    modules: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` names (resolving relative imports)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, is_package: bool, node: ast.AST, known: set[str]) -> Iterator[str]:
    """Modules a node imports: ``from a import b`` is ``a.b`` when that is a module."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        source = _absolute(module, is_package, node)
        for alias in node.names:
            candidate = f"{source}.{alias.name}"
            yield candidate if candidate in known else source


def _owner(name: str, known: set[str]) -> str:
    """The longest known module that ``name`` is or lies in; else its top-level name."""
    probe = name
    while probe:
        if probe in known:
            return probe
        probe = probe.rpartition(".")[0]
    return name.partition(".")[0]


def _imports_with_eagerness(tree: ast.Module) -> Iterator[tuple[ast.AST, bool]]:
    """Import nodes, each with whether it runs at import time (not inside a function
    and not under ``if TYPE_CHECKING``)."""

    def visit(node: ast.AST, eager: bool) -> Iterator[tuple[ast.AST, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, eager
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(child, False)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                yield from visit(child, False)
            else:
                yield from visit(child, eager)

    return visit(tree, True)


def import_edges(modules: dict[str, Path]) -> list[Edge]:
    """Every import of every module, resolved to modules of the tree where possible."""
    known = set(modules)
    edges: list[Edge] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        for node, eager in _imports_with_eagerness(tree):
            for target in _targets(name, is_package, node, known):
                owner = _owner(target, known)
                if owner != name:
                    edges.append(Edge(name, owner, eager, getattr(node, "lineno", 0)))
    return edges


def cycles(edges: Iterable[Edge], modules: Iterable[str]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm; the
    module graph is shallow enough for recursion)."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for edge in edges:
        if edge.target in graph:
            graph[edge.source].add(edge.target)
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for child in sorted(graph[node]):
            if child not in order:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in stack:
                low[node] = min(low[node], order[child])
        if low[node] == order[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for root in graph:
        if root not in order:
            visit(root)
    return found
