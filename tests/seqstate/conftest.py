"""A scripted engine over the real SmolLM2 tokenizer, so state tests need no weights."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pytest

from fsm import Vocabulary
from fsm.vocabulary import text_bytes
from seqstate import Generator, Origin, SequenceState, Span, decode_tokens


@dataclass(frozen=True)
class FakeKV:
    """A KV handle that only knows its length and pool."""

    pool: object
    length: int

    def prefix(self, n: int) -> FakeKV:
        assert 0 < n <= self.length
        return FakeKV(self.pool, n)


@dataclass(frozen=True, eq=False)
class ScriptedGenerator(Generator):
    """Generates the same token ids on every row, with made-up states and logprobs."""

    token_ids: tuple[int, ...]
    name: str | None = None
    parser: Any = None
    finish_reason: str = "stop"

    def __call__(self, state: SequenceState) -> SequenceState:
        return state.engine.generate(state, self)


@dataclass(eq=False)
class FakeEngine:
    """`Engine` over a real tokenizer: `generate` settles pending text with token healing
    (one token) and appends the generator's scripted ids, covering the row with a KV."""

    tokenizer: Any
    vocabulary: Vocabulary
    pool: object = field(default_factory=object)

    @cached_property
    def text_bytes(self) -> tuple[bytes | None, ...]:
        return text_bytes(self.vocabulary, self.tokenizer)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def generate(self, state: SequenceState, generator: ScriptedGenerator) -> SequenceState:
        detokenizer = state.detokenizer()
        rows = []
        for row in state.settle().rows:
            if row.pending_text:
                healed = 1 if row.n_tokens and row.token_ids[-1] != 0 else 0
                tail = (
                    row.text[int(row.token_offsets[row.n_tokens - healed, 0]) :]
                    if healed
                    else row.pending_text
                )
                try:
                    row = row.with_tokenized_tail(healed, self.encode(tail), detokenizer)
                except Exception:
                    row = row.with_tokenized_tail(0, self.encode(row.pending_text), detokenizer)
            ids = np.asarray(generator.token_ids, dtype=np.int32)
            n = len(ids)
            origin = Origin(
                "generated",
                generator=generator,
                capture=generator.name,
                parser=generator.parser,
                finish_reason=generator.finish_reason,
            )
            span = Span.of_tokens(
                ids,
                decode_tokens(detokenizer, ids),
                origin,
                logprobs=-np.arange(1, n + 1, dtype=np.float32) / 10,
                constraint_states=np.arange(1, n + 1),
            )
            extended = row.appended(span, kv=None)
            rows.append(extended.with_kv(FakeKV(self.pool, extended.n_tokens)))
        return state.with_rows(rows)


@pytest.fixture(scope="session")
def smol_vocabulary(smol_tokenizer):
    return Vocabulary.from_tokenizer(smol_tokenizer)


@pytest.fixture(scope="session")
def engine(smol_tokenizer, smol_vocabulary):
    return FakeEngine(smol_tokenizer, smol_vocabulary)


@pytest.fixture(scope="session")
def other_engine(smol_tokenizer, smol_vocabulary):
    return FakeEngine(smol_tokenizer, smol_vocabulary)
