"""Conditions (``if``, ``not``, dependent schemas) as plain object schemas, so they
merge instead of being intersected as complements.

``if``/``then``/``else`` is ``(if & then) | (else & not if)``, ``not`` is
``any & not S``, and a dependent schema for key ``k`` is ``if`` "an object holding
``k``" ``then`` it. Compiled as written, the complement of an object schema makes every
state inside the object an intersection whose liveness must be searched, and on real
schemas (a discriminator key, keys that exclude each other) those searches cost up to
seconds per row. Most conditions only say which keys an object has and what their
values are (``{"properties": {"kind": {"const": "a"}}, "required": ["kind"]}``). The
values that meet such a condition are one plain object schema, and those that fail
it a union of plain ones: a value of a type it refuses, an object without one of its
required keys, or an object holding one of its named keys with a value that key's
schema refuses (a complement inside one value, whose searches stay in that value).
De Morgan's laws carry this through ``not``, ``allOf`` and ``anyOf``. The compiler
merges these schemas with the rest of the node (``SchemaCompiler._object_alternatives``),
and writes a ``oneOf`` whose branches overlap as each branch met with the others failed.
A key that a condition both requires and constrains fails as one source ("absent, or
present with a refused value"), so failing n such conditions stays one alternative.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product
from typing import NamedTuple

from fsm.json_schema.node_facts import (
    KINDS_OF_TYPE,
    OBJECT_SOURCE,
    VALUE_KINDS,
    asserting,
    kinds_of,
)
from fsm.json_schema.refs import escape_token

CONDITION_KEYWORDS = frozenset({"type", "properties", "required", "not", "allOf", "anyOf"})
"""Keywords of a condition read as plain object schemas (annotations aside)."""

MAX_CONDITION_DEPTH = 8
"""Nested ``not``/``allOf``/``anyOf``/``$ref`` a condition may hold before it is left
alone."""

MAX_CONDITION_ALTERNATIVES = 256
"""Alternatives a condition may be written as (the ways an ``anyOf`` fails multiply)
before it is left alone."""


class Source(NamedTuple):
    """A plain object schema an object must meet: ``node``, whose subschemas are at
    ``pointer``. With ``negated``, the key's value, where the object holds it (it must
    when ``node`` requires it), is one the key's schema at ``pointer`` refuses."""

    node: dict
    pointer: str
    negated: str | None = None

    def identity(self) -> tuple:
        """Equal for sources that say the same: a pointer with its negated key and
        the keywords taken from the node there (a synthetic source's pointer names
        what it says)."""
        return (self.pointer, self.negated, tuple(sorted(self.node)))


OBJECTS_ONLY = Source({"type": "object"}, "#kinds/object")
"""A source admitting objects only, and saying nothing of them."""

Alternatives = list[list[Source]]
"""Lists of sources; the values meeting every source of one list, united over lists."""

Resolve = Callable[[str], tuple[object, str]]
"""The node at a pointer after plain ``$ref`` chains, and its pointer."""


def condition_alternatives(
    node: object, pointer: str, resolve: Resolve, holds: bool, depth: int = 0
) -> Alternatives | None:
    """The values that meet ``node`` (``holds``) or fail it, as alternatives of plain
    sources; None when ``node`` says more than ``CONDITION_KEYWORDS``."""
    if isinstance(node, bool):
        return [[]] if node == holds else []
    if not isinstance(node, dict) or depth > MAX_CONDITION_DEPTH:
        return None
    said = asserting(node)
    if said == {"$ref"} and isinstance(node["$ref"], str):
        target, at = resolve(pointer)
        if target is node:
            return None
        return condition_alternatives(target, at, resolve, holds, depth + 1)
    all_of, any_of = node.get("allOf", []), node.get("anyOf", [])
    if said - CONDITION_KEYWORDS or not _plain_part_valid(node):
        return None
    if not isinstance(all_of, list) or not isinstance(any_of, list):
        return None
    plain = {k: node[k] for k in ("type", "properties", "required") if k in node}
    parts = [(branch, f"{pointer}/allOf/{i}", True) for i, branch in enumerate(all_of)]
    if "not" in node:
        parts.append((node["not"], f"{pointer}/not", False))
    branches = [(branch, f"{pointer}/anyOf/{i}") for i, branch in enumerate(any_of)]
    if "anyOf" in node and not branches:
        return None  # an empty ``anyOf`` is no schema
    condition = _Condition(plain, pointer, parts, branches)
    found = (_meeting if holds else _failing)(condition, resolve, depth)
    return None if found is None or len(found) > MAX_CONDITION_ALTERNATIVES else found


