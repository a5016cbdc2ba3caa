"""Compiled twins of the hot modules, used when they are built and current.

``scripts/build_native.py`` compiles the modules in ``COMPILED`` with mypyc (the same
typed source, turned into a C extension; no second implementation to keep in step)
into ``fsm/_native``, and stamps each source's hash. ``activate``, which
``fsm/__init__`` calls before it imports anything else, puts that folder ahead of the
sources on the package's path only when every stamp matches its source and the build
is for this interpreter, so an edited module is never shadowed by a stale build: the
package then runs pure Python and warns. ``SEQSTATE_PURE=1`` asks for pure Python (the
reference the compiled build is tested against).

This module is stdlib only and is never compiled: the build script reads ``COMPILED``
from it without importing the package.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path

COMPILED = (
    "terms",
    "term_store",
    "term_builder",
    "partition_ops",
    "decomposable",
    "derivative_automaton",
    "decompose",
    "row_walk",
    "token_row",
    "byte_table",
    "witness",
    "counted",
    "satisfiable",
    "satisfiable_store",
    "store_automaton",
    "store_decompose",
    "store_counted",
    "store_witness",
    "lexeme_cache",
    "regex",
    "regex_syntax",
    "positions",
    "unicode",
    "completion",
    "prefixed",
    "index_core",
    "json_schema.compile",
    "json_schema.conditions",
    "json_schema.objects",
    "json_schema.arrays",
    "json_schema.strings",
    "json_schema.json_text",
    "json_schema.numbers",
    "json_schema.formats",
    "json_schema.regex_format",
    "json_schema.refs",
    "json_schema.key_rules",
    "json_schema.keywords",
    "json_schema.node_facts",
    "json_schema.values",
)
"""The modules compiled (dotted below ``fsm``): where a cold mask's time goes
(derivatives, expansions, row walks, a schema's terms). Modules holding numba kernels
stay pure Python (numba compiles those), and so do the packages' ``__init__`` and
``json_schema.types`` (pydantic and typing introspection, run once per type)."""

SUBPACKAGES = tuple(sorted({name.rpartition(".")[0] for name in COMPILED if "." in name}))
"""Packages below ``fsm`` holding compiled modules: each finds its build in a folder
of the same name in ``BUILD_DIR`` (``activate_subpackage``)."""

PACKAGE_DIR = Path(__file__).parent
BUILD_DIR = PACKAGE_DIR / "_native"
STAMP = "stamp.json"
PURE_ENV = "SEQSTATE_PURE"


def source_path(name: str, package_dir: Path = PACKAGE_DIR) -> Path:
    """The source of compiled module ``name`` (dotted below ``fsm``)."""
    return package_dir.joinpath(*name.split(".")).with_suffix(".py")


def source_hashes(package_dir: Path = PACKAGE_DIR) -> dict[str, str]:
    """sha256 of each compiled module's source, by module name."""
    return {
        name: hashlib.sha256(source_path(name, package_dir).read_bytes()).hexdigest()
        for name in COMPILED
    }


def build_tag() -> str:
    """The interpreter a build is for (its extension modules load nowhere else)."""
    return f"{sys.implementation.cache_tag}-{sys.platform}"


def activate(
    package_path: list[str], package_dir: Path = PACKAGE_DIR, build_dir: Path = BUILD_DIR
) -> bool:
    """Put the compiled modules (``build_dir``) ahead of the sources (``package_dir``)
    on ``package_path``, the package's ``__path__``, when they are built, current and
    for this interpreter. Returns whether they are in use."""
    stamp = current_build(package_dir, build_dir)
    if stamp is None:
        return False
    _load_shared_library(build_dir / stamp["library"])
    package_path.insert(0, str(build_dir))
    return True


def activate_subpackage(
    parent_path: list[str], package_path: list[str], name: str, build_dir: Path = BUILD_DIR
) -> None:
    """Put subpackage ``name``'s compiled modules ahead of its sources on
    ``package_path`` when its parent's are in use (``activate`` put ``build_dir`` on
    ``parent_path``): a package's ``__path__`` is its own, so each one is told."""
    if str(build_dir) in parent_path:
        package_path.insert(0, str(build_dir / name))


def current_build(package_dir: Path = PACKAGE_DIR, build_dir: Path = BUILD_DIR) -> dict | None:
    """The build's stamp when it may be used: built for this interpreter, every source
    unchanged since, and pure Python not asked for (``PURE_ENV``). A stale build warns."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return None
    try:
        stamp = json.loads((build_dir / STAMP).read_text())
    except (OSError, ValueError):
        return None  # not built: pure Python
    if stamp.get("tag") != build_tag():
        return None
    if stamp.get("sources") != source_hashes(package_dir):
        warnings.warn(
            "fsm's compiled modules are older than their sources: running pure Python "
            "(rebuild with `python scripts/build_native.py`)",
            stacklevel=4,
        )
        return None
    return stamp  # type: ignore[no-any-return]


def _load_shared_library(path: Path) -> None:
    """Loads the library the compiled modules share, under the top-level name their
    shims import it by (it is not on ``sys.path``)."""
    name = path.name.split(".", 1)[0]
    if name in sys.modules:
        return
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
