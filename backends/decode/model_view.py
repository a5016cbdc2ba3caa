"""`DecodingModel`: what the decode loop reads from a model.

`backends.model.Model` implements it; the decode modules (and `backends.streaming`)
depend on this protocol instead of on `Model`, so that the model, which calls into
them, is never imported by them.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor
from typing import Any, Protocol

import torch

import fsm
from backends.masks import DeviceMasks
from backends.progress import ProgressSetting
from backends.runner import ModelRunner


class DecodingModel(Protocol):
    """The model state one decode run reads and updates (counters)."""

    runner: ModelRunner
    vocabulary: fsm.Vocabulary
    masks: DeviceMasks
    progress: ProgressSetting
    jump_forward: bool
    restrict_head: bool
    counters: dict[str, int]
    end_token: int
    lock: threading.RLock

    @property
    def mask_worker(self) -> Executor | None:
        """Where the next step's masks are built during the forward pass (None: before it)."""
        ...

    @property
    def device(self) -> torch.device:
        """Where the model's weights and logits live."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`, without special tokens."""
        ...

    def index(self, spec: Any, *, eager: bool = False) -> fsm.TokenIndex:
        """The token index of a constraint spec, compiled once per model."""
        ...
