"""JSON Schema (draft 4 to 2020-12) and Python types to byte terms.

``schema_term(schema)`` is the entry point; ``fsm.JsonSchema`` is the spec that wraps
it. See ``docs/json_schema.md`` for the supported keywords and the documented bounds.
"""

from __future__ import annotations

import sys
from typing import TypeVar

from fsm import native as _native

# the parent package is initialised by now; importing it here would be a cycle
_native.activate_subpackage(sys.modules["fsm"].__path__, __path__, "json_schema")

from fsm.json_schema.compile import KEY_ORDERS, SchemaCompiler, ordered_keys
from fsm.json_schema.strings import OBJECT_STRINGS, StringTerms
from fsm.json_schema.types import type_schema
from fsm.terms import Term, matches

T = TypeVar("T")

DEFAULT_WHITESPACE_MAX = 8
"""Whitespace bytes allowed at each place JSON allows whitespace, by default."""


def schema_term(
    schema: object,
    *,
    whitespace_max: int = DEFAULT_WHITESPACE_MAX,
    strict: bool = True,
    key_order: str = "any",
    extra_keys: bool = True,
    plain_integers: bool = False,
    schema_text: str | None = None,
) -> Term:
    """The byte strings that are JSON texts of instances of ``schema``.

    ``whitespace_max`` bounds each run of whitespace between tokens (no whitespace
    before or after the value); ``strict=False`` ignores unsupported keywords with a
    warning instead of raising ``fsm.UnsupportedSchema``; ``key_order="schema"``
    accepts only objects whose named keys follow the schema's order.

    Generation defaults (exact validation keeps both at their spec value):
    ``extra_keys=False`` closes objects that declare properties and say nothing of
    other keys; ``plain_integers=True`` writes integers without fraction or exponent.
    ``schema_text``: ``schema`` as JSON text when the caller has it (saves writing it out).
    """
    return schema_term_in(
        OBJECT_STRINGS,
        schema,
        whitespace_max=whitespace_max,
        strict=strict,
        key_order=key_order,
        extra_keys=extra_keys,
        plain_integers=plain_integers,
        schema_text=schema_text,
    )


def schema_term_in(
    strings: StringTerms[T],
    schema: object,
    *,
    whitespace_max: int = DEFAULT_WHITESPACE_MAX,
    strict: bool = True,
    key_order: str = "any",
    extra_keys: bool = True,
    plain_integers: bool = False,
    schema_text: str | None = None,
) -> T:
    """``schema_term``, built by the builder of ``strings``: object terms
    (``OBJECT_STRINGS``) or a store's rows (``strings_in(StoredTerms(store))``,
    ``fsm.term_builder``), by the same compiler."""
    compiler = SchemaCompiler(
        schema,
        strings=strings,
        whitespace_max=whitespace_max,
        strict=strict,
        key_order=key_order,
        extra_keys=extra_keys,
        plain_integers=plain_integers,
        schema_text=schema_text,
    )
    return compiler.root_term()


__all__ = [
    "DEFAULT_WHITESPACE_MAX",
    "KEY_ORDERS",
    "SchemaCompiler",
    "matches",
    "ordered_keys",
    "schema_term",
    "schema_term_in",
    "type_schema",
]
