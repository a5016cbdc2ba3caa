"""Ours before / after on the fixed cold-mask cases, each walk in one hot process.

``cold_masks.py`` times every engine in a worker that waits for its next request, as a
service's constraint thread does; there, a change of 5% hides in the workers' order and
the machine's noise. This script compares two checkouts of ours only, for a change's
own effect: each round runs every tree in a fresh process (``--child``) that repeats,
per case, a fresh ``fsm.compile_index`` then ``bitmask`` + ``next_state`` at every token
of the case's instance; the trees alternate, and the figure is each tree's minimum over
all rounds (noise only ever adds time). The cases and instances are ``cold_masks.py``'s.

    .venv/bin/python benchmarks/cold_walk_ab.py --before TREE [--reps 21] [--rounds 3]
        [--sample 200 [--reps 1] [--rounds 4] [--json F]]

``--sample N`` times the MaskBench-dev sample of ``cold_masks.py`` instead (seed 0,
every valid instance with its own fresh compile, the collector off while timed;
``--rounds`` runs of each tree, their order alternating, each instance's minimum over
them kept) and prints the paired ratios after / before. There ``--reps`` (walks per
instance in one process) defaults to 1: a second walk of a schema finds what the first
left in the vocabulary's cache (its keys' trie paths, its other-key walks, its
format's rows), so a minimum over repeats times a schema seen before, not a new one
(fifty-first session: one change read 1.025 over three repeats and 0.953 over single
walks). One run of each tree read paired medians from 0.96 to 1.04 for one change
(fiftieth session): a round per tree is not enough on a shared machine.

Every child runs with ``PYTHONHASHSEED=0`` (``docs/design.md``, "Thirtieth session":
the order of liveness searches follows term hashes).

``TREE`` is another checkout (a ``git worktree``) with its compiled modules built
(``scripts/build_native.py`` run there), or it runs as pure Python.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from _common import json_child

HERE = Path(__file__).resolve().parent


def _setup() -> tuple[Any, Any, Any]:
    """In a tree's process: ``fsm`` imported from the tree (the working directory), the
    SmolLM2 tokenizer and its vocabulary."""
    sys.path.insert(0, ".")  # this script's folder is already first: cold_masks & co.
    from fsm_compile import _tokenizer

    import fsm

    tokenizer = _tokenizer()
    return fsm, tokenizer, fsm.Vocabulary.from_tokenizer(tokenizer)


def _walk(
    fsm: Any, make_spec: Callable[[], Any], vocabulary: Any, tokens: list[int]
) -> tuple[float, float]:
    """One fresh compile and cold walk: the compile alone (the spec made, compiled, its
    first mask built, as ``cold_masks.py`` times it) and the whole, in ms."""
    start = time.perf_counter_ns()
    index = fsm.compile_index(make_spec(), vocabulary)
    state = index.initial_state
    index.bitmask(state)
    compiled = time.perf_counter_ns()
    for token in tokens:
        index.bitmask(state)
        state = index.next_state(state, token)
    return (compiled - start) / 1e6, (time.perf_counter_ns() - start) / 1e6


def child_sample(reps: int, n: int) -> None:
    """In a tree's process: per sample instance, the minimum compile + cold walk and
    the minimum compile alone (ms; None where the schema is refused), the collector off
    while timed, as JSON."""
    fsm, tokenizer, vocabulary = _setup()
    from fsm_compile import _encode, maskbench_sample

    gc.freeze()
    times: list[float | None] = []
    compiles: list[float | None] = []
    labels: list[str] = []
    for entry in maskbench_sample(n):
        for number, test in enumerate(t for t in entry["tests"] if t["valid"]):
            labels.append(f"{entry['name']}#{number}")
            tokens = _encode(tokenizer, test["data"], "json")
            make_spec = partial(fsm.JsonSchema, entry["schema"])
            best = best_compile = None
            for _ in range(reps):
                gc.collect()
                gc.disable()
                try:
                    compiled, elapsed = _walk(fsm, make_spec, vocabulary, tokens)
                    best = _least(best, elapsed)
                    best_compile = _least(best_compile, compiled)
                except fsm.FsmError:
                    pass
                finally:
                    gc.enable()
            times.append(best)
            compiles.append(best_compile)
    print(
        json.dumps(
            {"native": bool(fsm.NATIVE), "times": times, "compiles": compiles, "labels": labels}
        )
    )


def child(reps: int) -> None:
    """In a tree's process: the minimum compile + cold walk (ms) per case, as JSON."""
    fsm, tokenizer, vocabulary = _setup()
    from cold_masks import CASES
    from fsm_compile import _encode

    best: dict[str, float] = {}
    for name, (kind, source, value) in CASES.items():
        tokens = _encode(tokenizer, value, kind)
        make_spec = partial(fsm.Regex if kind == "regex" else fsm.JsonSchema, source)
        for _ in range(reps + 2):  # two warm-ups: the vocabulary's shared walks
            _, elapsed = _walk(fsm, make_spec, vocabulary, tokens)
            best[name] = min(best.get(name, elapsed), elapsed)
    print(json.dumps({"native": bool(fsm.NATIVE), "best": best}))


