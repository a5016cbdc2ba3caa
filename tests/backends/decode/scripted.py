"""A scripted engine: the decode loop without a model.

The vocabulary is every single byte plus a few merged tokens and one end id. The
"model" gives, for the text so far (prompt and generated), the logits of the next
token from a script: the rule whose key is the longest suffix of the text applies,
mapping next tokens (their text, their bytes, or ``"<eos>"``) to logits (every other
token gets ``FLOOR``); the text is decoded with U+FFFD for unfinished characters. So a test says
what the model prefers after what, and pins a rule of the loop independently of any
real model's behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import fsm
from backends import generation
from backends.masks import DeviceMasks
from seqstate.state import SequenceState

MERGED = [
    "He", "llo", "Hello", " and", " a", " an", "nd", "The", " cat", " sat", " cats",
    "ST", "OP", "STOP", "ab", " Hi", "Hi", "é", "\n\n", "Q:", " yes", " no",
]  # fmt: skip
FLOOR = -30.0
Script = Mapping[str, Mapping[str | bytes, float]]  # text suffix -> {next token: logit}


def vocabulary_bytes() -> list[bytes | None]:
    return [bytes([b]) for b in range(256)] + [m.encode() for m in MERGED] + [None]


@dataclass(frozen=True)
class FakeRef:
    """A KV handle that only remembers which tokens it covers."""

    tokens: tuple[int, ...]
    pool: Any = None

    @property
    def length(self) -> int:
        return len(self.tokens)

    def prefix(self, n: int) -> FakeRef:
        return FakeRef(self.tokens[:n], self.pool)


class ScriptedRunner:
    """``ModelRunner.forward`` answered from a script; counts forward calls."""

    def __init__(self, engine: ScriptedEngine) -> None:
        self.engine = engine
        self.calls = 0

    def forward(
        self, rows: Sequence[tuple[Any, Any]], only: Sequence[Any] | None = None
    ) -> tuple[torch.Tensor, list[FakeRef]]:
        self.calls += 1
        refs = []
        for base, ids in rows:
            before = () if base is None else base.tokens
            refs.append(FakeRef(before + tuple(int(t) for t in np.asarray(ids)), self))
        logits = torch.stack([self.engine.logits_after(ref.tokens) for ref in refs])
        return logits, refs


class ScriptedEngine:
    """Enough of ``backends.model.Model`` for the decode loop."""

    def __init__(self, script: Script, *, jump_forward: bool = False) -> None:
        self.token_bytes = vocabulary_bytes()
        self.eos = len(self.token_bytes) - 1
        self.vocabulary = fsm.Vocabulary.from_raw(self.token_bytes, self.eos)
        self.text_bytes = self.token_bytes
        self.end_token = self.eos
        self.script = script
        self.jump_forward = jump_forward
        self.restrict_head = False
        self.mask_worker = None
        self.progress = False
        self.counters = {"tokens_sampled": 0, "tokens_forced": 0}
        self.tokenizer = None
        self.device = torch.device("cpu")
        self.masks = DeviceMasks(self.device)
        self.indexes = fsm.IndexCache()
        self.runner = ScriptedRunner(self)
        self._ids = {data: i for i, data in enumerate(self.token_bytes) if data is not None}

    def __call__(self, texts: str | list[str]) -> SequenceState:
        return SequenceState.from_text(self, [texts] if isinstance(texts, str) else texts)

    def id(self, token: str | bytes) -> int:
        return self._ids[token.encode() if isinstance(token, str) else token]

    def encode(self, text: str) -> list[int]:
        """Greedy longest match over the vocabulary."""
        data, ids = text.encode(), []
        while data:
            size = max(n for n in range(1, len(data) + 1) if data[:n] in self._ids)
            ids.append(self._ids[data[:size]])
            data = data[size:]
        return ids

    def logits_after(self, tokens: Sequence[int]) -> torch.Tensor:
        text = b"".join(self.token_bytes[t] or b"" for t in tokens).decode("utf-8", "replace")
        rule = max((key for key in self.script if text.endswith(key)), key=len, default=None)
        logits = torch.full((len(self.token_bytes),), FLOOR)
        for token, value in (self.script[rule] if rule is not None else {}).items():
            logits[self.eos if token == "<eos>" else self.id(token)] = value
        return logits

    def index(self, spec: Any) -> fsm.TokenIndex:
        return fsm.compile_index(spec, self.vocabulary, cache=self.indexes)

    def generate(self, state: SequenceState, generator: Any) -> SequenceState:
        return generation.generate(self, state, generator)

    def step(
        self, state: SequenceState, logits: Any, generator: Any, **options: Any
    ) -> SequenceState:
        return generation.step(self, state, logits, generator, **options)

    def stream(self, state: SequenceState, generator: Any) -> tuple[list[str], SequenceState]:
        """Chunks of row 0 and the final state of ``generation.decode``."""
        steps, chunks = generation.decode(self, state, generator), []
        while True:
            try:
                chunks.append(next(steps)[0][0])
            except StopIteration as done:
                return chunks, done.value

    def drive(self, state: SequenceState, generator: Any, steps: int) -> SequenceState:
        """A caller's own loop: our logits for each row, then ``step``."""
        for _ in range(steps):
            logits = torch.stack([self.logits_after(row.token_ids.tolist()) for row in state.rows])
            state = self.step(state, logits, generator)
        return state
