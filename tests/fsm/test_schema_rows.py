"""``fsm.schema_rows``: the store JSON schemas are compiled into, per vocabulary, and its
generations."""

from __future__ import annotations

import json

import pytest

import fsm
from fsm.prefixed import Prefixed
from fsm.schema_rows import SchemaRows
from fsm.store_automaton import StoreAutomaton

BYTES = fsm.Vocabulary.from_raw([bytes([b]) for b in range(256)] + [None], eos_ids=256)
PERSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
NUMBERS = {"type": "array", "items": {"type": "integer", "minimum": 3}}


def reads(index: fsm.TokenIndex, value: object) -> bool:
    """Whether the index reads ``value``'s JSON text byte by byte to a final state."""
    return reads_text(index, json.dumps(value).encode())


def reads_text(index: fsm.TokenIndex, text: bytes) -> bool:
    state = index.initial_state
    for byte in text:
        state = index.next_state(state, byte)
        if state < 0:
            return False
    return index.is_final(state)


def test_schemas_over_one_vocabulary_share_its_store() -> None:
    vocabulary = fsm.Vocabulary.from_raw(BYTES.token_bytes, eos_ids=256)
    person = fsm.compile_index(fsm.JsonSchema(PERSON), vocabulary)
    numbers = fsm.compile_index(fsm.JsonSchema(NUMBERS), vocabulary)
    assert isinstance(person.automaton, StoreAutomaton)
    assert person.automaton.store is numbers.automaton.store
    assert person.automaton.store is vocabulary.schema_rows.current_store
    other = fsm.compile_index(fsm.JsonSchema(PERSON), BYTES)
    assert other.automaton.store is not person.automaton.store  # type: ignore[attr-defined]
    assert reads(person, {"name": "a"}) and not reads(person, {})
    assert reads(numbers, [3, 40]) and not reads(numbers, [2])


def test_automata_over_one_store_share_what_its_rows_split_into() -> None:
    """Every automaton over a store asks one ``StoreSplits``: a schema compiled and
    walked again finds every split and branch of its rows already there, and a fresh
    generation starts its own."""
    rows = SchemaRows()
    first, lock = rows.compile(fsm.JsonSchema(PERSON))
    assert reads(fsm.TokenIndex(first, BYTES, lock=lock), {"name": "ab"})
    splits = first.splits
    found = (len(splits.splits), len(splits.unbuilt))
    assert found[0] > 0 and found[1] > 0
    again, lock = rows.compile(fsm.JsonSchema(PERSON))
    assert again.splits is splits
    assert reads(fsm.TokenIndex(again, BYTES, lock=lock), {"name": "ab"})
    assert (len(splits.splits), len(splits.unbuilt)) == found  # nothing taken apart anew
    rows.generation_rows = 0  # full: the next compile starts a fresh store
    fresh, _ = rows.compile(fsm.JsonSchema(PERSON))
    assert fresh.store is not first.store and fresh.splits is not splits


def test_a_full_store_gives_way_to_a_fresh_one_and_its_indexes_go_on() -> None:
    rows = SchemaRows()
    rows.generation_rows = len(rows.current_store)  # full once a schema is in it
    first, first_lock = rows.compile(fsm.JsonSchema(PERSON))
    assert rows.generations == 1
    second, second_lock = rows.compile(fsm.JsonSchema(NUMBERS))
    assert rows.generations == 2
    assert second.store is rows.current_store is not first.store
    assert second_lock is not first_lock
    old = fsm.TokenIndex(first, BYTES, lock=first_lock)  # walked after the change
    new = fsm.TokenIndex(second, BYTES, lock=second_lock)
    assert reads(old, {"name": "ab"}) and not reads(old, {"name": 1})
    assert reads(new, [5]) and not reads(new, [1])


def test_a_schema_with_no_instance_is_refused_at_compile() -> None:
    with pytest.raises(fsm.Unsatisfiable, match="accepts no text at all"):
        SchemaRows().compile(fsm.JsonSchema({"type": "string", "minLength": 3, "maxLength": 2}))


def test_a_healed_prefix_then_a_schema_is_rows_read_as_the_objects_read_it() -> None:
    """``Prefixed(healed bytes, JsonSchema)`` (token healing, ``backends.decode``) is
    compiled into the store too: the prefix's bytes, then the schema's rows."""
    spec = Prefixed(b' "', fsm.JsonSchema(PERSON))
    rows = fsm.compile_index(spec, BYTES)
    objects = fsm.TokenIndex(spec.automaton(max_states=10_000), BYTES)
    assert isinstance(rows.automaton, StoreAutomaton)
    for text in (b' "{"name":"a"}', b' "{}', b'{"name":"a"}', b' "{"name":1}'):
        here, there = rows.initial_state, objects.initial_state
        for byte in text:
            assert rows.allowed_tokens(here).tolist() == objects.allowed_tokens(there).tolist()
            here, there = rows.next_state(here, byte), objects.next_state(there, byte)
            if here < 0 or there < 0:
                break
        assert (here < 0) == (there < 0)
        assert here < 0 or rows.is_final(here) == objects.is_final(there)
    assert reads_text(rows, b' "{"name":"a"}') and not reads_text(rows, b'{"name":"a"}')
