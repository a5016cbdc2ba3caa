"""Token walks over a store's rows against token walks over object terms (issue 15).

The compiler builds rows itself (``fsm.term_builder``) and ``fsm.store_automaton``
walks them: this script asks what a token walk over rows costs today, and checks it
against the product's walk on the way. Per case of ``cold_masks.py`` and per valid
instance of its MaskBench sample (seed 0), the instance's SmolLM2 tokens are walked
through a fresh compile (``bitmask`` then ``next_state`` at every token), both ways in
one process, their order alternating:

* ``objects``: object terms (``DerivativeAutomaton`` with its lexemes and unions
  walked once and shared, or a regex's position automaton), what ``fsm.compile_index``
  built before it took a store's rows (``fsm.schema_rows``, sixty-eighth session);
* ``rows``: the spec compiled into one store for the process
  (``fsm.json_schema.schema_term_in``, ``fsm.regex.regex_in``), walked by a
  ``TokenIndex`` over ``StoreAutomaton``, its states taken apart as the objects' are
  (``fsm.store_decompose``): the product's path (``fsm.schema_rows``), in a store of
  its own;
* ``rows plain`` (with ``--plain``): the same with nothing taken apart, every state
  walked over the whole vocabulary trie (the sixty-sixth session's yardstick).

Every mask of the rows' walks must equal the objects' (the script stops otherwise).
The collector is on, as in a service. Reported: compile + walk per instance (ratios
to the objects: median, p90, sums), the steps' p50 and p99, and the states each way
numbered.

    PYTHONPATH=. .venv/bin/python benchmarks/store_walk.py [--sample 200] [--plain] [--json F]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
from _common import command_line, fmt, markdown_table, median, percentile, run_header
from cold_masks import CASES
from fsm_compile import _encode, _tokenizer, maskbench_sample
from term_store import RowCompiler

import fsm
from fsm.compiler import automaton_of
from fsm.token_index import TokenIndex

WARM_UP = (
    {"type": "object", "properties": {"warm": {"type": "integer"}, "up": {"type": "string"}}},
    {"warm": 1, "up": "x"},
)


def object_index(kind: str, source: Any, vocabulary: fsm.Vocabulary) -> TokenIndex:
    """Over object terms (a schema's ``DerivativeAutomaton``, a regex's positions): the
    product's path before ``fsm.compile_index`` took a store's rows."""
    spec = fsm.Regex(source) if kind == "regex" else fsm.JsonSchema(source)
    return TokenIndex(automaton_of(spec), vocabulary)


def walk(make_index: Any, tokens: list[int]) -> tuple[float, list[float], list[np.ndarray], int]:
    """A fresh compile and its walk: the total (ms), each step (µs: the first mask
    counts the compile in), the masks, the automaton states expanded."""
    steps: list[float] = []
    masks: list[np.ndarray] = []
    start = before = time.perf_counter_ns()
    index = make_index()
    state = index.initial_state
    for token in [*tokens, None]:
        masks.append(index.bitmask(state).copy())
        if token is not None:
            state = index.next_state(state, token)
        now = time.perf_counter_ns()
        steps.append((now - before) / 1e3)
        before = now
    return (time.perf_counter_ns() - start) / 1e6, steps, masks, index.automaton.num_states


def measure(
    label: str, kind: str, source: Any, tokens: list[int], context: dict, turn: int
) -> dict[str, Any]:
    """Every way on one instance, in turn; raises when a mask differs."""
    vocabulary, rows = context["vocabulary"], context["rows"]
    ways = {
        "objects": lambda: object_index(kind, source, vocabulary),
        "rows": lambda: rows.index(kind, source, vocabulary),
    }
    if context.get("plain"):
        ways["rows plain"] = lambda: rows.index(kind, source, vocabulary, decompose=False)
    found: dict[str, Any] = {}
    for way in sorted(ways, reverse=turn % 2 == 1):
        found[way] = walk(ways[way], tokens)
    for way in ways:
        for position, (mine, theirs) in enumerate(
            zip(found[way][2], found["objects"][2], strict=True)
        ):
            if not np.array_equal(mine, theirs):
                raise AssertionError(f"{label}: the masks differ at token {position} ({way})")
    return {
        way: {"total_ms": total, "steps_us": steps, "states": states}
        for way, (total, steps, _, states) in found.items()
    }


def instances(sample: int, tokenizer: Any) -> list[tuple[str, str, Any, list[int]]]:
    """The fixed cases, then every valid instance of the sample: (label, kind, source,
    tokens)."""
    found = [
        (name, kind, source, _encode(tokenizer, value, kind))
        for name, (kind, source, value) in CASES.items()
    ]
    for entry in maskbench_sample(sample):
        try:
            fsm.JsonSchema(entry["schema"]).term()
        except fsm.FsmError:
            continue
        for number, test in enumerate(t for t in entry["tests"] if t["valid"]):
            tokens = _encode(tokenizer, test["data"], "json")
            found.append((f"{entry['name']}#{number}", "json", entry["schema"], tokens))
    return found


def ways_in(results: dict[str, dict]) -> list[str]:
    """The ways measured, the objects' first."""
    return ["objects", *sorted(way for way in next(iter(results.values())) if way != "objects")]


