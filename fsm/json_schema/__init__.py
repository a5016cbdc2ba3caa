"""JSON Schema (draft 4 to 2020-12) and Python types to byte terms.

``schema_term(schema)`` is the entry point; ``fsm.JsonSchema`` is the spec that wraps
it. See ``docs/json_schema.md`` for the supported keywords and the documented bounds.
"""

from __future__ import annotations

from fsm.json_schema.compile import SchemaCompiler, matches
from fsm.json_schema.types import type_schema
from fsm.terms import Term

DEFAULT_WHITESPACE_MAX = 8
"""Whitespace bytes allowed at each place JSON allows whitespace, by default."""


def schema_term(
    schema: object, *, whitespace_max: int = DEFAULT_WHITESPACE_MAX, strict: bool = True
) -> Term:
    """The byte strings that are JSON texts of instances of ``schema``.

    ``whitespace_max`` bounds each run of whitespace between tokens (no whitespace
    before or after the value); ``strict=False`` ignores unsupported keywords with a
    warning instead of raising ``fsm.UnsupportedSchema``.
    """
    return SchemaCompiler(schema, whitespace_max=whitespace_max, strict=strict).root_term()


def property_orders(schema: object) -> dict[str, list[str]]:
    """Property names in schema order for every object schema, by JSON pointer.

    Objects accept their keys in any order; this is the order a generator may prefer.
    """
    compiler = SchemaCompiler(schema, whitespace_max=0, strict=False)
    compiler.root_term()
    return dict(compiler.key_orders)


__all__ = [
    "DEFAULT_WHITESPACE_MAX",
    "SchemaCompiler",
    "matches",
    "property_orders",
    "schema_term",
    "type_schema",
]
