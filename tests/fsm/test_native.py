"""The compiled modules (``fsm.native``): used exactly when built and current, and
walking every constraint as the pure-Python sources do."""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.machinery
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import fsm
from fsm import native
from tests.fsm.walked_specs import WALKED_SPECS

ROOT = Path(__file__).resolve().parents[2]


def test_compiled_modules_are_in_use_exactly_when_built_and_current() -> None:
    assert fsm.NATIVE == (native.current_build() is not None)
    for name in native.COMPILED:
        loader = importlib.import_module(f"fsm.{name}").__loader__
        assert isinstance(loader, importlib.machinery.ExtensionFileLoader) == fsm.NATIVE, name


def _fake_package(tmp_path: Path) -> tuple[Path, Path]:
    """A package folder with a source per compiled module, and a build stamped for it."""
    package, build = tmp_path / "package", tmp_path / "build"
    package.mkdir()
    build.mkdir()
    for name in native.COMPILED:
        source = native.source_path(name, package)
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"# {name}\n")
    sources = {name: hashlib.sha256(f"# {name}\n".encode()).hexdigest() for name in native.COMPILED}
    stamp = {"tag": native.build_tag(), "library": "lib.so", "sources": sources}
    (build / native.STAMP).write_text(json.dumps(stamp))
    return package, build


