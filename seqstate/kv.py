"""`KVRef`: the handle a row holds on the model's KV cache, and the prefix rule.

The backend's block pool implements the protocol; a state never looks inside a handle.
A handle covers the first `length` committed tokens of its row.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class KVRef(Protocol):
    """Immutable handle on cached keys/values for the first `length` tokens of a row."""

    @property
    def length(self) -> int:
        """Number of leading tokens whose keys/values the handle covers."""
        ...

    @property
    def pool(self) -> object:
        """The owning pool (compared by identity)."""
        ...

    def prefix(self, n: int) -> KVRef | None:
        """A handle on the first `n` tokens (`0 <= n <= length`), sharing storage."""
        ...


def kv_prefix(kv: KVRef | None, n_tokens: int) -> KVRef | None:
    """The part of `kv` still valid when only the first `n_tokens` tokens are kept.

    Returns `kv` itself when it fits, `None` when nothing is left, else `kv.prefix(n)`.
    """
    if kv is None or n_tokens <= 0:
        return None
    if n_tokens >= kv.length:
        return kv
    return kv.prefix(n_tokens)
