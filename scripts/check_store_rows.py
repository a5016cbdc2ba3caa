"""Every MaskBench schema compiled both ways: rows built by the compiler against the
rows its object term converts to (``fsm.term_builder``, issue 15).

For each schema (every ``--stride``-th line of the file), the compiler builds the root
into a fresh store, then the object term is compiled and converted into that store
(its thunks are then the store's own rows, one per key); the two ids must be equal,
and every test instance of the schema must be read alike by both. Prints the counts
and the names of the schemas that differ; exits 1 when one does.

    PYTHONPATH=. .venv/bin/python scripts/check_store_rows.py \\
        ../shared/data/maskbench-dev.jsonl.gz [--stride 1]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Callable
from pathlib import Path

from fsm.errors import FsmError
from fsm.json_schema import schema_term, schema_term_in
from fsm.json_schema.strings import strings_in
from fsm.term_builder import StoredTerms
from fsm.term_store import TermStore
from fsm.terms import matches


def refusals(schema: object) -> set[str | None]:
    """The errors each way's compile raises, by name (None: compiled)."""
    found: set[str | None] = set()
    compiles: list[Callable[[], object]] = [
        lambda: schema_term_in(strings_in(StoredTerms(TermStore())), schema),
        lambda: schema_term(schema),
    ]
    for compile_ in compiles:
        try:
            compile_()
        except FsmError as error:
            found.add(type(error).__name__)
        else:
            found.add(None)
    return found


def check(schema: object, texts: list[bytes]) -> tuple[bool, int]:
    """Whether the built row is the converted row, and how many texts read otherwise."""
    store = TermStore()
    built = schema_term_in(strings_in(StoredTerms(store)), schema)
    term = schema_term(schema)
    differ = sum(store.matches(built, text) != matches(term, text) for text in texts)
    return built == store.load(term), differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a MaskBench-style .jsonl.gz file")
    parser.add_argument("--stride", type=int, default=1, help="every n-th schema")
    args = parser.parse_args()
    compared = refused = 0
    other_rows: list[str] = []
    other_reads: list[str] = []
    with gzip.open(args.data, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % args.stride:
                continue
            row = json.loads(line)
            texts = [json.dumps(t["data"], ensure_ascii=False).encode() for t in row["tests"]]
            found = refusals(row["schema"])
            if found != {None}:
                refused += 1
                if len(found) > 1:
                    other_rows.append(f"{row['name']} (refused {sorted(map(str, found))})")
                continue
            same, differ = check(row["schema"], texts)
            compared += 1
            if not same:
                other_rows.append(row["name"])
            if differ:
                other_reads.append(row["name"])
    print(f"{compared} schemas compiled both ways ({refused} refused)")
    print(f"rows differ: {len(other_rows)}; texts read otherwise: {len(other_reads)}")
    for name in sorted(set(other_rows) | set(other_reads)):
        print(f"  {name}")
    sys.exit(1 if other_rows or other_reads else 0)


if __name__ == "__main__":
    main()
