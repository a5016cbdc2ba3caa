"""Memory has an owner: what a constraint builds (terms, their derivative memos, the
automaton, token rows) lives as long as its index, and caches of indexes are bounded."""

from __future__ import annotations

import gc
import weakref

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


def test_an_index_cache_keeps_at_most_its_bound():
    cache = fsm.IndexCache(max_entries=2)
    built = [fsm.compile_index(fsm.Regex(f"a{{{n}}}"), BYTES, cache=cache) for n in range(1, 6)]
    refs = [weakref.ref(index) for index in built]
    del built
    gc.collect()
    alive = [n for n, ref in enumerate(refs, start=1) if ref() is not None]
    assert alive == [4, 5]
