"""Where a cold walk's time goes (issue 15): the collector, first walks, terms, bookkeeping.

``cold_masks.py`` compares engines; this script divides ours. It walks the MaskBench
sample of ``cold_masks.py`` (seed 0, every valid instance with its own fresh compile,
``bitmask`` then ``next_state`` at each token) in two fresh processes, each after the
benchmark's untimed warm-up walk:

* **The collector** (``--child collector``): the sample walked with the cyclic collector
  on, as a service runs; each collection is timed through ``gc.callbacks``, young ones
  (generations 0 and 1) apart from full passes. ``--young-threshold N`` raises the
  collector's first threshold to N there (``gc.set_threshold``): young collections every
  N new objects instead of 700, so fewer of a walk's objects outlive two of them;
  ``--freeze`` calls ``gc.freeze()`` there once the process is warm (``gc.freeze``: the
  start-up objects left out of every later collection).
* **The rows** (``--child rows``): the sample walked with the collector off; each step
  is a warm one (its row was built before), a *first* row (the vocabulary's lexeme cache
  grew while it was built: a lexeme walk no index had made in the process) or a
  *cached* row (every lexeme walk it took was in the cache). Then each instance is walked
  twice more, each walk timed on its own: after a fresh compile (every lexeme walk now
  cached: the cost of its terms and of the rows' bookkeeping), and with a new index over
  that compile's automaton, whose terms, splits and branches are memoised (the
  bookkeeping alone). Their difference is what building and taking apart the terms costs.

An instance's time excludes freeing its index (about half a millisecond), as in
``cold_masks.py``; the collector's share is of the whole run, which includes it.

    .venv/bin/python benchmarks/walk_parts.py [--sample 200] [--leave-out notnames9]
        [--young-threshold 50000] [--freeze]

``--leave-out`` drops the schemas whose name holds a text (``notnames9``: its liveness
searches take seconds alone). Every child runs with ``PYTHONHASHSEED=0``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import command_line, fmt, json_child, markdown_table, percentile, run_header
from fsm_compile import WARMUP_SCHEMA, _encode, _tokenizer, maskbench_sample

import fsm
from fsm.token_index import TokenIndex

HERE = Path(__file__).resolve().parent

STEP_KINDS = ("compile", "first rows", "cached rows", "warm steps")
"""Where the rows child puts each part of an instance's time (``rows_child``)."""


