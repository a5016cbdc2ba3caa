"""``benchmarks/term_store.py``: its exploration, its cold object terms, its count of
what the collector tracks, and its summary."""

from __future__ import annotations

import pytest

import fsm
from fsm import terms
from fsm.json_schema.json_text import string_except, string_of
from fsm.regex import regex_term
from fsm.term_store import EMPTY, TermStore


@pytest.fixture
def term_store(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("term_store")


def test_exploration_counts_the_live_states_and_stops_at_the_cap(term_store):
    term = regex_term("ab|ac")  # the root, then b|c, then the end: three live states
    assert term_store.explore(terms.derivative, terms.class_bytes, term, terms.EMPTY, 100) == 3
    store = TermStore()
    root = store.load(regex_term("[a-z]{0,30}"))
    assert term_store.explore(store.derivative, store.class_bytes, root, EMPTY, 100) == 31
    assert term_store.explore(store.derivative, store.class_bytes, root, EMPTY, 10) == 10


def test_forgotten_memos_leave_the_object_terms_cold(term_store):
    """Every memo below the root goes, through rests and promised bounds too: the
    string's own and the plain JSON string's its promise names."""
    term = string_except(["id", "name"])
    term_store.explore(terms.derivative, terms.class_bytes, term, terms.EMPTY, 100)
    below = list(term_store.sub_terms(term))
    assert any(isinstance(t, terms.Lexeme) and t is not term for t in below)  # the bound
    assert any(t._derivatives for t in below)
    term_store.forget_memos(term)
    assert not any(t._derivatives or t._partition is not None for t in term_store.sub_terms(term))


def test_a_walked_store_holds_few_objects_for_the_collector(term_store):
    """Both walks find the same states; the object terms keep more objects for the
    collector as they meet more states, the store as many as before."""
    results = [
        term_store.measure(lambda: string_of(regex_term("[a-z0-9 ]{0,80}")), 2, cap)
        for cap in (20, 80)
    ]
    for result in results:
        assert result["object_states"] == result["store_states"]
    assert results[1]["object_tracked"] > results[0]["object_tracked"] + 60
    assert results[1]["store_tracked"] == results[0]["store_tracked"]


def test_refusals_are_counted_by_their_error(term_store):
    results = term_store.run(
        {
            "bad pattern": lambda: string_of(regex_term("(?<=a)b")),
            "fine": lambda: regex_term("a+b"),
        },
        reps=1,
        max_states=100,
    )
    assert results["bad pattern"] == {"refused": "UnsupportedRegex"}
    lines = term_store.summary(results)
    assert "1 terms measured; refused: 1 by UnsupportedRegex" in lines[0]
    assert "terms whose state counts differ: 0" in lines[2]


SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": "^[A-Z]"}, "age": {"type": "integer"}},
    "required": ["name"],
}


@pytest.mark.parametrize("shared", [False, True])
def test_schemas_are_read_alike_both_ways(term_store, shared):
    texts = [b'{"name": "Ada", "age": 36}', b'{"name": "Bo"}']
    results = term_store.run_schemas(
        [("person", SCHEMA, texts), ("broken", {"type": "nonsense"}, [])], 2, shared=shared
    )
    assert results["broken"] == {"refused": "InvalidSpec"}
    person = results["person"]
    assert person["agree"] and person["accepted"] == person["texts"] == 2
    assert person["compile_built_ms"] > 0 and person["compile_objects_ms"] > 0
    lines = term_store.schema_summary(results)
    assert "1 schemas measured (1 do not compile); texts read alike in 1, 2 of 2" in lines[0]
    assert any(line.startswith("- compiled and read, rows built by the compiler") for line in lines)


def test_rows_built_by_the_compiler_read_as_the_objects_do(term_store):
    """The third way's reads: a wrong row would read a text otherwise."""
    texts = [b'{"name": "Ada", "age": 36}', b'{"name": "ada"}', b'{"age": 1}', b'{"name": "B"}']
    found = term_store.compile_and_read(SCHEMA, texts)
    assert found["agree"] and found["built"] > 0
    store = term_store.TermStore()
    root = term_store.compile_into(term_store.strings_in(term_store.StoredTerms(store)), SCHEMA)
    read = term_store.walk_texts(store.derivative, store.nullable, root, 0, texts)
    assert read == [True, False, False, True]


def test_a_read_after_conversion_reads_the_same_texts(term_store):
    """The converted read takes the bodies the object read built, and reads alike."""
    term = fsm.JsonSchema(SCHEMA).term()
    texts = [b'{"name": "Ada", "age": 36}', b'{"name": "ada"}', b'{"age": 1}']
    read = term_store.walk_texts(terms.derivative, terms.nullable, term, terms.EMPTY, texts)
    assert read == [True, False, False]
    assert term_store.read_converted(term, texts)[0] == read
    results = term_store.run_schemas([("person", SCHEMA, texts)], 1)
    assert "bodies converted before the clock" in term_store.schema_summary(results)[2]


@pytest.mark.parametrize("way", ["objects", "store", "built"])
def test_a_service_child_reads_the_schemas_that_compile(term_store, monkeypatch, way):
    schemas = [("person", SCHEMA, [b'{"name": "Ada"}']), ("broken", {"type": "nonsense"}, [])]
    monkeypatch.setattr(term_store, "sample_schemas", lambda sample: schemas)
    found = term_store.service_child(way, 2)
    assert found["schemas"] == 1
    assert found["reads_ms"] > 0 and found["compiles_ms"] > 0 and found["collector_ms"] >= 0
    table = term_store.service_table({way: found})
    assert table.splitlines()[2].startswith(f"| {way} | 1 |")
