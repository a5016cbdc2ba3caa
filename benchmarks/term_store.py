"""Terms as integers against terms as objects (issue 15): the first step of the store.

``fsm.term_store`` holds the regular core of the terms as integers, with every memo in
integer-keyed tables. This script asks what that buys before the rest of the path is
built: each term below is explored from its root (every state reachable by one byte per
class of its partition, breadth first, up to ``--max-states``) once with the object
terms (``fsm.terms``) and once in a fresh store, in turn, and the two are compared:

* time to explore (the store's loading from the object term timed apart);
* the states found (equal when both normal forms meet the same languages alike);
* the objects the cyclic collector tracks among what each keeps once explored (after
  a collection, which stops tracking tuples of untracked values): the object term with
  its memos, and the store's own tables (the object terms it converted, and keeps
  while the compiler builds objects, counted but not entered).

Before each object-term exploration the memos of every term reachable from the root are
forgotten (``forget_memos``), so shared sub-terms (a JSON string's characters) are as
cold as the store's. The terms: the two regexes of ``cold_masks.py``, a JSON string, a
string with a pattern, an object's "any other key" over ten names, and, from the
MaskBench sample of ``cold_masks.py`` (seed 0), every ``pattern`` (as the JSON string it
allows) and every object's "any other key" over its property names.

Then the sample's schemas: each valid instance's text (``json.dumps``) read byte by
byte through a fresh compile's term, both ways: cold (a fresh store per schema, the
object terms' memos forgotten; also the store's read with every body converted before
the clock) and as a service meets them (one store for the process, memos kept; run
first, so every schema is new to both). A third way, since the compiler builds rows
itself (``fsm.term_builder``, sixty-sixth session): each schema compiled and read with
the compile inside the clock, as object terms and as rows built into a store (a fresh
one per schema when cold, one for the process as a service). Last, each way in a
fresh process of its own (``--child``), the schemas compiled and read in turn with the
collector on: the compiles' time, the reads' time and the collector's inside them.

    .venv/bin/python benchmarks/term_store.py [--sample 200] [--reps 5]
        [--max-states 2000] [--no-gc] [--json F]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from _common import command_line, fmt, json_child, markdown_table, median, percentile, run_header
from fsm_compile import maskbench_sample
from term_cycles import sub_terms as held_by
from walk_parts import CollectorClock

import fsm
from fsm import terms
from fsm.errors import FsmError
from fsm.json_schema.json_text import ANY_STRING, string_except, string_of
from fsm.json_schema.strings import StringTerms, pattern_content, strings_in
from fsm.regex import regex_in, regex_term
from fsm.store_automaton import StoreAutomaton
from fsm.term_builder import StoredTerms
from fsm.term_store import EMPTY, TermStore
from fsm.token_index import TokenIndex

TermMaker = Callable[[], terms.Term]
HERE = Path(__file__).resolve().parent

FIXED: dict[str, TermMaker] = {
    "money regex": lambda: regex_term(r"\$(0|[1-9][0-9]{0,2}(,[0-9]{3})*)\.[0-9]{2}"),
    "ipv4 regex": lambda: regex_term(
        r"((25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
    ),
    "JSON string": lambda: ANY_STRING,
    "string, pattern": lambda: string_of(pattern_content(r"^[A-Z]{2}-[0-9]{4,6}$")),
    "any other key, 10 names": lambda: string_except(
        ["id", "name", "email", "age", "address", "phone", "tags", "created", "updated", "kind"]
    ),
}


def explore(
    derivative: Callable[[Any, int], Any],
    class_bytes: Callable[[Any], list[int]],
    root: Hashable,
    dead: Hashable,
    max_states: int,
) -> int:
    """The states reachable from ``root`` by one byte per class, breadth first, the dead
    state left out, at most ``max_states``: how many were found."""
    seen = {root}
    todo = deque([root])
    while todo and len(seen) < max_states:
        state = todo.popleft()
        for byte in class_bytes(state):
            found = derivative(state, byte)
            if found != dead and found not in seen:
                seen.add(found)
                todo.append(found)
                if len(seen) >= max_states:
                    break
    return len(seen)


def sub_terms(root: terms.Term) -> Iterator[terms.Term]:
    """Every term reachable from ``root`` through the terms each holds
    (``term_cycles.sub_terms``: items, rests, promised bounds) and built thunk bodies,
    once."""
    seen = {id(root)}
    todo = [root]
    while todo:
        term = todo.pop()
        yield term
        inner = held_by(term)
        if isinstance(term, terms.Thunk) and term._body is not None:
            inner.append(term._body)
        for item in inner:
            if id(item) not in seen:
                seen.add(id(item))
                todo.append(item)


def forget_memos(root: terms.Term) -> None:
    """Drop the derivative, partition and nullability memos of every term below
    ``root``: the object side of a comparison starts as cold as a fresh store."""
    for term in sub_terms(root):
        term._derivatives = None
        term._partition = None
        term._representatives = None
        term._nullable = None


def tracked_below(root: object, through_terms: bool = True) -> int:
    """How many objects the cyclic collector tracks among those reachable from ``root``
    (classes and modules left out: everything shares them); without
    ``through_terms``, object terms are counted but not entered (a store's own
    tables, without the object terms it converted and keeps until the compiler
    builds rows itself)."""
    seen = {id(root)}
    todo = [root]
    count = 0
    while todo:
        value = todo.pop()
        if gc.is_tracked(value):
            count += 1
        if not through_terms and isinstance(value, terms.Term):
            continue
        for inner in gc.get_referents(value):
            if isinstance(inner, (type, ModuleType)) or id(inner) in seen:
                continue
            seen.add(id(inner))
            todo.append(inner)
    return count


def kept(held: terms.Term | TermStore) -> int:
    """``tracked_below`` an object term, or a store's own tables, after a collection
    (which stops tracking tuples of untracked values)."""
    gc.collect()
    return tracked_below(held, through_terms=not isinstance(held, TermStore))


def medians(objects_ms: list[float], store_ms: list[float], load_ms: list[float]) -> dict:
    """The medians of each way's times and of the store's loads (ms)."""
    return {
        "objects_ms": median(objects_ms),
        "store_ms": median(store_ms),
        "load_ms": median(load_ms),
    }


def sample_terms(sample: int) -> dict[str, TermMaker]:
    """The sample's patterns (as JSON strings) and its objects' "any other key" over
    their property names, each once."""
    patterns: set[str] = set()
    key_sets: set[tuple[str, ...]] = set()
    for entry in maskbench_sample(sample):
        collect_patterns_and_keys(entry["schema"], patterns, key_sets)
    found: dict[str, TermMaker] = {}
    for pattern in sorted(patterns):
        found[f"pattern {pattern!r}"] = lambda pattern=pattern: string_of(pattern_content(pattern))
    for names in sorted(key_sets):
        found[f"other key than {len(names)} names"] = lambda names=names: string_except(names)
    return found


def collect_patterns_and_keys(
    node: Any, patterns: set[str], key_sets: set[tuple[str, ...]]
) -> None:
    """Every ``pattern`` below ``node`` into ``patterns``, every object's property names
    (sorted) into ``key_sets``."""
    if isinstance(node, dict):
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            patterns.add(pattern)
        properties = node.get("properties")
        if isinstance(properties, dict) and properties:
            key_sets.add(tuple(sorted(properties)))
        for value in node.values():
            collect_patterns_and_keys(value, patterns, key_sets)
    elif isinstance(node, list):
        for value in node:
            collect_patterns_and_keys(value, patterns, key_sets)


def measure(make: TermMaker, reps: int, max_states: int) -> dict[str, Any]:
    """One term, ``reps`` times each way in turn (which goes first alternates): the
    medians of each way's times (ms), the states each found, what each keeps tracked."""
    objects_ms, store_ms, load_ms = [], [], []
    for rep in range(reps):
        for way in ("objects", "store") if rep % 2 == 0 else ("store", "objects"):
            term = make()
            if way == "objects":
                forget_memos(term)
                start = time.perf_counter()
                object_states = explore(
                    terms.derivative, terms.class_bytes, term, terms.EMPTY, max_states
                )
                objects_ms.append((time.perf_counter() - start) * 1e3)
                object_tracked = kept(term)
            else:
                store = TermStore()
                start = time.perf_counter()
                root = store.load(term)
                loaded = time.perf_counter()
                store_states = explore(store.derivative, store.class_bytes, root, EMPTY, max_states)
                store_ms.append((time.perf_counter() - loaded) * 1e3)
                load_ms.append((loaded - start) * 1e3)
                store_tracked = kept(store)
    return {
        **medians(objects_ms, store_ms, load_ms),
        "object_states": object_states,
        "store_states": store_states,
        "object_tracked": object_tracked,
        "store_tracked": store_tracked,
    }


