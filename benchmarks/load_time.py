"""Cached load of the default model: ``ss.load_model()`` vs transformers, side by side.

Each round starts two fresh Python processes, in alternating order: one runs
``import seqstate as ss; ss.load_model(device="cpu")``, the other loads the same cached
directory with ``AutoModelForCausalLM.from_pretrained`` + ``AutoTokenizer.from_pretrained``.
Each child times itself from before its first import to the loaded model (imports
included, interpreter start excluded), in wall seconds and in CPU seconds (less
sensitive to other work on a shared machine); the wall time of the whole process is
reported too. Medians over the rounds, the ratio of the medians, and the median of the
per-round ratios (the target is at most 1.1).

Both contenders run once untimed first, and the children may write bytecode caches
(``PYTHONDONTWRITEBYTECODE`` is removed from their environment): an installed package
has its ``.pyc`` files, as transformers' in site-packages do, whereas without them every
fresh process compiles seqstate's ~90 modules again (about 0.2 s of CPU).
``--no-bytecode-cache`` keeps the variable, to measure that case.

``--first`` also times a first load into an empty temporary cache (the GGUF conversion).

    .venv/bin/python benchmarks/load_time.py [--runs 7] [--first] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import command_line, fmt, markdown_table, median, run_header, write_section

SECTION = "Model loading"
REPO = Path(__file__).resolve().parent.parent

CHILD_PRELUDE = "import time\nstarted, cpu = time.perf_counter(), time.process_time()\n"
CHILD_REPORT = "\nprint(time.perf_counter() - started, time.process_time() - cpu)\n"
SEQSTATE_LOAD = "import seqstate as ss\nss.load_model(device='cpu')"
TRANSFORMERS_LOAD = (
    "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
    "AutoModelForCausalLM.from_pretrained({folder!r})\n"
    "AutoTokenizer.from_pretrained({folder!r})"
)


Timing = tuple[float, float, float]  # (load wall s, load CPU s, process wall s)


def child_env(bytecode_cache: bool) -> dict[str, str]:
    """The environment of the timed processes (see the module doc)."""
    env = dict(os.environ)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_child(code: str, env: dict[str, str] | None = None) -> Timing:
    """The seconds the child measured (wall, CPU) and the wall seconds of its process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD_PRELUDE + code + CHILD_REPORT],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"child failed:\n{done.stderr[-3000:]}")
    load, cpu = (float(x) for x in done.stdout.strip().splitlines()[-1].split())
    return load, cpu, wall


def cached_folder() -> str:
    """The converted default model's directory, converting it first if needed."""
    from backends.loading import default_model_dir

    folder = default_model_dir()
    if not (folder / "seqstate-complete.json").exists():
        print("converting the default model once (the cache is empty)...", flush=True)
        run_child(SEQSTATE_LOAD)
    return str(folder)


def second_load(env: dict[str, str]) -> float:
    """Seconds of a second ``load_model()`` in one process (imports already done)."""
    code = (
        SEQSTATE_LOAD
        + "\nstarted, cpu = time.perf_counter(), time.process_time()\n"
        + SEQSTATE_LOAD
    )
    return run_child(code, env)[0]


def first_load() -> float:
    """Seconds of a first ``load_model()`` into an empty temporary cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "SEQSTATE_CACHE": cache}
        return run_child(SEQSTATE_LOAD, env)[0]


def report(times: dict[str, list[Timing]], runs: int, bytecode: str) -> str:
    """The markdown section: medians per contender and the ratios."""
    ours, theirs = list(times)
    rows = []
    for name, timings in times.items():
        columns = zip(*timings, strict=True)
        rows.append([name, *(fmt(median(list(column)), 2) for column in columns)])
    headers = ["cached load, fresh process", "load (s)", "load CPU (s)", "process (s)"]
    load = {name: median([t[0] for t in timings]) for name, timings in times.items()}
    cpu = {name: median([t[1] for t in timings]) for name, timings in times.items()}
    paired = median([a[0] / b[0] for a, b in zip(times[ours], times[theirs], strict=True)])
    return "\n".join(
        [
            run_header(command_line()),
            "",
            f"Medians of {runs} rounds after one untimed run each, each round one fresh "
            'process per contender in alternating order; "load" runs from before the first '
            'import to the loaded model, "process" is the whole process (interpreter start '
            f"included); bytecode caches {bytecode}.",
            "",
            markdown_table(headers, rows),
            "",
            f"**Ratio seqstate / transformers: {load[ours] / load[theirs]:.2f}** (load "
            f"medians; target <= 1.10); median of the per-round ratios {paired:.2f}; "
            f"CPU medians {cpu[ours] / cpu[theirs]:.2f}.",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds (one process each)")
    parser.add_argument("--first", action="store_true", help="also time a first load")
    parser.add_argument(
        "--no-bytecode-cache", action="store_true", help="keep PYTHONDONTWRITEBYTECODE"
    )
    parser.add_argument("--no-write", action="store_true", help="print, leave docs alone")
    args = parser.parse_args()

    contenders = {
        "seqstate `ss.load_model()`": SEQSTATE_LOAD,
        "transformers `from_pretrained` (model + tokenizer)": TRANSFORMERS_LOAD.format(
            folder=cached_folder()
        ),
    }
    env = child_env(not args.no_bytecode_cache)
    for code in contenders.values():  # untimed: bytecode and page caches as in later runs
        run_child(code, env)
    times: dict[str, list[Timing]] = {name: [] for name in contenders}
    for round_ in range(args.runs):
        order = list(contenders) if round_ % 2 == 0 else list(contenders)[::-1]
        for name in order:
            times[name].append(run_child(contenders[name], env))
        shown = ", ".join(f"{name.split()[0]} {times[name][-1][0]:.2f}s" for name in times)
        print(f"round {round_ + 1}/{args.runs}: {shown}", flush=True)

    bytecode = "off (PYTHONDONTWRITEBYTECODE=1)" if args.no_bytecode_cache else "on"
    body = report(times, args.runs, bytecode)
    body += (
        f"\n\nA second `ss.load_model()` in the same process (torch and transformers "
        f"already imported): {second_load(env):.2f} s."
    )
    if args.first:
        body += f"\n\nFirst load into an empty cache (GGUF conversion): {first_load():.1f} s."
    print(body)
    if not args.no_write:
        write_section(SECTION + (" (no bytecode caches)" if args.no_bytecode_cache else ""), body)


if __name__ == "__main__":
    main()