def test_a_current_build_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    package, build = _fake_package(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert native.current_build(package, build) is not None


def test_an_edited_source_makes_the_build_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    package, build = _fake_package(tmp_path)
    (package / f"{native.COMPILED[0]}.py").write_text("# edited\n")
    with pytest.warns(UserWarning, match="older than their sources"):
        assert native.current_build(package, build) is None
    paths: list[str] = []
    with pytest.warns(UserWarning):
        assert not native.activate(paths, package, build)
    assert paths == []


def test_a_build_for_another_interpreter_or_none_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    package, build = _fake_package(tmp_path)
    stamp = json.loads((build / native.STAMP).read_text())
    (build / native.STAMP).write_text(json.dumps({**stamp, "tag": "cpython-27-other"}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert native.current_build(package, build) is None
        assert native.current_build(package, tmp_path / "not-built") is None


def test_a_subpackage_takes_its_build_exactly_when_its_parent_does(tmp_path: Path) -> None:
    build = tmp_path / "build"
    parent, package = [str(build), str(tmp_path / "src")], [str(tmp_path / "src" / "sub")]
    native.activate_subpackage(parent, package, "sub", build)
    assert package == [str(build / "sub"), str(tmp_path / "src" / "sub")]
    unbuilt = [str(tmp_path / "src" / "sub")]
    native.activate_subpackage([str(tmp_path / "src")], unbuilt, "sub", build)
    assert unbuilt == [str(tmp_path / "src" / "sub")]


def test_every_compiled_subpackage_module_is_below_a_subpackage() -> None:
    """A dotted name in ``COMPILED`` needs its package in ``SUBPACKAGES`` (the build
    copies only those folders) and an ``__init__`` that activates it."""
    for name in native.COMPILED:
        if "." in name:
            package = name.rsplit(".", 1)[0]
            assert package in native.SUBPACKAGES, name
            init = (native.PACKAGE_DIR / package / "__init__.py").read_text()
            assert (
                f'activate_subpackage(sys.modules["fsm"].__path__, __path__, "{package}")' in init
            )


def _union_isinstance_calls(source: str) -> list[int]:
    """Lines of ``isinstance(x, A | B)`` calls in ``source``."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
        and isinstance(node.args[1], ast.BinOp)
        and isinstance(node.args[1].op, ast.BitOr)
    ]


def test_compiled_modules_test_classes_with_a_tuple_not_a_union() -> None:
    """mypyc compiles ``isinstance(x, (A, B))`` to type checks, but builds a
    ``types.UnionType`` on every call of ``isinstance(x, A | B)``: 580 ns against
    31 ns in a compiled loop, and such checks sit in the term functions every row
    calls (``terms._plainly_unlisted`` took a tenth of a key row)."""
    assert _union_isinstance_calls("isinstance(x, A | B)\nisinstance(y, (A, B))") == [1]
    found = {
        name: lines
        for name in native.COMPILED
        if (lines := _union_isinstance_calls(native.source_path(name).read_text()))
    }
    assert found == {}


def test_pure_python_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package, build = _fake_package(tmp_path)
    monkeypatch.setenv(native.PURE_ENV, "1")
    assert native.current_build(package, build) is None


WALKS = (
    """
import hashlib, json, sys
import fsm
from fsm import JsonSchema, Regex, TokenIndex, Vocabulary
from fsm.compiler import automaton_of

given = json.load(sys.stdin)
tokens = [bytes.fromhex(text) for text in given["tokens"]]
vocabulary = Vocabulary.from_raw(tokens, eos_ids=given["eos"], size=given["size"])
digest = hashlib.sha256()
"""
    + WALKED_SPECS
    + """for spec in specs:
    index = TokenIndex(automaton_of(spec), vocabulary)
    # states by order of discovery: their numbers differ from run to run
    frontier, seen = [index.initial_state], {index.initial_state: 0}
    while frontier and len(seen) < 400:
        state = frontier.pop(0)
        allowed = index.allowed_tokens(state)
        digest.update(allowed.tobytes())
        digest.update(bytes([index.is_final(state)]))
        for token in allowed.tolist()[::7]:
            after = index.next_state(state, token)
            if after not in seen:
                seen[after] = len(seen)
                frontier.append(after)
            digest.update(seen[after].to_bytes(4, "little"))
print(json.dumps({"native": fsm.NATIVE, "digest": digest.hexdigest()}))
"""
)


def _walk_digest(vocabulary: fsm.Vocabulary, pure: bool) -> dict:
    env = {**os.environ, native.PURE_ENV: "1" if pure else ""}
    done = subprocess.run(
        [sys.executable, "-c", WALKS],
        input=json.dumps(
            {
                "tokens": [(token or b"").hex() for token in vocabulary.token_bytes],
                "eos": sorted(vocabulary.eos_ids),
                "size": vocabulary.size,
            }
        ),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_compiled_walks_equal_pure_walks(smol_tokenizer, monkeypatch) -> None:
    """Breadth-first walks of a regex and two schemas over SmolLM2's tokens give the
    same allowed tokens, finality and targets (up to state numbers) compiled and pure."""
    vocabulary = fsm.Vocabulary.from_tokenizer(smol_tokenizer)
    pure = _walk_digest(vocabulary, pure=True)
    compiled = _walk_digest(vocabulary, pure=False)
    assert not pure["native"]
    # the second walk ran without the pure switch, whatever this process was run with
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    assert compiled["native"] == (native.current_build() is not None)
    assert compiled["digest"] == pure["digest"]


@pytest.mark.parametrize("integer", [np.int32, np.int64, np.uint16])
def test_a_token_index_takes_numpy_integers_as_ints(integer) -> None:
    """States and tokens read out of arrays reach the compiled modules as Python ints
    (a compiled function refuses a numpy integer where it declares ``int``)."""
    vocabulary = fsm.Vocabulary.from_raw([b"{", b'"a"', b":", b"1", b"}", None], eos_ids=5)
    schema = fsm.JsonSchema({"type": "object", "properties": {"a": {"type": "integer"}}})
    index, twin = (fsm.compile_index(schema, vocabulary) for _ in range(2))
    start, twin_start = integer(index.initial_state), twin.initial_state
    np.testing.assert_array_equal(index.bitmask(start), twin.bitmask(twin_start))
    np.testing.assert_array_equal(index.allowed_tokens(start), twin.allowed_tokens(twin_start))
    np.testing.assert_array_equal(index.next_states(start), twin.next_states(twin_start))
    assert index.next_state(start, integer(0)) == twin.next_state(twin_start, 0)
    assert index.is_final(start) == twin.is_final(twin_start)
    assert index.step_bytes(start, b'{"a":1') == twin.step_bytes(twin_start, b'{"a":1')
    assert index.forced_bytes(start) == twin.forced_bytes(twin_start)
    assert index.shortest_completion(start) == twin.shortest_completion(twin_start)


HAVE_GC = 1 << 14
"""``Py_TPFLAGS_HAVE_GC``: the type's objects carry the cyclic collector's header."""

ACYCLIC = {
    "fsm.token_row.TokenRow",
    "fsm.row_walk._LexemeWalk",
    "fsm.row_walk._CutWalk",
    "fsm.row_walk._HeldWalk",
    "fsm.row_walk._FirstBytes",
    "fsm.lexeme_cache.SharedLexemeWalk",
    "fsm.lexeme_cache.CountedWalk",
    "fsm.lexeme_cache.CountedSelection",
    "fsm.lexeme_cache.MeetSkeleton",
    "fsm.lexeme_cache.SharedCutWalk",
    "fsm.lexeme_cache.LiteralTokens",
    "fsm.lexeme_cache.TriePaths",
}
"""The compiled classes whose objects go without the collector's header
(``mypyc_attr(acyclic=True)``): a cold walk's rows, walks and cache entries. They hold
arrays, tuples, ints and terms, and nothing they hold refers back to them, so they are
never on a cycle; untracked, they make the collector's young passes fewer. A cycle
through an object without the header would never be collected: a class joins this
list only when nothing it holds can lead back to it."""


def test_only_the_listed_classes_go_without_the_collector_s_header() -> None:
    without = set()
    for name in native.COMPILED:
        module = importlib.import_module(f"fsm.{name}")
        for cls in vars(module).values():
            if isinstance(cls, type) and cls.__module__ == module.__name__:
                if not cls.__flags__ & HAVE_GC:
                    without.add(f"{module.__name__}.{cls.__name__}")
    assert without == (ACYCLIC if fsm.NATIVE else set())


DEEP_DEALLOCATIONS = """
import gc
import numpy as np
from fsm.lexeme_cache import LiteralTokens, TriePaths
from fsm.row_walk import _LexemeWalk
from fsm.token_row import TokenRow

def make(kind, k):
    t = np.arange(k % 7 + 1, dtype=np.int32)
    if kind == 0:
        return TokenRow([(t, None, t, None, -1, False)], -1, 64, np.arange(64, dtype=np.int32))
    if kind == 1:
        return _LexemeWalk(t, t, t, t)
    if kind == 2:
        return LiteralTokens(t, t, t, t)
    return TriePaths(((1, 2), (k,)))

def nested(kind, k, depth):
    held = [make(kind, k)]  # its only reference: freed inside the innermost list
    for _ in range(depth - 1):
        held = [held]
    return held

live = []
for rep in range(300):
    for depth in range(40, 64):
        for kind in range(4):
            chain = nested(kind, rep, depth)
            live.append(make(kind, rep + depth))  # neighbours in memory
            del chain
    if len(live) > 3000:
        del live[:1500]
    gc.collect(0)
print("freed")
"""


def test_objects_without_the_header_are_freed_deep_inside_nested_structures() -> None:
    """Rows, walks and cache entries dropped from inside lists 40 to 63 deep. CPython
    3.11's trashcan defers an object freed 50 nested deallocations deep by writing into
    its collector header; mypyc frees an acyclic object through the trashcan all the
    same, so the write lands in the memory before it: built so, this crashed three runs
    in three (``docs/design.md``, sixty-second session). ``scripts/build_native.py``
    takes the trashcan out of those deallocators; in a subprocess, so a crash fails the
    test instead of ending the run."""
    done = subprocess.run(
        [sys.executable, "-c", DEEP_DEALLOCATIONS], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "freed"
