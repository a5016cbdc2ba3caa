"""fsm memos under threads: one build per cache key, lazy index rows built from many
threads equal to rows built by one, schemas compiled into one store from many threads
read as alone, thunks walked by several threads at once."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import fsm
from fsm import IndexCache, TokenIndex
from fsm.json_schema.json_text import any_value
from fsm.terms import derivative, first_bytes, nullable

THREADS = 8


@pytest.fixture(scope="module")
def vocabulary(smol_tokenizer):
    return fsm.Vocabulary.from_tokenizer(smol_tokenizer)


def in_threads(work, n: int = THREADS) -> list:
    """``work(i)`` for ``i < n``, all released at once."""
    barrier = threading.Barrier(n)

    def run(i: int):
        barrier.wait()
        return work(i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def test_cache_builds_each_key_once_and_other_keys_in_parallel(vocabulary, busy_switching):
    cache = IndexCache(max_entries=4)
    builds: list[str] = []

    def build(key: str) -> TokenIndex:
        builds.append(key)
        time.sleep(0.05)  # long enough for every thread to arrive while it runs
        return fsm.compile_index(fsm.Regex(key), vocabulary)

    keys = ["[0-9]+", "[a-z]+"]
    got = in_threads(lambda i: cache.get_or_build(keys[i % 2], lambda: build(keys[i % 2])))
    assert sorted(builds) == sorted(keys)
    assert all(index is got[i % 2] for i, index in enumerate(got))
    assert (cache.hits, cache.misses) == (THREADS - 2, 2)


def test_a_failed_build_lets_a_waiting_thread_build(busy_switching):
    cache = IndexCache()
    attempts: list[int] = []

    def build() -> TokenIndex:
        attempts.append(1)
        time.sleep(0.02)
        if len(attempts) == 1:
            raise RuntimeError("first build fails")
        return TokenIndex(
            fsm.TableAutomaton(np.zeros((1, 256), np.int32), np.ones(1, bool)),
            fsm.Vocabulary.from_raw([b"a", None], eos_ids=1),
        )

    def ask(_: int):
        try:
            return cache.get_or_build("k", build)
        except RuntimeError:
            return None

    got = in_threads(ask, 4)
    assert got.count(None) == 1 and len(attempts) == 2
    assert len({id(index) for index in got if index is not None}) == 1


def assert_same_language(index: TokenIndex, a: int, b: int) -> None:
    """``a`` and ``b`` read the same tokens and are final alike. A token and its bytes
    may lead to two numbers for one language: a token that ends inside a lexeme leads to
    a join (the lexeme's state, then the rest), built apart from the term the bytes'
    derivatives reach (``fsm.row_walk``)."""
    np.testing.assert_array_equal(index.bitmask(a), index.bitmask(b))
    assert index.is_final(a) == index.is_final(b)


def walk(index: TokenIndex, seed: int, steps: int = 40) -> list[tuple[list[int], bool, bytes]]:
    """A reproducible token walk: what each state allows, whether it is final and what
    it forces. Tokens are picked by position in the allowed list, which does not depend
    on the order in which states were numbered."""
    rng = np.random.default_rng(seed)
    state, seen = index.initial_state, []
    for _ in range(steps):
        allowed = index.allowed_tokens(state)
        np.testing.assert_array_equal(
            np.flatnonzero(np.unpackbits(index.bitmask(state).view(np.uint8), bitorder="little")),
            allowed,
        )
        seen.append((allowed.tolist(), index.is_final(state), index.forced_bytes(state)))
        text = [t for t in allowed.tolist() if t not in index.vocabulary.eos_ids]
        if not text:
            break
        token = text[int(rng.integers(len(text)))]
        following = index.next_state(state, token)
        assert_same_language(
            index, following, index.step_bytes(state, index.vocabulary.token_bytes[token])
        )
        state = following
    return seen


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "tags": {"type": "array", "items": {"enum": ["a", "bb", "ccc"]}},
        "n": {"type": "integer"},
    },
    "required": ["name", "n"],
}


def test_lazy_rows_built_from_threads_equal_rows_built_alone(vocabulary, busy_switching):
    shared = fsm.compile_index(fsm.JsonSchema(SCHEMA), vocabulary)
    walks = in_threads(lambda i: walk(shared, i))
    for i, seen in enumerate(walks):
        alone = fsm.compile_index(fsm.JsonSchema(SCHEMA), vocabulary)
        assert seen == walk(alone, i), f"walk {i} differs when run beside the others"
    table, rows = shared.bitmask_table(), shared.state_rows()
    assert table.shape[0] == shared.num_rows_built == int((rows >= 0).sum())
    for state in np.flatnonzero(rows >= 0).tolist():
        np.testing.assert_array_equal(table[rows[state]], shared.bitmask(state))


SCHEMAS = (
    SCHEMA,
    {"type": "object", "patternProperties": {"^x-": {"type": "integer"}}},
    {"type": "array", "items": {"type": "string", "format": "date"}, "maxItems": 3},
    {"anyOf": [{"type": "number", "minimum": 2}, {"type": "string", "pattern": "^[a-c]+$"}]},
)


def test_schemas_compiled_into_one_store_from_threads_read_as_alone(vocabulary, busy_switching):
    """``compile_index`` builds every schema over a vocabulary into one term store
    (``fsm.schema_rows``); indexes of different schemas compiled and walked from
    threads at once, in a cold store each round, read as each does alone in a store of
    its own. Without the store's lock shared by its indexes, interpreted, a round
    could fail (a thread's thunk seen as recursion by another) or read otherwise."""

    def fresh() -> fsm.Vocabulary:  # the same tokens, a store of its own
        return fsm.Vocabulary.from_raw(vocabulary.token_bytes, eos_ids=vocabulary.eos_ids)

    def schema(i: int) -> fsm.JsonSchema:
        return fsm.JsonSchema(SCHEMAS[i % len(SCHEMAS)])

    for _ in range(2):
        shared = fresh()
        walks = in_threads(lambda i: walk(fsm.compile_index(schema(i), shared), i, 120))  # noqa: B023
        for i, seen in enumerate(walks):
            alone = fsm.compile_index(schema(i), fresh())
            assert seen == walk(alone, i, 120), f"walk {i} differs when compiled beside others"


def test_one_thunk_walked_by_many_threads(busy_switching):
    """Recursion guards are per thread: a thread never mistakes another thread's walk
    through the same thunk for unguarded recursion."""
    value = any_value(1)

    def explore(seed: int) -> list[bool]:
        rng = np.random.default_rng(seed)
        term, out = value, []
        for _ in range(30):
            mask = first_bytes(term)
            live = [b for b in range(256) if mask >> b & 1]
            if not live:
                break
            out.append(nullable(term))
            term = derivative(term, live[int(rng.integers(len(live)))])
        return out

    got = in_threads(explore)
    assert got == [explore(i) for i in range(THREADS)]
