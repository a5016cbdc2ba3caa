"""Sampler specs: pure data saying how the next token is chosen.

The backend reads them; nothing here touches tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

from seqstate.errors import SeqStateError


class InvalidSampler(SeqStateError, ValueError):
    """A sampler was given parameters outside their range."""


@dataclass(frozen=True)
class Greedy:
    """Always the most likely allowed token."""


@dataclass(frozen=True)
class Sample:
    """Multinomial sampling after temperature, top-k, top-p (nucleus) and min-p filters.

    ``seed`` makes a run reproducible: rows draw in order from one generator.
    """

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    min_p: float | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if not self.temperature > 0:
            raise InvalidSampler("temperature must be > 0 (use ss.greedy() for argmax)")
        if self.top_k is not None and self.top_k < 1:
            raise InvalidSampler("top_k must be >= 1")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise InvalidSampler("top_p must be in (0, 1]")
        if self.min_p is not None and not 0 <= self.min_p < 1:
            raise InvalidSampler("min_p must be in [0, 1)")


@dataclass(frozen=True)
class Beam:
    """Beam search with ``n`` beams; the result has ``n`` samples per row, best first.

    Scores are summed log-probabilities divided by ``length ** length_penalty``.
    """

    n: int
    length_penalty: float = 1.0

    def __post_init__(self) -> None:
        if self.n < 1:
            raise InvalidSampler("beam search needs n >= 1")


SamplerSpec = Greedy | Sample | Beam


def greedy() -> Greedy:
    return Greedy()


def sample(
    temperature: float = 1.0,
    *,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    seed: int | None = None,
) -> Sample:
    return Sample(temperature, top_k, top_p, min_p, seed)


def beam(n: int, *, length_penalty: float = 1.0) -> Beam:
    return Beam(n, length_penalty)
