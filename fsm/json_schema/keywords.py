"""Which JSON Schema keywords apply to which instance type, and which are refused."""

from __future__ import annotations

TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")

STRING_KEYWORDS = frozenset({"minLength", "maxLength", "pattern", "format"})
NUMBER_KEYWORDS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
ARRAY_KEYWORDS = frozenset(
    {
        "items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems",
        "contains", "minContains", "maxContains",
    }
)
OBJECT_KEYWORDS = frozenset(
    {
        "properties", "required", "additionalProperties", "patternProperties",
        "minProperties", "maxProperties", "propertyNames", "dependentRequired",
        "dependencies", "unevaluatedProperties",
    }
)
KEYWORDS_OF_TYPE = {
    "string": STRING_KEYWORDS,
    "integer": NUMBER_KEYWORDS,
    "number": NUMBER_KEYWORDS,
    "array": ARRAY_KEYWORDS,
    "object": OBJECT_KEYWORDS,
    "null": frozenset(),
    "boolean": frozenset(),
}

REFUSED = frozenset(
    {
        "$dynamicRef", "$recursiveRef", "unevaluatedItems",
        # draft 3
        "disallow", "extends", "divisibleBy",
    }
)
"""Validation keywords that are known but not implemented: they raise ``UnsupportedSchema``."""