def run(makers: dict[str, TermMaker], reps: int, max_states: int) -> dict[str, dict]:
    """``measure`` for each term the store can hold; the others are counted apart."""
    results: dict[str, dict] = {}
    for name, make in makers.items():
        try:
            TermStore().load(make())
        except FsmError as error:  # an unsupported pattern, or a term the store lacks
            results[name] = {"refused": type(error).__name__}
            continue
        results[name] = measure(make, reps, max_states)
    return results


def _row(name: str, result: dict) -> list[object]:
    return [
        name,
        f"{result['object_states']} / {result['store_states']}",
        fmt(result["objects_ms"], 2),
        fmt(result["store_ms"], 2),
        fmt(result["store_ms"] / result["objects_ms"], 2),
        fmt(result["load_ms"], 2),
        f"{result['object_tracked']} / {result['store_tracked']}",
    ]


HEADERS = [
    "term",
    "states: objects / store",
    "objects (ms)",
    "store (ms)",
    "store / objects",
    "store's load (ms)",
    "tracked: objects / store",
]


def summary(results: dict[str, dict]) -> list[str]:
    """Lines over the sample's terms: how many were measured and refused, the per-term
    ratio's median and p90, the sums, and how many found different state counts."""
    measured = [r for r in results.values() if "refused" not in r]
    refusals = Counter(r["refused"] for r in results.values() if "refused" in r)
    refused = ", ".join(f"{count} by {name}" for name, count in sorted(refusals.items()))
    if not measured:
        return [f"- none measured; refused: {refused or 'none'}"]
    ratios = [r["store_ms"] / r["objects_ms"] for r in measured]
    differ = sum(r["object_states"] != r["store_states"] for r in measured)
    objects_sum = sum(r["objects_ms"] for r in measured)
    store_sum = sum(r["store_ms"] for r in measured)
    load_sum = sum(r["load_ms"] for r in measured)
    tracked = [sum(r[key] for r in measured) for key in ("object_tracked", "store_tracked")]
    return [
        f"- {len(measured)} terms measured; refused: {refused or 'none'}",
        f"- store / objects per term: median {fmt(median(ratios), 2)}, "
        f"p90 {fmt(percentile(ratios, 90), 2)}; sums {fmt(objects_sum, 1)} ms against "
        f"{fmt(store_sum, 1)} ms ({fmt(store_sum / objects_sum, 2)}), the store's loads "
        f"{fmt(load_sum, 1)} ms more",
        f"- terms whose state counts differ: {differ}",
        f"- tracked objects kept, summed: objects {tracked[0]:,}, store {tracked[1]:,}",
    ]


