"""What an idle wait costs the next piece of work on this machine (a control for the
cold-mask benchmark's harness, ``benchmarks/cold_masks.py``).

Two fixed workloads, each run after an idle wait of 0 to 0.3 s (``time.sleep``), the
median of ``--reps`` runs per wait:

* *memory*: 5,000 lookups in a dict of 300,000 entries and 20,000 gathers from a 16 MiB
  array, in random order: plain Python and numpy, no library of ours;
* *walk*: ours, a fresh compile and cold walk of the money regex after one untimed walk
  of it (so the vocabulary's shared walks are in hand and only the memory is cold).

On the shared machines the work after a 0.1 s wait ran about 10x slower than back to
back, in CPU time as in wall time, growing with the wait; a busy loop that touches no
memory in place of the sleep did not help. Interleaving engines request by request
puts such a wait before every request of every engine.

    .venv/bin/python benchmarks/idle_gap.py [--reps 9] [--write]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import numpy as np
from _common import command_line, fmt, markdown_table, median, run_header
from _common import write_section as _write_section

SECTION = "Idle waits: what the next piece of work pays"
WAITS = (0.0, 0.003, 0.01, 0.03, 0.1, 0.3)


def memory_workload() -> Callable[[], object]:
    """Random dict lookups and array gathers over ~40 MiB of objects and arrays."""
    rng = random.Random(0)
    table = {i: (i, str(i)) for i in range(300_000)}
    keys = rng.sample(range(300_000), 5_000)
    array = np.arange(4 << 20, dtype=np.int32)
    picks = np.random.default_rng(0).integers(0, array.size, 20_000)

    def run() -> object:
        return sum(table[key][0] for key in keys) + int(array[picks].sum())

    return run


def walk_workload() -> Callable[[], object]:
    """Ours: the cold-mask benchmark's money regex, compiled afresh and walked with a
    mask at each token (``cold_masks._steps``)."""
    from cold_masks import CASES, _steps
    from fsm_compile import ADAPTERS, _encode, _tokenizer

    kind, source, text = CASES["money regex"]
    tokenizer = _tokenizer()
    engine = ADAPTERS["seqstate"](tokenizer)
    tokens = _encode(tokenizer, text, kind)

    def run() -> object:
        return _steps("seqstate", engine, engine.compile(kind, source, "lazy"), tokens)

    run()
    return run


def timed_after_waits(run: Callable[[], object], reps: int) -> list[tuple[float, float]]:
    """Per wait: the median wall and CPU milliseconds of ``run`` after sleeping it."""
    figures = []
    for wait in WAITS:
        walls, cpus = [], []
        for _ in range(reps):
            time.sleep(wait)
            wall, cpu = time.perf_counter(), time.thread_time()
            run()
            cpus.append((time.thread_time() - cpu) * 1e3)
            walls.append((time.perf_counter() - wall) * 1e3)
        figures.append((median(walls), median(cpus)))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9, help="runs per wait")
    parser.add_argument("--write", action="store_true", help="write to docs/benchmarks.md")
    args = parser.parse_args()
    rows = []
    for name, make in (("memory", memory_workload), ("walk", walk_workload)):
        figures = timed_after_waits(make(), args.reps)
        back_to_back = figures[0][0]
        for wait, (wall, cpu) in zip(WAITS, figures, strict=True):
            rows.append(
                [name, fmt(wait * 1e3, 0), fmt(wall, 2), fmt(cpu, 2), fmt(wall / back_to_back, 1)]
            )
    headers = ["workload", "idle wait before (ms)", "wall (ms)", "CPU (ms)", "vs back to back"]
    body = (
        run_header(command_line())
        + f"\n\nMedian of {args.reps} runs per wait.\n\n"
        + markdown_table(headers, rows)
        + "\n"
    )
    print(body)
    if args.write:
        _write_section(SECTION, body)
        print(f"written to docs/benchmarks.md, section '{SECTION}'")


if __name__ == "__main__":
    main()
