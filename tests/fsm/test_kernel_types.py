"""The numba kernels are compiled when their modules load (``fsm.kernel_types``): no
walk compiles one, and one overload takes writable and read-only arrays alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

from fsm import partition, successors, trie, trie_walk
from tests.fsm.walked_specs import WALKED_SPECS

ROOT = Path(__file__).resolve().parents[2]
KERNEL_MODULES = (trie_walk, partition, successors, trie)


def _public_kernels() -> dict[str, CPUDispatcher]:
    """The kernels Python code calls (helpers named ``_x`` are compiled into them)."""
    return {
        f"{module.__name__}.{name}": kernel
        for module in KERNEL_MODULES
        for name, kernel in vars(module).items()
        if isinstance(kernel, CPUDispatcher) and not name.startswith("_")
    }


def test_every_kernel_has_one_declared_overload() -> None:
    kernels = _public_kernels()
    assert len(kernels) >= 15
    assert {name: len(kernel.signatures) for name, kernel in kernels.items()} == {
        name: 1 for name in kernels
    }


def test_a_read_only_array_and_a_writable_one_take_the_same_overload() -> None:
    tokens = np.array([3, 40, 7], np.int32)
    frozen = tokens.copy()
    frozen.flags.writeable = False
    np.testing.assert_array_equal(
        trie_walk.pack_bitmask(tokens, 2), trie_walk.pack_bitmask(frozen, 2)
    )
    assert len(trie_walk.pack_bitmask.signatures) == 1


def test_an_argument_of_another_dtype_is_refused_not_compiled() -> None:
    with pytest.raises(TypeError):
        trie_walk.pack_bitmask(np.array([3, 40], np.int64), 2)
    assert len(trie_walk.pack_bitmask.signatures) == 1


COUNT_OVERLOADS_AROUND_WALKS = (
    """
import json
import fsm
from fsm import JsonSchema, Regex, TokenIndex, Vocabulary
from fsm.compiler import automaton_of
from numba.core.registry import CPUDispatcher
from fsm import partition, successors, trie, trie_walk

def overloads():
    return {
        module.__name__ + "." + name: len(kernel.signatures)
        for module in (trie_walk, partition, successors, trie)
        for name, kernel in vars(module).items()
        if isinstance(kernel, CPUDispatcher)
    }

before = overloads()
words = [None, b"{", b"}", b'"', b'":', b",", b" ", b"[", b"]", b"a", b"b", b"ab", b"1", b"12",
         b"-", b".", b"e", b"x-", b"true", b"null", b'"a', b'b"', b'{"', b'"}', b"2024",
         b"-01", b"T", b":00", b"Z", b"\\\\", b"u00", b"\\xc3\\xa9"]
vocabulary = Vocabulary.from_raw(words + [bytes([b]) for b in range(256)], eos_ids=[0])
"""
    + WALKED_SPECS
    + """for spec in specs:
    index = TokenIndex(automaton_of(spec), vocabulary)
    frontier, seen = [index.initial_state], {index.initial_state}
    while frontier and len(seen) < 300:
        state = frontier.pop(0)
        index.bitmask(state)
        for token in index.allowed_tokens(state).tolist():
            after = index.next_state(state, token)
            if after not in seen:
                seen.add(after)
                frontier.append(after)
print(json.dumps({"before": before, "after": overloads()}))
"""
)


def test_walks_compile_no_kernel() -> None:
    """A fresh process: every kernel is compiled on import, and breadth-first walks of
    a regex and two schemas (rows, masks, merged rows, steps) add no overload."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", COUNT_OVERLOADS_AROUND_WALKS],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
    )
    counts = json.loads(done.stdout)
    public = {name for name in counts["before"] if not name.rpartition(".")[2].startswith("_")}
    assert public and all(counts["before"][name] == 1 for name in public)
    assert counts["after"] == counts["before"]
