"""Constraint specs: frozen, hashable descriptions of what text is allowed.

A spec is pure data; ``fsm.compile`` turns it into a token index for one vocabulary.
Each spec has a ``fingerprint`` (stable across processes) that keys index caches, and
``term()`` giving the byte-level term its automaton explores.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from fsm.errors import InvalidSpec
from fsm.grammar import GrammarAutomaton
from fsm.regex import regex_term
from fsm.terms import Term, alt, literal


def _fingerprint(kind: str, payload: object) -> str:
    text = json.dumps([kind, payload], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Regex:
    """Text that fully matches ``pattern`` (Python/ECMA syntax, no anchors or lookaround)."""

    pattern: str

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str):
            raise InvalidSpec(f"Regex pattern must be a str, got {type(self.pattern).__name__}")

    @property
    def fingerprint(self) -> str:
        return _fingerprint("regex", self.pattern)

    def term(self) -> Term:
        return regex_term(self.pattern)


@dataclass(frozen=True)
class Choice:
    """Exactly one of ``options`` (taken literally: no regex escaping is involved)."""

    options: tuple[str, ...] = field()

    def __init__(self, options: object) -> None:
        if isinstance(options, str) or not hasattr(options, "__iter__"):
            raise InvalidSpec("Choice takes an iterable of strings, e.g. Choice(['yes', 'no'])")
        values = tuple(options)  # type: ignore[arg-type]
        if not values:
            raise InvalidSpec("Choice needs at least one option")
        if not all(isinstance(v, str) for v in values):
            raise InvalidSpec("every Choice option must be a str")
        object.__setattr__(self, "options", values)

    @property
    def fingerprint(self) -> str:
        return _fingerprint("choice", list(self.options))

    def term(self) -> Term:
        # The union of literals is a trie once explored: shared prefixes share states.
        return alt(*(literal(option.encode()) for option in self.options))


@dataclass(frozen=True)
class Grammar:
    """Text in the language of a lark grammar, parsed LALR(1) from rule ``start``.

    Terminals are regexes or strings (flags included); ``%ignore`` terminals may appear
    between any two terminals. See ``fsm.grammar`` for how lexing ambiguity is handled.
    """

    lark_text: str
    start: str = "start"

    def __post_init__(self) -> None:
        if not isinstance(self.lark_text, str) or not isinstance(self.start, str):
            raise InvalidSpec("Grammar takes the lark grammar text and a start rule name (str)")

    @property
    def fingerprint(self) -> str:
        return _fingerprint("grammar", [self.lark_text, self.start])

    def automaton(self, *, max_states: int = 200_000) -> GrammarAutomaton:
        """The lazily built byte automaton (raises ``InvalidSpec`` for a grammar lark
        rejects or one that is not LALR(1))."""
        return GrammarAutomaton(self, max_states=max_states)