def walk_texts(
    derivative: Callable[[Any, int], Any],
    nullable: Callable[[Any], bool],
    root: Any,
    dead: Any,
    texts: list[bytes],
) -> list[bool]:
    """Each text read byte by byte from ``root``: whether it is accepted."""
    verdicts = []
    for text in texts:
        state = root
        for byte in text:
            state = derivative(state, byte)
            if state == dead:
                break
        verdicts.append(state != dead and nullable(state))
    return verdicts


def sample_schemas(sample: int) -> list[tuple[str, dict, list[bytes]]]:
    """The sample's schemas with the texts of their valid instances, spelled as the
    compiler spells JSON (``json.dumps``, non-ASCII characters raw)."""
    return [
        (
            entry["name"],
            entry["schema"],
            [
                json.dumps(t["data"], ensure_ascii=False).encode()
                for t in entry["tests"]
                if t["valid"]
            ],
        )
        for entry in maskbench_sample(sample)
    ]


def read_in_store(
    store: TermStore, term: terms.Term, texts: list[bytes]
) -> tuple[list[bool], float, float]:
    """``texts`` read through ``term`` loaded into ``store``: the verdicts, the time to
    convert the term's root (ms; its thunks' bodies are converted as the reads need
    them, inside the second time) and the time to read (ms)."""
    start = time.perf_counter()
    root = store.load(term)
    loaded = time.perf_counter()
    verdicts = walk_texts(store.derivative, store.nullable, root, EMPTY, texts)
    return verdicts, (loaded - start) * 1e3, (time.perf_counter() - loaded) * 1e3


