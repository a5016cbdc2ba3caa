"""Numbers whose bounds look at their magnitude: each value's walk, in order (issue 15).

Where ``minimum`` / ``maximum`` bound a number's magnitude (``1000 <= n <= 10**9``, a
port), a number's prefix cannot be written as one state per sign the way an unbounded
integer is (``NumberChecker.canonical``): ``1``, ``10`` and ``100`` each compare with the
bounds' digits. Until the seventy-seventh session every prefix was its own state, each
checked exactly (``viable``, ``accepts``) for every byte a row derives it by; since
then prefixes that compare alike with every bound, with as many digits, are one state
(``NumberChecker.state_key``), checked once per store.

For each spec, one process walks the values in order (every value a fresh compile of
``{"a": spec}``, timed from the compile to the last step; ``length_products``'s
table), ours and, when installed, llguidance. An integer with ``minimum: 0`` (whose
magnitude no bound looks at) is the control.

    PYTHONPATH=. .venv/bin/python benchmarks/bounded_numbers.py
"""

from __future__ import annotations

from typing import Any

from length_products import values_in_order

SPECS: dict[str, dict[str, Any]] = {
    "integer, 1,000 to 10**9": {"type": "integer", "minimum": 1000, "maximum": 10**9},
    "integer, 1 to 65,535": {"type": "integer", "minimum": 1, "maximum": 65535},
    "number, 0.5 to 99.5": {"type": "number", "minimum": 0.5, "maximum": 99.5},
    "integer, minimum 0 (control)": {"type": "integer", "minimum": 0},
}
VALUES: dict[str, tuple[Any, ...]] = {
    "integer, 1,000 to 10**9": (1000000, 250000, 31415926),
    "integer, 1 to 65,535": (5439, 80, 65535),
    "number, 0.5 to 99.5": (12.5, 99.5, 0.75),
    "integer, minimum 0 (control)": (1000000, 250000, 31415926),
}


def main() -> None:
    print(values_in_order(SPECS, VALUES))


if __name__ == "__main__":
    main()
