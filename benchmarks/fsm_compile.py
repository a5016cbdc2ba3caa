"""Constraint compile time and per-token mask time: seqstate's ``fsm`` vs its peers.

Peers (the optional ``peers`` extra; a missing one is skipped with a note):
outlines-core (regex -> eager token index), xgrammar (grammar compile with its eager
adaptive token-mask cache, masks computed per step) and llguidance (lazy: the lexer and
parser are built on demand, masks computed per step). All use the SmolLM2 tokenizer.

Each library runs in its own worker process, so a compile that runs away can be killed
(timeout) without losing the others, and the first call of each library in a fresh
process (JIT, lazy initialisation) is measured on its own. The main process only
hands out work, library by library in turn, so runs interleave and never overlap.

Measured, for ~6 regexes and ~6 JSON schemas with a valid instance each:

* compile: spec -> ready to mask, *including the first mask* (for a lazy engine that is
  where the work starts); ours lazy (``fsm.compile_index`` + ``bitmask(initial)``) and ours
  eager (``fsm.compile_index(..., eager=True)``, i.e. ``build_all``). Median of ``--reps``.
* mask per token: walk the instance's tokens, timing the mask call before each token
  (ours: ``bitmask(state)``, a view of the stored row, then ``fill_bitmask(state,
  buffer)`` too, the row written into a mask buffer as the peers write theirs); first
  walk (cold: ours builds rows lazily here) and second walk (warm, after a reset).
* a fixed random sample (seed 0) of MaskBench-dev schemas: compile p50/p90 (failures
  and timeouts counted apart) and mask p50/p99 over the valid instances' tokens.

    .venv/bin/python benchmarks/fsm_compile.py [--reps 5] [--maskbench 100]
        [--timeout 20] [--no-write]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import multiprocessing as mp
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    command_line,
    fmt,
    have,
    markdown_table,
    median,
    percentile,
    run_header,
    write_section,
)

MASKBENCH = Path("/work/shared/data/maskbench-dev.jsonl.gz")
SECTION = "fsm: compile and mask"
ENGINES = ("seqstate", "outlines-core", "xgrammar", "llguidance")
MODULES = {"outlines-core": "outlines_core", "xgrammar": "xgrammar", "llguidance": "llguidance"}

# ---------------------------------------------------------------- the fixed specs

REGEXES: dict[str, tuple[str, str]] = {
    "email": (
        r"[a-z0-9._%+-]{1,32}@[a-z0-9-]{1,20}(\.[a-z0-9-]{1,20})*\.[a-z]{2,6}",
        "john.doe@example.co.uk",
    ),
    "date": (r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])", "2024-05-17"),
    "phone": (r"\(?[0-9]{3}\)?[ .-]?[0-9]{3}[ .-]?[0-9]{4}", "(555) 123-4567"),
    "ipv4": (
        r"((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])",
        "192.168.10.254",
    ),
    "float": (r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", "-1234.5678e-12"),
    "choice3": (r"(Paris|London|New York)", "New York"),
}

# All objects are closed (additionalProperties: false) so every engine constrains to
# the same language: outlines-core never allows extra keys and xgrammar's default
# strict mode forbids them, while seqstate and llguidance follow the JSON Schema
# default (any extra key with any value).
ADDRESS = {
    "type": "object",
    "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"},
        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
    },
    "required": ["street", "city", "zip"],
    "additionalProperties": False,
}
SCHEMAS: dict[str, tuple[dict, Any]] = {
    "flat": (
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer"},
                "active": {"type": "boolean"},
                "score": {"type": "number"},
            },
            "required": ["name", "age", "active", "score"],
            "additionalProperties": False,
        },
        {"name": "Ada Lovelace", "age": 36, "active": True, "score": 97.5},
    ),
    "nested+arrays": (
        {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                "address": ADDRESS,
                "lines": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string"},
                            "qty": {"type": "integer", "minimum": 1},
                        },
                        "required": ["sku", "qty"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["id", "tags", "address", "lines"],
            "additionalProperties": False,
        },
        {
            "id": 4711,
            "tags": ["urgent", "gift"],
            "address": {"street": "12 Main St", "city": "Springfield", "zip": "12345"},
            "lines": [{"sku": "A-100", "qty": 2}, {"sku": "B-7", "qty": 1}],
        },
    ),
    "enum+const": (
        {
            "type": "object",
            "properties": {
                "kind": {"const": "ticket"},
                "status": {"enum": ["open", "closed", "pending", "on hold"]},
                "priority": {"enum": [1, 2, 3]},
                "label": {"enum": ["bug", "feature", None]},
            },
            "required": ["kind", "status", "priority", "label"],
            "additionalProperties": False,
        },
        {"kind": "ticket", "status": "on hold", "priority": 2, "label": None},
    ),
    "anyOf": (
        {
            "type": "object",
            "properties": {
                "value": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                "contact": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"email": {"type": "string"}},
                            "required": ["email"],
                            "additionalProperties": False,
                        },
                        {
                            "type": "object",
                            "properties": {"phone": {"type": "string"}},
                            "required": ["phone"],
                            "additionalProperties": False,
                        },
                    ]
                },
            },
            "required": ["value", "contact"],
            "additionalProperties": False,
        },
        {"value": 42, "contact": {"phone": "+1 555 0100"}},
    ),
    "pydantic $defs": (
        {
            "$defs": {
                "Pet": {
                    "properties": {
                        "name": {"title": "Name", "type": "string"},
                        "species": {
                            "enum": ["cat", "dog", "fish"],
                            "title": "Species",
                            "type": "string",
                        },
                    },
                    "required": ["name", "species"],
                    "title": "Pet",
                    "type": "object",
                    "additionalProperties": False,
                },
                "Address": {**ADDRESS, "title": "Address"},
            },
            "properties": {
                "name": {"title": "Name", "type": "string"},
                "age": {"title": "Age", "type": "integer", "minimum": 0, "maximum": 150},
                "address": {"$ref": "#/$defs/Address"},
                "pets": {"items": {"$ref": "#/$defs/Pet"}, "title": "Pets", "type": "array"},
                "nickname": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "title": "Nickname",
                },
            },
            "required": ["name", "age", "address", "pets", "nickname"],
            "title": "Person",
            "type": "object",
            "additionalProperties": False,
        },
        {
            "name": "Grace",
            "age": 45,
            "address": {"street": "1 Navy Rd", "city": "Arlington", "zip": "22201"},
            "pets": [{"name": "Byte", "species": "cat"}],
            "nickname": None,
        },
    ),
    "string formats": (
        {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "birthday": {"type": "string", "format": "date"},
                "created": {"type": "string", "format": "date-time"},
                "id": {"type": "string", "format": "uuid"},
            },
            "required": ["email", "birthday", "created", "id"],
            "additionalProperties": False,
        },
        {
            "email": "grace@example.org",
            "birthday": "1906-12-09",
            "created": "2024-05-17T10:20:30Z",
            "id": "123e4567-e89b-12d3-a456-426614174000",
        },
    ),
}

WARMUP_REGEX = (r"[A-Z][a-z]{2,8} [0-9]{1,3}", "Bob 42")
WARMUP_SCHEMA = (
    {"type": "object", "properties": {"on": {"type": "array", "items": {"type": "boolean"}}}},
    {"on": [True, False]},
)
"""Warms every engine up before timing; for ours an object open to other keys, so the
kernels of every kind of walk are loaded (numba's cache) before the first timed case."""

# ------------------------------------------------------------- engine adapters


class Engine:
    """One library: compile a spec to a handle (first mask included) and walk tokens."""

    name = "?"
    modes: tuple[str, ...] = ("default",)

    def compile(self, kind: str, source: Any, mode: str) -> Any:
        raise NotImplementedError

    def walk(self, handle: Any, tokens: list[int]) -> tuple[list[int], list[int], int | None]:
        """Time the mask before each token: (ns per mask, ns per mask + copy or the same
        list, index of the first rejected token or None)."""
        raise NotImplementedError

    def reset(self, handle: Any) -> None:
        raise NotImplementedError


class Seqstate(Engine):
    """Ours: lazy ``fsm.compile_index`` + first row, or eager ``build_all``."""

    name = "seqstate"
    modes = ("lazy", "eager")

    def __init__(self, tokenizer: Any) -> None:
        import fsm

        self.fsm = fsm
        self.vocab = fsm.Vocabulary.from_tokenizer(tokenizer)
        self.buffer = np.zeros((self.vocab.size + 31) // 32, np.int32)
        compiled = "compiled" if getattr(fsm, "NATIVE", False) else "pure Python"
        self.version = f"seqstate (this tree, {compiled})"

    def compile(self, kind: str, source: Any, mode: str) -> Any:
        spec = self.fsm.Regex(source) if kind == "regex" else self.fsm.JsonSchema(source)
        index = self.fsm.compile_index(spec, self.vocab, eager=mode == "eager")
        index.bitmask(index.initial_state)
        return index

    def reset(self, handle: Any) -> None:
        pass  # an index has no cursor: a walk starts from initial_state

    def walk(self, handle: Any, tokens: list[int]) -> tuple[list[int], list[int], int | None]:
        clock, buffer = time.perf_counter_ns, self.buffer
        state, views, copies = handle.initial_state, [], []
        for i, token in enumerate(tokens):
            start = clock()
            handle.bitmask(state)
            viewed = clock()
            handle.fill_bitmask(state, buffer)
            copies.append(clock() - start)
            views.append(viewed - start)
            state = handle.next_state(state, token)
            if state < 0:
                return views, copies, i
        return views, copies, None


class OutlinesCore(Engine):
    """outlines-core: JSON schema -> regex -> eager ``Index``; ``Guide`` writes masks."""

    name = "outlines-core"

    def __init__(self, tokenizer: Any) -> None:
        import outlines_core
        from outlines_core.json_schema import build_regex_from_schema
        from outlines_core.kernels.numpy import allocate_token_bitmask, fill_next_token_bitmask

        import fsm

        vocab = fsm.Vocabulary.from_tokenizer(tokenizer)
        by_bytes: dict[bytes, list[int]] = {}
        for token, data in enumerate(vocab.token_bytes):
            if data is not None and token not in vocab.eos_ids:
                by_bytes.setdefault(data, []).append(token)
        self.oc, self.to_regex, self.fill = (
            outlines_core,
            build_regex_from_schema,
            fill_next_token_bitmask,
        )
        self.vocab = outlines_core.Vocabulary(min(vocab.eos_ids), by_bytes)
        self.buffer = allocate_token_bitmask(vocab.size)
        self.version = f"outlines-core {_version('outlines_core')}"

    def compile(self, kind: str, source: Any, mode: str) -> Any:
        regex = source if kind == "regex" else self.to_regex(json.dumps(source))
        guide = self.oc.Guide(self.oc.Index(regex, self.vocab))
        self.fill(guide, self.buffer)
        return guide

    def reset(self, handle: Any) -> None:
        handle.reset()

    def walk(self, handle: Any, tokens: list[int]) -> tuple[list[int], list[int], int | None]:
        clock, buffer, fill = time.perf_counter_ns, self.buffer, self.fill
        times: list[int] = []
        for i, token in enumerate(tokens):
            start = clock()
            fill(handle, buffer)
            times.append(clock() - start)
            try:
                handle.advance(token, return_tokens=False)
            except Exception:  # noqa: BLE001 - outlines-core raises on a disallowed token
                return times, times, i
        return times, times, None


class XGrammar(Engine):
    """xgrammar: ``GrammarCompiler`` (cache off, so each compile is real) + matcher."""

    name = "xgrammar"

    def __init__(self, tokenizer: Any) -> None:
        import xgrammar

        size = len(tokenizer)
        self.xgr = xgrammar
        info = xgrammar.TokenizerInfo.from_huggingface(tokenizer, vocab_size=size)
        self.compiler = xgrammar.GrammarCompiler(info, cache_enabled=False)
        self.buffer = xgrammar.allocate_token_bitmask(1, size)
        self.version = f"xgrammar {_version('xgrammar')}"

    def compile(self, kind: str, source: Any, mode: str) -> Any:
        if kind == "regex":
            grammar = self.compiler.compile_regex(source)
        else:
            grammar = self.compiler.compile_json_schema(json.dumps(source))
        matcher = self.xgr.GrammarMatcher(grammar)
        matcher.fill_next_token_bitmask(self.buffer)
        return matcher

    def reset(self, handle: Any) -> None:
        handle.reset()

    def walk(self, handle: Any, tokens: list[int]) -> tuple[list[int], list[int], int | None]:
        clock, buffer = time.perf_counter_ns, self.buffer
        times: list[int] = []
        for i, token in enumerate(tokens):
            start = clock()
            handle.fill_next_token_bitmask(buffer)
            times.append(clock() - start)
            if not handle.accept_token(token):
                return times, times, i
        return times, times, None


class LLGuidance(Engine):
    """llguidance: ``LLMatcher`` over a grammar; lexer/parser and masks built lazily."""

    name = "llguidance"

    def __init__(self, tokenizer: Any) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.numpy

        self.llg = llguidance
        self.fill = llguidance.numpy.fill_next_token_bitmask
        self.tokenizer = llguidance.hf.from_tokenizer(tokenizer, n_vocab=len(tokenizer))
        self.buffer = llguidance.numpy.allocate_token_bitmask(1, len(tokenizer))
        self.version = f"llguidance {_version('llguidance')}"

    def compile(self, kind: str, source: Any, mode: str) -> Any:
        matcher_cls = self.llg.LLMatcher
        if kind == "regex":
            grammar = matcher_cls.grammar_from_regex(source)
        else:
            grammar = matcher_cls.grammar_from_json_schema(json.dumps(source))
        matcher = matcher_cls(self.tokenizer, grammar)
        if matcher.is_error():
            raise RuntimeError(matcher.get_error())
        self.fill(matcher, self.buffer)
        if matcher.is_error():
            raise RuntimeError(matcher.get_error())
        return matcher

    def reset(self, handle: Any) -> None:
        handle.reset()

    def walk(self, handle: Any, tokens: list[int]) -> tuple[list[int], list[int], int | None]:
        clock, buffer, fill = time.perf_counter_ns, self.buffer, self.fill
        times: list[int] = []
        for i, token in enumerate(tokens):
            start = clock()
            fill(handle, buffer)
            times.append(clock() - start)
            if not handle.consume_token(token) or handle.is_error():
                return times, times, i
        return times, times, None


ADAPTERS: dict[str, Callable[[Any], Engine]] = {
    "seqstate": Seqstate,
    "outlines-core": OutlinesCore,
    "xgrammar": XGrammar,
    "llguidance": LLGuidance,
}


def _version(distribution: str) -> str:
    from importlib.metadata import version

    try:
        return version(distribution.replace("_", "-"))
    except Exception:  # noqa: BLE001
        return "?"


# ------------------------------------------------------------------ the worker


def _tokenizer() -> Any:
    from backends.loading import load_default_tokenizer

    return load_default_tokenizer()


def _encode(tokenizer: Any, value: Any, kind: str) -> list[int]:
    text = value if kind == "regex" else json.dumps(value)
    return list(tokenizer.encode(text, add_special_tokens=False))


def _timed_compile(engine: Engine, kind: str, source: Any, mode: str) -> tuple[float, Any]:
    start = time.perf_counter()
    handle = engine.compile(kind, source, mode)
    return time.perf_counter() - start, handle


def _walks(engine: Engine, handle: Any, instances: Iterable[list[int]]) -> dict[str, Any]:
    """Per instance: a first (cold) walk, a reset, a second (warm) walk; times pooled."""
    out: dict[str, Any] = {"cold": [], "warm": [], "warm_copy": [], "rejected": 0, "tokens": 0}
    for tokens in instances:
        engine.reset(handle)
        cold, _, rejected = engine.walk(handle, tokens)
        engine.reset(handle)
        warm, warm_copy, _ = engine.walk(handle, tokens)
        out["cold"] += cold
        out["warm"] += warm
        out["warm_copy"] += warm_copy
        out["tokens"] += len(tokens)
        out["rejected"] += rejected is not None
    return out


def _serve(name: str, conn: Connection) -> None:
    """Worker loop: set the engine up, time its first call, then answer requests."""
    tokenizer = _tokenizer()
    start = time.perf_counter()
    engine = ADAPTERS[name](tokenizer)
    setup = time.perf_counter() - start
    first = {}
    for kind, (source, value) in (("regex", WARMUP_REGEX), ("json", WARMUP_SCHEMA)):
        for mode in engine.modes:
            if kind == "json" and mode == "eager":
                continue  # the open warm-up object has no finite index to build up front
            seconds, handle = _timed_compile(engine, kind, source, mode)
            _walks(engine, handle, [_encode(tokenizer, value, kind)])
            first.setdefault(f"{kind}:{mode}", seconds)
    conn.send({"setup": setup, "first": first, "version": engine.version})
    while True:
        request = conn.recv()
        if request is None:
            return
        try:
            conn.send(_answer(engine, request))
        except Exception as error:  # noqa: BLE001 - reported per spec, the worker lives on
            conn.send(
                {
                    "error": f"{type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''}"
                }
            )


def _answer(engine: Engine, request: dict) -> dict:
    seconds, handle = _timed_compile(engine, request["kind"], request["source"], request["mode"])
    answer: dict[str, Any] = {"compile": seconds}
    if request.get("instances"):
        answer.update(_walks(engine, handle, request["instances"]))
    return answer


@dataclass
class Worker:
    """A library in its own process; a request that times out kills and restarts it."""

    name: str
    timeout: float
    process: Any = None
    conn: Connection | None = None
    info: dict = field(default_factory=dict)

    def start(self) -> None:
        context = mp.get_context("spawn")
        parent, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(self.name, child), daemon=True)
        self.process.start()
        self.conn = parent
        if not parent.poll(300):
            raise RuntimeError(f"{self.name} worker did not start")
        info = parent.recv()
        self.info = self.info or info  # keep the first start's figures

    def ask(self, request: dict) -> dict:
        assert self.conn is not None
        self.conn.send(request)
        if self.conn.poll(self.timeout):
            try:
                return self.conn.recv()
            except EOFError:
                self.restart()
                return {"error": "worker crashed"}
        self.restart()
        return {"error": f"timeout > {self.timeout:g} s", "timeout": True}

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.process = None


# ---------------------------------------------------------------- the runs


@dataclass
class Spec:
    kind: str
    name: str
    source: Any
    instance: Any


def fixed_specs() -> list[Spec]:
    specs = [Spec("regex", name, pattern, text) for name, (pattern, text) in REGEXES.items()]
    specs += [Spec("json", name, schema, value) for name, (schema, value) in SCHEMAS.items()]
    return specs


def lanes(workers: dict[str, Worker]) -> list[tuple[str, str]]:
    """(worker name, mode) pairs, ours first: the columns of the compile table."""
    out = []
    for name in workers:
        out += [(name, mode) for mode in ADAPTERS[name].modes]
    return out


def lane_label(name: str, mode: str) -> str:
    return name if mode == "default" else f"{name} {mode}"


def run_fixed(workers: dict[str, Worker], tokenizer: Any, reps: int) -> tuple[dict, dict]:
    """Compile every fixed spec ``reps`` times per lane, interleaved, and walk it once."""
    compiles: dict[tuple[str, str, str], list[float]] = {}
    errors: dict[tuple[str, str, str], str] = {}
    walks: dict[tuple[str, str], dict] = {}
    for rep in range(reps):
        for spec in fixed_specs():
            tokens = _encode(tokenizer, spec.instance, spec.kind)
            for name, mode in lanes(workers):
                key = (spec.name, name, mode)
                if key in errors:
                    continue
                walk = rep == 0 and mode in ("lazy", "default")
                request = {
                    "kind": spec.kind,
                    "source": spec.source,
                    "mode": mode,
                    "instances": [tokens] if walk else None,
                }
                answer = workers[name].ask(request)
                if "error" in answer:
                    errors[key] = answer["error"]
                    continue
                compiles.setdefault(key, []).append(answer["compile"])
                if walk:
                    walks[(spec.name, name)] = answer
    return {"compiles": compiles, "errors": errors}, walks


def maskbench_sample(n: int, keyword: str | None = None) -> list[dict]:
    """A fixed random sample (seed 0) of MaskBench-dev entries with a valid instance
    (only those whose schema uses ``keyword`` somewhere, when given)."""
    with gzip.open(MASKBENCH, "rt") as handle:
        entries = [json.loads(line) for line in handle]
    usable = [e for e in entries if any(t["valid"] for t in e["tests"])]
    if keyword is not None:
        usable = [e for e in usable if _uses_keyword(e["schema"], keyword)]
    return random.Random(0).sample(usable, min(n, len(usable)))


def _uses_keyword(node: Any, keyword: str) -> bool:
    """Whether ``keyword`` is a key of some object in the JSON value ``node``."""
    if isinstance(node, dict):
        return keyword in node or any(_uses_keyword(v, keyword) for v in node.values())
    if isinstance(node, list):
        return any(_uses_keyword(v, keyword) for v in node)
    return False


def run_maskbench(workers: dict[str, Worker], tokenizer: Any, n: int) -> dict[str, dict]:
    """Compile each sampled schema with each engine (ours lazy) and walk its valid tests."""
    results: dict[str, dict] = {
        name: {
            "compile": [],
            "failed": 0,
            "timeouts": 0,
            "cold": [],
            "warm": [],
            "rejected": 0,
            "instances": 0,
            "errors": Counter(),
        }
        for name in workers
    }
    started = time.perf_counter()
    for i, entry in enumerate(maskbench_sample(n)):
        instances = [_encode(tokenizer, t["data"], "json") for t in entry["tests"] if t["valid"]]
        for name, worker in workers.items():
            mode = "lazy" if name == "seqstate" else "default"
            answer = worker.ask(
                {"kind": "json", "source": entry["schema"], "mode": mode, "instances": instances}
            )
            record = results[name]
            if "error" in answer:
                record["timeouts" if answer.get("timeout") else "failed"] += 1
                record["errors"][answer["error"][:70]] += 1
                continue
            record["compile"].append(answer["compile"])
            record["cold"] += answer["cold"]
            record["warm"] += answer["warm"]
            record["rejected"] += answer["rejected"]
            record["instances"] += len(instances)
        if (i + 1) % 25 == 0:
            print(f"  maskbench {i + 1}/{n} ({time.perf_counter() - started:.0f} s)", flush=True)
    return results


# ------------------------------------------------------------------- reports

US = 1e-3  # ns -> µs


def compile_table(workers: dict[str, Worker], fixed: dict) -> str:
    columns = lanes(workers)
    headers = ["spec", *(f"{lane_label(n, m)} (ms)" for n, m in columns), "ours lazy 1st (ms)"]
    rows = []
    for spec in fixed_specs():
        row: list[object] = [f"{spec.kind}: {spec.name}"]
        for name, mode in columns:
            key = (spec.name, name, mode)
            if key in fixed["errors"]:
                row.append("fail" if "timeout" not in fixed["errors"][key] else "timeout")
            else:
                row.append(fmt(median(fixed["compiles"].get(key, [])) * 1e3, 2))
        firsts = fixed["compiles"].get((spec.name, "seqstate", "lazy"), [])
        row.append(fmt(firsts[0] * 1e3, 2) if firsts else "-")
        rows.append(row)
    return markdown_table(headers, rows)


def mask_table(workers: dict[str, Worker], walks: dict) -> str:
    headers = [
        "engine",
        "specs",
        "warm p50 (µs)",
        "warm p99 (µs)",
        "cold p50 (µs)",
        "cold p99 (µs)",
        "tokens",
        "rejected",
    ]
    rows = []
    for kind in ("regex", "json"):
        names = [s.name for s in fixed_specs() if s.kind == kind]
        for engine in workers:
            variants = [("warm", engine)] + (
                [("warm_copy", f"{engine} (+copy)")] if engine == "seqstate" else []
            )
            for warm_key, label in variants:
                found = [walks[(n, engine)] for n in names if (n, engine) in walks]
                warm = [t * US for w in found for t in w[warm_key]]
                cold = [t * US for w in found for t in w["cold"]]
                rejected = sum(w["rejected"] for w in found)
                rows.append(
                    [
                        label,
                        kind,
                        fmt(median(warm), 2),
                        fmt(percentile(warm, 99), 2),
                        fmt(median(cold), 2),
                        fmt(percentile(cold, 99), 2),
                        sum(w["tokens"] for w in found),
                        rejected,
                    ]
                )
    return markdown_table(headers, rows)


def first_call_table(workers: dict[str, Worker]) -> str:
    headers = [
        "engine",
        "version",
        "setup: vocabulary (s)",
        "first regex compile (ms)",
        "first JSON compile (ms)",
    ]
    rows = []
    for name, worker in workers.items():
        first = worker.info["first"]
        mode = "lazy" if name == "seqstate" else "default"
        rows.append(
            [
                name,
                worker.info["version"],
                fmt(worker.info["setup"], 2),
                fmt(first[f"regex:{mode}"] * 1e3, 1),
                fmt(first[f"json:{mode}"] * 1e3, 1),
            ]
        )
    return markdown_table(headers, rows)


def maskbench_table(results: dict[str, dict], n: int) -> str:
    headers = [
        "engine",
        "compiled",
        "failed",
        "timeouts",
        "compile p50 (ms)",
        "compile p90 (ms)",
        "warm mask p50 (µs)",
        "warm mask p99 (µs)",
        "cold mask p50 (µs)",
        "cold mask p99 (µs)",
        "instances rejected",
    ]
    rows = []
    for name, r in results.items():
        c = r["compile"]
        rows.append(
            [
                name,
                f"{len(c)}/{n}",
                r["failed"],
                r["timeouts"],
                fmt(median(c) * 1e3, 1),
                fmt(percentile(c, 90) * 1e3, 1),
                fmt(median([t * US for t in r["warm"]]), 2),
                fmt(percentile([t * US for t in r["warm"]], 99), 2),
                fmt(median([t * US for t in r["cold"]]), 2),
                fmt(percentile([t * US for t in r["cold"]], 99), 2),
                f"{r['rejected']}/{r['instances']}",
            ]
        )
    return markdown_table(headers, rows)


def targets(
    fixed: dict, walks: dict, maskbench: dict[str, dict] | None, workers: dict[str, Worker]
) -> list[str]:
    """The three targets of the issue, met or missed, from the measured figures."""
    lines = []
    if "outlines-core" in workers:
        worse = []
        for spec in (s for s in fixed_specs() if s.kind == "json"):
            ours = median(fixed["compiles"].get((spec.name, "seqstate", "lazy"), []))
            peer = median(fixed["compiles"].get((spec.name, "outlines-core", "default"), []))
            if math.isnan(ours) or (not math.isnan(peer) and ours > peer):
                worse.append(f"{spec.name} ({fmt(ours * 1e3, 2)} vs {fmt(peer * 1e3, 2)} ms)")
        lines.append(
            "compile of each fixed JSON schema (ours lazy) no worse than outlines-core: "
            + ("**met**" if not worse else "**missed** for " + ", ".join(worse))
        )
        eager = [
            s.name
            for s in fixed_specs()
            if s.kind == "json"
            and not median(fixed["compiles"].get((s.name, "seqstate", "eager"), []))
            <= median(fixed["compiles"].get((s.name, "outlines-core", "default"), [math.inf]))
        ]
        lines.append(
            "(like for like, ours eager `build_all` vs outlines-core's eager index: "
            + (
                "no worse on every schema)"
                if not eager
                else "worse or failed on " + ", ".join(eager) + ")"
            )
        )
    warm = [
        t * US for (name, engine), w in walks.items() if engine == "seqstate" for t in w["warm"]
    ]
    lines.append(
        f"median per-token mask (ours, warm, fixed specs) under 5 µs: {fmt(median(warm), 2)} µs, "
        + ("**met**" if median(warm) < 5 else "**missed**")
    )
    if maskbench:
        p90 = percentile(maskbench["seqstate"]["compile"], 90)
        lines.append(
            f"compile p90 over the MaskBench sample (ours) under 1 s: {fmt(p90 * 1e3, 1)} ms, "
            + ("**met**" if p90 < 1 else "**missed**")
            + f" ({maskbench['seqstate']['failed']} failed, {maskbench['seqstate']['timeouts']} timeouts not counted)"
        )
    return lines


# ---------------------------------------------------------------------- main


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reps", type=int, default=5, help="compile repetitions per fixed spec and lane"
    )
    parser.add_argument(
        "--maskbench", type=int, default=100, help="MaskBench-dev schemas to sample (0: skip)"
    )
    parser.add_argument(
        "--timeout", type=float, default=20.0, help="seconds per request before a worker is killed"
    )
    parser.add_argument(
        "--engines",
        default=",".join(ENGINES),
        help="comma-separated subset of " + ", ".join(ENGINES),
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone"
    )
    return parser.parse_args()


