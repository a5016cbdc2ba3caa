"""Entry points of generation: ``generate``, ``decode`` (streaming) and ``step``.

The decode loop itself lives in ``backends.decode`` (one job per module); this module
picks the driver for a generator and is what ``Model`` and ``Stream`` call.
"""

from __future__ import annotations

from collections.abc import Generator as PyGenerator

from backends.decode import loop
from backends.decode.beam import beam_search
from backends.decode.errors import BacktrackPastSpanStart, GenerationError
from backends.decode.model_view import DecodingModel
from backends.decode.step import step
from seqstate.builtin_generators import SpanGenerator
from seqstate.errors import IncompatibleOperand
from seqstate.generator import Generator
from seqstate.samplers import Beam
from seqstate.state import SequenceState

__all__ = [
    "BacktrackPastSpanStart",
    "GenerationError",
    "decode",
    "generate",
    "span_generator",
    "step",
]

Chunks = loop.Chunks


def generate(model: DecodingModel, state: SequenceState, generator: SpanGenerator) -> SequenceState:
    """Run ``generator`` on every row of ``state``; returns the extended state."""
    if isinstance(generator.sampler, Beam):
        return beam_search(model, state, generator)
    return loop.generate(model, state, generator)


def decode(
    model: DecodingModel, state: SequenceState, generator: SpanGenerator
) -> PyGenerator[Chunks, None, SequenceState]:
    """The plain decode loop as a generator of per-step chunks; returns the new state
    (a beam search runs whole, without chunks: its text settles only at the end)."""
    if isinstance(generator.sampler, Beam):
        return beam_search(model, state, generator)
    return (yield from loop.decode(model, state, generator))


def span_generator(generator: Generator[SequenceState]) -> SpanGenerator:
    """``generator`` as the span generator an engine runs: both engines run the
    built-in span generators (``ss.gen``, ``ss.regex``, ...); a custom ``Generator``
    extends states by calling them itself."""
    if not isinstance(generator, SpanGenerator):
        raise IncompatibleOperand(
            f"the model runs ss.gen/regex/json/choice/grammar spans, not {type(generator).__name__}"
        )
    return generator