def summary(results: dict[str, dict]) -> list[str]:
    ways = ways_in(results)
    sums = {way: sum(r[way]["total_ms"] for r in results.values()) for way in ways}
    lines = [f"- {len(results)} instances, every mask equal every way"]
    for way in ways[1:]:
        ratios = [r[way]["total_ms"] / r["objects"]["total_ms"] for r in results.values()]
        lines.append(
            f"- compile + walk, {way} / objects per instance: median {fmt(median(ratios), 2)}, "
            f"p90 {fmt(percentile(ratios, 90), 2)}; sums {fmt(sums['objects'], 1)} ms against "
            f"{fmt(sums[way], 1)} ms ({fmt(sums[way] / sums['objects'], 2)})"
        )
    for way in ways:
        steps = [step for r in results.values() for step in r[way]["steps_us"][1:]]
        states = sum(r[way]["states"] for r in results.values())
        lines.append(
            f"- {way}: steps p50 {fmt(median(steps), 1)} µs, p99 {fmt(percentile(steps, 99), 1)} "
            f"µs; {states:,} automaton states"
        )
    return lines


def case_table(results: dict[str, dict]) -> str:
    """Per fixed case and way: compile + walk (ms), its ratio to the objects', and
    the steps' p99 (µs)."""
    ways = ways_in({name: results[name] for name in CASES})
    rows = []
    for name in CASES:
        r = results[name]
        line = [name]
        for way in ways:
            ratio = r[way]["total_ms"] / r["objects"]["total_ms"]
            line.append(f"{fmt(r[way]['total_ms'], 1)} ({fmt(ratio, 2)})")
            line.append(fmt(percentile(r[way]["steps_us"][1:], 99), 0))
        rows.append(line)
    headers = ["case"] + [h for way in ways for h in (f"{way} (ms)", f"{way} p99 (µs)")]
    return markdown_table(headers, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=200, help="MaskBench schemas (0: none)")
    parser.add_argument("--plain", action="store_true", help="also walk rows not taken apart")
    parser.add_argument("--json", help="write every instance's figures to this file")
    args = parser.parse_args()
    tokenizer = _tokenizer()
    vocabulary = fsm.Vocabulary.from_tokenizer(tokenizer)
    context = {"vocabulary": vocabulary, "rows": RowCompiler(), "plain": args.plain}
    work = instances(args.sample, tokenizer)
    # warm-up on a schema of its own: the vocabulary's trie, the shared JSON pieces (and
    # the objects' lexeme walks of them, as a service has them), no measured schema seen
    warm_tokens = _encode(tokenizer, WARM_UP[1], "json")
    measure("warm-up", "json", WARM_UP[0], warm_tokens, context, 0)
    results = {
        label: measure(label, kind, source, tokens, context, turn)
        for turn, (label, kind, source, tokens) in enumerate(work)
    }
    print(run_header(command_line()))
    print(f"compiled modules: {fsm.NATIVE}; collector on\n")
    print(case_table(results))
    sample = {label: r for label, r in results.items() if label not in CASES}
    print("\n**The fixed cases**\n")
    print("\n".join(summary({name: results[name] for name in CASES})))
    if sample:
        print(f"\n**MaskBench-dev sample ({args.sample} schemas, seed 0)**\n")
        print("\n".join(summary(sample)))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out)


if __name__ == "__main__":
    main()
