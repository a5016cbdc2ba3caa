"""Decode speed of seqstate's loop vs transformers ``generate``, side by side.

Five modes on the default model (CPU), each timed for ours and for transformers in the
same round, rounds interleaved, medians reported:

* greedy   ``ss.gen()``                      vs ``generate(do_sample=False)``
* sampling ``ss.gen(sampler=ss.sample())``   vs ``generate(do_sample=True)``
* regex    ``ss.regex(long character class)``  vs unconstrained greedy ``generate``
* JSON     ``ss.json(schema)``               vs unconstrained greedy ``generate``
* beam     ``ss.regex(..., sampler=ss.beam(4))`` vs ``generate(num_beams=4)``

Transformers generates exactly as many new tokens as ours did in the same round
(``min_new_tokens = max_new_tokens``), so tokens/s compare like for like; the ratio
ours / transformers is what to compare across runs (the machine is shared and noisy).
Token healing is off (transformers does not heal; healing would add a step).

``--compare OLD_TREE`` runs the benchmark alternately on the code in ``OLD_TREE`` (a
``git worktree`` of an earlier commit) and on this checkout, one subprocess per round
and tree, and reports both side by side: that is how a change of the decode loop is
checked for regressions.

    .venv/bin/python benchmarks/decode.py [--tokens 32] [--beam-tokens 16] [--runs 5]
        [--threads 1] [--modes greedy ...] [--compare /tmp/baseline --rounds 3] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import torch
from _common import command_line, fmt, json_child, markdown_table, median, run_header, write_section

SECTION = "Decode loop speed"
REPO = Path(__file__).resolve().parent.parent
MODES = ("greedy", "sampling", "regex", "JSON", "beam(4) + regex")
STORY = "Write a long story about a robot who learns to paint, with many details."
TEXT_REGEX = r"[A-Za-z0-9 ,.;:'!?\n-]{300,2000}"  # long enough that nothing ends early
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 24},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "city": {"type": "string", "maxLength": 24},
        "hobbies": {"type": "array", "items": {"type": "string", "maxLength": 16}, "maxItems": 3},
    },
    "required": ["name", "age", "city", "hobbies"],
}
Timing = tuple[int, float]  # (new tokens, seconds)


def timed(fn: Callable[[], int]) -> Timing:
    start = time.perf_counter()
    tokens = fn()
    return tokens, time.perf_counter() - start


def hf_generate(model: Any, ids: torch.Tensor, n: int, **options: Any) -> int:
    """transformers ``generate`` for exactly ``n`` new tokens; returns the count."""
    with torch.inference_mode():
        out = model.hf_model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=n,
            min_new_tokens=n,
            pad_token_id=model.tokenizer.eos_token_id,
            **options,
        )
    return out.shape[1] - ids.shape[1]


def modes(model: Any, tokens: int, beam_tokens: int) -> dict[str, tuple[Any, Any, dict]]:
    """Per mode: the prompt state, our generator, transformers' options."""
    import seqstate as ss

    story = model.chat([{"role": "user", "content": STORY}])
    person = model.chat([{"role": "user", "content": "Describe a person as a JSON object."}])
    greedy = {"do_sample": False}
    sampled = {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0}
    return {
        "greedy": (story, ss.gen(max_tokens=tokens, heal=False), greedy),
        "sampling": (
            story,
            ss.gen(max_tokens=tokens, heal=False, sampler=ss.sample(seed=0)),
            sampled,
        ),
        "regex": (story, ss.regex(TEXT_REGEX, max_tokens=tokens, heal=False), greedy),
        "JSON": (person, ss.json(SCHEMA, max_tokens=2 * tokens, heal=False), greedy),
        "beam(4) + regex": (
            story,
            ss.regex(TEXT_REGEX, max_tokens=beam_tokens, heal=False, sampler=ss.beam(4)),
            {"do_sample": False, "num_beams": 4, "early_stopping": False},
        ),
    }


def measure(
    tokens: int, beam_tokens: int, runs: int, chosen: Sequence[str] = MODES
) -> dict[str, dict[str, list[Timing]]]:
    """Load the default model, warm every mode once, then ``runs`` interleaved rounds."""
    import seqstate as ss

    model = ss.load_model(device="cpu")
    cases = modes(model, tokens, beam_tokens)
    cases = {mode: case for mode, case in cases.items() if mode in chosen}
    results: dict[str, dict[str, list[Timing]]] = {m: {"ours": [], "hf": []} for m in cases}
    for round_ in range(runs + 1):  # round 0 warms up (index compilation, first rows)
        for mode, (prompt, generator, options) in cases.items():
            torch.manual_seed(round_)
            ids = torch.tensor(prompt.rows[0].token_ids, dtype=torch.long)[None]
            mine = timed(partial(_ours, prompt, generator))
            theirs = timed(partial(hf_generate, model, ids, max(mine[0], 1), **options))
            if round_:
                results[mode]["ours"].append(mine)
                results[mode]["hf"].append(theirs)
    return results


