"""Strings whose length is counted beside a pattern or a format, walked as the meet of
their members' walks (``fsm.row_walk.RowWalker._meet_walk``) against the plain walk,
on real schemas (issue 15).

For each MaskBench schema with such a string (a ``pattern`` or a ``format`` beside
``minLength`` or ``maxLength``, or ``format: hostname``, which counts 253 characters),
every valid instance's SmolLM2 tokens are read by two indexes over the schema's rows
(``compile_index``'s automaton): one taking states apart (the product's walk) and one
expanding every state (``share_lexemes=False``). Their masks and verdicts must agree at
every token. Prints the counts and the schemas that differ; exits 1 when one does.

With ``--any-length``, every schema that bounds a string's length is read the same way:
a bounded string where a value starts is counted below its whitespace and quote
(``StoreAutomaton.counted_after_prefix``, seventy-ninth session). With
``--every-schema``, every schema is: states split wherever a value ends (an object's
body read as its body spelled out, eightieth session) are in every object.

    PYTHONPATH=. .venv/bin/python scripts/check_meet_walks.py \\
        ../shared/data/maskbench-dev.jsonl.gz [--stride 1] [--any-length | --every-schema]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from backends.loading import load_default_tokenizer
from fsm import JsonSchema, TokenIndex, Vocabulary
from fsm.errors import FsmError

LENGTHS = ("minLength", "maxLength")


def counts_beside_a_pattern(node: Any) -> bool:
    """Whether some schema object in ``node`` bounds a string's length beside a
    pattern or a format, or asks for a hostname."""
    if isinstance(node, list):
        return any(counts_beside_a_pattern(item) for item in node)
    if not isinstance(node, dict):
        return False
    bounded = any(key in node for key in LENGTHS)
    if node.get("format") == "hostname" or (bounded and ("pattern" in node or "format" in node)):
        return True
    return any(counts_beside_a_pattern(value) for value in node.values())


def bounds_a_length(node: Any) -> bool:
    """Whether some schema object in ``node`` bounds a string's length."""
    if isinstance(node, list):
        return any(bounds_a_length(item) for item in node)
    if not isinstance(node, dict):
        return False
    return any(key in node for key in LENGTHS) or any(
        bounds_a_length(value) for value in node.values()
    )


def every_schema(node: Any) -> bool:
    """Every schema is chosen."""
    return True


def differs(schema: object, tokens: list[int], vocabulary: Vocabulary) -> tuple[bool, int]:
    """Whether the two indexes read ``tokens`` otherwise (mask or verdict), and how
    many pairs the index taking states apart met (``StoreAutomaton.meet``)."""
    automata = [vocabulary.schema_rows.compile(JsonSchema(schema)) for _ in range(2)]
    fast, plain = (
        TokenIndex(automaton, vocabulary, share_lexemes=share, lock=lock)
        for (automaton, lock), share in zip(automata, (True, False), strict=True)
    )
    here, there = fast.initial_state, plain.initial_state
    other = False
    for token in tokens:
        if not np.array_equal(fast.bitmask(here), plain.bitmask(there)):
            other = True
            break
        here, there = fast.next_state(here, token), plain.next_state(there, token)
        if here < 0 or there < 0:
            other = (here < 0) != (there < 0)
            break
    else:
        other = fast.is_final(here) != plain.is_final(there)
    return other, automata[0][0].meets_made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a MaskBench-style .jsonl.gz file")
    parser.add_argument("--stride", type=int, default=1, help="every n-th such schema")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument(
        "--any-length", action="store_true", help="every schema that bounds a string's length"
    )
    choice.add_argument("--every-schema", action="store_true", help="every schema")
    args = parser.parse_args()
    if args.every_schema:
        chosen, what = every_schema, ""
    elif args.any_length:
        chosen, what = bounds_a_length, " with a bounded string"
    else:
        chosen, what = counts_beside_a_pattern, " with a count beside a pattern"
    tokenizer = load_default_tokenizer()
    vocabulary = Vocabulary.from_tokenizer(tokenizer)
    checked = refused = instances = tokens_read = pairs_met = 0
    other: list[str] = []
    with gzip.open(args.data, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    selected = [row for row in rows if chosen(row["schema"])]
    for row in selected[:: args.stride]:
        valid = [test["data"] for test in row["tests"] if test["valid"]]
        try:
            vocabulary.schema_rows.compile(JsonSchema(row["schema"]))
        except FsmError:
            refused += 1
            continue
        checked += 1
        for data in valid:
            tokens = tokenizer.encode(json.dumps(data), add_special_tokens=False)
            instances += 1
            tokens_read += len(tokens)
            other_reading, met = differs(row["schema"], tokens, vocabulary)
            pairs_met += met
            if other_reading:
                other.append(row["name"])
                break
    print(f"{len(selected)} schemas{what}; {checked} checked")
    print(f"({refused} refused), {instances} instances, {tokens_read} tokens")
    print(f"pairs met by the walks taking states apart: {pairs_met}")
    print(f"read otherwise: {len(other)}")
    for name in other:
        print(f"  {name}")
    sys.exit(1 if other else 0)


if __name__ == "__main__":
    main()