def start_workers(names: list[str], timeout: float) -> dict[str, Worker]:
    workers = {}
    for name in names:
        if name in MODULES and not have(MODULES[name]):
            print(f"note: {name} is not installed (pip install -e '.[peers]'); skipped")
            continue
        worker = Worker(name, timeout)
        worker.start()
        workers[name] = worker
        print(f"{name}: ready ({worker.info['version']})", flush=True)
    return workers


def main() -> None:
    args = parse_args()
    workers = start_workers([n.strip() for n in args.engines.split(",") if n.strip()], args.timeout)
    tokenizer = _tokenizer()
    try:
        print("fixed specs ...", flush=True)
        fixed, walks = run_fixed(workers, tokenizer, args.reps)
        maskbench = (
            run_maskbench(workers, tokenizer, args.maskbench)
            if args.maskbench and MASKBENCH.exists() and "seqstate" in workers
            else None
        )
    finally:
        for worker in workers.values():
            worker.stop()
    body = report(args, workers, fixed, walks, maskbench)
    print(body)
    if not args.no_write:
        write_section(SECTION, body)
        print(f"\nwritten to docs/benchmarks.md, section '{SECTION}'")


def report(
    args: argparse.Namespace,
    workers: dict[str, Worker],
    fixed: dict,
    walks: dict,
    maskbench: dict | None,
) -> str:
    parts = [
        run_header(command_line()),
        "Compile = spec to the first mask in hand (ours lazy: `fsm.compile_index` + `bitmask(initial)`; "
        "ours eager: `fsm.compile_index(eager=True)` = `build_all`; outlines-core: schema -> regex -> eager "
        "`Index` + `Guide` mask; xgrammar: `compile_*` with its eager adaptive mask cache, cache off, "
        "+ first `fill_next_token_bitmask`; llguidance: `LLMatcher` + first mask, lazy). "
        f"Median of {args.reps} interleaved repetitions after one warm-up compile of an unrelated "
        "regex and schema; `ours lazy 1st` is the first compile of that spec in the process. "
        "Objects are closed (`additionalProperties: false`) so all engines constrain to the same keys; "
        "whitespace differs (ours: the `json.dumps` layouts, indentation up to 8 bytes, keys in any "
        "order; outlines-core: "
        "`[ ]?`, schema order; xgrammar and llguidance: their defaults).",
        "### Compile time, fixed specs\n\n" + compile_table(workers, fixed),
        "### Mask per token, fixed specs\n\n"
        "Walk of one valid instance per spec (its tokenization by the tokenizer). Cold = first walk "
        "after compile (ours builds each row the first time a state is met); warm = second walk after "
        "a reset. Ours: `bitmask(state)` returns a read-only view of the stored row; `(+copy)` adds "
        "`fill_bitmask(state, buffer)`, the row written into a mask buffer, which is what the peers' "
        "calls do.\n\n" + mask_table(workers, walks),
        "### First call in a fresh process\n\n"
        "Setup = vocabulary/tokenizer tables; first compile = the warm-up regex and schema, the first "
        "calls of the process (numba JIT load, lazy library initialisation).\n\n"
        + first_call_table(workers),
    ]
    if maskbench:
        parts.append(
            f"### MaskBench-dev sample ({args.maskbench} schemas, seed 0)\n\n"
            f"Schemas as given (objects open unless the schema closes them); ours lazy with `strict=True` "
            f"(an unsupported keyword is a failure); timeout {args.timeout:g} s per schema and engine. "
            "Instances serialised by `json.dumps` (`, ` and `: `); a rejected instance stops its walk "
            "(outlines-core needs schema key order, xgrammar's default strict mode forbids extra keys).\n\n"
            + maskbench_table(maskbench, args.maskbench)
            + "\n\nMost frequent failures: "
            + "; ".join(
                f"{name}: " + ", ".join(f"`{e}` x{k}" for e, k in r["errors"].most_common(3))
                for name, r in maskbench.items()
                if r["errors"]
            )
        )
    parts.append(
        "### Targets\n\n"
        + "\n".join(f"* {line}" for line in targets(fixed, walks, maskbench, workers))
    )
    failures = [f"{lane_label(n, m)} on {s}: {e}" for (s, n, m), e in fixed["errors"].items()]
    if failures:
        parts.append("Fixed-spec failures: " + "; ".join(failures) + ".")
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    main()
