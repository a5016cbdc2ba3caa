"""Streaming a program: text chunks per row while the parts of a chain are appended.

``model.stream(state, "Name: ", ss.regex(...), "\\nAge: ", ss.json(int))`` runs the
parts in order, as ``state + part`` would, and yields after every decode step the new
text of each row (``[batch][samples]`` lists of str: UTF-8 safe, stop strings and
possible banned-string starts held back). ``+`` itself is eager (states are values),
so the parts are passed to ``stream`` rather than added first. After the loop,
``stream.state`` is the final state, equal to ``state + part_1 + ... + part_n``.
"""

from __future__ import annotations

from collections.abc import Generator as PyGenerator
from collections.abc import Iterator
from typing import Any

from backends.decode.model_view import DecodingModel
from backends.generation import decode
from seqstate.builtin_generators import SpanGenerator
from seqstate.samplers import Beam
from seqstate.state import SequenceState

Chunks = list[list[str]]


class Stream(Iterator[Chunks]):
    """Iterate for per-row text chunks; ``state`` holds the result once exhausted."""

    def __init__(self, model: DecodingModel, state: SequenceState, parts: tuple[Any, ...]) -> None:
        if not parts:
            raise ValueError("stream() needs at least one part to append (text or a generator)")
        self._steps = _run(model, state, parts)
        self._lock = model.lock  # held for one step: other calls run between steps
        self.state: SequenceState | None = None

    def __next__(self) -> Chunks:
        try:
            with self._lock:
                return next(self._steps)
        except StopIteration as done:
            self.state = done.value
            raise


def _run(
    model: DecodingModel, state: SequenceState, parts: tuple[Any, ...]
) -> PyGenerator[Chunks, None, SequenceState]:
    for part in parts:
        if isinstance(part, SpanGenerator) and not isinstance(part.sampler, Beam):
            state = yield from decode(model, state, part)
        else:  # text, a state, or a beam search (its text settles only at the end)
            extended = state + part
            yield new_text(state, extended)
            state = extended
    return state


def new_text(before: SequenceState, after: SequenceState) -> Chunks:
    """Per row of ``after``, its text beyond the row of ``before`` it extends (rows of
    ``before`` broadcast over the ``(batch, samples)`` shape of ``after``)."""
    old, new = before.texts, after.texts
    (b_old, k_old), (b_new, k_new) = before.shape, after.shape
    return [
        [new[b][k][len(old[b if b_old > 1 else 0][k if k_old > 1 else 0]) :] for k in range(k_new)]
        for b in range(b_new)
    ]
