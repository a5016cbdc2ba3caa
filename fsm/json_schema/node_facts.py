"""What a schema node says about the values it admits, read without compiling it.

The compiler uses these facts to compile an applicator without intersecting whole
terms where an intersection adds nothing (``type`` beside a part whose values have
those types), or where the parts can be merged (``allOf`` of plain object schemas),
or told apart (``oneOf`` branches that only constrain objects). An intersection of
documents costs a liveness search at every state of the walk; these rewrites are exact.
"""

from __future__ import annotations

from typing import TypeVar

from fsm.json_schema.keywords import APPLICATORS, KEYWORDS_OF_TYPE, OBJECT_KEYWORDS, REFUSED
from fsm.term_builder import TermBuilder

T = TypeVar("T")

ASSERTING = (
    frozenset().union(*KEYWORDS_OF_TYPE.values())
    | REFUSED
    | frozenset({"type", "enum", "const", "then", "else", "dependentRequired", *APPLICATORS})
)
"""Keywords the compiler acts on (any other is an annotation to it)."""

OBJECT_SOURCE = frozenset(
    {"type", "properties", "required", "additionalProperties", "propertyNames"}
    | {"minProperties", "maxProperties", "dependentRequired", "dependencies"}
)
"""Keywords a plain object schema says of the object itself (``dependencies`` when
every entry is a list of keys): what a merged object takes from each schema."""

PLAIN_OBJECT = OBJECT_SOURCE | {
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
}
"""Keywords of a plain object schema (applicators of plain ones; ``not`` and ``if``
hold when their conditions can be written as plain ones, ``fsm.json_schema.conditions``;
a dependent schema is ``if`` an object holding its key ``then`` it)."""

MAX_MERGED = 1024
"""Schemas an ``allOf`` merge may take in (nested ``allOf`` and references included)."""

FIRST_BYTES = {
    "null": 1 << ord("n"),
    "boolean": 1 << ord("t") | 1 << ord("f"),
    "number": sum(1 << b for b in b"-0123456789"),
    "string": 1 << ord('"'),
    "array": 1 << ord("["),
    "object": 1 << ord("{"),
}
"""The bytes a JSON value of each type may start with (an integer's are a number's,
so ``integer`` implies nothing)."""

KINDS_OF_TYPE = {
    "null": frozenset({"null"}),
    "boolean": frozenset({"boolean"}),
    "integer": frozenset({"integer"}),
    "number": frozenset({"integer", "fraction"}),
    "string": frozenset({"string"}),
    "array": frozenset({"array"}),
    "object": frozenset({"object"}),
}
"""The kinds of value a type admits (a number is an integer or has a fraction)."""

VALUE_KINDS = frozenset().union(*KINDS_OF_TYPE.values())


def asserting(node: dict) -> set[str]:
    """The keywords of ``node`` the compiler acts on."""
    return set(ASSERTING.intersection(node))


def kinds_of(declared: object) -> frozenset[str]:
    """The kinds of value ``type`` admits: all without one, none for a type unknown
    here (a node with one is left to the compiler)."""
    if declared is None:
        return VALUE_KINDS
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not all(n in KINDS_OF_TYPE for n in names):
        return frozenset()
    return frozenset().union(*(KINDS_OF_TYPE[n] for n in names))


def only_objects(node: dict) -> bool:
    """Whether ``node``'s ``type`` admits objects only."""
    return node.get("type") in ("object", ["object"])


def only_constrains_objects(node: dict) -> bool:
    """Whether every non-object meets ``node`` (its keywords all apply to objects)."""
    return not asserting(node) - OBJECT_KEYWORDS - {"dependentSchemas"}


def plain_object(node: dict) -> bool:
    """Whether ``node`` only says which keys an object has and what their values
    are, and which types it admits (applicators over such nodes included)."""
    if asserting(node) - PLAIN_OBJECT:
        return False
    if not all(isinstance(node.get(k, []), list) for k in ("allOf", "anyOf", "oneOf")):
        return False
    if "type" in node and not kinds_of(node["type"]):
        return False
    if not isinstance(node.get("properties", {}), dict):
        return False
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return False
    for keyword in ("dependentSchemas", "dependencies"):  # schemas, or key lists
        entries = node.get(keyword, {})
        if not isinstance(entries, dict) or not all(
            isinstance(value, (list, dict, bool)) for value in entries.values()
        ):
            return False
    return isinstance(node.get("additionalProperties", True), (bool, dict))


def within_first_bytes(terms: TermBuilder[T], term: T, allowed: int, undecided: int) -> T | None:
    """``term``'s values that start with an ``allowed`` byte, when that is ``term``
    itself or the branches of a union whose values all do (the others, none of whose
    values starts with an allowed or ``undecided`` byte, dropped); None otherwise."""
    if terms.first_bytes(term) & ~allowed == 0:
        return term
    members = terms.union_members(term)
    if members is None:
        return None
    kept = []
    for item in members:
        starts = terms.first_bytes(item)
        if starts & ~allowed == 0:
            kept.append(item)
        elif starts & (allowed | undecided):
            return None
    return terms.alt(*kept)
