"""End-to-end constrained generation on the default model: seqstate vs outlines 1.x.

(a) JSON generation, 3 schemas x 4 chat prompts, greedy, fixed max new tokens: ours
    (``state + ss.json(schema, ...)``) vs outlines' transformers wrapper with each of
    its backends that is installed (outlines_core, xgrammar, llguidance), over the same
    transformers model object. Compile (first call per schema) is timed apart; warm runs
    are interleaved engine by engine for every prompt. Reported: validity
    (``json.loads`` + ``jsonschema.validate``), tokens/s of the generated tokens (the
    generated text re-encoded by the tokenizer, the same count for every engine), and
    ours / best outlines backend.
(b) constrained beam search, ``ss.regex(..., sampler=ss.beam(4))`` vs transformers'
    unconstrained ``generate(num_beams=4)`` for the same number of new tokens.
(c) with ``--ablation``: ours with each speed feature turned off in turn (restricted
    head, jump-forward, schema key order), interleaved, on the same prompts.

    .venv/bin/python benchmarks/e2e.py [--max-tokens 96] [--warm-runs 1]
        [--beam-tokens 24] [--beam-runs 5] [--ablation] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import jsonschema
import torch
from _common import (
    command_line,
    fmt,
    have,
    markdown_table,
    median,
    run_header,
    write_section,
)
from pydantic import BaseModel, Field

import seqstate as ss

SECTION = "End-to-end generation"
BACKENDS = ("outlines_core", "xgrammar", "llguidance")

# Plain pydantic models as users write them: no extra="forbid", so their schemas carry
# no additionalProperties and every engine applies its own default for other keys
# (ours: closed for generation). Strings are bounded so a greedy answer fits the budget.
Name = Annotated[str, Field(min_length=1, max_length=24)]


class Person(BaseModel):
    name: Name
    age: Annotated[int, Field(ge=0, le=120)]
    city: Name


class Product(BaseModel):
    title: Name
    price: Annotated[float, Field(ge=0)]
    in_stock: bool
    tags: Annotated[list[Annotated[str, Field(max_length=12)]], Field(max_length=3)]


class Event(BaseModel):
    title: Name
    kind: Literal["meeting", "party", "concert", "match"]
    attendees: Annotated[int, Field(ge=1, le=1000)]
    outdoor: bool


SCHEMAS: dict[str, dict] = {
    "person": Person.model_json_schema(),
    "product": Product.model_json_schema(),
    "event": Event.model_json_schema(),
}
PROMPTS = (
    "Describe a {thing} as a JSON object.",
    "Invent a realistic {thing}. Answer with JSON only.",
    "Give me one example {thing} in JSON, with every field filled in.",
    "You are a data generator. Output a {thing} record as JSON.",
)
BEAM_PROMPT = "Write a long story about a robot who learns to paint, with many details."
BEAM_REGEX = r"[A-Za-z0-9 ,.;:'!?\n-]{300,2000}"  # no beam can end within the budget


@dataclass
class Tally:
    """Per-engine results: compile seconds, warm runs (tokens, seconds), validity."""

    compile: dict[str, float] = field(default_factory=dict)
    tokens: int = 0
    seconds: float = 0.0
    per_run: list[float] = field(default_factory=list)
    valid: int = 0
    declared: int = 0  # valid outputs with only the schema's declared keys
    runs: int = 0
    failures: list[str] = field(default_factory=list)

    def add(self, schema: dict, text: str, n_tokens: int, seconds: float) -> None:
        self.runs += 1
        self.tokens += n_tokens
        self.seconds += seconds
        self.per_run.append(n_tokens / seconds if seconds else 0.0)
        try:
            value = json.loads(text)
            jsonschema.validate(value, schema)
            self.valid += 1
            self.declared += set(value) <= set(schema.get("properties", {}))
        except (ValueError, jsonschema.ValidationError) as error:
            self.failures.append(f"{text[:60]!r}: {type(error).__name__}")

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else float("nan")


def messages(schema_name: str, template: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": template.format(thing=schema_name)}]


def timed(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """Seconds taken by ``fn(*args)``, and its result."""
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


class Ours:
    """seqstate: chat prompt state + ``ss.json`` with the greedy sampler."""

    name = "seqstate"

    def __init__(self, model: Any, max_tokens: int) -> None:
        self.model, self.max_tokens = model, max_tokens

    def prepare(self, schema: dict) -> None:
        """Compile the schema's token index (what the first generation would do)."""
        self.model.index(ss.json(schema).constraint)

    def run(self, schema: dict, msgs: list[dict[str, str]]) -> str:
        state = self.model.chat(msgs)
        out = state + ss.json(schema, max_tokens=self.max_tokens, sampler=ss.greedy())
        return str(out)[len(str(state)) :]