def read_converted(term: terms.Term, texts: list[bytes]) -> tuple[list[bool], float]:
    """``texts`` read in a fresh store after ``term`` and every thunk body the object
    terms built for it were converted, before the clock: the verdicts and the time
    (ms), the store's reads without the conversion that the compiler building rows
    would remove."""
    store = TermStore()
    for inner in sub_terms(term):
        if isinstance(inner, terms.Thunk) and inner._body is not None:
            store.load(inner._body)
    root = store.load(term)
    start = time.perf_counter()
    verdicts = walk_texts(store.derivative, store.nullable, root, EMPTY, texts)
    return verdicts, (time.perf_counter() - start) * 1e3


def compile_into(strings: StringTerms[int], schema: dict) -> int:
    """The schema's root built as rows by the compiler (``fsm.term_builder``), with the
    options ``fsm.JsonSchema`` compiles it with."""
    return fsm.JsonSchema(schema).term_in(strings)


class RowCompiler:
    """One store for the process, and its JSON pieces: specs compiled into it and
    walked by a token index over ``StoreAutomaton`` (``store_walk.py``,
    ``cold_masks.py --rows``), as a service would keep one store."""

    def __init__(self) -> None:
        self.store = TermStore()
        self.strings: StringTerms[int] = strings_in(StoredTerms(self.store))

    def index(
        self, kind: str, source: Any, vocabulary: fsm.Vocabulary, decompose: bool = True
    ) -> TokenIndex:
        if kind == "regex":
            row = regex_in(self.strings.terms, source)
        else:
            row = compile_into(self.strings, source)
        return TokenIndex(StoreAutomaton(self.store, row, decompose=decompose), vocabulary)


def compile_and_read(schema: dict, texts: list[bytes]) -> dict[str, Any]:
    """A schema compiled and its texts read, the compile inside the clock, both ways:
    the object terms (the memos of the shared pieces forgotten first), and rows the
    compiler builds into a fresh store (its JSON pieces built there too, inside the
    clock: a fresh store per schema is the coldest a store can be)."""
    forget_memos(fsm.JsonSchema(schema).term())
    start = time.perf_counter()
    term = fsm.JsonSchema(schema).term()
    verdicts = walk_texts(terms.derivative, terms.nullable, term, terms.EMPTY, texts)
    objects_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    store = TermStore()
    root = compile_into(strings_in(StoredTerms(store)), schema)
    built = walk_texts(store.derivative, store.nullable, root, EMPTY, texts)
    built_ms = (time.perf_counter() - start) * 1e3
    return {"objects": objects_ms, "built": built_ms, "agree": verdicts == built}


