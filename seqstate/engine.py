"""`Engine`: what a state needs from the model it belongs to (implemented by backends).

A state keeps a shared reference to its engine; combining states of two engines is an
`EngineMismatch`. `seqstate` calls `encode` (to settle pending text that is followed by
tokens) and reads `text_bytes` (to decode ids); `generate` and `step` are called by
generators, never by the algebra itself. The protocol is generic in the state type so
that this module, which `seqstate.state` imports, needs nothing from it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from seqstate.generator import Generator

StateT = TypeVar("StateT")


@runtime_checkable
class VocabularyLike(Protocol):
    """The part of `fsm.Vocabulary` seqstate reads (a protocol: ``fsm.Vocabulary``
    implements it).

    Example:
        >>> isinstance(fsm.Vocabulary.from_raw([b"a", None], eos_ids=1), ss.VocabularyLike)
        True
    """

    @property
    def token_bytes(self) -> Sequence[bytes | None]:
        """Exact bytes of each token id; `None` for special tokens that are not text."""
        ...

    @property
    def eos_ids(self) -> Collection[int]:
        """End-of-generation token ids."""
        ...


@runtime_checkable
class Engine(Protocol[StateT]):
    """A model as the state algebra sees it (a protocol): ``ss.Model`` implements it,
    and so can another backend (the vLLM engine) or a test double.

    Example::

        model = ss.load_model()
        isinstance(model, ss.Engine)  # True
        s = model("Hi")               # s.engine is model
    """

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer (duck-typed; seqstate never imports transformers)."""
        ...

    @property
    def vocabulary(self) -> VocabularyLike:
        """Token bytes and end ids of the model's vocabulary."""
        ...

    @property
    def text_bytes(self) -> Sequence[bytes | None]:
        """Bytes each token id shows as text: `vocabulary.token_bytes`, except that special
        tokens show their literal content (`<|im_start|>`) so prompts read as written."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`, without special tokens."""
        ...

    def generate(self, state: StateT, generator: Generator[StateT]) -> StateT:
        """Run `generator` on every row of `state`; returns the extended state."""
        ...

    def step(
        self, state: StateT, logits: Any, generator: Generator[StateT], *, rng: Any = None
    ) -> StateT:
        """Extend every row by one token drawn from `logits` the caller computed
        (`ss.step`); engines that cannot take outside logits raise a `SeqStateError`."""
        ...
