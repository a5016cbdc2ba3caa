"""Which JSON Schema keywords apply to which instance type, and which are refused."""

from __future__ import annotations

TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")

STRING_KEYWORDS = frozenset({"minLength", "maxLength", "pattern", "format"})
NUMBER_KEYWORDS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
ARRAY_KEYWORDS = frozenset(
    {
        "items",
        "prefixItems",
        "additionalItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
    }
)
OBJECT_KEYWORDS = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "dependentRequired",
        "dependencies",
        "unevaluatedProperties",
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

APPLICATORS = ("$ref", "allOf", "anyOf", "oneOf", "not", "if", "dependentSchemas", "dependencies")
"""Keywords that apply subschemas to the instance itself."""

REFUSED = frozenset(
    {
        "$dynamicRef",
        "$recursiveRef",
        "unevaluatedItems",
        # draft 3
        "disallow",
        "extends",
        "divisibleBy",
    }
)
"""Validation keywords that are known but not implemented: they raise ``UnsupportedSchema``."""

_SINCE_2019 = frozenset(
    {
        "dependentRequired",
        "dependentSchemas",
        "minContains",
        "maxContains",
        "unevaluatedProperties",
        "unevaluatedItems",
        "$recursiveRef",
    }
)
_SINCE_7 = frozenset({"if", "then", "else"}) | _SINCE_2019
_SINCE_6 = frozenset({"const", "contains", "propertyNames"}) | _SINCE_7


def ignored_by_draft(draft: int) -> frozenset[str]:
    """Keywords a schema of ``draft`` does not have yet: they are plain annotations there."""
    if draft <= 4:
        return _SINCE_6 | {"prefixItems", "$dynamicRef"}
    if draft == 6:
        return _SINCE_7 | {"prefixItems", "$dynamicRef"}
    if draft == 7:
        return _SINCE_2019 | {"prefixItems", "$dynamicRef"}
    if draft == 2019:
        return frozenset({"prefixItems", "$dynamicRef"})
    return frozenset({"$recursiveRef"})
