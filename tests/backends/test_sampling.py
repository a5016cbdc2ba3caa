"""Pure sampling steps: bitmask unpacking, masking, filters, and the end-of-span mass."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from backends import sampling


@settings(max_examples=50, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=100))
def test_unpack_bitmask_round_trips(bits):
    words = (len(bits) + 31) // 32
    packed = torch.zeros(1, words, dtype=torch.int64)
    for t, on in enumerate(bits):
        if on:
            packed[0, t // 32] |= 1 << (t % 32)
    packed = packed.to(torch.int32)  # bit 31 wraps to negative, as numpy's int32 masks do
    assert sampling.unpack_bitmask(packed, len(bits))[0].tolist() == bits


def test_end_token_carries_the_mass_of_refused_tokens():
    logits = torch.log(torch.tensor([[0.1, 0.2, 0.3, 0.4]]))  # token 0 is the end token
    allowed = torch.tensor([[True, True, False, False]])
    folded = sampling.end_with_refused_mass(logits, allowed, torch.tensor([True]), end_token=0)
    probs = torch.softmax(folded, -1)[0]
    torch.testing.assert_close(probs, torch.tensor([0.8, 0.2, 0.0, 0.0]))
    kept = sampling.end_with_refused_mass(logits, allowed, torch.tensor([False]), end_token=0)
    torch.testing.assert_close(torch.softmax(kept, -1)[0], torch.tensor([1 / 3, 2 / 3, 0.0, 0.0]))


def test_top_k_top_p_min_p_filters():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    assert torch.isinf(sampling.filter_logits(logits, top_k=2)[0, 2:]).all()
    top_p = sampling.filter_logits(logits, top_p=0.7)[0]
    assert torch.isfinite(top_p[:2]).all() and torch.isinf(top_p[2:]).all()
    min_p = sampling.filter_logits(logits, min_p=0.5)[0]
    assert torch.isfinite(min_p[:2]).all() and torch.isinf(min_p[2:]).all()


def test_seeded_sampling_is_reproducible():
    scores = torch.zeros(4, 50)
    first = sampling.sample_tokens(scores, torch.Generator().manual_seed(3))
    again = sampling.sample_tokens(scores, torch.Generator().manual_seed(3))
    assert torch.equal(first, again)
