"""Regexes built into the store against built as objects and converted (issue 15).

``fsm.term_builder`` lets one compiler build either kind of term. This script asks
what building rows directly saves over the way ``benchmarks/term_store.py`` had to take
(object terms, then ``TermStore.load``), on the compiler that goes through the seam so
far: regexes. For the two regexes of ``cold_masks.py`` and every ``pattern`` of the
MaskBench sample of ``cold_masks.py`` (seed 0, as the JSON string contents a schema's
``pattern`` allows), three ways in turn, ``--reps`` times each (which goes first
alternates), each into a fresh store:

* ``objects``: the object term alone (what the walk reads today);
* ``objects + load``: the object term, then converted into the store;
* ``store``: built as rows through ``StoredTerms``.

It checks that the built row is the converted one (one normal form), and counts the
objects the cyclic collector tracks among what each way keeps (after a collection):
the object term, or the store's tables.

    PYTHONPATH=. .venv/bin/python benchmarks/term_builder.py [--sample 200] [--reps 7] [--json F]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from _common import command_line, fmt, markdown_table, median, percentile, run_header
from fsm_compile import maskbench_sample
from term_store import collect_patterns_and_keys, kept

import fsm
from fsm import terms
from fsm.errors import FsmError
from fsm.regex import json_string_encoding, regex_in, regex_term, search_in, search_term
from fsm.term_builder import StoredTerms
from fsm.term_store import TermStore

WAYS = ("objects", "objects + load", "store")

FIXED = {
    "money regex": r"\$(0|[1-9][0-9]{0,2}(,[0-9]{3})*)\.[0-9]{2}",
    "ipv4 regex": (
        r"((25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
    ),
}


def builders(pattern: str, searched: bool) -> dict[str, Callable[[], Any]]:
    """The three ways to build ``pattern``: a full match (``regex_term``) or, for a
    schema's ``pattern``, a search inside a JSON string's contents. The store's ways
    give the store and the root's id."""

    def objects() -> terms.Term:
        if searched:
            return search_term(pattern, encode_char=json_string_encoding)
        return regex_term(pattern)

    def loaded() -> tuple[TermStore, int]:
        store = TermStore()
        return store, store.load(objects())

    def stored() -> tuple[TermStore, int]:
        store = TermStore()
        if searched:
            return store, search_in(StoredTerms(store), pattern, json_string_encoding)
        return store, regex_in(StoredTerms(store), pattern)

    return {"objects": objects, "objects + load": loaded, "store": stored}


def _held(built: terms.Term | tuple[TermStore, int]) -> terms.Term | TermStore:
    """What a way keeps: the object term, or the store."""
    return built[0] if isinstance(built, tuple) else built


def same_row(pattern: str, searched: bool) -> bool:
    """Whether the row built directly is the row the object term converts to."""
    store = TermStore()
    if searched:
        built = search_in(StoredTerms(store), pattern, json_string_encoding)
        term = search_term(pattern, encode_char=json_string_encoding)
    else:
        built, term = regex_in(StoredTerms(store), pattern), regex_term(pattern)
    return built == store.load(term)


def measure(pattern: str, searched: bool, reps: int) -> dict[str, Any]:
    """Each way ``reps`` times in rotation: its median time (µs), what it keeps tracked."""
    ways = builders(pattern, searched)
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    for rep in range(reps):
        order = WAYS[rep % 3 :] + WAYS[: rep % 3]
        for way in order:
            start = time.perf_counter()
            ways[way]()
            times[way].append((time.perf_counter() - start) * 1e6)
    tracked = {way: kept(_held(ways[way]())) for way in WAYS}
    return {
        "us": {way: median(values) for way, values in times.items()},
        "tracked": tracked,
        "same_row": same_row(pattern, searched),
    }


def sample_patterns(sample: int) -> tuple[list[str], list[str]]:
    """Every ``pattern`` of the sample's schemas, once, sorted: those the regex
    compiler takes, and those it refuses (``UnsupportedRegex``: no term either way)."""
    patterns: set[str] = set()
    for entry in maskbench_sample(sample):
        collect_patterns_and_keys(entry["schema"], patterns, set())
    taken, refused = [], []
    for pattern in sorted(patterns):
        try:
            search_term(pattern, encode_char=json_string_encoding)
        except FsmError:
            refused.append(pattern)
            continue
        taken.append(pattern)
    return taken, refused


def ratio_line(results: list[dict[str, Any]], way: str, against: str) -> str:
    """Per-pattern ratios of ``way`` to ``against``: median, p90, and of the sums."""
    ratios = [r["us"][way] / r["us"][against] for r in results]
    total = sum(r["us"][way] for r in results) / sum(r["us"][against] for r in results)
    return (
        f"- {way} / {against}: per pattern median {fmt(median(ratios), 2)}, "
        f"p90 {fmt(percentile(ratios, 90), 2)}; sums {fmt(total, 2)}"
    )


def summary(results: list[dict[str, Any]]) -> list[str]:
    """What the sample's patterns say, in a few lines."""
    sums = {way: sum(r["us"][way] for r in results) / 1000 for way in WAYS}
    tracked = {way: sum(r["tracked"][way] for r in results) for way in WAYS}
    alike = sum(r["same_row"] for r in results)
    return [
        f"- {len(results)} patterns; the row built directly is the converted one on {alike}",
        "- time in sum (ms): " + ", ".join(f"{way} {fmt(sums[way], 2)}" for way in WAYS),
        ratio_line(results, "store", "objects + load"),
        ratio_line(results, "store", "objects"),
        "- tracked objects kept, in sum: " + ", ".join(f"{way} {tracked[way]:,}" for way in WAYS),
    ]


def _row(name: str, result: dict[str, Any]) -> list[object]:
    us, tracked = result["us"], result["tracked"]
    return [
        name,
        *(fmt(us[way]) for way in WAYS),
        fmt(us["store"] / us["objects + load"], 2),
        *(f"{tracked[way]:,}" for way in WAYS),
        "yes" if result["same_row"] else "no",
    ]


HEADERS = [
    "regex",
    *(f"{way} (µs)" for way in WAYS),
    "store / objects + load",
    *(f"tracked: {way}" for way in WAYS),
    "same row",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=200, help="MaskBench schemas (0: none)")
    parser.add_argument("--reps", type=int, default=7, help="builds each way per pattern")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    fixed = {name: measure(pattern, False, args.reps) for name, pattern in FIXED.items()}
    patterns, refused = sample_patterns(args.sample) if args.sample else ([], [])
    sample = [measure(pattern, True, args.reps) for pattern in patterns]
    print(run_header(command_line()))
    print(f"compiled modules: {fsm.NATIVE}\n")
    print(markdown_table(HEADERS, [_row(name, result) for name, result in fixed.items()]))
    if sample:
        print(f"\n**MaskBench-dev sample ({args.sample} schemas, seed 0): its patterns**\n")
        print("\n".join(summary(sample)))
        print(f"- refused by the regex compiler (either way): {len(refused)}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"fixed": fixed, "sample": dict(zip(patterns, sample))}, handle, indent=1)


if __name__ == "__main__":
    main()
