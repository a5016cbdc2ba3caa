"""The processors' masking: the CPU (numpy) and device (torch) paths agree, refuse
exactly what the index refuses (padding included) and, in final states, give the end
token the refused mass; rows not named are left alone."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fsm
from backends.masks import DeviceMasks
from backends.processor_masks import mask_rows_numpy, mask_rows_torch

PADDING = 40


@pytest.fixture(scope="module")
def vocabulary(smol_tokenizer):
    return fsm.Vocabulary.from_tokenizer(smol_tokenizer)


def test_numpy_and_torch_paths_agree(vocabulary, smol_tokenizer):
    regex = fsm.compile_index(fsm.Regex("[0-9]{2}(ab)?"), vocabulary)
    choice = fsm.compile_index(fsm.Choice(["yes", "no"]), vocabulary)
    done = regex.initial_state
    for token in smol_tokenizer.encode("42", add_special_tokens=False):
        done = regex.next_state(done, token)
    assert regex.is_final(done) and not regex.is_final(regex.initial_state)
    positions = [0, 2, 3]
    indexes, states = [regex, choice, regex], [regex.initial_state, choice.initial_state, done]
    end = min(vocabulary.eos_ids)
    torch.manual_seed(0)
    logits = torch.randn(5, vocabulary.size + PADDING, dtype=torch.float64)
    by_torch = mask_rows_torch(
        logits.clone(), positions, indexes, states, DeviceMasks(torch.device("cpu")), end
    )
    by_numpy = logits.clone()
    mask_rows_numpy(by_numpy.numpy(), positions, indexes, states, end)
    assert torch.allclose(by_torch, by_numpy)
    for row in (1, 4):  # rows not named are untouched
        assert torch.equal(by_numpy[row], logits[row])
    for row, index, state in zip(positions, indexes, states):
        finite = np.flatnonzero(torch.isfinite(by_numpy[row]).numpy())
        assert finite.tolist() == index.allowed_tokens(state).tolist()
    refused = torch.ones(vocabulary.size + PADDING, dtype=torch.bool)
    refused[regex.allowed_tokens(done).tolist()] = False
    expected = torch.logaddexp(logits[3, end], torch.logsumexp(logits[3][refused], 0))
    assert torch.isclose(by_numpy[3, end], expected)
