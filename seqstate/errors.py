"""Typed errors of the state algebra; every one derives from `SeqStateError`.

Each also derives from the matching builtin (`IndexError`, `TypeError`, ...) so code
written against plain Python containers keeps working. Operations raise before they
build anything, so an error never leaves an operand modified (they are immutable).
"""

from __future__ import annotations


class SeqStateError(Exception):
    """Base class of every error raised by `seqstate`."""


class StateIndexError(SeqStateError, IndexError):
    """An index is out of range, of the wrong type, or selects no rows."""


class ShapeMismatch(SeqStateError, ValueError):
    """Two shapes cannot be broadcast or stacked together."""


class InvalidGenerator(SeqStateError, ValueError):
    """A generator was built with arguments that cannot work; the message names the
    argument."""


class IncompatibleOperand(SeqStateError, TypeError):
    """An operand of `+` (or of a constructor) has a type the algebra does not accept."""


class EngineMismatch(SeqStateError, ValueError):
    """States built on two different engines (models) were combined."""


class MissingCapture(SeqStateError, KeyError):
    """A capture name was read that no row of the state recorded."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class CaptureParseError(SeqStateError, ValueError):
    """A capture's parser (json, pydantic, ...) rejected the captured text."""


class TruncatedCapture(CaptureParseError):
    """A capture of a constrained span that stopped before its constraint was met
    (``max_tokens`` ran out, or the state was cut inside it): its text is a prefix of
    a valid value, never read back as one. ``finish_reason`` and the partial ``text``
    say what happened."""

    def __init__(self, name: str, finish_reason: str | None, text: str) -> None:
        self.name = name
        self.finish_reason = finish_reason
        self.text = text
        why = "was cut" if finish_reason in (None, "stop") else f"stopped ({finish_reason})"
        super().__init__(
            f"capture {name!r} {why} before its constraint was complete; "
            f"partial text: {text!r}" + ("; raise max_tokens" if finish_reason == "length" else "")
        )


class NotScalarState(SeqStateError, ValueError):
    """An operation that needs a 1x1 state (such as `str(s)`) got a larger one."""


class InvalidSegment(SeqStateError, ValueError):
    """Arrays or offsets given to build a segment or row disagree with each other."""


class TokenizationMismatch(SeqStateError, ValueError):
    """New token ids do not decode to exactly the text they are meant to replace."""


class DetokenizerFinished(SeqStateError, RuntimeError):
    """A token was fed to a detokenizer state that already stopped or was finished."""


class UnknownTokenId(SeqStateError, ValueError):
    """A token id is outside the vocabulary the detokenizer was built from."""


class GenerationError(SeqStateError, RuntimeError):
    """Generation cannot start or continue (empty row, no allowed token, retries spent...)."""


class BacktrackPastSpanStart(GenerationError):
    """A hook asked to ``Backtrack`` over more tokens than the span has generated: the
    loop never rewinds into the text before the span (the prompt)."""


class UnsupportedOnEngine(SeqStateError, NotImplementedError):
    """A feature the state's engine cannot run (beam search or hooks on the vLLM
    engine, ...). Raised before anything is computed; ``feature`` and ``engine`` name
    what was asked and where."""

    def __init__(self, feature: str, engine: str, hint: str = "") -> None:
        self.feature = feature
        self.engine = engine
        super().__init__(
            f"{feature} is not supported on the {engine} engine" + (f"; {hint}" if hint else "")
        )
