"""A fresh JSON schema per request, end to end: first-request tokens/s against warm.

Services see a new schema on most requests (tool calls, per-user schemas). Each
request here is ``prompt + ss.json(schema)`` on the default model, greedy, with a
schema the process has not seen: three shapes (a person with an email, a product with a
pattern and a number, an event with a date-time and an array of objects) whose keys are
drawn at random, so every schema is new but its strings and formats are the usual ones.
The same request is then sent again: its index is cached, so the second is warm.
Reported: generated tokens/s of first and second requests (medians over schemas) and
the median of the per-schema ratios.

Each tree runs in its own process (one model load each); ``--before TREE`` runs an
older checkout too (a ``git worktree``), and ``--overlap-on`` / ``--overlap-off`` this
tree with ``model.overlap_masks`` set (masks built during each forward pass, in a worker
thread, instead of before it: the default on an accelerator), all alternating round by
round on the same schemas, so the ratio of ratios compares them under the same machine
load.

``--random-weights`` builds the default model's architecture from its config with
random weights (seeded) instead of loading its weights: the speed of a GPU where the
weights cannot be carried. Greedy decoding of random weights still follows the schema,
so first and second requests generate the same tokens; the texts mean nothing.

    .venv/bin/python benchmarks/fresh_schema.py [--schemas 12] [--rounds 2]
        [--max-tokens 48] [--before TREE] [--overlap-on] [--overlap-off]
        [--device cuda] [--random-weights] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from _common import command_line, fmt, json_child, markdown_table, median, run_header, write_section

SECTION = "A fresh schema per request (end to end)"
HERE = Path(__file__).resolve().parent
WORDS = (
    "name title label owner city country street email phone contact price cost amount "
    "count total status state kind category color size weight height width depth note "
    "summary comment author editor start finish deadline created updated version code "
    "sku model brand vendor rating score level rank region zone area topic subject guest "
    "host venue room seat table order item product service plan tier budget quota"
).split()


def schemas(count: int, seed: int) -> list[dict]:
    """``count`` schemas of three shapes with random keys (no two schemas alike)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        keys = rng.sample(WORDS, 5)
        suffix = f"_{i}"
        text = {"type": "string", "maxLength": 16}
        shape = i % 3
        if shape == 0:
            properties = {
                keys[0] + suffix: text,
                keys[1]: {"type": "integer", "minimum": 0, "maximum": 120},
                keys[2]: {"type": "string", "format": "email"},
            }
        elif shape == 1:
            properties = {
                keys[0] + suffix: text,
                keys[1]: {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                keys[2]: {"type": "number", "minimum": 0},
                keys[3]: {"type": "boolean"},
            }
        else:
            properties = {
                keys[0] + suffix: text,
                keys[1]: {"type": "string", "format": "date-time"},
                keys[2]: {
                    "type": "array",
                    "maxItems": 2,
                    "items": {
                        "type": "object",
                        "properties": {keys[3]: text, keys[4]: {"type": "boolean"}},
                        "required": [keys[3], keys[4]],
                    },
                },
            }
        out.append({"type": "object", "properties": properties, "required": list(properties)})
    return out


def _request(prompt: Any, schema: dict, max_tokens: int) -> dict:
    import seqstate as ss

    start = time.perf_counter()
    out = prompt + ss.json(schema, max_tokens=max_tokens, name="value")
    seconds = time.perf_counter() - start
    generated = len(out.token_ids[0][0]) - len(prompt.token_ids[0][0])
    return {"tokens": generated, "seconds": seconds}


def _load(args: argparse.Namespace) -> Any:
    """The default model, or its architecture with random weights (``--random-weights``)."""
    import seqstate as ss

    if not args.random_weights:
        return ss.load_model(device=args.device)
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from backends.loading import default_model_dir, load_default_tokenizer

    tokenizer = load_default_tokenizer()
    torch.manual_seed(0)
    hf_model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(default_model_dir()))
    return ss.load_model((hf_model, tokenizer), device=args.device)


