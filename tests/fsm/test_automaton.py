"""``fsm.automaton``: telling a decomposable automaton from a plain one."""

from __future__ import annotations

import pytest

import fsm
from fsm.automaton import DecomposableAutomaton, as_decomposable
from fsm.compiler import automaton_of
from fsm.prefixed import Prefixed

SPECS = [
    fsm.JsonSchema({"type": "object", "properties": {"a": {"type": "string"}}}),
    fsm.Regex("[0-9]+"),
    fsm.Grammar('start: "a"+ "c"'),
    Prefixed(b" x", fsm.Regex("[0-9]+")),
]


@pytest.mark.parametrize("spec", SPECS, ids=["schema", "regex", "grammar", "prefixed"])
def test_as_decomposable_agrees_with_the_protocol_check(spec) -> None:
    """The per-class answer is the runtime protocol check's, with lexemes required."""
    automaton = automaton_of(spec)
    expected = isinstance(automaton, DecomposableAutomaton) and automaton.has_lexemes
    assert (as_decomposable(automaton) is automaton) == expected


def test_a_class_without_the_members_is_not_decomposable() -> None:
    class Plain:
        initial = 0

        def expand(self, state: int) -> tuple[object, bool]:
            return (), False

    assert as_decomposable(Plain()) is None  # type: ignore[arg-type]
    schema = automaton_of(SPECS[0])
    assert as_decomposable(schema) is schema
