"""Source text of the specs that subprocess tests walk breadth-first (a regex and two
schemas touching strings with bounds, bounded integers, enums, a format, open and
pattern-keyed objects), for scripts run with ``python -c``."""

WALKED_SPECS = """
specs = [
    Regex(r"(\\+|-)?[0-9]{1,3}(,[0-9]{3})*(\\.[0-9]{2})?"),
    JsonSchema({"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 6},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "tags": {"type": "array", "items": {"enum": ["a", "bc", "d\\"e"]}},
        "when": {"type": "string", "format": "date-time"}},
        "required": ["name"], "additionalProperties": {"type": "number"}}),
    JsonSchema({"anyOf": [{"type": "null"}, {"type": "object", "patternProperties":
        {"^x-": {"type": "boolean"}}, "additionalProperties": False}]}),
]
"""