def run_tree(tree: Path, reps: int, sample: int) -> dict:
    command = [sys.executable, str(HERE / "cold_walk_ab.py"), "--child", "--reps", str(reps)]
    # one hash seed for every child: a union's branches are met in hash order, and on
    # schemas bound by liveness searches that order moves the time (up to 3x)
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    return json_child(command + ["--sample", str(sample)], env=environment, cwd=tree)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the other checkout")
    parser.add_argument(
        "--reps",
        type=int,
        help="fresh compiles per case (default 21) or per sample instance (default 1) per round",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sample", type=int, default=0, help="MaskBench-dev schemas (0: none)")
    parser.add_argument(
        "--json", type=Path, help="with --sample: every instance's minima per tree, labelled"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reps is None:
        args.reps = 1 if args.sample else 21
    if args.child:
        if args.sample:
            child_sample(args.reps, args.sample)
        else:
            child(args.reps)
        return
    if args.before is None:
        parser.error("--before TREE is required")
    trees = {"before": args.before.resolve(), "after": HERE.parent}
    if args.sample:
        compare_sample(trees, args.reps, args.sample, args.rounds, args.json)
        return
    best: dict[str, dict[str, float]] = {label: {} for label in trees}
    compiled: dict[str, bool] = {}
    for _ in range(args.rounds):
        for label, tree in trees.items():
            result = run_tree(tree, args.reps, 0)
            compiled[label] = result["native"]
            for name, ms in result["best"].items():
                best[label][name] = min(best[label].get(name, ms), ms)
    print(
        f"Minimum of {args.reps * args.rounds} compile + cold walks per case and tree "
        f"(before: {trees['before']}, compiled: {compiled['before']}; "
        f"after: this checkout, compiled: {compiled['after']})\n"
    )
    print("| case | before (ms) | after (ms) | after / before |")
    print("| --- | ---: | ---: | ---: |")
    for name, before in best["before"].items():
        after = best["after"][name]
        print(f"| {name} | {before:.2f} | {after:.2f} | {after / before:.2f} |")


def compare_sample(
    trees: dict[str, Path], reps: int, n: int, rounds: int, json_out: Path | None = None
) -> None:
    """Both trees over the sample, ``rounds`` times, the first tree to run alternating;
    each instance's minimum per tree; paired ratios after / before (and every
    instance's minima, labelled, in ``json_out``: which instances a change moved)."""
    best: dict[str, dict[str, list[float | None]]] = {}
    instances: list[str] = []  # the same in every child: the sample's order
    labels = list(trees)
    for round_number in range(rounds):
        for label in labels if round_number % 2 == 0 else labels[::-1]:
            result = run_tree(trees[label], reps, n)
            instances = instances or result["labels"]
            kept = best.setdefault(label, {})
            for measure in ("times", "compiles"):
                found = result[measure]
                previous = kept.get(measure)
                kept[measure] = found if previous is None else list(map(_least, previous, found))
    print(
        f"Paired over the instances of {n} schemas walked by both (minimum of {reps} each "
        f"in each of {rounds} rounds, collector off), after / before:\n"
    )
    print("| measure | instances | median | geometric mean | sum | medians before -> after (ms) |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for measure, name in (("times", "compile + cold walk"), ("compiles", "compile")):
        print(_paired_row(name, best["before"][measure], best["after"][measure]))
    if json_out is not None:
        json_out.write_text(json.dumps({"labels": instances, **best}))


def _paired_row(name: str, before: list[float | None], after: list[float | None]) -> str:
    """One measure's paired ratios after / before, as a table row."""
    pairs = [(b, a) for b, a in zip(before, after) if b and a]
    if not pairs:
        return f"| {name} | 0 | | | | |"
    ratios = [a / b for b, a in pairs]
    geometric = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    total = sum(a for _, a in pairs) / sum(b for b, _ in pairs)
    return (
        f"| {name} | {len(pairs)} | {statistics.median(ratios):.3f} | {geometric:.3f} | "
        f"{total:.3f} | {statistics.median(b for b, _ in pairs):.2f} -> "
        f"{statistics.median(a for _, a in pairs):.2f} |"
    )


def _least(first: float | None, second: float | None) -> float | None:
    """The smaller of two times, where None (the schema refused) counts as no time."""
    if first is None or second is None:
        return second if first is None else first
    return min(first, second)


if __name__ == "__main__":
    main()
