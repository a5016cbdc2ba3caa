"""Sampler specs: pure data saying how the next token is chosen.

The backend reads them; nothing here touches tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

from seqstate.errors import SeqStateError


class InvalidSampler(SeqStateError, ValueError):
    """A sampler was given parameters outside their range (raised when it is built).

    Example:
        >>> ss.sample(temperature=0)
        Traceback (most recent call last):
        ...
        seqstate.samplers.InvalidSampler: temperature must be > 0 (use ss.greedy() for argmax)
    """


@dataclass(frozen=True)
class Greedy:
    """Always the most likely allowed token (the default sampler); built by ``ss.greedy()``.

    Example:
        >>> ss.greedy() == ss.Greedy()
        True
    """


@dataclass(frozen=True)
class Sample:
    """Multinomial sampling after temperature, top-k, top-p (nucleus) and min-p filters;
    built by ``ss.sample(...)``, whose docstring explains the fields.

    Args:
        temperature: divides the logits before sampling (> 0).
        top_k: keep the ``top_k`` most likely tokens (``None``: all).
        top_p: keep the smallest set of tokens whose probability reaches ``top_p``.
        min_p: drop tokens less likely than ``min_p`` times the most likely one.
        seed: makes a run reproducible: rows draw in order from one generator.

    Example:
        >>> ss.Sample(0.7, top_p=0.9)
        Sample(temperature=0.7, top_k=None, top_p=0.9, min_p=None, seed=None)
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
    Built by ``ss.beam(n)``.

    Args:
        n: number of beams (>= 1), and of samples per row in the result.
        length_penalty: scores are summed log-probabilities divided by
            ``length ** length_penalty``, as in transformers.

    Example:
        >>> ss.Beam(4).n
        4
    """

    n: int
    length_penalty: float = 1.0

    def __post_init__(self) -> None:
        if self.n < 1:
            raise InvalidSampler("beam search needs n >= 1")


SamplerSpec = Greedy | Sample | Beam


def greedy() -> Greedy:
    """The greedy sampler: always the most likely token the constraint allows. It is the
    default of every generator, so passing it only makes the choice explicit.

    Example:
        >>> ss.gen(max_tokens=8, sampler=ss.greedy()).sampler
        Greedy()
    """
    return Greedy()


def sample(
    temperature: float = 1.0,
    *,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    seed: int | None = None,
) -> Sample:
    """A sampler that draws the next token at random from the model's distribution,
    restricted to the tokens the constraint allows, after temperature and the filters:

    Args:
        temperature: divides the logits (> 0; below 1 sharpens, above 1 flattens).
        top_k: keep only the ``top_k`` most likely tokens (``None``: no limit).
        top_p: nucleus sampling: keep the smallest set of most likely tokens whose
            probabilities sum to at least ``top_p`` (in ``(0, 1]``).
        min_p: drop tokens whose probability is below ``min_p`` times the most likely
            token's (in ``[0, 1)``).
        seed: seeds one random generator per generation, so a run is reproducible
            (rows draw from it in order); ``None`` draws from torch's global generator.

    Raises ``InvalidSampler`` for values out of range.

    Example:
        >>> ss.sample(0.8, top_p=0.95, seed=0)
        Sample(temperature=0.8, top_k=None, top_p=0.95, min_p=None, seed=0)

        Eight different continuations of one prompt (the prompt is computed once)::

            s = model("A haiku about rain:\\n").fork(8)
            s = s + ss.gen(max_tokens=20, sampler=ss.sample(0.9, seed=0))
    """
    return Sample(temperature, top_k, top_p, min_p, seed)


def beam(n: int, *, length_penalty: float = 1.0) -> Beam:
    """Beam search under the span's constraint: keeps the ``n`` best partial spans by
    summed log-probability and returns ``n`` samples per row, best first, ranked as
    transformers' ``generate(num_beams=n)`` ranks them. Hooks are not called in beams.

    Args:
        n: number of beams (>= 1); the result has ``n`` samples per row.
        length_penalty: a finished beam scores ``sum logprob / length ** length_penalty``
            (above 1 favours longer texts, below 1 shorter ones).

    Example:
        >>> ss.beam(4)
        Beam(n=4, length_penalty=1.0)

        With a model::

            s = model("The capital of France is") + ss.gen(max_tokens=5, sampler=ss.beam(4))
            s.texts  # 4 samples, best first
    """
    return Beam(n, length_penalty)