def worker(args: argparse.Namespace) -> None:
    """One process: load the model, then a first and a second request per schema."""
    import seqstate as ss

    model = _load(args)
    if args.overlap != "auto":
        model.overlap_masks = args.overlap == "on"
    prompt = model.chat([{"role": "user", "content": "Fill in a JSON record."}])
    prompt = prompt + ss.gen(max_tokens=1)  # the prompt's KV cache, computed once
    _request(prompt, {"type": "array", "items": {"type": "boolean"}}, 4)  # warm-up
    results = []
    for schema in schemas(args.schemas, args.seed):
        first = _request(prompt, schema, args.max_tokens)
        second = _request(prompt, schema, args.max_tokens)
        results.append({"first": first, "second": second})
    print(json.dumps({"device": _device_name(model), "results": results}))


def _device_name(model: Any) -> str:
    """The model's device, by name where it is a GPU."""
    import torch

    device = model.device
    return torch.cuda.get_device_name(device) if device.type == "cuda" else str(device)


def _run(tree: Path, flags: list[str], args: argparse.Namespace, seed: int) -> tuple[str, list]:
    """One worker process over ``tree``: the device it ran on, and its results."""
    command = [
        sys.executable,
        str(HERE / "fresh_schema.py"),
        "--worker",
        f"--schemas={args.schemas}",
        f"--max-tokens={args.max_tokens}",
        f"--seed={seed}",
        *(["--random-weights"] if args.random_weights else []),
        *([f"--device={args.device}"] if args.device else []),
        *flags,
    ]
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])
    )
    out = json_child(command, env=env, cwd=tree)
    if isinstance(out, list):  # an older tree prints its results alone (on the CPU)
        return "cpu", out
    return out["device"], out["results"]


def _rate(request: dict) -> float:
    return request["tokens"] / request["seconds"]


def summary(results: list[dict]) -> list[object]:
    first = [_rate(r["first"]) for r in results]
    second = [_rate(r["second"]) for r in results]
    ratios = [a / b for a, b in zip(first, second)]
    return [fmt(median(first), 1), fmt(median(second), 1), fmt(median(ratios), 2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemas", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--before", help="an older checkout to compare with")
    parser.add_argument("--overlap-on", action="store_true", help="also run overlap_masks=True")
    parser.add_argument("--overlap-off", action="store_true", help="also run overlap_masks=False")
    parser.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    parser.add_argument("--random-weights", action="store_true", help="the config, random weights")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--overlap", default="auto", choices=("auto", "on", "off"), help=argparse.SUPPRESS
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    trees: dict[str, tuple[Path, list[str]]] = {"this tree": (HERE.parent, [])}
    if args.before:
        trees = {"before": (Path(args.before).resolve(), []), **trees}
    if args.overlap_on:
        trees["this tree, overlap_masks=True"] = (HERE.parent, ["--overlap=on"])
    if args.overlap_off:
        trees["this tree, overlap_masks=False"] = (HERE.parent, ["--overlap=off"])
    collected: dict[str, list[dict]] = {name: [] for name in trees}
    devices = set()
    for round_ in range(args.rounds):
        order = list(trees.items())
        for name, (tree, flags) in order if round_ % 2 == 0 else order[::-1]:
            device, results = _run(tree, flags, args, seed=args.seed + round_)
            devices.add(device)
            collected[name] += results
            print(f"round {round_ + 1}: {name} done", flush=True)
    headers = [
        "tree",
        "first request tok/s (p50)",
        "second request tok/s (p50)",
        "first / second (p50 of per-schema ratios)",
    ]
    rows = [[name, *summary(results)] for name, results in collected.items()]
    body = (
        run_header(command_line())
        + f"\n\n{args.schemas} fresh schemas x {args.rounds} rounds, SmolLM2-135M-Instruct"
        + (" (random weights)" if args.random_weights else "")
        + f" on {', '.join(sorted(devices))}, greedy, at most {args.max_tokens} tokens each.\n\n"
        + markdown_table(headers, rows)
        + "\n"
    )
    print(body)
    if not args.no_write:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
