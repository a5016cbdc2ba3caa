"""Memory has an owner: what a constraint builds (terms, their derivative memos, the
automaton, token rows) lives as long as its index, and caches of indexes are bounded."""

from __future__ import annotations

import gc
import sys
import weakref

import numpy as np

import fsm

BYTES = fsm.Vocabulary.from_raw([bytes([b]) for b in range(256)] + [b""], eos_ids=[256])
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
    },
    "required": ["name"],
}


def walk(index: fsm.TokenIndex, text: bytes) -> int:
    state = index.initial_state
    for byte in text:
        index.allowed_tokens(state)
        state = index.next_state(state, byte)
    return state


def test_an_index_and_everything_it_built_are_freed_with_it():
    index = fsm.compile_index(fsm.JsonSchema(SCHEMA), BYTES)
    assert index.is_final(walk(index, b'{"name":"x","tags":["a"]}'))
    gone = weakref.ref(index)
    del index
    gc.collect()
    assert gone() is None


NESTED = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 8},
        "home": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
            "patternProperties": {"^x-": {"type": "boolean"}},
            "additionalProperties": False,
        },
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
    },
    "required": ["name", "home"],
}
NESTED_TEXT = b'{"name":"ann","home":{"city":"rome","x-y":true,"zip":12},"tags":["b"]}'


def test_an_index_over_a_schema_that_does_not_refer_to_itself_holds_no_cycle():
    """What such an index built is freed when the index is dropped, by reference
    counting alone: a cycle (a term whose derivative memo holds the term itself, an
    object shape holding a callable bound to it) kept a whole schema's terms alive
    until the cyclic collector's next full pass, scanned by every pass until then."""
    for _ in range(2):  # the first compiles the kernels and fills shared memos
        gc.collect()
        gc.disable()
        try:
            index = fsm.compile_index(fsm.JsonSchema(NESTED), BYTES)
            assert index.is_final(walk(index, NESTED_TEXT))
            gone = weakref.ref(index)
            del index
            left = gc.collect()
        finally:
            gc.enable()
        assert gone() is None
    assert left == 0, f"{left} objects were left to the cyclic collector"


RECURSIVE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"value": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}},
        }
    },
    "$ref": "#/$defs/node",
}
OPEN = {
    "type": "object",
    "properties": {"a": {"type": "string", "pattern": "^x+$"}},
    "additionalProperties": {"type": "array", "items": {"type": "number"}},
}
WALKED = (
    (RECURSIVE, b'{"value":1,"next":{"value":2,"next":{}}}'),
    (OPEN, b'{"a":"xxx","b":[1,2.5],"c":[]}'),
    (NESTED, NESTED_TEXT),
)


def test_dropped_indexes_give_their_memory_back():
    """Indexes compiled fresh, walked and dropped, one after another, leave the
    interpreter's count of allocated blocks where it was once the collector has run:
    whatever a schema built goes with its index, its cycles included (a recursive
    schema's thunks, an open object's body, a star's memo). Objects compiled without
    the collector's header (``tests/fsm/test_native.py``) must keep this so: a cycle
    through one is never collected (``docs/design.md``, sixty-second session: terms so
    built leaked ~157 blocks per index)."""

    def walk_all(rounds: int) -> None:
        for _ in range(rounds):
            for schema, text in WALKED:
                index = fsm.compile_index(fsm.JsonSchema(dict(schema)), BYTES)
                assert index.is_final(walk(index, text))
                del index

    walk_all(2)  # kernels compiled, shared memos and the vocabulary's walks filled
    gc.collect()
    before = sys.getallocatedblocks()
    walk_all(20)
    gc.collect()
    # bounded caches may still fill a little (tens of blocks); a leak of even 20
    # blocks per index is 1,200 here
    assert sys.getallocatedblocks() - before < 1000


def test_an_index_cache_keeps_at_most_its_bound():
    cache = fsm.IndexCache(max_entries=2)
    built = [fsm.compile_index(fsm.Regex(f"a{{{n}}}"), BYTES, cache=cache) for n in range(1, 6)]
    refs = [weakref.ref(index) for index in built]
    del built
    gc.collect()
    alive = [n for n, ref in enumerate(refs, start=1) if ref() is not None]
    assert alive == [4, 5]


def test_shared_lexeme_walks_are_bounded_and_reused():
    """The vocabulary's lexeme walks serve a second index (no new entry), stay within
    their byte bound (least recently used out) and can be dropped."""
    from fsm.lexeme_cache import LexemeWalkCache, SharedLexemeWalk

    vocabulary = fsm.Vocabulary.from_raw([bytes([b]) for b in range(256)] + [b""], eos_ids=[256])
    first = fsm.compile_index(fsm.JsonSchema(SCHEMA), vocabulary)
    walk(first, b'{"name":"x"}')
    held = len(vocabulary.lexeme_walks)
    assert held > 0
    second = fsm.compile_index(fsm.JsonSchema(SCHEMA), vocabulary)
    assert second.is_final(walk(second, b'{"name":"x"}'))
    assert len(vocabulary.lexeme_walks) == held

    def entry(size: int) -> SharedLexemeWalk:
        array = np.zeros(size, np.int32)
        return SharedLexemeWalk(array, array, (), array[:0])

    cache = LexemeWalkCache(max_bytes=1000)
    for key in range(5):
        cache.put(key, entry(40))  # 320 bytes each
    assert cache.nbytes <= 1000 and len(cache) == 3
    assert cache.get(0) is None and cache.get(4) is not None
    cache.put(4, entry(10))  # a key put again is counted once, at its new size
    held_walks = [cache.get(key) for key in (2, 3, 4)]
    assert cache.nbytes == sum(walk.nbytes for walk in held_walks if walk is not None) == 720
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0


def test_a_cache_entry_adds_no_object_for_the_collector_besides_its_walk():
    """The cache keeps each walk's size apart from it, not in a ``(walk, size)`` pair:
    a pair holding a walk is one more object the cyclic collector tracks, and every
    full pass of the process scans the thousands a service's cache holds."""
    from fsm.lexeme_cache import LexemeWalkCache, SharedLexemeWalk

    array = np.zeros(4, np.int32)
    walk_ = SharedLexemeWalk(array, array, (), array[:0])
    cache = LexemeWalkCache()
    gc.collect()
    before = len(gc.get_objects())
    for key in range(1000):
        cache.put(key, walk_)
    assert len(cache) == 1000
    assert len(gc.get_objects()) - before < 50


def test_a_key_s_trie_paths_count_the_memory_their_objects_take():
    """The small entries of the vocabulary's cache (a key's trie paths) are counted at
    what their objects take, not only their arrays' data, so that the cache's byte bound
    bounds their memory: a path's tuples and integers, each array's object."""
    import sys

    from fsm.lexeme_cache import LiteralTokens, TriePaths

    paths = ((100_001, 100_002, 100_003), (200_001,), ())
    deep = sys.getsizeof(paths) + sum(
        sys.getsizeof(path) + sum(sys.getsizeof(node) for node in path) for path in paths
    )
    assert TriePaths(paths).nbytes == deep
    arrays = [np.arange(count, dtype=np.int32) for count in (0, 3, 7, 1)]
    assert LiteralTokens(*arrays).nbytes >= sum(sys.getsizeof(array) for array in arrays)
