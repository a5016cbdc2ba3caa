"""Errors of the decode loop (all ``SeqStateError``s)."""

from __future__ import annotations

from seqstate.errors import SeqStateError


class GenerationError(SeqStateError, RuntimeError):
    """Generation cannot start or continue (empty row, no allowed token, retries spent...)."""


class BacktrackPastSpanStart(GenerationError):
    """A hook asked to ``Backtrack`` over more tokens than the span has generated: the
    loop never rewinds into the text before the span (the prompt)."""