class Outlines:
    """outlines 1.x: ``Generator(from_transformers(...), JsonSchema, backend=...)``."""

    def __init__(self, model: Any, backend: str, max_tokens: int) -> None:
        import outlines
        from outlines.types import JsonSchema

        self.outlines, self.json_type = outlines, JsonSchema
        self.om = outlines.from_transformers(model.hf_model, model.tokenizer)
        self.tokenizer = model.tokenizer
        self.name = f"outlines[{backend}]"
        self.backend, self.max_tokens = backend, max_tokens
        self.generators: dict[str, Any] = {}

    def prepare(self, schema: dict) -> None:
        key = json.dumps(schema, sort_keys=True)
        self.generators[key] = self.outlines.Generator(
            self.om, self.json_type(schema), backend=self.backend
        )

    def run(self, schema: dict, msgs: list[dict[str, str]]) -> str:
        generator = self.generators[json.dumps(schema, sort_keys=True)]
        prompt = self.tokenizer.apply_chat_template(
            msgs, tokenize=False, add_generation_prompt=True
        )
        return generator(prompt, max_new_tokens=self.max_tokens, do_sample=False)


def engines(model: Any, max_tokens: int) -> list[Any]:
    """Ours plus every outlines backend that is installed (others skipped with a note)."""
    out: list[Any] = [Ours(model, max_tokens)]
    if not have("outlines"):
        print("note: outlines is not installed (pip install -e '.[peers]'); peers skipped")
        return out
    for backend in BACKENDS:
        if not have(backend):
            print(f"note: {backend} is not installed; outlines[{backend}] skipped")
            continue
        try:
            out.append(Outlines(model, backend, max_tokens))
        except Exception as error:  # noqa: BLE001 - a peer that cannot start is reported, not fatal
            print(f"note: outlines[{backend}] unavailable: {error}")
    return out


def count_tokens(tokenizer: Any, text: str) -> int:
    return len(tokenizer.encode(text, add_special_tokens=False))


def run_json(model: Any, args: argparse.Namespace) -> tuple[list[Any], dict[str, Tally]]:
    """Compile (first call) per schema and engine, then interleaved warm runs."""
    runners = engines(model, args.max_tokens)
    tallies = {e.name: Tally() for e in runners}
    for schema_name, schema in SCHEMAS.items():
        for engine in runners:
            seconds, _ = timed(engine.prepare, schema)
            first, _ = timed(engine.run, schema, messages(schema_name, PROMPTS[0]))
            tallies[engine.name].compile[schema_name] = seconds
            tallies[engine.name].compile[schema_name + ":first-run"] = first
        print(f"  {schema_name}: compiled", flush=True)
        for template in PROMPTS:
            msgs = messages(schema_name, template)
            for _ in range(args.warm_runs):
                for engine in runners:
                    seconds, text = timed(engine.run, schema, msgs)
                    tallies[engine.name].add(
                        schema, text, count_tokens(model.tokenizer, text), seconds
                    )
        print(f"  {schema_name}: {len(PROMPTS) * args.warm_runs} warm runs per engine", flush=True)
    return runners, tallies


def run_beam(model: Any, args: argparse.Namespace) -> dict[str, list[tuple[int, float]]]:
    """Beam(4), ours constrained by a regex vs transformers unconstrained, interleaved."""
    state = model.chat([{"role": "user", "content": BEAM_PROMPT}])
    ids = torch.tensor(state.token_ids[0][0], dtype=torch.long)[None]
    n = args.beam_tokens
    results: dict[str, list[tuple[int, float]]] = {
        "seqstate beam(4) + regex": [],
        "transformers num_beams=4": [],
    }

    def ours() -> int:
        # heal=False: the same work as transformers (healing would regenerate the last
        # prompt token as the first of the n steps, leaving n - 1 new tokens).
        out = state + ss.regex(BEAM_REGEX, max_tokens=n, sampler=ss.beam(4), heal=False)
        return out.rows[0].n_tokens - state.rows[0].n_tokens

    def theirs() -> int:
        with torch.inference_mode():
            out = model.hf_model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                num_beams=4,
                do_sample=False,
                max_new_tokens=n,
                min_new_tokens=n,
                early_stopping=False,
            )
        return out.shape[1] - ids.shape[1]

    ours()  # warm-up: compiles the regex index and builds its first rows
    theirs()
    for _ in range(args.beam_runs):
        for label, fn in (("seqstate beam(4) + regex", ours), ("transformers num_beams=4", theirs)):
            seconds, tokens = timed(fn)
            results[label].append((tokens, seconds))
    return results


