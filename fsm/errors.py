"""Typed errors of the constraint layer, so callers can tell bad input from bugs.

They derive from ``seqstate.SeqStateError`` (a leaf module with no imports), so a user
of ``import seqstate as ss`` catches every error the library raises with one class."""

from __future__ import annotations

from seqstate.errors import SeqStateError


class FsmError(SeqStateError):
    """Base class of every error raised by ``fsm`` (a ``SeqStateError``; also
    ``ss.FsmError``).

    Example:
        >>> issubclass(fsm.UnsupportedRegex, ss.FsmError)
        True
    """


class InvalidSpec(FsmError, ValueError):
    """A constraint spec is malformed (wrong type, empty choice, bad grammar...); raised
    when the generator is built. Also a ``ValueError``.

    Example:
        >>> ss.choice([])
        Traceback (most recent call last):
        ...
        fsm.errors.InvalidSpec: Choice needs at least one option
    """


class Unsatisfiable(InvalidSpec):
    """A constraint that no text satisfies (contradictory keywords, an empty regex, a
    required recursion with no base case): refused before any token is spent.

    Example:
        >>> vocabulary = fsm.Vocabulary.from_raw([b"a", b"b", None], eos_ids=2)
        >>> fsm.compile_index(fsm.JsonSchema({"type": "string", "minLength": 3, "maxLength": 2}), vocabulary)
        Traceback (most recent call last):
        ...
        fsm.errors.Unsatisfiable: JsonSchema accepts no text at all: its constraints contradict each other
    """


class UnsupportedRegex(FsmError, ValueError):
    """A regex uses a feature the byte automaton cannot express (e.g. backreferences).

    Example:
        >>> ss.regex(r"(a)\\1")
        Traceback (most recent call last):
        ...
        fsm.errors.UnsupportedRegex: '(a)\\\\1': backreferences are not supported
    """


class UnsupportedSchema(FsmError, ValueError):
    """A JSON schema uses a keyword that is not supported; the message names it.

    Args:
        keyword: the keyword (e.g. ``"uniqueItems"``).
        detail: why it cannot be supported here, and where.

    Example:
        >>> fsm.JsonSchema({"type": "array", "uniqueItems": True}).term()
        Traceback (most recent call last):
        ...
        fsm.errors.UnsupportedSchema: unsupported JSON schema keyword 'uniqueItems': items are not from a finite set of values at '#'
    """

    def __init__(self, keyword: str, detail: str = "") -> None:
        self.keyword = keyword
        self.detail = detail
        message = f"unsupported JSON schema keyword {keyword!r}"
        super().__init__(f"{message}: {detail}" if detail else message)


class InvalidVocabulary(FsmError, ValueError):
    """Token bytes, end-of-generation ids or mask width are inconsistent.

    Example:
        >>> fsm.Vocabulary.from_raw([b"a"], eos_ids=5)
        Traceback (most recent call last):
        ...
        fsm.errors.InvalidVocabulary: end-of-generation ids [5] are outside [0, 1)
    """


class ConstraintTooLarge(FsmError):
    """The automaton reached more states than the index's ``max_states`` cap (raised
    while rows are built, lazily or by ``build_all``).

    Example:
        >>> vocabulary = fsm.Vocabulary.from_raw([b"a", b"b", None], eos_ids=2)
        >>> fsm.compile_index(fsm.Regex("[ab]{0,30}"), vocabulary, max_states=5).build_all()
        Traceback (most recent call last):
        ...
        fsm.errors.ConstraintTooLarge: the constraint needs more than 5 automaton states
    """


class NotStorable(FsmError, TypeError):
    """A value ``fsm.term_store.TermStore.load`` was given that is no term it knows.
    Internal for now: the store is not part of the API yet."""
