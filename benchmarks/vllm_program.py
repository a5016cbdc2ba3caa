"""A chained seqstate program on ``engine="vllm"`` vs the native engine, in one run.

    .venv-vllm/bin/python -m benchmarks.vllm_program [--rows 4] [--rounds 3]
        [--tensor-parallel-size 1] [--threads 1] [--no-write]

The program (per row: chat prompt, a name by regex, an age by ``ss.json(int)``, a
hobby by free text up to a newline, an address by a JSON schema, then a fork into two
samples that each pick a city by ``ss.choice``) runs on both engines on the default
model (CPU, fp32, greedy), rounds alternating, after one warm-up round each (indexes
compiled, vLLM's kernels warm). Figures per round, medians over the rounds:

- wall time of the whole program;
- tokens each engine ran through the model: native ``kv_stats()["tokens_computed"]``
  (its states hold their KV blocks, so only new tokens are computed), vLLM prompt
  tokens not found in its prefix cache plus generated tokens;
- vLLM's prefix-cache hit rate over the program's requests (its cache is reset before
  each round, so only reuse within the program counts);
- whether both engines wrote the same tokens, and the largest difference of their
  per-token log-probabilities.

The native engine's pool keeps freed blocks findable by prefix hash, which would serve
a round from the blocks of the round before: that is turned off while measuring, so on
both sides only reuse within the program counts (states holding their blocks on the
native side, the prefix cache within the program on vLLM's).

Results go to docs/benchmarks.md (section "seqstate programs on vLLM") unless
``--no-write``.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

from benchmarks._common import fmt, markdown_table, median, run_header, write_section

SECTION = 'seqstate programs on vLLM (engine="vllm")'
PEOPLE = ["a painter", "a sailor", "a chemist", "a baker", "a pilot", "a nurse", "a poet"]
ADDRESS = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 12}, "zip": {"type": "integer"}},
    "required": ["city", "zip"],
}


def program(model: Any, rows: int) -> Any:
    """The chained program on ``rows`` prompts; returns the final state."""
    import seqstate as ss

    chats = [
        [{"role": "user", "content": f"Invent {PEOPLE[k % len(PEOPLE)]}. Give name and age."}]
        for k in range(rows)
    ]
    s = model.chat(chats)
    s = s + "Name:" + ss.regex(r" [A-Z][a-z]+", name="name", max_tokens=10)
    s = s + "\nAge: " + ss.json(int, name="age", max_tokens=6)
    s = s + "\nHobby:" + ss.gen(stop="\n", name="hobby", max_tokens=20)
    s = s + "\nAddress (JSON): " + ss.json(ADDRESS, name="address", max_tokens=40)
    return s.fork(2) + "\nCity:" + ss.choice([" Paris", " London", " Rome"], name="city")


def timed_native(model: Any, rows: int) -> tuple[float, int, Any]:
    before = model.kv_stats()["tokens_computed"]
    start = time.perf_counter()
    state = program(model, rows)
    elapsed = time.perf_counter() - start
    return elapsed, model.kv_stats()["tokens_computed"] - before, state


def timed_vllm(model: Any, rows: int) -> tuple[float, int, float, Any]:
    model.llm.reset_prefix_cache()
    before = model.kv_stats()
    start = time.perf_counter()
    state = program(model, rows)
    elapsed = time.perf_counter() - start
    after = model.kv_stats()
    prompt = after["prompt_tokens"] - before["prompt_tokens"]
    cached = after["tokens_reused"] - before["tokens_reused"]
    computed = after["tokens_computed"] - before["tokens_computed"]
    return elapsed, computed, cached / prompt if prompt else 0.0, state


def max_logprob_difference(native: Any, on_vllm: Any) -> float:
    """The largest |difference| of the per-token log-probabilities both engines know."""
    worst = 0.0
    for a, b in zip(native.rows, on_vllm.rows):
        known = ~np.isnan(a.token_logprobs) & ~np.isnan(b.token_logprobs)
        if known.any():
            worst = max(worst, float(np.abs(a.token_logprobs - b.token_logprobs)[known].max()))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tensor-parallel-size", type=int, default=1)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads of the native engine (vLLM's CPU worker runs on one core)",
    )
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    import torch

    import seqstate as ss

    torch.set_num_threads(args.threads)
    native = ss.load_model(device="cpu", dtype="float32")
    on_vllm = ss.load_model(
        engine="vllm",
        enforce_eager=True,
        max_model_len=1024,
        seed=0,
        tensor_parallel_size=args.tensor_parallel_size,
    )
    requests_per_round = 4 * args.rows + 2 * args.rows  # 4 calls, then the fork's call
    timed_native(native, args.rows)  # warm-up: indexes compiled, caches filled
    native.runner.pool.prefix_cache = False  # only reuse within the program counts
    timed_vllm(on_vllm, args.rows)
    rounds: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        n_time, n_tokens, n_state = timed_native(native, args.rows)
        v_time, v_tokens, v_rate, v_state = timed_vllm(on_vllm, args.rows)
        rounds.append(
            {
                "native": n_time,
                "vllm": v_time,
                "native_tokens": n_tokens,
                "vllm_tokens": v_tokens,
                "rate": v_rate,
                "same": all(
                    np.array_equal(a.token_ids, b.token_ids)
                    for a, b in zip(n_state.rows, v_state.rows)
                ),
                "logprob_diff": max_logprob_difference(n_state, v_state),
            }
        )
        print(rounds[-1], flush=True)
    on_vllm.llm.llm_engine.engine_core.shutdown()
    report(args, rounds, requests_per_round)


def report(args: argparse.Namespace, rounds: list[dict[str, Any]], requests: int) -> None:
    def med(key: str) -> float:
        return median([r[key] for r in rounds])

    table = markdown_table(
        ["engine", "program time (s)", "tokens through the model", "prefix-cache hit rate"],
        [
            ["native (paged KV pool, states hold their blocks)", fmt(med("native"), 2),
             fmt(med("native_tokens"), 0), "-"],
            ["vLLM CPU build (prefix caching, block 32)", fmt(med("vllm"), 2),
             fmt(med("vllm_tokens"), 0), f"{med('rate'):.0%}"],
        ],
    )  # fmt: skip
    same = all(r["same"] for r in rounds)
    diff = max(r["logprob_diff"] for r in rounds)
    body = "\n\n".join(
        [
            run_header(
                ".venv-vllm/bin/python -m benchmarks.vllm_program "
                f"--rows {args.rows} --rounds {args.rounds} --threads {args.threads}"
            ),  # fmt: skip
            f"The chained program of `benchmarks/vllm_program.py` on {args.rows} prompts "
            f"({requests} vLLM requests per run: 4 calls x {args.rows} rows, then a fork "
            "into 2 samples per row for the last call), default model, CPU, fp32, greedy, "
            f"medians of {args.rounds} alternating rounds after a warm-up round each; "
            "vLLM's prefix cache is reset before each of its rounds.",
            table,
            f"Same tokens on both engines in every round: {'yes' if same else 'no'}; "
            f"largest log-probability difference {diff:.1e}. Per round (native s, vLLM s): "
            + ", ".join(f"({r['native']:.2f}, {r['vllm']:.2f})" for r in rounds)
            + ".",
        ]
    )
    print(body)
    if not args.no_write:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