ABLATIONS: dict[str, tuple[dict[str, bool], str]] = {
    "all on (default)": ({}, "schema"),
    "restrict_head=False": ({"restrict_head": False}, "schema"),
    "jump_forward=False": ({"jump_forward": False}, "schema"),
    'key_order="any"': ({}, "any"),
}


def run_ablation(
    model: Any, args: argparse.Namespace
) -> tuple[dict[str, Tally], dict[str, list[str]]]:
    """Ours with one feature off at a time; variants interleaved prompt by prompt.
    Returns the tallies and each variant's texts (prompt order)."""
    tallies = {label: Tally() for label in ABLATIONS}
    texts: dict[str, list[str]] = {label: [] for label in ABLATIONS}
    for schema in SCHEMAS.values():  # compile outside the timings
        for key_order in {order for _, order in ABLATIONS.values()}:
            model.index(ss.json(schema, key_order=key_order).constraint)
    for schema_name, schema in SCHEMAS.items():
        for template in PROMPTS:
            msgs = messages(schema_name, template)
            for label, (switches, key_order) in ABLATIONS.items():
                generator = ss.json(
                    schema, max_tokens=args.max_tokens, sampler=ss.greedy(), key_order=key_order
                )
                for attribute, value in switches.items():
                    setattr(model, attribute, value)
                try:
                    state = model.chat(msgs)
                    seconds, out = timed(generator, state)
                finally:
                    for attribute in switches:
                        setattr(model, attribute, True)
                text = str(out)[len(str(state)) :]
                tallies[label].add(schema, text, count_tokens(model.tokenizer, text), seconds)
                texts[label].append(text)
    return tallies, texts


def ablation_table(tallies: dict[str, Tally], texts: dict[str, list[str]]) -> str:
    default = next(iter(ABLATIONS))
    base = tallies[default]
    rows = []
    for label, t in tallies.items():
        same = sum(a == b for a, b in zip(texts[label], texts[default]))
        rows.append(
            [
                label,
                f"{t.valid}/{t.runs}",
                t.tokens,
                fmt(t.tokens_per_s, 2),
                fmt(t.tokens_per_s / base.tokens_per_s, 2),
                f"{same}/{t.runs}",
            ]
        )
    return markdown_table(
        ["variant", "valid", "tokens", "tokens/s", "vs default", "same text as default"], rows
    )


def json_tables(runners: list[Any], tallies: dict[str, Tally]) -> str:
    headers = [
        "engine",
        "valid",
        "only declared keys",
        "generated tokens",
        "warm s",
        "tokens/s",
        "median run tok/s",
    ]
    headers += [f"compile {name} (s)" for name in SCHEMAS] + ["first run, median (s)"]
    rows = []
    for engine in runners:
        t = tallies[engine.name]
        firsts = [t.compile[f"{name}:first-run"] for name in SCHEMAS]
        rows.append(
            [
                engine.name,
                f"{t.valid}/{t.runs}",
                f"{t.declared}/{t.runs}",
                t.tokens,
                fmt(t.seconds, 1),
                fmt(t.tokens_per_s, 2),
                fmt(median(t.per_run), 2),
            ]
            + [fmt(t.compile[name], 2) for name in SCHEMAS]
            + [fmt(median(firsts), 2)]
        )
    return markdown_table(headers, rows)


def beam_table(results: dict[str, list[tuple[int, float]]]) -> str:
    rows = []
    for label, runs in results.items():
        rows.append(
            [
                label,
                median([t for t, _ in runs]),
                fmt(median([s for _, s in runs]), 2),
                fmt(median([t / s for t, s in runs]), 2),
            ]
        )
    return markdown_table(
        ["engine", "new tokens (median)", "seconds (median)", "tokens/s (median)"], rows
    )


