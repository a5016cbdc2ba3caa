"""KV reuse of the paged block pool, side by side with transformers.

(a) continue a 1,000-token state by 10 tokens vs recomputing the whole sequence
    (our runner from scratch, and a plain transformers forward without cache), and
    building the same 1,010 tokens again from nothing (served by the prefix cache);
(b) fork a 1,000-token prefix into 8 rows and decode 32 tokens each: blocks used vs
    the bound ceil(1000/B) + 8*ceil(33/B) + 8 and vs a copied per-row cache;
(c) greedy decoding of 128 tokens on the default model vs `model.generate()` with its
    default cache, median of a few runs each, alternating.

    python benchmarks/kv_reuse.py [--device cpu|cuda] [--dtype float32|bfloat16|float16]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

from backends.loading import load_default_hf
from backends.runner import ModelRunner

STORY = "Write a long story about a robot who learns to paint, with many details."


def timed(fn: Callable[[], object], device: str) -> tuple[float, object]:
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, result


def median_time(fn: Callable[[], object], device: str, repeats: int) -> float:
    return statistics.median(timed(fn, device)[0] for _ in range(repeats))


def greedy(runner: ModelRunner, prompt: list[int], steps: int) -> list[int]:
    """Greedy decoding over the runner (no EOS stop, like `generate` with a long answer)."""
    logits, (kv,) = runner.forward([(None, prompt)])
    out: list[int] = []
    for step in range(steps):
        token = int(logits[0].argmax())
        out.append(token)
        if step < steps - 1:
            logits, (kv,) = runner.forward([(kv, [token])])
    return out


def continue_state(model, args) -> None:
    device, n = args.device, args.prompt_tokens
    rng = np.random.default_rng(0)
    prompt = rng.integers(100, 40000, n)
    extra = rng.integers(100, 40000, 10)
    runner = ModelRunner(model, block_size=args.block_size)
    _, (state,) = runner.forward([(None, prompt)])
    before = runner.kv_stats()["tokens_computed"]
    runner.forward([(state, extra)])
    delta = runner.kv_stats()["tokens_computed"] - before
    cont = median_time(lambda: runner.forward([(state, extra)]), device, args.repeats)
    full = np.concatenate([prompt, extra])
    uncached = ModelRunner(model, block_size=args.block_size, prefix_cache=False)
    scratch = median_time(lambda: uncached.forward([(None, full)]), device, args.repeats)
    before = runner.kv_stats()["tokens_computed"]
    rebuilt = median_time(lambda: runner.forward([(None, full)]), device, args.repeats)
    rebuilt_delta = (runner.kv_stats()["tokens_computed"] - before) // args.repeats
    ids = torch.as_tensor(full, device=device)[None]

    def plain() -> object:
        with torch.inference_mode():
            return model(ids, use_cache=False, logits_to_keep=1).logits

    hf = median_time(plain, device, args.repeats)
    print(f"(a) continue a {n}-token state by 10 tokens")
    print(f"    tokens_computed delta: {delta} (limit 13)")
    print(f"    continue from KVRef:            {cont * 1e3:9.1f} ms")
    print(
        f"    runner recompute from scratch:  {scratch * 1e3:9.1f} ms  ({scratch / cont:.1f}x slower)"
    )
    print(f"    transformers forward, no cache: {hf * 1e3:9.1f} ms  ({hf / cont:.1f}x slower)")
    print(
        f"    same {len(full)} tokens rebuilt from nothing (prefix cache): {rebuilt * 1e3:.1f} ms, "
        f"{rebuilt_delta} tokens computed"
    )


def fork_and_decode(model, args) -> None:
    n, rows, steps, bs = args.prompt_tokens, 8, 32, args.block_size
    prompt = np.random.default_rng(1).integers(100, 40000, n)
    runner = ModelRunner(model, block_size=bs)

    def run() -> list:
        logits, refs = runner.forward([(None, prompt)] * rows)  # one prompt, computed once
        # make the rows diverge: row i starts with the i-th best token, then decodes greedily
        tokens = logits[0].topk(rows).indices.tolist()
        for _ in range(steps):
            logits, refs = runner.forward([(ref, [t]) for ref, t in zip(refs, tokens)])
            tokens = logits.argmax(dim=-1).tolist()
        return refs

    seconds, refs = timed(run, args.device)
    stats = runner.kv_stats()
    bound = math.ceil(n / bs) + rows * math.ceil((steps + 1) / bs) + rows
    copied = rows * math.ceil((n + steps) / bs)
    print(
        f"(b) fork a {n}-token prefix into {rows} rows, decode {steps} tokens each ({seconds:.1f} s)"
    )
    print(f"    blocks used: {stats['blocks_used']} (bound {bound}; block_size {bs})")
    print(
        f"    copied per-row cache (transformers-style): {copied} block-equivalents "
        f"({copied / stats['blocks_used']:.1f}x more)"
    )
    print(f"    tokens computed: {stats['tokens_computed']} (prompt once + {rows}x{steps})")
    del refs


def decode_vs_generate(model, tokenizer, args) -> None:
    device, steps = args.device, args.decode_tokens
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": STORY}], add_generation_prompt=True, return_dict=True
    )["input_ids"]
    # no prefix cache: every run prefills its prompt, as generate() does
    runner = ModelRunner(model, block_size=args.block_size, prefix_cache=False)
    ids = torch.tensor([prompt], device=device)

    def generate(n: int) -> list[int]:
        with torch.inference_mode():
            out = model.generate(ids, max_new_tokens=n, do_sample=False)
        return out[0, len(prompt) :].tolist()

    greedy(runner, prompt, 8)  # warm-up
    generate(8)
    ours, theirs = [], []
    for _ in range(args.repeats):
        seconds, ours_tokens = timed(lambda: greedy(runner, prompt, steps), device)
        ours.append(seconds)
        seconds, theirs_tokens = timed(lambda: generate(steps), device)
        theirs.append(seconds)
    a, b = statistics.median(ours), statistics.median(theirs)
    same = ours_tokens == theirs_tokens[: len(ours_tokens)]
    print(
        f"(c) greedy decode of {len(theirs_tokens)} tokens, prompt {len(prompt)} tokens, "
        f"median of {args.repeats}"
    )
    print(f"    ModelRunner greedy loop: {a:7.2f} s ({len(ours_tokens) / a:5.1f} tok/s)")
    print(f"    transformers generate(): {b:7.2f} s ({len(theirs_tokens) / b:5.1f} tok/s)")
    print(f"    speed ratio ours/transformers: {b / a:.2f}; identical tokens: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--prompt-tokens", type=int, default=1000)
    parser.add_argument("--decode-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="abc", help="which parts to run, e.g. 'ac'")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    model, tokenizer = load_default_hf(dtype=getattr(torch, args.dtype))
    model = model.to(args.device).eval()
    print(
        f"device={args.device} dtype={args.dtype} threads={torch.get_num_threads()} "
        f"torch={torch.__version__}"
    )
    if "a" in args.only:
        continue_state(model, args)
    if "b" in args.only:
        fork_and_decode(model, args)
    if "c" in args.only:
        decode_vs_generate(model, tokenizer, args)


if __name__ == "__main__":
    main()
