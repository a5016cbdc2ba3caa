"""Checks of a compiled schema against jsonschema: verdicts, and object states live
exactly when a valid object continues them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import permutations, product

import jsonschema

import fsm
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.json_schema import schema_term
from fsm.terms import Term, matches

BYTES = fsm.Vocabulary.from_raw([bytes([b]) for b in range(256)] + [b""], eos_ids=[256])


def can_be_completed(
    validator: jsonschema.Validator, members: dict, keys: Sequence[str], values: Sequence
) -> bool:
    """Whether some valid object starts with ``members``, more of ``keys`` after them,
    each valued one of ``values`` (enough when every rule and schema of the object
    names keys of ``keys`` and tells ``values`` apart)."""
    left = [key for key in keys if key not in members]
    return any(
        validator.is_valid({**members, **dict(zip(more, chosen, strict=True))})
        for size in range(len(left) + 1)
        for more in permutations(left, size)
        for chosen in product(values, repeat=size)
    )


def assert_live_exactly_when_completable(
    schema: dict, term: Term, value: dict, keys: Sequence[str], values: Sequence = (0,)
) -> None:
    """After each member of ``value`` written as an open object text, the index of
    ``term`` has a state exactly when some valid object continues it."""
    validator = jsonschema.Draft202012Validator(schema)
    index = fsm.TokenIndex(DerivativeAutomaton(term), BYTES)
    members: dict = {}
    for key, member in [(None, None), *value.items()]:
        if key is not None:
            members[key] = member
        text = json.dumps(members, separators=(",", ":")).encode()[:-1]  # open
        state = index.step_bytes(index.initial_state, text)
        completable = can_be_completed(validator, members, keys, values)
        assert (state != fsm.DEAD) == completable, (schema, text)


def assert_verdicts_match_jsonschema(schema: dict, values: list) -> None:
    """The compiled ``schema`` accepts each of ``values`` exactly when jsonschema does."""
    term = schema_term(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for value in values:
        text = json.dumps(value).encode()
        assert matches(term, text) == validator.is_valid(value), (schema, value)