def _ours(prompt: Any, generator: Any) -> int:
    out = prompt + generator
    return out.rows[0].n_tokens - prompt.rows[0].n_tokens


def rate(timings: list[Timing]) -> float:
    """Median tokens/s over runs."""
    return median([t / s for t, s in timings if s])


def summary(results: dict[str, dict[str, list[Timing]]]) -> dict[str, tuple[float, float, float]]:
    """Per mode: (our tokens/s, transformers tokens/s, ratio = median of per-run ratios)."""
    out = {}
    for mode, pair in results.items():
        ratios = [(t1 / s1) / (t2 / s2) for (t1, s1), (t2, s2) in zip(pair["ours"], pair["hf"])]
        out[mode] = (rate(pair["ours"]), rate(pair["hf"]), median(ratios))
    return out


def compare(old_tree: Path, args: argparse.Namespace) -> dict[str, dict]:
    """Alternate subprocess rounds on ``old_tree`` and on this checkout."""
    trees = {"baseline": old_tree.resolve(), "new": REPO}
    merged: dict[str, dict[str, dict[str, list[Timing]]]] = {}
    for round_ in range(args.rounds):
        for label, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            command = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--tokens", str(args.tokens),
                "--beam-tokens", str(args.beam_tokens),
                "--runs", str(args.runs),
                "--threads", str(args.threads),
                "--modes", *args.modes,
                "--emit-json",
            ]  # fmt: skip
            found = json_child(command, env=env)
            print(f"round {round_} {label}: {found['source']}", file=sys.stderr)
            for mode, pair in found["results"].items():
                slot = merged.setdefault(label, {}).setdefault(mode, {"ours": [], "hf": []})
                for side in ("ours", "hf"):
                    slot[side].extend(tuple(t) for t in pair[side])
    return merged


def table(results: dict[str, dict[str, list[Timing]]]) -> str:
    rows = []
    for mode, (ours, theirs, ratio) in summary(results).items():
        n = len(results[mode]["ours"])
        tokens = median([t for t, _ in results[mode]["ours"]])
        rows.append([mode, fmt(tokens, 0), n, fmt(ours), fmt(theirs), fmt(ratio, 2)])
    headers = ["mode", "new tokens", "runs", "seqstate tok/s", "transformers tok/s", "ratio"]
    return markdown_table(headers, rows)


def comparison_table(merged: dict[str, dict]) -> str:
    old, new = summary(merged["baseline"]), summary(merged["new"])
    rows = []
    for mode in MODES:
        if mode in old and mode in new:
            change = new[mode][2] / old[mode][2] - 1
            rows.append(
                [
                    mode,
                    fmt(old[mode][0]),
                    fmt(old[mode][2], 2),
                    fmt(new[mode][0]),
                    fmt(new[mode][2], 2),
                    f"{change:+.1%}",
                ]
            )
    headers = [
        "mode",
        "baseline tok/s",
        "baseline ratio",
        "new tok/s",
        "new ratio",
        "ratio change",
    ]
    return markdown_table(headers, rows)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=32, help="new tokens (JSON: twice this)")
    parser.add_argument("--beam-tokens", type=int, default=16, help="new tokens per beam search")
    parser.add_argument("--runs", type=int, default=5, help="timed rounds per process")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--compare", type=Path, help="a worktree of the code to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --compare")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (shared machine)")
    parser.add_argument("--emit-json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print, leave docs alone")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    if args.emit_json:
        import seqstate

        results = measure(args.tokens, args.beam_tokens, args.runs, args.modes)
        print(json.dumps({"source": seqstate.__file__, "results": results}))
        return
    header = run_header(command_line())
    intro = (
        f"SmolLM2-135M-Instruct on CPU (float32, {args.threads} torch thread(s)), one model "
        "object for both engines; "
        f"{args.tokens} new tokens ({2 * args.tokens} for JSON, {args.beam_tokens} for beams), "
        "token healing off; transformers generates as many new tokens as ours did in the "
        "same round. Ratio = median over rounds of (ours tok/s / transformers tok/s)."
    )
    if args.compare:
        merged = compare(args.compare, args)
        body = (
            f"{header}\n\n{intro} Baseline = the code in `{args.compare}`, new = this "
            f"checkout; {args.rounds} alternating subprocess rounds of {args.runs} runs each.\n\n"
            f"{comparison_table(merged)}\n\nBaseline detail:\n\n{table(merged['baseline'])}\n\n"
            f"New detail:\n\n{table(merged['new'])}\n"
        )
    else:
        body = f"{header}\n\n{intro}\n\n{table(measure(args.tokens, args.beam_tokens, args.runs, args.modes))}\n"
    print(body)
    if not args.no_write:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
