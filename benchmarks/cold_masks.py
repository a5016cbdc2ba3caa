"""Masks for a fresh constraint: compile + cold walk, cold and warm step times (issue 15).

For each case a *fresh* compile, then a *cold walk*: at each token of a valid instance,
build the mask and advance (timed as one step); then a *warm walk* over the same tokens
(ours: the same index again; peers: after a reset). Engines: ours (``fsm.compile_index``,
lazy), llguidance, xgrammar and outlines-core, with the SmolLM2 tokenizer (49,152 ids).

Cases: a 6-property nested person schema, an order schema (uuid, array of objects, enum,
anyOf), an event schema (date-time, array of objects), a money regex, an ipv4 regex, and
a fixed random sample (seed 0) of MaskBench-dev schemas, every valid instance walked with
its own fresh compile. The tables give the compile alone beside the total (every
engine's compile builds its first mask, ``fsm_compile.py``'s adapters): how much of an
instance's time is the schema's, how much the tokens'.

Each engine runs in its own worker process (the adapters and workers of
``benchmarks/fsm_compile.py``), warmed up on an unrelated regex and schema. The main
process hands out the work in blocks, each engine in turn (the first engine changes from
block to block): a fixed case's ``--reps`` compiles, or ``--block`` sample schemas, back
to back after an untimed walk of the warm-up schema. The engines share the machine's
drift block by block, and no timed request follows an idle wait: on the shared machines
memory left untouched for 0.1 s is several times slower to touch again
(``benchmarks/idle_gap.py``), which interleaving request by request (``--interleave``)
put on every request, most on the engine with the most memory to touch. A runaway compile
is killed at ``--timeout``.

    .venv/bin/python benchmarks/cold_masks.py [--sample 200] [--keyword K] [--reps 3] [--timeout 30]
        [--engines seqstate,llguidance,xgrammar,outlines-core] [--before TREE]
        [--isolated] [--again] [--objects] [--no-gc] [--frozen] [--young-threshold N] [--block 10]
        [--interleave]
        [--json out.json] [--write]

``--keyword K`` draws the sample among the schemas that use the keyword ``K`` (e.g.
``multipleOf``), to time what one keyword costs.
``--before TREE`` adds a second copy of ours imported from another checkout (e.g. a
``git worktree`` of an older commit), interleaved with the rest: before/after in one run.
``--isolated`` adds ours with the vocabulary's shared lexeme walks
(``vocabulary.lexeme_walks``) dropped before every compile: each schema then pays for
its JSON strings and formats as if it were the first one the process saw.
``--again`` adds ours with each instance walked once, untimed, before its timed fresh
compile and walk: what the process keeps from a schema's first walk is then there (the
vocabulary's walks of its keys, enums and patterns, the memos of the shared terms it
reaches), so the difference from ours is what a first walk does once per schema, and
what remains is the compile, the terms and the rows built again for a new index.
``--objects`` adds ours over object terms: schemas compiled to ``fsm.terms`` objects and
walked by ``DerivativeAutomaton`` (``fsm.compiler.automaton_of``), the product's path
until the sixty-eighth session; ours compiles them into the rows of a store per
vocabulary (``fsm.schema_rows``). Regexes take their position automata either way.
``--no-gc`` adds ours with Python's cyclic garbage collector off in its worker (after
warm-up, ``gc.freeze()`` then ``gc.disable()``): a reference for what the collector's
passes over the terms a cold walk allocates cost (``docs/design.md``). ``--frozen`` adds
ours with ``gc.freeze()`` after warm-up and the collector on, as a service does once it
has started (vLLM freezes its start-up heap): full collections then scan only what was
allocated since, not the ~240,000 objects torch, transformers and numba leave behind.
``--young-threshold N`` adds ours with the collector's first threshold raised to ``N``
after warm-up (``gc.set_threshold``; 700 by default): a walk's objects are then freed
with its index before a young collection promotes them (``docs/scaling.md``).
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing as mp
import sys
import time
from collections import Counter
from itertools import accumulate
from multiprocessing.connection import Connection
from typing import Any

from _common import command_line, fmt, markdown_table, median, percentile, run_header
from _common import write_section as _write_section
from fsm_compile import (
    ADAPTERS,
    MODULES,
    WARMUP_REGEX,
    WARMUP_SCHEMA,
    Engine,
    Worker,
    _encode,
    _tokenizer,
    have,
    maskbench_sample,
)

SECTION = "Cold masks: a fresh constraint, token by token"
ENGINES = ("seqstate", "llguidance", "xgrammar", "outlines-core")

ADDRESS = {
    "type": "object",
    "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"},
        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
    },
    "required": ["street", "city", "zip"],
}
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "email": {"type": "string", "format": "email"},
        "active": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": ADDRESS,
    },
    "required": ["name", "age", "email", "active", "tags", "address"],
}
ORDER = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "status": {"enum": ["pending", "paid", "shipped", "cancelled"]},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string"},
                    "quantity": {"type": "integer", "minimum": 1},
                    "price": {"type": "number", "minimum": 0},
                },
                "required": ["sku", "quantity", "price"],
            },
            "minItems": 1,
        },
        "discount": {"anyOf": [{"type": "number"}, {"type": "null"}]},
    },
    "required": ["id", "status", "items", "discount"],
}
EVENT = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "start": {"type": "string", "format": "date-time"},
        "attendees": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "rsvp": {"type": "boolean"}},
                "required": ["name", "rsvp"],
            },
        },
    },
    "required": ["title", "start", "attendees"],
}
CASES: dict[str, tuple[str, Any, Any]] = {
    "person schema (6 properties, nested)": (
        "json",
        PERSON,
        {
            "name": "Ada Lovelace",
            "age": 36,
            "email": "ada@example.org",
            "active": True,
            "tags": ["math", "poetry"],
            "address": {"street": "12 St James's Square", "city": "London", "zip": "12345"},
        },
    ),
    "order schema (uuid, array of objects, enum, anyOf)": (
        "json",
        ORDER,
        {
            "id": "123e4567-e89b-12d3-a456-426614174000",
            "status": "shipped",
            "items": [
                {"sku": "A-100", "quantity": 2, "price": 9.99},
                {"sku": "B-7", "quantity": 1, "price": 120.5},
            ],
            "discount": None,
        },
    ),
    "event schema (date-time, array of objects)": (
        "json",
        EVENT,
        {
            "title": "Launch party",
            "start": "2024-05-17T18:30:00Z",
            "attendees": [{"name": "Grace", "rsvp": True}, {"name": "Alan", "rsvp": False}],
        },
    ),
    "money regex": ("regex", r"\$(0|[1-9][0-9]{0,2}(,[0-9]{3})*)\.[0-9]{2}", "$1,234,567.89"),
    "ipv4 regex": (
        "regex",
        r"((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}"
        r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])",
        "192.168.10.254",
    ),
}

# ------------------------------------------------------------ one step = mask + advance


ISOLATED = "#isolated"
AGAIN = "#again"
NO_GC = "#nogc"
FROZEN = "#frozen"
OBJECTS = "#objects"
YOUNG = "#young"
"""Ours with the collector's first threshold raised to the number after it
(``seqstate#young50000``): young collections every that many new objects."""


def _adapter(name: str) -> str:
    """``seqstate@TREE`` (ours from another checkout), ``seqstate#isolated``,
    ``seqstate#again``, ``seqstate#objects``, ``seqstate#nogc``, ``seqstate#frozen`` and
    ``seqstate#youngN`` use the ``seqstate`` adapter."""
    return name.partition("@")[0].partition("#")[0]


def _young_threshold(name: str) -> int | None:
    """N of a ``seqstate#youngN`` worker (None for any other)."""
    _, marked, number = name.partition(YOUNG)
    return int(number) if marked else None


def _steps(name: str, engine: Any, handle: Any, tokens: list[int]) -> tuple[list[int], bool]:
    """Time mask + advance at each token (ns per step); whether every token was accepted."""
    clock = time.perf_counter_ns
    times: list[int] = []
    if _adapter(name) == "seqstate":
        buffer, state = engine.buffer, handle.initial_state
        fill = _filler(handle)
        for token in tokens:
            start = clock()
            fill(state, buffer)
            state = handle.next_state(state, token)
            times.append(clock() - start)
            if state < 0:
                return times, False
        return times, True
    for token in tokens:
        start = clock()
        accepted = _peer_step(name, engine, handle, token)
        times.append(clock() - start)
        if not accepted:
            return times, False
    return times, True


def _object_index(schema: Any, vocabulary: Any) -> Any:
    """Ours over object terms: the schema's ``DerivativeAutomaton`` in a token index."""
    import fsm
    from fsm.compiler import automaton_of

    return fsm.TokenIndex(automaton_of(fsm.JsonSchema(schema)), vocabulary)


def _filler(handle: Any) -> Any:
    """Ours: ``fill_bitmask(state, buffer)``, or for a ``--before`` tree older than it,
    the view copied into the buffer (what it cost then)."""
    fill = getattr(handle, "fill_bitmask", None)
    if fill is not None:
        return fill
    import numpy as np

    return lambda state, buffer: np.copyto(buffer, handle.bitmask(state))


def _peer_step(name: str, engine: Any, handle: Any, token: int) -> bool:
    if name == "llguidance":
        engine.fill(handle, engine.buffer)
        return bool(handle.consume_token(token)) and not handle.is_error()
    if name == "xgrammar":
        handle.fill_next_token_bitmask(engine.buffer)
        return bool(handle.accept_token(token))
    engine.fill(handle, engine.buffer)  # outlines-core
    try:
        handle.advance(token, return_tokens=False)
    except Exception:  # noqa: BLE001 - outlines-core raises on a disallowed token
        return False
    return True


def _walk_fresh(
    name: str,
    engine: Engine,
    kind: str,
    source: Any,
    tokens: list[int],
    objects: bool = False,
) -> dict:
    """Fresh compile (first mask included), cold walk, then warm walk of one instance;
    over object terms when ``objects`` (``--objects``)."""
    if name.endswith(ISOLATED):
        engine.vocab.lexeme_walks.clear()
    ours = _adapter(name) == "seqstate"
    if name.endswith(AGAIN):  # untimed: the schema's lexemes walked once before
        _steps(name, engine, engine.compile(kind, source, "lazy"), tokens)
    start = time.perf_counter_ns()
    if objects and kind == "json":
        handle = _object_index(source, engine.vocab)
        handle.fill_bitmask(handle.initial_state, engine.buffer)  # the first mask, as compile's
    else:
        handle = engine.compile(kind, source, "lazy" if ours else "default")
    compiled = time.perf_counter_ns() - start
    cold, accepted = _steps(name, engine, handle, tokens)
    if not ours:
        engine.reset(handle)
    warm, _ = _steps(name, engine, handle, tokens)
    return {"compile": compiled, "cold": cold, "warm": warm, "accepted": accepted}


def _serve(name: str, conn: Connection) -> None:
    """Worker loop: set the engine up, warm it up, then walk fresh compiles on request."""
    tree = name.partition("@")[2]
    if tree:
        sys.path.insert(0, tree)  # before anything imports fsm
    tokenizer = _tokenizer()
    engine = ADAPTERS[_adapter(name)](tokenizer)
    objects = name.endswith(OBJECTS)
    for kind, (source, value) in (("regex", WARMUP_REGEX), ("json", WARMUP_SCHEMA)):
        _walk_fresh(name, engine, kind, source, _encode(tokenizer, value, kind), objects)
    if name.endswith((NO_GC, FROZEN)):
        gc.freeze()
    if name.endswith(NO_GC):
        gc.disable()
    young = _young_threshold(name)
    if young is not None:
        gc.set_threshold(young, *gc.get_threshold()[1:])
    conn.send({"version": engine.version})
    while True:
        request = conn.recv()
        if request is None:
            return
        try:
            answers = [
                _walk_fresh(name, engine, request["kind"], request["source"], tokens, objects)
                for tokens in request["instances"]
            ]
            conn.send({"walks": answers})
        except Exception as error:  # noqa: BLE001 - reported per case, the worker lives on
            conn.send({"error": f"{type(error).__name__}: {str(error)[:100]}"})


class ColdWorker(Worker):
    """``fsm_compile.Worker`` serving fresh-compile walks instead of compile requests."""

    def start(self) -> None:
        context = mp.get_context("spawn")
        parent, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(self.name, child), daemon=True)
        self.process.start()
        self.conn = parent
        if not parent.poll(300):
            raise RuntimeError(f"{self.name} worker did not start")
        info = parent.recv()  # read even on a restart: the pipe must hold answers only
        self.info = self.info or info


