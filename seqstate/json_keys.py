"""Distinct object keys while generating JSON.

A JSON schema cannot say "no key twice" for keys it does not name (``dict[str, int]``,
``additionalProperties``), and an automaton cannot remember an unbounded set of keys,
so the constraint alone lets a model write ``"a": 1, "a": 2``. ``DistinctKeys`` is the
hook ``ss.json`` installs when the schema allows undeclared keys: it resamples a token
that would close a key already used in the same object. Named keys need no hook (the
constraint writes each at most once).
"""

from __future__ import annotations

from dataclasses import dataclass

from seqstate.hooks import Resample, TokenEvent

_VALUE_START = frozenset('{["-0123456789tfn')


def repeats_a_key(text: str) -> bool:
    """Whether ``text`` (a prefix of a JSON value, possibly after some leading text
    that is not JSON, such as a healed prompt token) holds an object in which a key
    appears twice. A prefix that does not scan as JSON answers False."""
    start = next((i for i, c in enumerate(text) if c in _VALUE_START), len(text))
    objects: list[set[str] | None] = []  # per open container: keys seen (None: array)
    expect_key = False
    i = start
    while i < len(text):
        char = text[i]
        if char == '"':
            end = _string_end(text, i)
            if end is None:
                return False  # the string is still open
            if expect_key and objects and objects[-1] is not None:
                key = text[i + 1 : end]
                if key in objects[-1]:
                    return True
                objects[-1].add(key)
                expect_key = False
            i = end + 1
            continue
        if char == "{":
            objects.append(set())
            expect_key = True
        elif char == "[":
            objects.append(None)
        elif char in "]}":
            if not objects:
                return False
            objects.pop()
            if not objects:
                return False  # the top-level value is complete
        elif char == ",":
            expect_key = bool(objects) and objects[-1] is not None
        i += 1
    return False


def _string_end(text: str, start: int) -> int | None:
    """Index of the quote closing the JSON string that opens at ``start``."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return None


@dataclass(frozen=True)
class DistinctKeys:
    """Hook: resample a token that would repeat a key inside one JSON object."""

    def __call__(self, event: TokenEvent) -> Resample | None:
        if '"' not in event.token_text:
            return None  # only a quote can close a key
        return Resample() if repeats_a_key(event.text + event.token_text) else None


def allows_undeclared_keys(schema: object) -> bool:
    """Whether a JSON schema may let an object carry keys it does not name (so the
    generation needs ``DistinctKeys``). Conservative: any subschema that is free
    (``true``, ``{}``), an object without ``properties``, or ``additionalProperties``
    / ``patternProperties`` that are not ``false`` answers True."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict):
        return False
    extra = schema.get("additionalProperties", False)
    if extra is not False or schema.get("patternProperties"):
        return True
    types = schema.get("type")
    declares = isinstance(schema.get("properties"), dict)
    if not declares and (types == "object" or (isinstance(types, list) and "object" in types)):
        return True
    return any(allows_undeclared_keys(sub) for sub in _subschemas(schema))


_SCHEMA_KEYWORDS = ("items", "additionalItems", "contains", "not", "if", "then", "else")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "dependentSchemas")


def _subschemas(schema: dict) -> list[object]:
    found: list[object] = [schema[k] for k in _SCHEMA_KEYWORDS if isinstance(schema.get(k), dict)]
    for key in _SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            found.extend(schema[key])
    for key in _SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            found.extend(schema[key].values())
    return found
