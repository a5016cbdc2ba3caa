"""JSON pointers into a schema document (``fsm.json_schema.refs``): the resolver keeps
each node it finds, and answers as a walk from the root does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.errors import UnsupportedSchema
from fsm.json_schema.refs import RefResolver, escape_token

DOCUMENT = {
    "properties": {
        "a/b": {"items": [{"type": "null"}, None, {"const": 1}]},
        "t~x": {"$defs": {"": {"type": "string"}}},
        "plain": {"properties": {"deep": {"enum": [1, 2]}}},
    },
    "$defs": {"n": None, "list": [[{"x": 1}]]},
}


def _walked(document: object, pointer: str) -> object:
    """The node at ``pointer``, walked from the root one token at a time."""
    node = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise LookupError(pointer)
    return node


def _pointers(node: object, pointer: str = "") -> list[str]:
    """Every pointer into ``node``, ``pointer`` first."""
    found = [pointer]
    if isinstance(node, dict):
        for key, child in node.items():
            found += _pointers(child, f"{pointer}/{escape_token(key)}")
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found += _pointers(child, f"{pointer}/{index}")
    return found


@settings(max_examples=60, deadline=None)
@given(st.permutations(_pointers(DOCUMENT)))
def test_nodes_kept_answer_as_a_walk_from_the_root(order: list[str]) -> None:
    """Asked in any order (a child before its parent, or after), each pointer gives the
    node a walk from the root gives, and asking again gives the same object."""
    resolver = RefResolver(DOCUMENT, 2020)
    for pointer in order:
        assert resolver.node_at(pointer) is _walked(DOCUMENT, pointer)
    for pointer in order:
        assert resolver.node_at(pointer) is _walked(DOCUMENT, pointer)


@pytest.mark.parametrize(
    "pointer",
    [
        "/missing",
        "/missing/deeper/still",
        "/properties/a~1b/items/3",
        "/properties/a~1b/items/x",
        "/$defs/n/x",
    ],
)
def test_a_pointer_to_nothing_raises_with_the_pointer_asked(pointer: str) -> None:
    resolver = RefResolver(DOCUMENT, 2020)
    resolver.node_at("/properties")  # a parent kept before
    with pytest.raises(UnsupportedSchema, match=pointer.replace("$", r"\$")):
        resolver.node_at(pointer)
    with pytest.raises(UnsupportedSchema, match="#/from-a-ref"):
        resolver.node_at(pointer, "#/from-a-ref")
