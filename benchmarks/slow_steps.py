"""The cold steps above a bound, by the place in the text where they fall (issue 15).

``cold_masks.py`` gives the cold step p99 of the MaskBench sample beside the peers'.
To bring ours under llguidance's, fewer steps must cost more than its p99: this script
counts them and says where they are. It walks the sample of ``cold_masks.py`` (seed 0,
every valid instance with its own fresh compile) in this one process, the collector
off while a walk is timed (``--collector`` leaves it on), times each step (``bitmask``
then ``next_state``), and prints the steps above ``--above`` µs grouped by what the
text read so far ends with (``place``): after ``{"`` or ``, "`` (an object's key, or a
string in an array), after a colon, after ``,``, ``[`` or ``{``, at a string value's
start, inside a string, elsewhere. ``--leave-out`` groups apart the schemas whose name
holds a text (``notnames9``: its liveness searches take seconds alone).

With ``--against llguidance`` the same process also walks each instance with llguidance
(each step: its mask, then the token consumed), right after ours, and a second table
gives by place the steps of the instances both walked to their end: how long each
took in all and at the median, and by how much ours exceeds it (``gaps``).

    .venv/bin/python benchmarks/slow_steps.py [--sample 200] [--above 163]
        [--leave-out notnames9] [--collector] [--against llguidance]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from _common import command_line, fmt, markdown_table, percentile, run_header
from cold_masks import _steps
from fsm_compile import ADAPTERS, _encode, _tokenizer, maskbench_sample

import fsm

PLACES = (
    'after {" or , "',
    "after a colon",
    "after , [ or {",
    "at a string value's start",
    "inside a string",
    "elsewhere",
)


_TAIL = 4
"""Characters of the text read that ``place`` looks at: its longest ending, ``": "``."""


def place(tail: str, in_string: bool) -> str:
    """Where a step falls (one of ``PLACES``): by the last characters of the JSON text
    read before it, trailing whitespace dropped (``tail``), and whether a string is
    open there (an odd count of quotes read)."""
    if tail.endswith(('{"', ', "')):
        return PLACES[0]
    if tail.endswith(":"):
        return PLACES[1]
    if tail.endswith((",", "[", "{")):
        return PLACES[2]
    if tail.endswith(('": "', '["')):
        return PLACES[3]
    if in_string:
        return PLACES[4]
    return PLACES[5]


Step = tuple[float, str, str]
"""A step: (µs, schema name, place)."""

Pair = tuple[float, float, str]
"""A step walked by both engines: (ours' µs, the peer's µs, place)."""


def walk_sample(
    sample: int, collector: bool, against: str | None = None
) -> tuple[list[Step], list[Pair]]:
    """Every step of ours over the sample, and with ``against`` (a peer of
    ``fsm_compile.ADAPTERS``) the steps of the instances both walked to their end,
    paired."""
    tokenizer = _tokenizer()
    vocabulary = fsm.Vocabulary.from_tokenizer(tokenizer)
    peer = None if against is None else ADAPTERS[against](tokenizer)
    gc.freeze()  # the start-up heap: each walk's collection then scans only what is new
    steps: list[Step] = []
    pairs: list[Pair] = []
    for entry in maskbench_sample(sample):
        for test in (t for t in entry["tests"] if t["valid"]):
            tokens = _encode(tokenizer, test["data"], "json")
            places = places_of(tokenizer.decode([token]) for token in tokens)
            gc.collect()
            if not collector:
                gc.disable()
            try:
                ours = _walk_ours(entry["schema"], tokens, vocabulary)
                theirs = None if peer is None else _walk_peer(peer, entry["schema"], tokens)
            finally:
                gc.enable()
            steps.extend((micros, entry["name"], where) for micros, where in zip(ours, places))
            if theirs is not None and len(ours) == len(theirs) == len(tokens):
                pairs.extend(zip(ours, theirs, places))
    return steps, pairs


def _walk_ours(schema: object, tokens: list[int], vocabulary: fsm.Vocabulary) -> list[float]:
    """µs per step (the mask, then the token taken) until the end or a refusal."""
    found: list[float] = []
    try:
        index = fsm.compile_index(fsm.JsonSchema(schema), vocabulary)
        state = index.initial_state
        for token in tokens:
            start = time.perf_counter_ns()
            index.bitmask(state)
            state = index.next_state(state, token)
            found.append((time.perf_counter_ns() - start) / 1e3)
            if state < 0:
                break
    except fsm.FsmError:
        pass
    return found


def _walk_peer(peer: Any, schema: object, tokens: list[int]) -> list[float] | None:
    """The peer's µs per step, timed by ``cold_masks.py``'s own loop; None when it
    refuses the schema."""
    try:
        handle = peer.compile("json", schema, "default")
    except Exception:  # noqa: BLE001 - a peer's refusal, of whatever type it raises
        return None
    times, _ = _steps(peer.name, peer, handle, tokens)
    return [nanos / 1e3 for nanos in times]


def places_of(pieces: Iterable[str]) -> list[str]:
    """The place of each step of a text read in ``pieces`` (its tokens, decoded one
    by one): the place of the text before the piece."""
    raw, tail, quotes, found = "", "", 0, []
    for piece in pieces:
        found.append(place(tail, quotes % 2 == 1))
        if piece.strip():  # the text read no longer ends in whitespace: its tail moves
            tail = (raw + piece).rstrip()[-_TAIL:]
        raw = (raw + piece)[-_TAIL:]
        quotes += piece.count('"')
    return found


def report(steps: list[tuple[float, str, str]], above: float, leave_out: list[str]) -> str:
    """The table of the steps above ``above`` µs by place, the left-out schemas apart."""
    times = [micros for micros, _, _ in steps]
    slow = [step for step in steps if step[0] > above]
    counts: Counter[str] = Counter()
    spent: Counter[str] = Counter()
    for micros, name, where in slow:
        group = next((text for text in leave_out if text in name), where)
        counts[group] += 1
        spent[group] += micros
    rows = [
        [group, counts[group], fmt(spent[group] / 1e3, 0)]
        for group in (*PLACES, *leave_out)
        if counts[group]
    ]
    allowed = len(steps) // 100
    return "\n".join(
        [
            f"{len(steps):,} steps: p50 {fmt(percentile(times, 50), 0)} µs, "
            f"p99 {fmt(percentile(times, 99), 0)} µs. {len(slow):,} steps above {fmt(above, 0)} µs "
            f"(a p99 at or below it allows {allowed:,}), {fmt(sum(s[0] for s in slow) / 1e3, 0)} ms "
            f"of {fmt(sum(times) / 1e3, 0)} ms.",
            "",
            markdown_table(["place", "steps above", "their time (ms)"], rows),
        ]
    )


def gaps(pairs: list[Pair], peer: str) -> str:
    """By place, the paired steps: their count, each engine's time in all and median,
    and ours' time less the peer's (the places with the largest difference first)."""
    by_place: dict[str, list[Pair]] = {}
    for pair in pairs:
        by_place.setdefault(pair[2], []).append(pair)
    ordered = sorted(
        by_place.items(), key=lambda item: -sum(ours - theirs for ours, theirs, _ in item[1])
    )
    rows = [
        [
            where,
            f"{len(found):,}",
            fmt(sum(ours for ours, _, _ in found) / 1e3, 0),
            fmt(sum(theirs for _, theirs, _ in found) / 1e3, 0),
            fmt(sum(ours - theirs for ours, theirs, _ in found) / 1e3, 0),
            fmt(percentile([ours for ours, _, _ in found], 50), 0),
            fmt(percentile([theirs for _, theirs, _ in found], 50), 0),
        ]
        for where, found in ordered
    ]
    header = ["place", "steps", "ours (ms)", f"{peer} (ms)", "difference (ms)"]
    return markdown_table([*header, "ours p50 (µs)", f"{peer} p50 (µs)"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=200, help="MaskBench-dev schemas")
    parser.add_argument("--above", type=float, default=163.0, help="bound in µs")
    parser.add_argument("--leave-out", action="append", default=[], help="schema name text")
    parser.add_argument("--collector", action="store_true", help="leave the collector on")
    parser.add_argument("--against", choices=("llguidance",), help="a peer walked beside ours")
    args = parser.parse_args()
    steps, pairs = walk_sample(args.sample, args.collector, args.against)
    print(run_header(command_line()))
    print()
    print(report(steps, args.above, args.leave_out))
    if args.against:
        print()
        print(f"Steps of the instances both walked to their end, by place, against {args.against}:")
        print()
        print(gaps(pairs, args.against))


if __name__ == "__main__":
    main()
