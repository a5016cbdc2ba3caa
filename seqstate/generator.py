"""`Generator`: the base of everything that extends a state with `state + generator`.

The generation layer subclasses it with its specs (free text, regex, json, choice,
grammar); seqstate only fixes the calling convention: `state + g` is `g(state)`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from seqstate.errors import IncompatibleOperand

if TYPE_CHECKING:
    from seqstate.state import SequenceState


class Generator(ABC):
    """Something that maps a state to a longer state (typically by running the model)."""

    @abstractmethod
    def __call__(self, state: SequenceState) -> SequenceState:
        """Extend every row of `state`; return the new state (never modify `state`)."""

    def __radd__(self, other: Any) -> SequenceState:
        """`state + generator` when the state side did not handle it: only states qualify."""
        from seqstate.state import SequenceState  # local: state.py imports this module

        if isinstance(other, SequenceState):
            return self(other)
        raise IncompatibleOperand(
            f"a generator extends a SequenceState, not {type(other).__name__}: "
            "write state + generator (text needs a state first: SequenceState.from_text)"
        )
