"""Typed errors of the state algebra; every one derives from `SeqStateError`.

Each also derives from the matching builtin (`IndexError`, `TypeError`, ...) so code
written against plain Python containers keeps working. Operations raise before they
build anything, so an error never leaves an operand modified (they are immutable).
"""

from __future__ import annotations


class SeqStateError(Exception):
    """Base class of every error raised by `seqstate` (and by ``fsm``): catch it to
    handle any of them.

    Example:
        >>> issubclass(ss.MissingCapture, ss.SeqStateError)
        True
    """


class StateIndexError(SeqStateError, IndexError):
    """An index is out of range, of the wrong type, or selects no rows (also an
    ``IndexError``).

    Example:
        ``s[5]`` on a state with 2 rows raises it.
    """


class ShapeMismatch(SeqStateError, ValueError):
    """Two shapes cannot be broadcast or stacked together (also a ``ValueError``).

    Example:
        ``model(["a", "b"]) + model(["x", "y", "z"])``: (2, 1) and (3, 1) do not broadcast.
    """


class InvalidGenerator(SeqStateError, ValueError):
    """A generator was built with arguments that cannot work; the message names the
    argument (also a ``ValueError``).

    Example:
        >>> ss.gen(max_tokens=0)
        Traceback (most recent call last):
        ...
        seqstate.errors.InvalidGenerator: max_tokens must be an int >= 1, got 0
    """


class IncompatibleOperand(SeqStateError, TypeError):
    """An operand of `+` (or of a constructor) has a type the algebra does not accept
    (also a ``TypeError``).

    Example:
        ``s + 3`` raises it: a state extends with text, states and generators.
    """


class EngineMismatch(SeqStateError, ValueError):
    """States built on two different engines (models) were combined (also a
    ``ValueError``).

    Example:
        ``model_a("x") + model_b("y")`` raises it.
    """


class MissingCapture(SeqStateError, KeyError):
    """A capture name was read that no row of the state recorded (also a ``KeyError``).

    Example:
        ``(model("x") + ss.gen(name="a"))["b"]`` raises it.
    """

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class CaptureParseError(SeqStateError, ValueError):
    """A capture's parser (json, pydantic, ...) rejected the captured text (also a
    ``ValueError``).

    Example:
        ``s["person"]`` when a pydantic validator of the model refuses the JSON.
    """


class TruncatedCapture(CaptureParseError):
    """A capture of a constrained span that stopped before its constraint was met
    (``max_tokens`` ran out, or the state was cut inside it): its text is a prefix of
    a valid value, never read back as one. ``finish_reason`` and the partial ``text``
    say what happened.

    Args:
        name: the capture's name.
        finish_reason: how the span ended (``"length"``: ``max_tokens`` ran out;
            ``None`` or ``"stop"``: the state was cut inside it).
        text: the partial text.

    Example:
        >>> str(ss.TruncatedCapture("age", "length", "1"))
        "capture 'age' stopped (length) before its constraint was complete; partial text: '1'; raise max_tokens"
    """

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
    """An operation that needs a 1x1 state (such as `str(s)`) got a larger one (also a
    ``ValueError``).

    Example:
        ``str(model(["a", "b"]))`` raises it; use ``.texts`` or ``list(s)``.
    """


class InvalidSegment(SeqStateError, ValueError):
    """Arrays or offsets given to build a segment or row disagree with each other
    (also a ``ValueError``; raised by the low-level constructors).

    Example:
        ``ss.Span.of_tokens`` given 3 token ids and offsets for 2.
    """


class TokenizationMismatch(SeqStateError, ValueError):
    """New token ids do not decode to exactly the text they are meant to replace (also
    a ``ValueError``).

    Example:
        Settling pending text with token ids whose text differs from it raises it.
    """


class DetokenizerFinished(SeqStateError, RuntimeError):
    """A token was fed to a detokenizer state that already stopped or was finished
    (also a ``RuntimeError``).

    Example:
        ``detok.feed(detok.finish(state)[0], 5)`` raises it.
    """


class UnknownTokenId(SeqStateError, ValueError):
    """A token id is outside the vocabulary the detokenizer was built from (also a
    ``ValueError``).

    Example:
        >>> ss.decode_tokens(ss.Detokenizer([b"a"]), [7])
        Traceback (most recent call last):
        ...
        seqstate.errors.UnknownTokenId: token id 7 is outside the vocabulary of 1 ids
    """


class GenerationError(SeqStateError, RuntimeError):
    """Generation cannot start or continue (empty row, no allowed token, retries
    spent...; also a ``RuntimeError``); the message names the row and position.

    Example:
        A hook that returns ``ss.Resample()`` for every token raises it after
        ``max_retries`` redraws at one position.
    """


class BacktrackPastSpanStart(GenerationError):
    """A hook asked to ``Backtrack`` over more tokens than the span has generated: the
    loop never rewinds into the text before the span (the prompt).

    Example:
        A hook returning ``ss.Backtrack(5)`` at the span's third token raises it.
    """


class UnsupportedOnEngine(SeqStateError, NotImplementedError):
    """A feature the state's engine cannot run (beam search or hooks on the vLLM
    engine, ...). Raised before anything is computed; ``feature`` and ``engine`` name
    what was asked and where.

    Args:
        feature: what was asked (e.g. ``"beam search"``).
        engine: the engine's name.
        hint: what to do instead (optional).

    Example:
        >>> str(ss.UnsupportedOnEngine("beam search", "vLLM", "use ss.sample"))
        'beam search is not supported on the vLLM engine; use ss.sample'
    """

    def __init__(self, feature: str, engine: str, hint: str = "") -> None:
        self.feature = feature
        self.engine = engine
        super().__init__(
            f"{feature} is not supported on the {engine} engine" + (f"; {hint}" if hint else "")
        )
