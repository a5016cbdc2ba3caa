"""Typed errors of the constraint layer, so callers can tell bad input from bugs.

They derive from ``seqstate.SeqStateError`` (a leaf module with no imports), so a user
of ``import seqstate as ss`` catches every error the library raises with one class."""

from __future__ import annotations

from seqstate.errors import SeqStateError


class FsmError(SeqStateError):
    """Base class of every error raised by ``fsm``."""


class InvalidSpec(FsmError, ValueError):
    """A constraint spec is malformed (wrong type, empty choice, bad grammar...)."""


class Unsatisfiable(InvalidSpec):
    """A constraint that no text satisfies (contradictory keywords, an empty regex, a
    required recursion with no base case): refused before any token is spent."""


class UnsupportedRegex(FsmError, ValueError):
    """A regex uses a feature the byte automaton cannot express (e.g. backreferences)."""


class UnsupportedSchema(FsmError, ValueError):
    """A JSON schema uses a keyword that is not supported; the message names it."""

    def __init__(self, keyword: str, detail: str = "") -> None:
        self.keyword = keyword
        self.detail = detail
        message = f"unsupported JSON schema keyword {keyword!r}"
        super().__init__(f"{message}: {detail}" if detail else message)


class InvalidVocabulary(FsmError, ValueError):
    """Token bytes, end-of-generation ids or mask width are inconsistent."""


class ConstraintTooLarge(FsmError):
    """The automaton reached more states than the index's ``max_states`` cap."""
