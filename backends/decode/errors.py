"""Errors of the decode loop (all ``SeqStateError``s). They are defined with the other
errors in ``seqstate.errors``, so ``ss.GenerationError`` needs no torch; this module
names them for the loop's code."""

from __future__ import annotations

from seqstate.errors import BacktrackPastSpanStart, GenerationError

__all__ = ["BacktrackPastSpanStart", "GenerationError"]
