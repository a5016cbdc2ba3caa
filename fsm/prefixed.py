"""``Prefixed``: a fixed byte string followed by another constraint (or by anything).

Token healing removes the last prompt token and lets generation produce its bytes
again, merged with what follows; the constraint of such a span is "those bytes, then
the generator's own constraint". For term-based specs this is one more ``cat``; for
automaton-based ones (grammars) a wrapper puts a chain of states in front.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fsm.automaton import DEAD, ByteAutomaton
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.errors import InvalidSpec
from fsm.specs import _fingerprint
from fsm.terms import Term, byte_range, cat, literal, star

ANY_BYTES: Term = star(byte_range(0, 255))


@dataclass(frozen=True)
class Prefixed:
    """``prefix`` then text accepted by ``inner`` (``None``: any text)."""

    prefix: bytes
    inner: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.prefix, bytes) or not self.prefix:
            raise InvalidSpec("Prefixed needs a non-empty bytes prefix")

    @property
    def fingerprint(self) -> str:
        inner = None if self.inner is None else self.inner.fingerprint
        return _fingerprint("prefixed", [self.prefix.hex(), inner])

    def automaton(self, *, max_states: int) -> ByteAutomaton:
        if self.inner is None:
            return DerivativeAutomaton(cat(literal(self.prefix), ANY_BYTES), max_states=max_states)
        make_term = getattr(self.inner, "term", None)
        if callable(make_term):
            return DerivativeAutomaton(
                cat(literal(self.prefix), make_term()), max_states=max_states
            )
        return PrefixedAutomaton(self.prefix, self.inner.automaton(max_states=max_states))


class PrefixedAutomaton:
    """States ``0..len(prefix)-1`` read the prefix; state ``len(prefix) + s`` is the
    inner automaton's state ``s``."""

    def __init__(self, prefix: bytes, inner: ByteAutomaton) -> None:
        self.prefix = prefix
        self.inner = inner

    @property
    def initial(self) -> int:
        return 0

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        offset = len(self.prefix)
        if state < offset:
            successors = np.full(256, DEAD, dtype=np.int32)
            nxt = state + 1 if state + 1 < offset else offset + self.inner.initial
            successors[self.prefix[state]] = nxt
            return successors, False
        inner, final = self.inner.expand(state - offset)
        return np.where(inner == DEAD, DEAD, inner + offset).astype(np.int32), final