def targets(
    tallies: dict[str, Tally], beam: dict[str, list[tuple[int, float]]] | None
) -> list[str]:
    ours = tallies["seqstate"]
    lines = [
        f"validity 100% for ours: {ours.valid}/{ours.runs}, "
        + ("**met**" if ours.valid == ours.runs else "**missed**")
    ]
    peers = {name: t for name, t in tallies.items() if name != "seqstate"}
    if peers:
        best_name, best = max(peers.items(), key=lambda kv: kv[1].tokens_per_s)
        ratio = ours.tokens_per_s / best.tokens_per_s
        lines.append(
            f"tokens/s ours / best outlines backend ({best_name}) >= 1.2x: {ratio:.2f}x, "
            + ("**met**" if ratio >= 1.2 else "**missed**")
        )
    if beam:
        ours_s = median([s / t for t, s in beam["seqstate beam(4) + regex"] if t])
        theirs_s = median([s / t for t, s in beam["transformers num_beams=4"] if t])
        lines.append(
            f"beam(4) ours at least as fast as transformers (per new token): {ours_s * 1e3:.0f} vs "
            f"{theirs_s * 1e3:.0f} ms, " + ("**met**" if ours_s <= theirs_s else "**missed**")
        )
    return lines


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=96, help="max new tokens per JSON answer")
    parser.add_argument("--warm-runs", type=int, default=1, help="warm runs per prompt and engine")
    parser.add_argument("--beam-tokens", type=int, default=24, help="new tokens per beam search")
    parser.add_argument("--beam-runs", type=int, default=5, help="timed beam searches per engine")
    parser.add_argument(
        "--ablation", action="store_true", help="also time ours with each speed feature off"
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone"
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    model = ss.load_model(device="cpu")
    print(f"{model}, torch threads {torch.get_num_threads()}", flush=True)
    runners, tallies = run_json(model, args)
    try:
        beam = run_beam(model, args) if args.beam_runs else None
    except Exception as error:  # noqa: BLE001 - keep the JSON figures if the beam part fails
        print(f"beam search part failed: {type(error).__name__}: {error}")
        beam = None
    ablation = run_ablation(model, args) if args.ablation else None
    body = report(args, runners, tallies, beam, ablation)
    print(body)
    for name, t in tallies.items():
        for failure in t.failures:
            print(f"invalid ({name}): {failure}")
    if not args.no_write:
        write_section(SECTION, body)
        print(f"\nwritten to docs/benchmarks.md, section '{SECTION}'")


def report(
    args: argparse.Namespace,
    runners: list[Any],
    tallies: dict[str, Tally],
    beam: dict | None,
    ablation: tuple[dict[str, Tally], dict[str, list[str]]] | None = None,
) -> str:
    parts = [
        run_header(command_line()),
        f"SmolLM2-135M-Instruct on CPU (float32), one transformers model object shared by all engines; "
        f"greedy; at most {args.max_tokens} new tokens; {len(SCHEMAS)} schemas x {len(PROMPTS)} chat prompts x "
        f"{args.warm_runs} warm run(s) per engine, interleaved engine by engine. Compile = building the "
        "constraint before the first call (ours: `model.index(spec)`; outlines: `Generator(...)`, which also "
        "builds the backend's tokenizer tables); first run = the first generation after it. Tokens = the "
        "generated text re-encoded by the tokenizer (same count for every engine); tokens/s = all warm "
        "tokens / all warm seconds, prompt prefill included.",
        "### JSON generation\n\n" + json_tables(runners, tallies),
    ]
    if beam:
        parts.append(
            f"### Beam search, {args.beam_tokens} new tokens, median of {args.beam_runs}\n\n"
            f"Ours constrained by `{BEAM_REGEX}` (at least 300 characters, so no beam can end at EOS within the budget), without token healing so both do the same forward passes; transformers unconstrained "
            "with `min_new_tokens` = `max_new_tokens`, `early_stopping=False`.\n\n"
            + beam_table(beam)
        )
    if ablation:
        parts.append(
            "### Ablation: ours with one speed feature off\n\n"
            "Same prompts and budget, the variants interleaved prompt by prompt. Restricted "
            "head: constrained steps compute the logits of the allowed tokens only; "
            "jump-forward: forced text appended without sampling; key order: `ss.json`'s "
            'default `"schema"` (keys forced) vs `"any"` (keys sampled).\n\n'
            + ablation_table(*ablation)
        )
    parts.append("### Targets\n\n" + "\n".join(f"* {line}" for line in targets(tallies, beam)))
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    main()