# ------------------------------------------------------------------------ the runs


def _record() -> dict:
    """One engine's results; ``labels`` names the case or schema of each of ``totals``
    (engines fail on different schemas, so pair them by label, not by position),
    ``steps`` how many of ``cold``'s steps each walk took, in the same order, and
    ``accepted`` whether the engine read the whole instance (a walk stops at the first
    token refused)."""
    return {
        "totals": [],
        "compiles": [],
        "labels": [],
        "steps": [],
        "accepted": [],
        "cold": [],
        "warm": [],
        "rejected": 0,
        "failed": 0,
        "errors": Counter(),
    }


def _add(record: dict, answer: dict, label: str) -> None:
    if "error" in answer:
        record["failed"] += 1
        record["errors"][answer["error"][:70]] += 1
        return
    for walk in answer["walks"]:
        record["totals"].append((walk["compile"] + sum(walk["cold"])) / 1e6)  # ms
        record["compiles"].append(walk["compile"] / 1e6)  # ms, first mask included
        record["labels"].append(label)
        record["steps"].append(len(walk["cold"]))
        record["accepted"].append(walk["accepted"])
        record["cold"] += walk["cold"]
        record["warm"] += walk["warm"]
        record["rejected"] += not walk["accepted"]


def run_cases(
    workers: dict[str, Worker], tokenizer: Any, reps: int, interleave: bool
) -> dict[str, dict]:
    """Each fixed case ``reps`` times per engine: by default the ``reps`` back to back
    after a warm-up (``_warm_up_request``), engines in turn per case; with ``interleave``, one
    request at a time, engines in turn."""
    results = {case: {name: _record() for name in workers} for case in CASES}
    requests = {
        case: {"kind": kind, "source": source, "instances": [_encode(tokenizer, value, kind)]}
        for case, (kind, source, value) in CASES.items()
    }
    if not interleave:
        warm_up = _warm_up_request(tokenizer)
        for turn, (case, request) in enumerate(requests.items()):
            for name, worker in _rotated(workers, turn):
                worker.ask(warm_up)
                for _ in range(reps):
                    _add(results[case][name], worker.ask(request), case)
        return results
    asked = 0
    for _ in range(reps):
        for case, request in requests.items():
            for name, worker in _rotated(workers, asked):
                _add(results[case][name], worker.ask(request), case)
            asked += 1
    return results


