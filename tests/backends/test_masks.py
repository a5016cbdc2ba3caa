"""Device mask tables agree with the index's own bitmasks, also as rows are added."""

from __future__ import annotations

import numpy as np
import torch

import fsm
from backends.masks import DeviceMasks
from backends.sampling import unpack_bitmask


def test_gathered_masks_equal_index_bitmasks_as_the_table_grows(smol_tokenizer):
    vocabulary = fsm.Vocabulary.from_tokenizer(smol_tokenizer)
    index = fsm.compile_index(fsm.Regex(r"[a-c]{1,3}[0-9]"), vocabulary)
    masks = DeviceMasks(torch.device("cpu"))
    state = index.initial_state
    seen = [state]
    for token in smol_tokenizer.encode("ab1", add_special_tokens=False):
        got = masks.packed(index, seen)  # the table is re-synced as new rows appear
        expected = np.stack([index.bitmask(s) for s in seen])
        assert np.array_equal(got.numpy(), expected)
        state = index.next_state(state, token)
        seen.append(state)
    allowed = masks.allowed([index, None], [index.initial_state, None], vocabulary.size)
    assert allowed.shape == (2, vocabulary.size)
    assert torch.equal(
        allowed[0],
        unpack_bitmask(torch.from_numpy(index.bitmask(index.initial_state))[None], vocabulary.size)[
            0
        ],
    )
    assert allowed[1].all()
    assert masks.allowed([None], [None], vocabulary.size) is None
