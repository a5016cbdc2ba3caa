"""Compile fsm's hot modules with mypyc into fsm/_native (see fsm/native.py).

    python scripts/build_native.py          # build (a minute or two; needs a C compiler)
    python scripts/build_native.py --clean  # remove the build: pure Python again

The sources stay the truth: the build is a cache of them, stamped with their hashes,
and the package ignores it once a source changes. One change is made to mypyc's C
before it is compiled: classes marked ``@mypyc_attr(acyclic=True)`` are freed without
CPython's trashcan (``without_trashcan_for_acyclic``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MYPY_CONFIG = ROOT / "scripts" / "mypyc.ini"

_ACYCLIC_DEALLOC = re.compile(
    r"^([ \t]*\w+_dealloc\(\w+ \*self\)\n[ \t]*\{\n)"  # the deallocator's head
    r"[ \t]*CPy_TRASHCAN_BEGIN\(self, \w+_dealloc\)\n"  # first: no PyObject_GC_UnTrack
    r"((?:(?![ \t]*CPy_TRASHCAN)[^\n]*\n)*?)"  # the body
    r"[ \t]*CPy_TRASHCAN_END\(self\)\n",
    re.MULTILINE,
)
"""A deallocator of an acyclic class as mypyc writes it: the trashcan around its body,
with no ``PyObject_GC_UnTrack`` before it (a class with the header untracks first)."""

_DEALLOC = re.compile(
    r"^[ \t]*(\w+_dealloc)\(\w+ \*self\)\n[ \t]*\{\n(.*?)^[ \t]*\}\n", re.MULTILINE | re.DOTALL
)
"""A deallocator's name and its body up to the first line that closes a brace."""


def without_trashcan_for_acyclic(c_source: str) -> tuple[str, int]:
    """``c_source`` with the trashcan taken out of acyclic classes' deallocators, and how
    many it changed.

    mypyc frees every object through ``Py_TRASHCAN_BEGIN``, which on CPython 3.11 defers
    an object freed 50 nested deallocations deep by writing into its collector header:
    an acyclic object has none, and the write lands in the memory before it (a
    ``TokenRow`` dropped from 50 nested lists crashed; ``docs/design.md``, sixtieth and
    sixty-second sessions). The trashcan bounds the C stack over chains of objects
    freeing each other; an acyclic class here holds arrays, tuples and ints, so its
    deallocation recurses no deeper than what it holds, which keep their own."""
    return _ACYCLIC_DEALLOC.subn(r"\1\2", c_source)


def trashcans_without_header(c_source: str) -> list[str]:
    """The deallocators that enter the trashcan and never untrack their object: an
    acyclic class's that ``without_trashcan_for_acyclic`` did not recognise."""
    return [
        name
        for name, body in _DEALLOC.findall(c_source)
        if "CPy_TRASHCAN_BEGIN" in body and "PyObject_GC_UnTrack" not in body
    ]


def _patch_acyclic_deallocators(c_dir: Path) -> None:
    """Applies ``without_trashcan_for_acyclic`` to the generated C, and stops the build
    if an acyclic class's deallocator still enters the trashcan (a mypyc that writes
    them otherwise must be looked at, not built around; one that no longer puts them
    in the trashcan needs nothing)."""
    changed, left = 0, []
    for path in sorted(c_dir.rglob("*.c")):
        patched, count = without_trashcan_for_acyclic(path.read_text())
        if count:
            path.write_text(patched)
            changed += count
        left += trashcans_without_header(patched)
    if left:
        raise SystemExit(
            f"acyclic classes still freed through the trashcan: {', '.join(left)}; "
            "check scripts/build_native.py against this mypyc"
        )
    print(f"{changed} acyclic classes freed without the trashcan")


def _native_module():
    """fsm/native.py loaded on its own (importing the package would activate a build)."""
    spec = importlib.util.spec_from_file_location("_fsm_native", ROOT / "fsm" / "native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(native) -> None:
    from mypyc.build import mypycify
    from setuptools import Distribution

    sources = [str(native.source_path(name).relative_to(ROOT)) for name in native.COMPILED]
    # read before compiling: a source edited while the build runs leaves it stale, not
    # stamped as built from the edit
    hashes = native.source_hashes()
    with tempfile.TemporaryDirectory() as scratch:
        extensions = mypycify(
            [f"--config-file={MYPY_CONFIG}", *sources],
            opt_level="3",
            target_dir=str(Path(scratch) / "c"),
        )
        _patch_acyclic_deallocators(Path(scratch) / "c")
        distribution = Distribution({"ext_modules": extensions})
        command = distribution.get_command_obj("build_ext")
        command.build_lib = str(Path(scratch) / "lib")
        command.build_temp = str(Path(scratch) / "temp")
        distribution.run_command("build_ext")
        shutil.rmtree(native.BUILD_DIR, ignore_errors=True)
        native.BUILD_DIR.mkdir()
        built = Path(scratch) / "lib"
        libraries = [path for path in built.iterdir() if "__mypyc" in path.name]
        if len(libraries) != 1:
            raise SystemExit(f"expected one shared mypyc library, found {libraries}")
        shutil.copy2(libraries[0], native.BUILD_DIR)
        for module in (built / "fsm").iterdir():
            if module.is_file():
                shutil.copy2(module, native.BUILD_DIR)
        for package in native.SUBPACKAGES:
            shutil.copytree(built / "fsm" / package, native.BUILD_DIR / package)
    stamp = {
        "tag": native.build_tag(),
        "library": libraries[0].name,
        "sources": hashes,
    }
    (native.BUILD_DIR / native.STAMP).write_text(json.dumps(stamp, indent=1))
    print(f"built {len(sources)} modules into {native.BUILD_DIR.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove the build")
    args = parser.parse_args()
    native = _native_module()
    if args.clean:
        shutil.rmtree(native.BUILD_DIR, ignore_errors=True)
        return
    os.chdir(ROOT)  # mypyc names the modules by their paths from the checkout
    sys.path.insert(0, str(ROOT))
    build(native)


if __name__ == "__main__":
    main()
