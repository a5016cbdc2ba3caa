"""The first rows of an object with key names no schema had before (issue 15).

Over the MaskBench sample the slowest cold steps are rows that enter an object's keys
(``{"``, ``, "``) of a schema seen for the first time: every key name is walked down the
vocabulary's trie once per process, and with ``additionalProperties`` open, "any other
key" is the JSON string's walk cut along every key name. This benchmark isolates that
row. Each request is a fresh object schema of ``N`` keys made of two vocabulary words and
a number (``ratio_lock37``), none seen before in the process, open or closed to other
keys, and an instance holding its first three keys; ours and llguidance each compile it
fresh and walk the instance token by token, in the workers of ``cold_masks.py`` (each
engine in its own process, engines in turn, each block of ``--reps`` schemas after an
untimed warm-up walk).

    .venv/bin/python benchmarks/key_rows.py [--keys 5,10,30,70] [--reps 15] [--before TREE]
        [--write]

``--before TREE`` adds ours imported from another checkout (a ``git worktree`` with its
compiled modules built), asked in turn with the others: before / after in one run.

Printed per key count and openness: the medians of compile + cold walk, of the first key
row (the step right after ``{"``) and of the slowest step of each walk, per engine, and
ours / llguidance.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from _common import command_line, fmt, markdown_table, median, run_header
from _common import write_section as _write_section
from cold_masks import ColdWorker, _rotated, _warm_up_request
from fsm_compile import MODULES, _encode, _tokenizer, have

SECTION = "Cold masks: the first row of an object's new keys"
ENGINES = ("seqstate", "llguidance")
INSTANCE_KEYS = 3


def key_words(tokenizer: Any) -> list[str]:
    """Lowercase English-looking words of 3-8 letters: the vocabulary's tokens that are a
    space then such a word (``Ġabout``), without the space."""
    tokens = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    words = {t[1:] for t in tokens if t.startswith("\u0120") and t[1:].isascii()}
    return sorted(w for w in words if w.isalpha() and w.islower() and 3 <= len(w) <= 8)


def object_schema(rng: random.Random, words: list[str], keys: int, open_: bool) -> dict:
    """An object schema of ``keys`` new key names (``word_word<number>``), strings,
    integers and booleans, open or closed to other keys."""
    properties: dict[str, dict] = {}
    while len(properties) < keys:
        name = "_".join(rng.sample(words, 2)) + str(rng.randrange(100))
        properties[name] = {"type": rng.choice(["string", "integer", "boolean"])}
    return {"type": "object", "properties": properties, "additionalProperties": open_}


def instance(schema: dict) -> dict:
    """A valid value holding the schema's first ``INSTANCE_KEYS`` keys."""
    samples = {"string": "some text", "integer": 42, "boolean": True}
    named = list(schema["properties"].items())[:INSTANCE_KEYS]
    return {name: samples[rule["type"]] for name, rule in named}


def key_row_step(tokenizer: Any, tokens: list[int]) -> int | None:
    """The index of the step whose mask is the row right after ``{"`` (None when the
    instance's tokens do not end there)."""
    for count in range(1, len(tokens)):
        text = tokenizer.decode(tokens[:count])
        if text == '{"':
            return count
        if len(text) >= 2:
            return None
    return None


def run(workers: dict[str, ColdWorker], tokenizer: Any, keys: list[int], reps: int) -> dict:
    """``{(keys, open): {engine: {"total", "key_row", "slowest"}: lists}}``: each engine
    walks the same ``reps`` fresh schemas per configuration, in blocks after a warm-up."""
    words = key_words(tokenizer)
    rng = random.Random(0)
    warm_up = _warm_up_request(tokenizer)
    results: dict = {}
    for turn, (count, open_) in enumerate((k, o) for k in keys for o in (True, False)):
        requests = []
        while len(requests) < reps:
            schema = object_schema(rng, words, count, open_)
            tokens = _encode(tokenizer, instance(schema), "json")
            step = key_row_step(tokenizer, tokens)
            if step is not None:
                requests.append(({"kind": "json", "source": schema, "instances": [tokens]}, step))
        record = results[count, open_] = {
            name: {"total": [], "key_row": [], "slowest": []} for name in workers
        }
        for name, worker in _rotated(workers, turn):
            worker.ask(warm_up)
            for request, step in requests:
                answer = worker.ask(request)
                if "error" in answer:
                    continue
                walk = answer["walks"][0]
                record[name]["total"].append((walk["compile"] + sum(walk["cold"])) / 1e6)
                record[name]["key_row"].append(walk["cold"][step] / 1e3)
                record[name]["slowest"].append(max(walk["cold"]) / 1e3)
    return results


def _ratio(ours: dict | None, peer: dict | None, key: str) -> str:
    return fmt(ours[key] / peer[key], 2) if ours and peer else ""


def report(results: dict, workers: dict[str, ColdWorker], reps: int) -> str:
    headers = [
        "keys",
        "other keys",
        *(f"{name}: compile + walk (ms)" for name in workers),
        *(f"{name}: key row (µs)" for name in workers),
        "ours / llguidance: compile + walk",
        "ours / llguidance: key row",
        "slowest step, ours / llguidance (µs)",
    ]
    rows = []
    for (count, open_), record in results.items():
        medians = {
            name: {k: median(v) if v else float("nan") for k, v in r.items()}
            for name, r in record.items()
        }
        ours, peer = medians.get("seqstate"), medians.get("llguidance")
        rows.append(
            [
                count,
                "allowed" if open_ else "closed",
                *(fmt(medians[name]["total"], 2) for name in workers),
                *(fmt(medians[name]["key_row"], 0) for name in workers),
                _ratio(ours, peer, "total"),
                _ratio(ours, peer, "key_row"),
                " / ".join(fmt(medians[name]["slowest"], 0) for name in workers),
            ]
        )
    versions = ", ".join(worker.info["version"] for worker in workers.values())
    return "\n\n".join(
        [
            run_header(command_line()),
            f"Engines: {versions}. Medians of {reps} fresh schemas per row, each walked once.",
            markdown_table(headers, rows),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", default="5,10,30,70", help="key counts, comma-separated")
    parser.add_argument("--reps", type=int, default=15, help="fresh schemas per row")
    parser.add_argument("--before", help="also run ours from this other checkout")
    parser.add_argument("--write", action="store_true", help="write to docs/benchmarks.md")
    args = parser.parse_args()
    workers: dict[str, ColdWorker] = {}
    before = [f"seqstate@{args.before}"] if args.before else []
    for name in [ENGINES[0], *before, *ENGINES[1:]]:
        if name in MODULES and not have(MODULES[name]):
            print(f"note: {name} is not installed (pip install -e '.[peers]'); skipped")
            continue
        workers[name] = ColdWorker(name, 60)
        workers[name].start()
    tokenizer = _tokenizer()
    try:
        results = run(workers, tokenizer, [int(k) for k in args.keys.split(",")], args.reps)
    finally:
        for worker in workers.values():
            worker.stop()
    body = report(results, workers, args.reps)
    print(body)
    if args.write:
        _write_section(SECTION, body)


if __name__ == "__main__":
    main()
