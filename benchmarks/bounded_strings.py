"""Strings with ``minLength`` / ``maxLength`` where a value starts: each value's walk, in
order (issue 15).

A bounded string is counted (``fsm.counted``): its tokens are selected from the plain
string's walk by the characters they read. But where a value starts, the row walks the
lexeme of the whitespace, the opening quote and the string together, a new lexeme for
each bound. Until the seventy-ninth session that lexeme was walked state by state, a
new state per character count below every token that reads the quote (14 states
expanded after ``", "`` in an array of them); since then it is taken apart into the
whitespace and quote, whose walk every string shares, and the count below their ends
(``StoreAutomaton.counted_after_prefix``), which the vocabulary keeps per bound.

For each spec, one process walks the values in order (every value a fresh compile of
``{"a": spec}``, timed from the compile to the last step; ``length_products``'s table),
ours and, when installed, llguidance. Each bound is met first by its spec's first value.
An unbounded string is the control.

    PYTHONPATH=. .venv/bin/python benchmarks/bounded_strings.py
"""

from __future__ import annotations

from typing import Any

from length_products import values_in_order

SPECS: dict[str, dict[str, Any]] = {
    "string, maxLength 20": {"type": "string", "maxLength": 20},
    "string, 2 to 50 characters": {"type": "string", "minLength": 2, "maxLength": 50},
    "array of strings, maxLength 40": {
        "type": "array",
        "items": {"type": "string", "maxLength": 40},
    },
    "string (control)": {"type": "string"},
}
VALUES: dict[str, tuple[Any, ...]] = {
    "string, maxLength 20": ("configuration", "a longer value here", "x"),
    "string, 2 to 50 characters": ("configuration", "a longer value here", "xy"),
    "array of strings, maxLength 40": (
        ["configuration1", "configuration2"],
        ["a", "b", "c", "d"],
        ["one value of several words"],
    ),
    "string (control)": ("configuration", "a longer value here", "x"),
}


def main() -> None:
    print(values_in_order(SPECS, VALUES))


if __name__ == "__main__":
    main()
