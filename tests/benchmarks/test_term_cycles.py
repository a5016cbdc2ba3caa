"""``benchmarks/term_cycles.py``: its cycle finder, its thunk-free test and its census of
what only the collector frees."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsm
from fsm import terms
from fsm.compiler import automaton_of
from fsm.token_index import TokenIndex
from tests.fsm.schema_checks import BYTES


@pytest.fixture
def term_cycles(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("term_cycles")


def test_components_are_the_cycles_of_a_small_graph(term_cycles):
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": ["e"], "e": [], "f": ["f"], "g": ["x"]}
    found = sorted(sorted(component) for component in term_cycles.strongly_connected(graph))
    assert found == [["a", "b", "c"], ["f"]]


def _reachable(edges: dict[int, list[int]], start: int) -> set[int]:
    """The nodes a path of one edge or more leads to from ``start``."""
    seen: set[int] = set()
    todo = [b for b in edges[start] if b in edges]
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(b for b in edges[node] if b in edges)
    return seen


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # the module only
@given(st.dictionaries(st.integers(0, 12), st.lists(st.integers(0, 12), max_size=4), max_size=13))
def test_components_are_the_mutually_reachable_nodes(term_cycles, edges):
    reach = {node: _reachable(edges, node) for node in edges}
    expected = {
        frozenset({node} | {other for other in reach[node] if node in reach[other]})
        for node in edges
        if node in reach[node]
    }
    found = {frozenset(c) for c in term_cycles.strongly_connected(edges)}
    assert found == expected


def test_a_thunk_below_makes_a_term_not_thunk_free(term_cycles):
    plain = terms.cat(terms.literal(b"ab"), terms.star(terms.byte_set(b"c")))
    held = terms.cat(terms.literal(b"["), terms.thunk(("test", 1), lambda: terms.literal(b"]")))
    known: dict[int, bool] = {}
    assert term_cycles.thunk_free(plain, known)
    assert not term_cycles.thunk_free(held, known)
    assert not term_cycles.thunk_free(terms.alt(plain, held), known)


RECURSIVE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}},
            "required": ["v"],
        }
    },
    "$ref": "#/$defs/node",
}
FLAT = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _walked_and_dropped(schema: dict, text: bytes, objects: bool = True):
    """A walk of ``text`` through a fresh index of ``schema``: over object terms, or as
    the product builds it (``fsm.compile_index``: a store's rows)."""

    def walk() -> None:
        spec = fsm.JsonSchema(schema)
        index = TokenIndex(automaton_of(spec), BYTES) if objects else fsm.compile_index(spec, BYTES)
        state = index.initial_state
        for byte in text:
            index.allowed_tokens(state)
            state = index.next_state(state, byte)
        assert index.is_final(state)

    return walk


def test_a_recursive_schema_leaves_cycles_through_its_thunks(term_cycles):
    walk = _walked_and_dropped(RECURSIVE, b'{"v":1,"next":{"v":2,"next":{"v":3}}}')
    term_cycles.garbage_of(walk)  # the first fills shared memos
    census = term_cycles.garbage_census(term_cycles.garbage_of(walk))
    assert census["cycles"] >= 1 and census["objects"] > 0
    assert census["cycles without a thunk"] == 0


def test_the_product_walks_a_recursive_schema_leaving_nothing_to_the_collector(term_cycles):
    """Over rows (``fsm.schema_rows``) the recursive schema's walk leaves no cycle: its
    terms are integers in the vocabulary's store, which outlives the index."""
    walk = _walked_and_dropped(RECURSIVE, b'{"v":1,"next":{"v":2,"next":{"v":3}}}', objects=False)
    term_cycles.garbage_of(walk)
    assert term_cycles.garbage_census(term_cycles.garbage_of(walk))["objects"] == 0


def test_a_flat_schema_leaves_nothing_to_the_collector(term_cycles):
    walk = _walked_and_dropped(FLAT, b'{"name":"ann"}')
    term_cycles.garbage_of(walk)
    assert term_cycles.garbage_census(term_cycles.garbage_of(walk))["objects"] == 0