def measure_schema(schema: dict, texts: list[bytes], reps: int) -> dict[str, Any]:
    """A schema's valid texts read byte by byte through a fresh compile's term, ``reps``
    times each way in turn: the medians of each way's times (ms, the store's with its
    lazy load) and of the store's read with everything converted before
    (``read_converted``), whether the two read every text alike, what each keeps
    tracked; then ``compile_and_read``'s medians."""
    objects_ms, store_ms, load_ms, converted_ms = [], [], [], []
    verdicts: dict[str, list[bool]] = {}
    compiled = [compile_and_read(schema, texts) for _ in range(reps)]
    for rep in range(reps):
        for way in ("objects", "store") if rep % 2 == 0 else ("store", "objects"):
            term = fsm.JsonSchema(schema).term()
            forget_memos(term)  # the shared terms it holds (strings, numbers) made cold
            if way == "objects":
                start = time.perf_counter()
                verdicts[way] = walk_texts(
                    terms.derivative, terms.nullable, term, terms.EMPTY, texts
                )
                objects_ms.append((time.perf_counter() - start) * 1e3)
                object_tracked = kept(term)
                verdicts["converted"], elapsed = read_converted(term, texts)
                converted_ms.append(elapsed)
            else:
                store = TermStore()
                verdicts[way], root_ms, read_ms = read_in_store(store, term, texts)
                store_ms.append(root_ms + read_ms)
                load_ms.append(root_ms)
                del term
                store_tracked = kept(store)
    return {
        **medians(objects_ms, store_ms, load_ms),
        "converted_ms": median(converted_ms),
        "compile_objects_ms": median([c["objects"] for c in compiled]),
        "compile_built_ms": median([c["built"] for c in compiled]),
        "agree": verdicts["objects"] == verdicts["store"] == verdicts["converted"]
        and all(c["agree"] for c in compiled),
        "accepted": sum(verdicts["store"]),
        "texts": len(texts),
        "object_tracked": object_tracked,
        "store_tracked": store_tracked,
    }


def measure_schema_shared(
    schema: dict, texts: list[bytes], stores: SharedStores, objects_first: bool
) -> dict[str, Any]:
    """A schema's valid texts read once each way, as a service meets a new schema: the
    object terms with whatever memos earlier schemas left on the terms they share, the
    store one for the whole process (equal terms of earlier schemas are its rows); and
    compiled then read, the object terms against rows the compiler builds into a store
    of its own, also one for the process."""
    times: dict[str, float] = {}
    verdicts: dict[str, list[bool]] = {}
    ways = ("objects", "store", "built") if objects_first else ("built", "store", "objects")
    for way in ways:
        if way == "built":
            start = time.perf_counter()
            root = compile_into(stores.strings, schema)
            built = stores.built
            verdicts[way] = walk_texts(built.derivative, built.nullable, root, EMPTY, texts)
            times[way] = (time.perf_counter() - start) * 1e3
            continue
        start = time.perf_counter()
        term = fsm.JsonSchema(schema).term()
        times["compile"] = (time.perf_counter() - start) * 1e3
        if way == "objects":
            start = time.perf_counter()
            verdicts[way] = walk_texts(terms.derivative, terms.nullable, term, terms.EMPTY, texts)
            times[way] = (time.perf_counter() - start) * 1e3
            times["compile_objects"] = times["compile"] + times[way]
        else:
            verdicts[way], times["load"], read_ms = read_in_store(stores.loaded, term, texts)
            times[way] = times["load"] + read_ms
    return {
        "objects_ms": times["objects"],
        "store_ms": times["store"],
        "load_ms": times["load"],
        "compile_objects_ms": times["compile_objects"],
        "compile_built_ms": times["built"],
        "agree": verdicts["objects"] == verdicts["store"] == verdicts["built"],
        "accepted": sum(verdicts["store"]),
        "texts": len(texts),
    }


class SharedStores:
    """A process's stores: one the object terms are loaded into, one the compiler
    builds rows into (with its JSON pieces, built once)."""

    def __init__(self) -> None:
        self.loaded = TermStore()
        self.built = TermStore()
        self.strings = strings_in(StoredTerms(self.built))


def run_schemas(
    schemas: list[tuple[str, dict, list[bytes]]], reps: int, shared: bool = False
) -> dict[str, dict]:
    """``measure_schema`` (``measure_schema_shared`` with ``shared``, one store for all,
    the order of the two ways alternating) for each schema that compiles; the others
    are counted apart."""
    results: dict[str, dict] = {}
    stores = SharedStores()
    for position, (name, schema, texts) in enumerate(schemas):
        try:
            fsm.JsonSchema(schema).term()
        except FsmError as error:
            results[name] = {"refused": type(error).__name__}
            continue
        if shared:
            results[name] = measure_schema_shared(schema, texts, stores, position % 2 == 0)
        else:
            results[name] = measure_schema(schema, texts, reps)
    return results