class _Condition(NamedTuple):
    """A condition taken apart: its plain part (at ``pointer``), its ``allOf`` and
    ``not`` subschemas as (schema, pointer, whether it must hold for the condition to
    hold), and its ``anyOf`` branches as (schema, pointer)."""

    plain: dict
    pointer: str
    parts: list[tuple[object, str, bool]]
    branches: list[tuple[object, str]]


def _meeting(condition: _Condition, resolve: Resolve, depth: int) -> Alternatives | None:
    """Every part as it must be, and some branch of ``anyOf``."""
    plain, pointer = condition.plain, condition.pointer
    found: Alternatives | None = [[Source(plain, pointer)] if says_of_objects(plain) else []]
    for sub, at, must in condition.parts:
        meets = condition_alternatives(sub, at, resolve, must, depth + 1)
        found = None if found is None or meets is None else _product(found, meets)
    if condition.branches:
        each = _each(condition.branches, resolve, True, depth)
        some = None if each is None else [a for meets in each for a in meets]
        found = None if found is None or some is None else _product(found, some)
    return found


def _failing(condition: _Condition, resolve: Resolve, depth: int) -> Alternatives | None:
    """One part not as it must be, or every branch of ``anyOf`` failing."""
    failing = _failing_plain(condition.plain, condition.pointer)
    for sub, at, must in condition.parts:
        fails = condition_alternatives(sub, at, resolve, not must, depth + 1)
        failing = None if failing is None or fails is None else [*failing, *fails]
    if condition.branches:
        each = _each(condition.branches, resolve, False, depth)
        every: Alternatives | None = None if each is None else [[]]
        for fails in each or []:
            every = None if every is None else _product(every, fails)
            if every is not None and len(every) > MAX_CONDITION_ALTERNATIVES:
                return None
        failing = None if failing is None or every is None else [*failing, *every]
    return failing


def _each(
    branches: list[tuple[object, str]], resolve: Resolve, holds: bool, depth: int
) -> list[Alternatives] | None:
    """Per branch, the values meeting (``holds``) or failing it; None if one is not plain."""
    found = [condition_alternatives(b, at, resolve, holds, depth + 1) for b, at in branches]
    return None if any(f is None for f in found) else [f for f in found if f is not None]


def says_of_objects(node: dict) -> bool:
    """Whether the plain object schema ``node`` says anything as a source (its
    applicators aside): a node holding only applicators adds nothing to a merge."""
    return not OBJECT_SOURCE.isdisjoint(node)


def kinds_met(sources: list[Source]) -> set[str]:
    """The kinds of value (``node_facts.VALUE_KINDS``) every source admits."""
    kinds = set(VALUE_KINDS)
    for source in sources:
        kinds &= kinds_of(source.node.get("type"))
    return kinds


def _product(first: Alternatives, second: Alternatives) -> Alternatives:
    return [[*a, *b] for a, b in product(first, second)]


def _plain_part_valid(node: dict) -> bool:
    if "type" in node and not kinds_of(node["type"]):
        return False
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return False
    return isinstance(node.get("properties", {}), dict)


def _failing_plain(plain: dict, pointer: str) -> Alternatives | None:
    """The values failing ``type``, ``required`` and ``properties`` of ``plain``: one
    alternative per way to fail; None when the types refused split the numbers
    (integers but not the others: no plain schema says that)."""
    kinds = kinds_of(plain.get("type"))
    failing: Alternatives = []
    refused = [name for name, of in KINDS_OF_TYPE.items() if name != "integer" and not of <= kinds]
    if refused:
        if "integer" in kinds and "fraction" not in kinds:
            return None
        failing.append([Source({"type": refused}, f"#kinds/{'/'.join(refused)}")])
    if "object" not in kinds:
        return failing  # every object already fails through its type
    required = list(dict.fromkeys(plain.get("required", [])))
    checked = [
        name
        for name, schema in plain.get("properties", {}).items()
        if schema is not True and not (isinstance(schema, dict) and not asserting(schema))
    ]  # the others every value meets
    for name in required:
        if name in checked:  # absent, or present and refused: one source says both
            either = {"type": "object", "properties": {name: True}}
            failing.append([Source(either, pointer, negated=name)])
        else:
            absent = {"type": "object", "properties": {name: False}}
            failing.append([Source(absent, f"#absent/{escape_token(name)}")])
    for name in checked:
        if name not in required:
            node = {"type": "object", "required": [name], "properties": {name: True}}
            failing.append([Source(node, pointer, negated=name)])
    return failing
