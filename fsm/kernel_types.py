"""The argument types of the numba kernels, so each is compiled when its module loads.

A kernel left to numba's lazy dispatch is compiled (or loaded from numba's cache) the
first time it meets a new combination of argument types, and a read-only array is a
type of its own: a walk that first hands a kernel a frozen array paid 3-30 ms in the
middle of a step (0.3-0.8 s where no cache exists yet). Declaring one signature per
kernel moves that cost to the import of its module, and numba converts a writable
array to a read-only parameter at the call, so one signature takes both. An argument
of another dtype is refused with a ``TypeError`` instead of being compiled anew.

Arrays a kernel only reads are declared read-only; the ones it writes are not.
"""

from __future__ import annotations

from numba import types


def _reads(dtype: types.Type, ndim: int = 1) -> types.Array:
    return types.Array(dtype, ndim, "C", readonly=True)


def _writes(dtype: types.Type) -> types.Array:
    return types.Array(dtype, 1, "C")


INT = types.int64
"""A Python int (a count, a token id, a vocabulary size)."""
READS_INT32 = _reads(types.int32)
READS_INT32_TABLE = _reads(types.int32, 2)
READS_UINT8 = _reads(types.uint8)
READS_UINT16 = _reads(types.uint16)
READS_BOOL = _reads(types.boolean)
WRITES_INT32 = _writes(types.int32)
WRITES_BOOL = _writes(types.boolean)
WRITES_INT32_TABLE = types.Array(types.int32, 2, "C")