def schema_summary(results: dict[str, dict]) -> list[str]:
    """Lines over the schemas: how many, whether the two read every text alike, the
    per-schema ratio's median and p90, the sums, the tracked objects kept."""
    measured = [r for r in results.values() if "refused" not in r]
    if not measured:
        return ["- no schema measured"]
    ratios = [r["store_ms"] / r["objects_ms"] for r in measured]
    reads = [(r["store_ms"] - r["load_ms"]) / r["objects_ms"] for r in measured]
    objects_sum = sum(r["objects_ms"] for r in measured)
    store_sum = sum(r["store_ms"] for r in measured)
    lines = [
        f"- {len(measured)} schemas measured ({len(results) - len(measured)} do not compile); "
        f"texts read alike in {sum(r['agree'] for r in measured)}, "
        f"{sum(r['accepted'] for r in measured)} of {sum(r['texts'] for r in measured)} "
        "texts accepted",
        f"- store / objects per schema: median {fmt(median(ratios), 2)}, "
        f"p90 {fmt(percentile(ratios, 90), 2)} (without the root's conversion: median "
        f"{fmt(median(reads), 2)}, p90 {fmt(percentile(reads, 90), 2)}); sums "
        f"{fmt(objects_sum, 1)} ms against "
        f"{fmt(store_sum, 1)} ms ({fmt(store_sum / objects_sum, 2)}), of which the "
        f"store's conversions of the roots {fmt(sum(r['load_ms'] for r in measured), 1)} ms",
    ]
    if "converted_ms" in measured[0]:
        converted = [r["converted_ms"] / r["objects_ms"] for r in measured]
        lines.append(
            "- the store's reads with each schema's bodies converted before the clock (after "
            "the objects' read built them): per schema median "
            f"{fmt(median(converted), 2)}, p90 {fmt(percentile(converted, 90), 2)}; sum "
            f"{fmt(sum(r['converted_ms'] for r in measured), 1)} ms"
        )
    if "compile_built_ms" in measured[0]:
        built = [r["compile_built_ms"] / r["compile_objects_ms"] for r in measured]
        objects_sum = sum(r["compile_objects_ms"] for r in measured)
        built_sum = sum(r["compile_built_ms"] for r in measured)
        lines.append(
            "- compiled and read, rows built by the compiler against object terms: per "
            f"schema median {fmt(median(built), 2)}, p90 {fmt(percentile(built, 90), 2)}; "
            f"sums {fmt(objects_sum, 1)} ms against {fmt(built_sum, 1)} ms "
            f"({fmt(built_sum / objects_sum, 2)})"
        )
    if "store_tracked" in measured[0]:
        tracked = [sum(r[key] for r in measured) for key in ("object_tracked", "store_tracked")]
        lines.append(
            f"- tracked objects kept, summed: objects {tracked[0]:,}, store {tracked[1]:,}"
        )
    return lines


def service_child(way: str, sample: int) -> dict[str, Any]:
    """One way in a process of its own, as a service meets schemas: the sample's
    schemas compiled one after another and each one's texts read (by the object terms,
    in one store for the process they are loaded into, or as rows the compiler builds
    into one store), the collector on. The compiles' time, the reads' time, the
    collector's time inside the reads (``walk_parts.CollectorClock``), and the objects
    it tracks at the end."""
    schemas = [entry for entry in sample_schemas(sample) if _compiles(entry[1])]
    clock = CollectorClock()
    gc.callbacks.append(clock)
    stores = SharedStores()
    compiles_ns = reads_ns = collector_ns = full_passes = 0
    for _, schema, texts in schemas:
        start = time.perf_counter_ns()
        term = (
            compile_into(stores.strings, schema)
            if way == "built"
            else fsm.JsonSchema(schema).term()
        )
        compiles_ns += time.perf_counter_ns() - start
        before = clock.young_ns + clock.full_ns
        passes = clock.full_passes
        start = time.perf_counter_ns()
        if way == "objects":
            walk_texts(terms.derivative, terms.nullable, term, terms.EMPTY, texts)
        elif way == "built":
            walk_texts(stores.built.derivative, stores.built.nullable, term, EMPTY, texts)
        else:
            read_in_store(stores.loaded, term, texts)
        reads_ns += time.perf_counter_ns() - start
        collector_ns += clock.young_ns + clock.full_ns - before
        full_passes += clock.full_passes - passes
        del term
    gc.callbacks.remove(clock)
    return {
        "schemas": len(schemas),
        "compiles_ms": compiles_ns / 1e6,
        "reads_ms": reads_ns / 1e6,
        "collector_ms": collector_ns / 1e6,
        "full_passes": full_passes,
        "tracked_at_end": len(gc.get_objects()),
    }


