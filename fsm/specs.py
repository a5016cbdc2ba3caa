"""Constraint specs: frozen, hashable descriptions of what text is allowed.

A spec is pure data; ``fsm.compile_index`` turns it into a token index for one vocabulary.
Each spec has a ``fingerprint`` (stable across processes) that keys index caches, and
``term()`` giving the byte-level term its automaton explores.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TypeVar

from fsm.errors import InvalidSpec
from fsm.grammar import GrammarAutomaton
from fsm.json_schema import DEFAULT_WHITESPACE_MAX, ordered_keys, schema_term_in
from fsm.json_schema.strings import OBJECT_STRINGS, StringTerms
from fsm.json_schema.types import is_python_type, type_schema
from fsm.limits import DEFAULT_MAX_STATES
from fsm.regex import regex_term
from fsm.terms import Term, alt, literal

T = TypeVar("T")


def _fingerprint(kind: str, payload: object) -> str:
    text = json.dumps([kind, payload], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Regex:
    """Text that fully matches ``pattern``: Python's ``re`` syntax where it agrees with
    ECMAScript's (``\\d`` and ``\\w`` ASCII), without anchors, lookaround or
    backreferences; ``fsm.regex_syntax`` lists what is read and what is refused.

    Args:
        pattern: the regular expression; ``ss.regex(pattern)`` wraps it in a generator.

    Example (the first tokens allowed are ``a`` and ``ab``):
        >>> vocabulary = fsm.Vocabulary.from_raw([b"a", b"b", b"ab", b"c", None], eos_ids=4)
        >>> fsm.compile_index(fsm.Regex("ab?c"), vocabulary).allowed_tokens(0).tolist()
        [0, 2]
    """

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
    """Exactly one of ``options`` (taken literally: no regex escaping is involved).

    Args:
        options: a non-empty iterable of strings (a bare string is refused).

    Example:
        >>> vocabulary = fsm.Vocabulary.from_raw([b"a", b"b", b"ab", b"c", None], eos_ids=4)
        >>> fsm.compile_index(fsm.Choice(["ab", "c"]), vocabulary).allowed_tokens(0).tolist()
        [0, 2, 3]
    """

    options: tuple[str, ...] = field()

    def __init__(self, options: object) -> None:
        if isinstance(options, str) or not hasattr(options, "__iter__"):
            raise InvalidSpec("Choice takes an iterable of strings, e.g. Choice(['yes', 'no'])")
        values = tuple(options)
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

    Args:
        lark_text: the grammar in lark's syntax.
        start: the start rule (default ``"start"``).

    Example:
        >>> vocabulary = fsm.Vocabulary.from_raw([b"a", b"b", b"ab", b"c", None], eos_ids=4)
        >>> index = fsm.compile_index(fsm.Grammar('start: "a"+ "c"'), vocabulary)
        >>> index.allowed_tokens(0).tolist()
        [0]
    """

    lark_text: str
    start: str = "start"

    def __post_init__(self) -> None:
        if not isinstance(self.lark_text, str) or not isinstance(self.start, str):
            raise InvalidSpec("Grammar takes the lark grammar text and a start rule name (str)")

    @property
    def fingerprint(self) -> str:
        return _fingerprint("grammar", [self.lark_text, self.start])

    def automaton(self, *, max_states: int = DEFAULT_MAX_STATES) -> GrammarAutomaton:
        """The lazily built byte automaton (raises ``InvalidSpec`` for a grammar lark
        rejects or one that is not LALR(1))."""
        return GrammarAutomaton(self.lark_text, self.start, max_states=max_states)


@dataclass(frozen=True, init=False)
class JsonSchema:
    """JSON text that is an instance of a JSON schema (draft 4 to 2020-12).

    ``schema`` may be a schema (dict or bool), its JSON text, or a Python type
    (pydantic model, dataclass, TypedDict, Literal, Enum, builtins and their generic
    forms). ``whitespace_max`` bounds each run of whitespace between tokens;
    ``strict=False`` ignores unsupported keywords with a warning instead of raising
    ``fsm.UnsupportedSchema``; ``key_order="schema"`` accepts only objects whose named
    keys follow the order of ``properties`` (``"any"``, the default, accepts every
    instance). ``extra_keys=False`` closes objects that declare properties and say
    nothing of other keys, and ``plain_integers=True`` writes integers without
    fraction or exponent: the generation defaults of ``ss.json``, which accept a
    subset of the schema's instances. See docs/json_schema.md.

    Example:
        >>> spec = fsm.JsonSchema(bool)
        >>> spec.schema
        {'type': 'boolean'}
        >>> vocabulary = fsm.Vocabulary.from_raw([b"t", b"rue", b"false", b"x", None], eos_ids=4)
        >>> fsm.compile_index(spec, vocabulary).allowed_tokens(0).tolist()
        [0, 2]
    """

    schema_json: str
    whitespace_max: int
    strict: bool
    key_order: str
    extra_keys: bool
    plain_integers: bool

    def __init__(
        self,
        schema: object,
        *,
        whitespace_max: int = DEFAULT_WHITESPACE_MAX,
        strict: bool = True,
        key_order: str = "any",
        extra_keys: bool = True,
        plain_integers: bool = False,
    ) -> None:
        if isinstance(schema, str):
            try:
                schema = json.loads(schema)
            except ValueError as error:
                raise InvalidSpec(f"JsonSchema text is not JSON: {error}") from None
        elif is_python_type(schema):
            schema = type_schema(schema)
        if not isinstance(schema, dict | bool):
            raise InvalidSpec(
                f"a JSON schema is an object or a boolean, got {type(schema).__name__}"
            )
        if not isinstance(whitespace_max, int) or whitespace_max < 0:
            raise InvalidSpec("whitespace_max must be a non-negative int")
        ordered_keys(key_order)  # raises InvalidSpec now rather than at compile time
        try:
            text = json.dumps(schema, ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise InvalidSpec(f"JSON schema is not JSON-serialisable: {error}") from None
        object.__setattr__(self, "schema_json", text)
        object.__setattr__(self, "whitespace_max", whitespace_max)
        object.__setattr__(self, "strict", bool(strict))
        object.__setattr__(self, "key_order", key_order)
        object.__setattr__(self, "extra_keys", bool(extra_keys))
        object.__setattr__(self, "plain_integers", bool(plain_integers))

    @property
    def schema(self) -> dict | bool:
        """The normalized schema (a fresh copy)."""
        return json.loads(self.schema_json)

    @property
    def fingerprint(self) -> str:
        """sha256 of the canonical JSON of the schema (keys sorted) and the options;
        with ``key_order="schema"`` the schema's own key order is part of it."""
        payload = {
            "schema": self.schema if self.key_order == "any" else self.schema_json,
            "whitespace_max": self.whitespace_max,
            "strict": self.strict,
            "key_order": self.key_order,
            "extra_keys": self.extra_keys,
            "plain_integers": self.plain_integers,
        }
        return _fingerprint("json_schema", payload)

    def term(self) -> Term:
        """The schema's term as ``fsm.terms`` objects."""
        return self.term_in(OBJECT_STRINGS)

    def term_in(self, strings: StringTerms[T]) -> T:
        """The schema's term built by the builder of ``strings``, with this spec's
        options: object terms (``OBJECT_STRINGS``) or a store's rows
        (``fsm.schema_rows``)."""
        return schema_term_in(
            strings,
            self.schema,
            whitespace_max=self.whitespace_max,
            strict=self.strict,
            key_order=self.key_order,
            extra_keys=self.extra_keys,
            plain_integers=self.plain_integers,
            schema_text=self.schema_json,
        )
