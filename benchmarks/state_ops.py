"""`+` and slicing cost O(segments), not O(tokens): time them on states of 1,000
segments holding 10k and 100k tokens, side by side, with an O(tokens) read for contrast.

Run: .venv/bin/python benchmarks/state_ops.py [--segments 1000] [--repeat 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import timeit
from dataclasses import dataclass
from typing import Any

from seqstate import Detokenizer, Origin, Row, SequenceState, Span, decode_tokens

WORDS = [f" w{i}".encode() for i in range(500)] + ["é".encode(), " 日本".encode()]


@dataclass(frozen=True)
class Vocabulary:
    token_bytes: tuple[bytes | None, ...]
    eos_ids: frozenset[int] = frozenset()


@dataclass(eq=False)
class BenchEngine:
    """Just enough of an engine to hold states (nothing here runs a model)."""

    vocabulary: Vocabulary
    tokenizer: Any = None

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError("the benchmark never tokenizes")

    def generate(self, state: SequenceState, generator: Any) -> SequenceState:
        raise NotImplementedError("the benchmark never generates")


def build_state(engine: BenchEngine, segments: int, tokens: int, seed: int = 0) -> SequenceState:
    """A 1x1 state of `segments` spans (alternating prompt/generated) of equal size."""
    rng = random.Random(seed)
    detokenizer = Detokenizer(engine.vocabulary.token_bytes)
    per_segment = tokens // segments
    pieces = []
    for index in range(segments):
        ids = [rng.randrange(len(WORDS)) for _ in range(per_segment)]
        kind = "generated" if index % 2 else "prompt"
        origin = Origin(kind, generator=("spec", index % 3) if kind == "generated" else None)
        states = range(1, per_segment + 1) if kind == "generated" else None
        span = Span.of_tokens(ids, decode_tokens(detokenizer, ids), origin, None, states)
        pieces.append(Row.of_span(span))
    row = Row(tuple(segment for piece in pieces for segment in piece.segments))
    return SequenceState(engine, (row,), (1, 1))


def median_us(operation, repeat: int) -> float:
    """Median wall time of one call, in microseconds."""
    return statistics.median(timeit.repeat(operation, number=1, repeat=repeat)) * 1e6


def operations(state: SequenceState, other: SequenceState) -> dict[str, Any]:
    row = state.row(0)
    middle, tokens = row.n_chars // 2, row.n_tokens
    return {
        "s + t (1,000 segments each)": lambda: state + other,
        's + "text"': lambda: state + " more text",
        "s[..., :half] (prefix slice)": lambda: state[..., :middle],
        "s[..., q:3q] (inner slice)": lambda: state[..., middle // 2 : middle + middle // 2],
        "s.tokens[..., 10:-10]": lambda: state.tokens[..., 10 : tokens - 10],
        "s.fork(8)": lambda: state.fork(8),
        "reference O(tokens): ids.tolist()": lambda: row.token_ids.tolist(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    engine = BenchEngine(Vocabulary(tuple(WORDS)))
    sizes = (10_000, 100_000)
    results = {}
    for size in sizes:
        state = build_state(engine, args.segments, size)
        other = build_state(engine, args.segments, size, seed=1)
        assert state.row(0).n_tokens == size
        results[size] = {
            name: median_us(op, args.repeat) for name, op in operations(state, other).items()
        }
    header = (
        f"{'operation':34} "
        + " ".join(f"{f'{s // 1000}k tok (µs)':>14}" for s in sizes)
        + "   ratio"
    )
    print(f"{args.segments} segments, median of {args.repeat} runs")
    print(header)
    print("-" * len(header))
    for name in results[sizes[0]]:
        small, large = results[sizes[0]][name], results[sizes[1]][name]
        print(f"{name:34} {small:14.1f} {large:14.1f} {large / small:7.2f}")


if __name__ == "__main__":
    main()
