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

    .venv/bin/python benchmarks/slow_steps.py [--sample 200] [--above 163]
        [--leave-out notnames9] [--collector]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections import Counter
from collections.abc import Iterable

from _common import command_line, fmt, markdown_table, percentile, run_header
from fsm_compile import _encode, _tokenizer, maskbench_sample

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


def walk_sample(sample: int, collector: bool) -> list[tuple[float, str, str]]:
    """Every step of the sample: (µs, schema name, place)."""
    tokenizer = _tokenizer()
    vocabulary = fsm.Vocabulary.from_tokenizer(tokenizer)
    gc.freeze()  # the start-up heap: each walk's collection then scans only what is new
    steps: list[tuple[float, str, str]] = []
    for entry in maskbench_sample(sample):
        for test in (t for t in entry["tests"] if t["valid"]):
            tokens = _encode(tokenizer, test["data"], "json")
            places = places_of(tokenizer.decode([token]) for token in tokens)
            gc.collect()
            if not collector:
                gc.disable()
            try:
                index = fsm.compile_index(fsm.JsonSchema(entry["schema"]), vocabulary)
                state = index.initial_state
                for token, where in zip(tokens, places):
                    start = time.perf_counter_ns()
                    index.bitmask(state)
                    state = index.next_state(state, token)
                    steps.append(((time.perf_counter_ns() - start) / 1e3, entry["name"], where))
            except fsm.FsmError:
                pass
            finally:
                gc.enable()
    return steps


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=200, help="MaskBench-dev schemas")
    parser.add_argument("--above", type=float, default=163.0, help="bound in µs")
    parser.add_argument("--leave-out", action="append", default=[], help="schema name text")
    parser.add_argument("--collector", action="store_true", help="leave the collector on")
    args = parser.parse_args()
    steps = walk_sample(args.sample, args.collector)
    print(run_header(command_line()))
    print()
    print(report(steps, args.above, args.leave_out))


if __name__ == "__main__":
    main()