class CollectorClock:
    """A ``gc.callbacks`` entry that adds up the time of young collections and of full
    passes (generation 2), counts both and keeps the longest young one."""

    def __init__(self, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.clock = clock
        self.young_ns = 0
        self.young_collections = 0
        self.longest_young_ns = 0
        self.full_ns = 0
        self.full_passes = 0
        self._started = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = self.clock()
            return
        elapsed = self.clock() - self._started
        if info["generation"] == 2:
            self.full_ns += elapsed
            self.full_passes += 1
        else:
            self.young_ns += elapsed
            self.young_collections += 1
            self.longest_young_ns = max(self.longest_young_ns, elapsed)


def _setup(sample: int, leave_out: list[str]) -> tuple[Any, list[tuple[dict, list[int]]]]:
    """The vocabulary (after the warm-up walk) and the sample's (schema, tokens) pairs."""
    tokenizer = _tokenizer()
    vocabulary = fsm.Vocabulary.from_tokenizer(tokenizer)
    schema, value = WARMUP_SCHEMA
    _walk(fsm.compile_index(fsm.JsonSchema(schema), vocabulary), _encode(tokenizer, value, "json"))
    work = [
        (entry["schema"], _encode(tokenizer, test["data"], "json"))
        for entry in maskbench_sample(sample)
        if not any(text in entry["name"] for text in leave_out)
        for test in entry["tests"]
        if test["valid"]
    ]
    return vocabulary, work


def _walk(index: Any, tokens: list[int]) -> None:
    state = index.initial_state
    for token in tokens:
        index.bitmask(state)
        state = index.next_state(state, token)


def collector_child(
    sample: int, leave_out: list[str], young: int | None = None, freeze: bool = False
) -> dict:
    """The sample with the collector on (its first threshold ``young`` when given, the
    warm process frozen with ``freeze``): instance totals (ms) and the collections' time."""
    vocabulary, work = _setup(sample, leave_out)
    if young is not None:
        gc.set_threshold(young, *gc.get_threshold()[1:])
    if freeze:
        gc.collect()
        gc.freeze()
    clock = CollectorClock()
    gc.callbacks.append(clock)
    totals = []
    start = time.perf_counter_ns()
    for schema, tokens in work:
        began = time.perf_counter_ns()
        try:
            index = fsm.compile_index(fsm.JsonSchema(schema), vocabulary)
            _walk(index, tokens)
        except fsm.FsmError:
            index = None  # a refused walk's index, freed before the next is timed
            continue
        totals.append((time.perf_counter_ns() - began) / 1e6)
        # freed outside the instance's time, as cold_masks.py does (the whole counts it)
        index = None
    elapsed = (time.perf_counter_ns() - start) / 1e6
    gc.callbacks.remove(clock)
    return {
        "totals": totals,
        "elapsed_ms": elapsed,
        "young_ms": clock.young_ns / 1e6,
        "young_collections": clock.young_collections,
        "longest_young_ms": clock.longest_young_ns / 1e6,
        "full_ms": clock.full_ns / 1e6,
        "full_passes": clock.full_passes,
        "thresholds": list(gc.get_threshold()),
        "frozen": gc.get_freeze_count(),
    }


def step_kind(built: bool, cache_grew: bool) -> str:
    """Which of ``STEP_KINDS`` a step of the walk is (its compile is counted apart)."""
    if not built:
        return STEP_KINDS[3]
    return STEP_KINDS[1] if cache_grew else STEP_KINDS[2]


def rows_child(sample: int, leave_out: list[str]) -> dict:
    """The sample with the collector off: ms per ``STEP_KINDS`` and rows per kind, then
    the two walks again (fresh compile; same automaton), summed over the instances."""
    vocabulary, work = _setup(sample, leave_out)
    cache = vocabulary.lexeme_walks
    spent = dict.fromkeys(STEP_KINDS, 0.0)
    counted = dict.fromkeys(STEP_KINDS, 0)
    again = {"fresh compile": 0.0, "same automaton": 0.0}
    gc.collect()
    gc.disable()
    try:
        for schema, tokens in work:
            try:
                _rows_of(schema, tokens, vocabulary, cache, spent, counted, again)
            except fsm.FsmError:
                continue
    finally:
        gc.enable()
    return {"spent_ms": spent, "counts": counted, "again_ms": again}


def _rows_of(
    schema: dict,
    tokens: list[int],
    vocabulary: Any,
    cache: Any,
    spent: dict[str, float],
    counted: dict[str, int],
    again: dict[str, float],
) -> None:
    """One instance of ``rows_child``: its cold walk, step by step, then both walks again."""
    began = time.perf_counter_ns()
    index = fsm.compile_index(fsm.JsonSchema(schema), vocabulary)
    state = index.initial_state
    index.bitmask(state)
    spent[STEP_KINDS[0]] += (time.perf_counter_ns() - began) / 1e6
    counted[STEP_KINDS[0]] += 1
    for token in tokens:
        rows, entries = index.num_rows_built, len(cache)
        began = time.perf_counter_ns()
        index.bitmask(state)
        state = index.next_state(state, token)
        elapsed = (time.perf_counter_ns() - began) / 1e6
        kind = step_kind(index.num_rows_built > rows, len(cache) > entries)
        spent[kind] += elapsed
        counted[kind] += 1
    fresh = fsm.compile_index(fsm.JsonSchema(schema), vocabulary)
    began = time.perf_counter_ns()
    _walk(fresh, tokens)
    again["fresh compile"] += (time.perf_counter_ns() - began) / 1e6
    same = TokenIndex(fresh.automaton, vocabulary)
    began = time.perf_counter_ns()
    _walk(same, tokens)
    again["same automaton"] += (time.perf_counter_ns() - began) / 1e6


def report(collector: dict, rows: dict) -> str:
    """The two tables: the collector's share, then the rows' and the terms' parts."""
    totals = collector["totals"]
    elapsed = collector["elapsed_ms"]
    collected = collector["young_ms"] + collector["full_ms"]
    thresholds = ", ".join(f"{value:,}" for value in collector["thresholds"])
    frozen = f", {collector['frozen']:,} objects frozen" if collector["frozen"] else ""
    first = [
        f"With the collector on (thresholds {thresholds}{frozen}; {len(totals)} instances): "
        f"instance p50 / p90 "
        f"{fmt(percentile(totals, 50), 2)} / {fmt(percentile(totals, 90), 2)} ms; "
        f"{fmt(elapsed, 0)} ms in all, of which the collector "
        f"{fmt(collected, 0)} ms ({fmt(100 * collected / elapsed, 0)}%): "
        f"{collector['young_collections']:,} young collections {fmt(collector['young_ms'], 0)} ms "
        f"(the longest {fmt(collector['longest_young_ms'], 1)} ms), "
        f"{collector['full_passes']} full passes {fmt(collector['full_ms'], 0)} ms.",
        "",
    ]
    spent, counts = rows["spent_ms"], rows["counts"]
    whole = sum(spent.values())
    table = [
        [kind, f"{counts[kind]:,}", fmt(spent[kind], 0), f"{fmt(100 * spent[kind] / whole, 0)}%",
         fmt(1e3 * spent[kind] / counts[kind], 1) if counts[kind] else "-"]
        for kind in STEP_KINDS
    ]  # fmt: skip
    fresh, same = rows["again_ms"]["fresh compile"], rows["again_ms"]["same automaton"]
    second = [
        "With the collector off, by kind of step (a first row: the vocabulary's lexeme "
        "cache grew while it was built):",
        "",
        markdown_table(["part", "count", "ms", "share", "µs each"], table),
        "",
        f"Walked again, every lexeme walk cached: {fmt(fresh, 0)} ms with a fresh compile, "
        f"{fmt(same, 0)} ms over the same automaton (terms, splits and branches memoised): "
        f"the terms {fmt(fresh - same, 0)} ms ({fmt(100 * (fresh - same) / fresh, 0)}%), the "
        f"rows' bookkeeping {fmt(same, 0)} ms.",
    ]
    return "\n".join(first + second)


def run_child(
    kind: str, sample: int, leave_out: list[str], young: int | None = None, freeze: bool = False
) -> dict:
    """``--child kind`` in a fresh process (``PYTHONHASHSEED=0``), its JSON answer."""
    command = [sys.executable, str(HERE / "walk_parts.py"), "--child", kind]
    command += ["--sample", str(sample)]
    for text in leave_out:
        command += ["--leave-out", text]
    if young is not None:
        command += ["--young-threshold", str(young)]
    if freeze:
        command += ["--freeze"]
    return json_child(command, env={**os.environ, "PYTHONHASHSEED": "0"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=200, help="MaskBench-dev schemas")
    parser.add_argument("--leave-out", action="append", default=[], help="schema name text")
    parser.add_argument(
        "--young-threshold", type=int, help="the collector's first threshold (collector part)"
    )
    parser.add_argument(
        "--freeze", action="store_true", help="gc.freeze() once warm (collector part)"
    )
    parser.add_argument("--child", choices=("collector", "rows"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "collector":
        found = collector_child(args.sample, args.leave_out, args.young_threshold, args.freeze)
        print(json.dumps(found))
        return
    if args.child == "rows":
        print(json.dumps(rows_child(args.sample, args.leave_out)))
        return
    collector = run_child(
        "collector", args.sample, args.leave_out, args.young_threshold, args.freeze
    )
    rows = run_child("rows", args.sample, args.leave_out)
    print(run_header(command_line()))
    print()
    print(report(collector, rows))


if __name__ == "__main__":
    main()
