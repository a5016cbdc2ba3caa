"""The restricted output head: the logits a constraint needs, the rest -inf."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from backends.head import RESTRICT_BELOW, head_logits

VOCAB, WIDTH = 400, 12


def _head(bias: bool) -> torch.nn.Linear:
    torch.manual_seed(1)
    return torch.nn.Linear(WIDTH, VOCAB, bias=bias)


id_sets = st.one_of(
    st.none(),
    st.lists(st.integers(0, VOCAB - 1), min_size=1, max_size=60, unique=True).map(
        lambda ids: np.asarray(sorted(ids), dtype=np.int32)
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(id_sets, min_size=1, max_size=5), st.booleans())
def test_needed_entries_equal_the_full_head_and_the_rest_is_minus_inf(only, bias):
    head = _head(bias)
    hidden = torch.randn(len(only), WIDTH, generator=torch.Generator().manual_seed(len(only)))
    with torch.no_grad():
        full = head(hidden)
        out = head_logits(hidden, head, VOCAB, only)
    for row, ids in enumerate(only):
        if ids is None or len(ids) >= VOCAB * RESTRICT_BELOW:
            torch.testing.assert_close(out[row], full[row])
            continue
        wanted = torch.as_tensor(ids, dtype=torch.long)
        torch.testing.assert_close(out[row, wanted], full[row, wanted])
        rest = torch.ones(VOCAB, dtype=torch.bool)
        rest[wanted] = False
        assert torch.isneginf(out[row, rest]).all()


def test_large_sets_and_no_sets_use_the_plain_head():
    head = _head(False)
    hidden = torch.randn(2, WIDTH)
    big = np.arange(VOCAB // 2, dtype=np.int32)
    with torch.no_grad():
        torch.testing.assert_close(head_logits(hidden, head, VOCAB, [big, None]), head(hidden))
        torch.testing.assert_close(head_logits(hidden, head, VOCAB), head(hidden))
