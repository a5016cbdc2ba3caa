"""`Generator`: the base of everything that extends a state with `state + generator`.

The generation layer subclasses it with its specs (free text, regex, json, choice,
grammar); seqstate only fixes the calling convention: `state + g` is `g(state)`.
The base is generic in the state type so that this module needs nothing from
`seqstate.state` (which depends on it): `SpanGenerator` is a `Generator[SequenceState]`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

from seqstate.errors import IncompatibleOperand, InvalidGenerator

StateT = TypeVar("StateT")


class Generator(ABC, Generic[StateT]):
    """Something that maps a state to a longer state (typically by running the model).

    ``state + generator`` calls ``generator(state)``. The built-in ones are
    ``ss.gen``/``regex``/``json``/``choice``/``grammar``; subclass it to combine them
    into one reusable step (the model runs only the built-in spans).

    Example::

        class NameThenAge(ss.Generator):
            def __call__(self, state):
                state = state + "Name: " + ss.regex(r"[A-Z][a-z]+", name="name")
                return state + "\\nAge: " + ss.json(int, name="age")

        s = model("Invent a person.\\n") + NameThenAge()
        s["name"], s["age"]
    """

    @abstractmethod
    def __call__(self, state: StateT) -> StateT:
        """Extend every row of `state`; return the new state (never modify `state`)."""

    def resumed(self, **changes: Any) -> Generator[StateT]:
        """This generator set to continue a span it started and that was cut (what
        `SequenceState.resume` runs); `changes` override its fields. Generators that
        cannot continue a span refuse."""
        raise InvalidGenerator(f"cannot resume a span made by {type(self).__name__}")

    def __radd__(self, other: Any) -> StateT:
        """`other + generator`, reached when `other`'s `+` did not take the generator
        (or when called directly): defer to `other.__add__`, which a state implements by
        calling the generator; for anything else, explain the mistake."""
        result = NotImplemented
        if not isinstance(other, str):
            try:
                result = type(other).__add__(other, self)
            except (AttributeError, TypeError):
                result = NotImplemented
        if result is NotImplemented:
            raise IncompatibleOperand(
                f"a generator extends a SequenceState, not {type(other).__name__}: "
                "write state + generator (text needs a state first: SequenceState.from_text)"
            )
        return result
