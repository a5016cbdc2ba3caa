"""Constraint bitmasks kept on the model's device, gathered by constraint state.

A token index builds one packed int32 row per visited state and only ever appends
rows. ``DeviceMasks`` mirrors each index's table on the device and uploads just the
rows built since the last gather, so a decode step moves state numbers to the device,
not masks. A model's masks are used under its lock (docs/design.md, "Threads").
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import torch

from backends import sampling


class DeviceMasks:
    """Per-index device copies of bitmask tables, owned by one model."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._tables: weakref.WeakKeyDictionary[Any, torch.Tensor] = weakref.WeakKeyDictionary()

    def packed(self, index: Any, states: Sequence[int]) -> torch.Tensor:
        """Packed masks ``int32 [len(states), W]`` of ``states`` of ``index``, on the device."""
        for state in set(states):
            index.bitmask(state)  # builds the row on first visit
        table = self._table(index)
        rows = index.rows_of(states)
        return table[torch.as_tensor(rows, device=self.device)]

    def allowed(
        self, indexes: Sequence[Any], states: Sequence[int | None], width: int
    ) -> torch.Tensor | None:
        """bool ``[n, width]`` of allowed tokens (rows without an index allow all), or
        None when no row is constrained."""
        groups: dict[int, tuple[Any, list[int]]] = {}
        for position, index in enumerate(indexes):
            if index is not None:
                groups.setdefault(id(index), (index, []))[1].append(position)
        if not groups:
            return None
        words = (width + 31) // 32
        packed = torch.full((len(states), words), -1, dtype=torch.int32, device=self.device)
        for index, positions in groups.values():
            rows = self.packed(index, [states[p] for p in positions])  # type: ignore[misc]
            packed[torch.as_tensor(positions, device=self.device), : rows.shape[1]] = rows
            packed[torch.as_tensor(positions, device=self.device), rows.shape[1] :] = 0
        return sampling.unpack_bitmask(packed, width)

    def _table(self, index: Any) -> torch.Tensor:
        table = self._tables.get(index)
        built = index.num_rows_built
        if table is None or table.shape[0] < built:
            start = 0 if table is None else table.shape[0]
            fresh = torch.from_numpy(index.bitmask_table(start)[: built - start]).to(self.device)
            table = fresh if table is None else torch.cat([table, fresh])
            self._tables[index] = table
        return table
