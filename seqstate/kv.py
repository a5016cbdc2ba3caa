"""`KVRef`: the handle a row holds on the model's KV cache, and the prefix rule.

The backend's block pool implements the protocol; a state never looks inside a handle.
A handle covers the first `length` committed tokens of its row.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class KVRef(Protocol):
    """Immutable handle on cached keys/values for the first `length` tokens of a row.

    A protocol: the backend's block pool makes the handles (``backends.kvref``) and a
    state only keeps them, cuts them with ``prefix`` and passes them back. Rows hold
    one each (``row.kv``); blocks return to the pool when the last handle is dropped.

    Example::

        s = model("Hello there") + ss.gen(max_tokens=3)
        kv = s.row(0).kv        # covers the tokens the model has computed
        kv.prefix(2).length     # 2: shares the same blocks, no copy
    """

    @property
    def length(self) -> int:
        """Number of leading tokens whose keys/values the handle covers."""
        ...

    @property
    def pool(self) -> object:
        """The owning pool (compared by identity)."""
        ...

    def prefix(self, n: int) -> KVRef | None:
        """A handle on the first `n` tokens (`0 <= n <= length`), sharing storage.

        Args:
            n: tokens to keep.

        Example: ``kv.prefix(2).length == 2``.
        """
        ...


def kv_prefix(kv: KVRef | None, n_tokens: int) -> KVRef | None:
    """The part of `kv` still valid when only the first `n_tokens` tokens are kept.

    Returns `kv` itself when it fits, `None` when nothing is left, else `kv.prefix(n)`.

    Args:
        kv: a handle, or ``None`` (nothing cached).
        n_tokens: tokens kept from the start of the row.

    Example:
        >>> ss.kv_prefix(None, 5) is None
        True
    """
    if kv is None or n_tokens <= 0:
        return None
    if n_tokens >= kv.length:
        return kv
    return kv.prefix(n_tokens)