def _warm_up_request(tokenizer: Any) -> dict:
    """An untimed walk of the warm-up schema, asked before each block so that its timed
    requests find the engine's memory in use. On the shared machines, memory a process
    has not touched for a while is several times slower to touch again
    (``benchmarks/idle_gap.py``), and interleaved engines each wait for the others'
    requests."""
    source, value = WARMUP_SCHEMA
    return {"kind": "json", "source": source, "instances": [_encode(tokenizer, value, "json")]}


def _rotated(workers: dict[str, Worker], turn: int) -> list[tuple[str, Worker]]:
    """The workers, each first in turn, so that no engine is always asked first (the
    bias an A/A run once showed in a fixed order was likelier the start order's:
    ``started_in_order``)."""
    order = list(workers.items())
    shift = turn % len(order)
    return order[shift:] + order[:shift]


def run_sample(
    workers: dict[str, Worker], tokenizer: Any, entries: list[dict], block: int
) -> dict[str, dict]:
    """Every valid instance of the sampled MaskBench-dev ``entries``, fresh compile each:
    ``block`` schemas back to back per engine after a warm-up (``_warm_up_request``),
    engines in turn per block; ``block`` 1: one schema at a time, engines in turn, no
    warm-up."""
    results = {name: _record() for name in workers}
    requests = [
        {
            "name": entry["name"],
            "kind": "json",
            "source": entry["schema"],
            "instances": [
                _encode(tokenizer, test["data"], "json") for test in entry["tests"] if test["valid"]
            ],
        }
        for entry in entries
    ]
    warm_up = _warm_up_request(tokenizer) if block > 1 else None
    started = time.perf_counter()
    for turn, first in enumerate(range(0, len(requests), block)):
        for name, worker in _rotated(workers, turn):
            if warm_up is not None:
                worker.ask(warm_up)
            for request in requests[first : first + block]:
                _add(results[name], worker.ask(request), request["name"])
        done = min(first + block, len(requests))
        if done // 25 > first // 25:
            print(
                f"  sample {done}/{len(requests)} ({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    return results


# ------------------------------------------------------------------------- reports

HEADERS = [
    "engine",
    "compile + cold walk (ms)",
    "compile (ms)",
    "cold step p50 (µs)",
    "cold step p99 (µs)",
    "cold step max (µs)",
    "warm step p50 (µs)",
    "rejected / failed",
]


def _label(name: str) -> str:
    if name.endswith(ISOLATED):
        return "seqstate, no shared walks"
    if name.endswith(AGAIN):
        return "seqstate, schema walked before"
    if name.endswith(OBJECTS):
        return "seqstate over objects"
    if name.endswith(NO_GC):
        return "seqstate, collector off"
    if name.endswith(FROZEN):
        return "seqstate, start-up heap frozen"
    young = _young_threshold(name)
    if young is not None:
        return f"seqstate, young collections per {young:,} objects"
    return "seqstate before" if "@" in name else name


def _row(name: str, record: dict, totals: str, compiles: str) -> list[object]:
    return [
        _label(name),
        totals,
        compiles,
        fmt(percentile(record["cold"], 50) / 1e3, 1),
        fmt(percentile(record["cold"], 99) / 1e3, 1),
        fmt(max(record["cold"], default=0) / 1e3, 0),
        fmt(median(record["warm"]) / 1e3, 2),
        f"{record['rejected']} / {record['failed']}",
    ]


def cases_table(results: dict[str, dict]) -> str:
    blocks = []
    for case, records in results.items():
        rows = [
            _row(n, r, fmt(median(r["totals"]), 2), fmt(median(r["compiles"]), 2))
            for n, r in records.items()
        ]
        blocks.append(f"**{case}**\n\n" + markdown_table(HEADERS, rows))
    return "\n\n".join(blocks)


def _p50_p90(values: list[float]) -> str:
    return f"{fmt(percentile(values, 50), 2)} / {fmt(percentile(values, 90), 2)}"


def sample_table(results: dict[str, dict]) -> str:
    headers = [
        "engine",
        "compile + cold walk p50 / p90 (ms)",
        "compile p50 / p90 (ms)",
        *HEADERS[3:],
    ]
    rows = [_row(n, r, _p50_p90(r["totals"]), _p50_p90(r["compiles"])) for n, r in results.items()]
    return markdown_table(headers, rows)


def common_instances(sample: dict[str, dict]) -> dict[str, list[float]]:
    """Each engine's totals (ms) over the sample instances every engine walked to their
    end, in one order: an engine's own percentiles leave out the schemas it refused or
    failed, which differ by engine (the hard ones, often), so only these compare
    instance for instance. An instance is its schema's label and its rank among that
    schema's."""
    return {name: [total for total, _ in walks] for name, walks in _common_walks(sample).items()}


def common_steps(sample: dict[str, dict]) -> dict[str, list[int]]:
    """Each engine's cold steps (ns) over the same instances as ``common_instances``:
    the step percentiles of engines that walked the same texts."""
    return {
        name: [step for _, steps in walks for step in steps]
        for name, walks in _common_walks(sample).items()
    }


def common_ranks(sample: dict[str, dict]) -> list[int]:
    """Each paired instance's rank among its schema's walks (``common_instances``'
    order): 0 for a schema's first instance, whose walk meets rows no index met."""
    return [rank for _, rank in _paired(sample)[0]]


def _common_walks(sample: dict[str, dict]) -> dict[str, list[tuple[float, list[int]]]]:
    """Each engine's (total, cold steps) per instance every engine walked to its end,
    in one order (``_paired``)."""
    return _paired(sample)[1]


def _paired(
    sample: dict[str, dict],
) -> tuple[list[tuple[str, int]], dict[str, list[tuple[float, list[int]]]]]:
    """The instances every engine walked to its end, as (label, rank), in one order,
    and each engine's (total, cold steps) per instance in that order: a walk that an
    engine stopped at a token it refused read fewer tokens, so its time compares with
    no other's. A record without ``steps`` or ``accepted`` (written before they were
    kept) gives no steps, or counts every walk as whole."""
    keyed: dict[str, dict[tuple[str, int], tuple[float, list[int]]]] = {}
    for name, record in sample.items():
        seen: Counter[str] = Counter()
        walked = keyed[name] = {}
        counts = record.get("steps") or [0] * len(record["totals"])
        whole = record.get("accepted") or [True] * len(record["totals"])
        ends, cold = list(accumulate(counts)), record.get("cold", [])
        walks = zip(record["labels"], record["totals"], ends, counts, whole, strict=True)
        for label, total, end, count, accepted in walks:
            if accepted:
                walked[label, seen[label]] = (total, cold[end - count : end])
            seen[label] += 1
    shared = set.intersection(*(set(walked) for walked in keyed.values())) if keyed else set()
    order = sorted(shared)
    return order, {name: [walked[key] for key in order] for name, walked in keyed.items()}


def paired_line(sample: dict[str, dict]) -> str | None:
    """The sample over the instances every engine walked to their end: each engine's
    p50 / p90, and ours / llguidance instance by instance (median and p90 of the
    ratios), over them all and over schemas' first instances and later ones apart (a
    later instance's fresh compile reads the walks the vocabulary kept from the
    first)."""
    common = common_instances(sample)
    if "seqstate" not in common or not common["seqstate"]:
        return None
    parts = [f"{name} {_p50_p90(totals)} ms" for name, totals in common.items()]
    line = (
        f"Paired over the {len(common['seqstate'])} sample instances every engine walked "
        "to their end "
        f"(p50 / p90): " + ", ".join(parts)
    )
    steps = {name: cold for name, cold in common_steps(sample).items() if cold}
    if steps:
        line += "; their cold steps p50 / p99 / max (µs): " + ", ".join(
            f"{name} {fmt(percentile(cold, 50) / 1e3, 1)} / {fmt(percentile(cold, 99) / 1e3, 1)}"
            f" / {fmt(max(cold) / 1e3, 0)}"
            for name, cold in steps.items()
        )
    if "llguidance" in common:
        ranks = common_ranks(sample)
        for name, words in (("seqstate", "ours"), (f"seqstate{OBJECTS}", "ours over objects")):
            if name not in common:
                continue
            ranked = [
                (rank, a / b)
                for rank, a, b in zip(ranks, common[name], common["llguidance"])
                if b > 0
            ]
            quotients = [quotient for _, quotient in ranked]
            line += (
                f"; {words} / llguidance per instance: median {percentile(quotients, 50):.2f}, "
                f"p90 {percentile(quotients, 90):.2f}"
            )
            first = [quotient for rank, quotient in ranked if rank == 0]
            later = [quotient for rank, quotient in ranked if rank > 0]
            by_rank = [
                f"{which}, {len(part)}: median {percentile(part, 50):.2f}, "
                f"p90 {percentile(part, 90):.2f}"
                for which, part in (("a schema's first instances", first), ("later ones", later))
                if part
            ]
            if by_rank:
                line += " (" + "; ".join(by_rank) + ")"
    return line + "."


VARIANT_NOTES = (
    (NO_GC, "ours with the collector off"),
    (FROZEN, "ours with the start-up heap frozen"),
    (YOUNG, "ours with young collections less often"),
    (ISOLATED, "ours without shared walks"),
    (OBJECTS, "ours over objects"),
    (AGAIN, "ours with the schema walked before"),
)
"""Each variant of ours (its mark in the worker's name) and its words in ``ratios``."""


def ratios(cases: dict[str, dict], sample: dict[str, dict] | None) -> list[str]:
    """Ours against the best peer (compile + cold walk) and llguidance (cold p99), then
    each variant of ours run beside it."""
    lines = []
    rows = {case: records for case, records in cases.items()}
    if sample:
        rows["MaskBench sample (p50 of instances)"] = sample
    for case, records in rows.items():
        ours = records.get("seqstate")
        peers = {n: r for n, r in records.items() if _adapter(n) != "seqstate" and r["totals"]}
        if not ours or not ours["totals"] or not peers:
            continue
        best = min(peers, key=lambda n: median(peers[n]["totals"]))
        line = (
            f"{case}: ours {fmt(median(ours['totals']), 2)} ms vs {best} "
            f"{fmt(median(peers[best]['totals']), 2)} ms "
            f"({median(ours['totals']) / median(peers[best]['totals']):.1f}x)"
        )
        guidance = peers.get("llguidance")
        if guidance:
            line += f"; cold p99 / llguidance's: {_p99_ratio(ours, guidance):.1f}x"
        for mark, words in VARIANT_NOTES:
            variant = next((r for n, r in records.items() if mark in n and r["totals"]), None)
            if variant:
                line += f"; {words} {fmt(median(variant['totals']), 2)} ms"
                if mark == OBJECTS and guidance:
                    line += f" (cold p99 / llguidance's: {_p99_ratio(variant, guidance):.1f}x)"
        before = next((r for n, r in records.items() if "@" in n and r["totals"]), None)
        if before:
            line += f"; before / after: {median(before['totals']) / median(ours['totals']):.1f}x"
        lines.append(line)
    return lines


def _p99_ratio(record: dict, other: dict) -> float:
    """``record``'s cold step p99 over ``other``'s."""
    return percentile(record["cold"], 99) / percentile(other["cold"], 99)


def report(
    args: argparse.Namespace, workers: dict, cases: dict, sample: dict | None, sampled: int
) -> str:
    versions = ", ".join(
        f"{w.info.get('version', name)}"
        + (f" (before: {name.partition('@')[2]})" if "@" in name else "")
        for name, w in workers.items()
    )
    parts = [
        run_header(command_line()),
        f"Engines: {versions}. Compile = spec to the first mask in hand; cold walk = at each "
        "token of a valid instance build the mask (ours: `fill_bitmask` into a buffer, as the peers "
        "write theirs) and advance, timed per step; warm = the same walk again. Median of "
        f"{args.reps} fresh compiles per case; "
        + (
            "engines interleaved request by request."
            if args.interleave
            else f"engines in turn by blocks (a case's compiles, {args.block} sample schemas), "
            "each block after an untimed warm-up walk."
        ),
        cases_table(cases),
    ]
    if sample:
        parts.append(
            f"**MaskBench-dev sample ({sampled} schemas{_keyword_note(args)}, seed 0; "
            "every valid instance "
            f"with its own fresh compile; timeout {args.timeout:g} s)**\n\n" + sample_table(sample)
        )
    parts.append("Ratios: " + "; ".join(ratios(cases, sample)) + ".")
    paired = paired_line(sample) if sample else None
    if paired:
        parts.append(paired)
    return "\n\n".join(parts) + "\n"


def _keyword_note(args: argparse.Namespace) -> str:
    return f" using `{args.keyword}`" if args.keyword else ""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=200, help="MaskBench-dev schemas (0: none)")
    parser.add_argument(
        "--keyword", help="sample only schemas using this keyword (e.g. multipleOf)"
    )
    parser.add_argument("--reps", type=int, default=3, help="fresh compiles per fixed case")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--before", help="also run ours from this other checkout")
    parser.add_argument(
        "--isolated", action="store_true", help="also run ours without shared lexeme walks"
    )
    parser.add_argument(
        "--again", action="store_true", help="also run ours with each instance walked before"
    )
    parser.add_argument(
        "--objects", action="store_true", help="also run ours over object terms (the old path)"
    )
    parser.add_argument(
        "--no-gc", action="store_true", help="also run ours with the cyclic collector off"
    )
    parser.add_argument(
        "--frozen", action="store_true", help="also run ours with gc.freeze() after warm-up"
    )
    parser.add_argument(
        "--young-threshold",
        type=int,
        help="also run ours with gc.set_threshold(N, ...): young collections every N objects",
    )
    parser.add_argument(
        "--block", type=int, default=10, help="sample schemas back to back per engine"
    )
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="one request at a time, engines in turn (idle gaps between an engine's requests)",
    )
    parser.add_argument("--json", help="also dump the raw results to this file")
    parser.add_argument("--write", action="store_true", help="write to docs/benchmarks.md")
    return parser.parse_args()