def _compiles(schema: dict) -> bool:
    try:
        fsm.JsonSchema(schema).term()
    except FsmError:
        return False
    return True


def run_service(sample: int) -> dict[str, dict]:
    """``service_child`` for each way, each in a fresh process (``PYTHONHASHSEED=0``)."""
    found = {}
    for way in ("objects", "store", "built"):
        command = [sys.executable, str(HERE / "term_store.py"), "--child", way]
        command += ["--sample", str(sample)]
        found[way] = json_child(command, env={**os.environ, "PYTHONHASHSEED": "0"})
    return found


SERVICE_HEADERS = [
    "way",
    "schemas",
    "compiles (ms)",
    "reads (ms)",
    "collector inside them (ms)",
    "full passes inside them",
    "objects tracked at the end",
]


def service_table(found: dict[str, dict]) -> str:
    return markdown_table(
        SERVICE_HEADERS,
        [
            [
                way,
                r["schemas"],
                fmt(r["compiles_ms"], 1),
                fmt(r["reads_ms"], 1),
                fmt(r["collector_ms"], 1),
                r["full_passes"],
                f"{r['tracked_at_end']:,}",
            ]
            for way, r in found.items()
        ],
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=200, help="MaskBench schemas (0: none)")
    parser.add_argument("--reps", type=int, default=5, help="explorations each way per term")
    parser.add_argument("--max-states", type=int, default=2000, help="states explored at most")
    parser.add_argument("--no-gc", action="store_true", help="the cyclic collector off")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--child", choices=("objects", "store", "built"), help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.child:
        print(json.dumps(service_child(args.child, args.sample)))
        return
    service = run_service(args.sample) if args.sample else {}
    if args.no_gc:
        gc.disable()
    # first, so every schema is new to both ways: the cold runs below leave memos behind
    shared = run_schemas(sample_schemas(args.sample), 1, shared=True) if args.sample else {}
    fixed = run(FIXED, args.reps, args.max_states)
    sample = run(sample_terms(args.sample), args.reps, args.max_states) if args.sample else {}
    schemas = run_schemas(sample_schemas(args.sample), args.reps) if args.sample else {}
    print(run_header(command_line()))
    print(f"compiled modules: {fsm.NATIVE}; collector {'off' if args.no_gc else 'on'}\n")
    print(markdown_table(HEADERS, [_row(name, result) for name, result in fixed.items()]))
    if sample:
        print(f"\n**MaskBench-dev sample ({args.sample} schemas, seed 0)**\n")
        print("\n".join(summary(sample)))
        print("\n**The sample's schemas, their valid texts read byte by byte, cold**\n")
        print("\n".join(schema_summary(schemas)))
        print("\n**The same, as a service meets them: one store, memos kept**\n")
        print("\n".join(schema_summary(shared)))
        print("\n**One process per way, the collector on: the schemas read in turn**\n")
        print(service_table(service))
    if args.json:
        with open(args.json, "w") as handle:
            found = {
                "fixed": fixed,
                "sample": sample,
                "schemas": schemas,
                "shared": shared,
                "service": service,
            }
            json.dump(found, handle, indent=1)


if __name__ == "__main__":
    main()
