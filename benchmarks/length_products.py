"""Strings whose length is bounded beside a pattern or a format: each new value's walk
(issue 15).

A string with ``pattern`` and ``maxLength`` (or ``minLength``) compiles to the
intersection of the pattern with a count of JSON characters, and ``format: hostname``
to the hostname regex met with a total length of at most 253. A state there is a pair
(pattern state, characters read), so a value of a length not walked before meets new
states at every token. Until the seventy-sixth session each was expanded and walked
over the vocabulary, and the cost came back with each new length; since then such a
row is met from the pattern state's walk and the count's selection
(``fsm.row_walk.RowWalker._meet_walk``), which later values share.

For each spec, one process walks the values in order (every value a fresh compile of
``{"a": spec}``, timed from the compile to the last step), ours and, when installed,
llguidance, and prints the milliseconds per value and ours' states discovered. The
same pattern without the bound is the control.

    PYTHONPATH=. .venv/bin/python benchmarks/length_products.py
"""

from __future__ import annotations

import time
from typing import Any

from _common import command_line, have, markdown_table, run_header
from fsm_compile import WARMUP_SCHEMA, LLGuidance, Seqstate, _encode, _tokenizer

NAME_PATTERN = "^[a-z0-9-]+$"
SPECS: dict[str, dict[str, Any]] = {
    "pattern": {"type": "string", "pattern": NAME_PATTERN},
    "pattern, maxLength 64": {"type": "string", "pattern": NAME_PATTERN, "maxLength": 64},
    "format hostname": {"type": "string", "format": "hostname"},
    "format uri (no bound)": {"type": "string", "format": "uri"},
}
VALUES: dict[str, tuple[str, ...]] = {
    "pattern": ("my-service-name-123", "another-name", "x-y-z-w-v-u-t"),
    "pattern, maxLength 64": ("my-service-name-123", "another-name", "x-y-z-w-v-u-t"),
    "format hostname": ("www.example.com", "api.service.io", "a.b.c.d.e.f.g.h"),
    "format uri (no bound)": ("http://localhost:7070", "https://example.org/a/b", "ftp://x.y/z"),
}


def document_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """The schema walked for ``spec``: an object whose member ``a`` is such a string."""
    return {"type": "object", "properties": {"a": spec}}


def _walk(engine: Any, spec: dict[str, Any], tokens: list[int]) -> tuple[float, Any]:
    """Milliseconds from a fresh compile of ``document_schema(spec)`` to the last step,
    and the compiled handle."""
    start = time.perf_counter_ns()
    handle = engine.compile("json", document_schema(spec), "lazy")
    engine.walk(handle, tokens)
    return (time.perf_counter_ns() - start) / 1e6, handle


def values_in_order(specs: dict[str, dict[str, Any]], values: dict[str, tuple[Any, ...]]) -> str:
    """The table of each spec's values walked in order in this process, by ours and
    llguidance: a fresh compile per value, with what the process kept from the values
    before it (a service meeting the schema again); ours' states discovered beside."""
    tokenizer = _tokenizer()
    engines: dict[str, Any] = {"seqstate": Seqstate(tokenizer)}
    if have("llguidance"):
        engines["llguidance"] = LLGuidance(tokenizer)
    for engine in engines.values():  # kernels and lazy statics loaded before timing
        source, value = WARMUP_SCHEMA
        engine.walk(engine.compile("json", source, "lazy"), _encode(tokenizer, value, "json"))
    rows = []
    for label, spec in specs.items():
        for value in values[label]:
            tokens = _encode(tokenizer, {"a": value}, "json")
            row: list[object] = [label, repr(value)]
            for name, engine in engines.items():
                spent, handle = _walk(engine, spec, tokens)
                row.append(f"{spent:.1f}")
                if name == "seqstate":
                    row.append(handle.num_states)
            rows.append(row)
    headers = ["spec", "value (in order)", "ours (ms)", "ours: states"]
    headers += [f"{name} (ms)" for name in engines if name != "seqstate"]
    return run_header(command_line()) + "\n" + markdown_table(headers, rows)


def main() -> None:
    print(values_in_order(SPECS, VALUES))


if __name__ == "__main__":
    main()