def started_in_order(args: argparse.Namespace) -> list[str]:
    """The workers to start, ours first: in A/A runs (one tree as two engines) the worker
    started first ran 5-10% slower (paired median 0.89-0.93 against the other, 1.02-1.04
    with the two swapped), so ours takes that place, against itself and the peers alike."""
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    variants = [
        f"seqstate{FROZEN}" if args.frozen else "",
        f"seqstate{NO_GC}" if args.no_gc else "",
        f"seqstate{YOUNG}{args.young_threshold}" if args.young_threshold else "",
        f"seqstate{ISOLATED}" if args.isolated else "",
        f"seqstate{AGAIN}" if args.again else "",
        f"seqstate{OBJECTS}" if args.objects else "",
        f"seqstate@{args.before}" if args.before else "",
    ]
    ours = [name for name in names if name == "seqstate"]
    peers = [name for name in names if name != "seqstate"]
    return ours + [name for name in variants if name] + peers


def main() -> None:
    args = parse_args()
    workers: dict[str, Worker] = {}
    for name in started_in_order(args):
        if name in MODULES and not have(MODULES[name]):
            print(f"note: {name} is not installed (pip install -e '.[peers]'); skipped")
            continue
        workers[name] = ColdWorker(name, args.timeout)
        workers[name].start()
        print(f"{name}: ready ({workers[name].info['version']})", flush=True)
    tokenizer = _tokenizer()
    try:
        cases = run_cases(workers, tokenizer, args.reps, args.interleave)
        entries = maskbench_sample(args.sample, args.keyword) if args.sample else []
        block = 1 if args.interleave else args.block
        sample = run_sample(workers, tokenizer, entries, block) if entries else None
    finally:
        for worker in workers.values():
            worker.stop()
    body = report(args, workers, cases, sample, len(entries))  # fewer with a rare --keyword
    print(body)
    if args.json:
        dump = {"cases": cases, "sample": sample}
        with open(args.json, "w") as handle:
            json.dump(dump, handle, default=lambda o: dict(o) if isinstance(o, Counter) else str(o))
    if args.write:
        _write_section(SECTION, body)
        print(f"written to docs/benchmarks.md, section '{SECTION}'")


if __name__ == "__main__":
    main()
