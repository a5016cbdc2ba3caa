"""``SeqstateLogitsProcessor`` driven by hand-made ``BatchUpdate``s: constraint states
follow their requests through added, removed, moved and swapped rows, and ``apply``
masks exactly the constrained rows. The expected masks come from the token index."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vllm.conftest import RUN_HINT

pytest.importorskip("vllm", reason=RUN_HINT)

import torch  # noqa: E402
from vllm import SamplingParams  # noqa: E402
from vllm.exceptions import VLLMValidationError  # noqa: E402
from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality  # noqa: E402

import fsm  # noqa: E402
from backends.vllm.processor import SeqstateLogitsProcessor  # noqa: E402

pytestmark = pytest.mark.vllm

PADDING = 40  # logits columns past the vocabulary, as a padded vocab gives
REGEX = {"regex": "[0-9]{2}-(ab|cd)"}
CHOICE = {"choice": ["yes", "no", "maybe"]}


@pytest.fixture(scope="module")
def vocabulary(smol_tokenizer):
    return fsm.Vocabulary.from_tokenizer(smol_tokenizer)


def processor_over(vocabulary: fsm.Vocabulary) -> SeqstateLogitsProcessor:
    """The processor over a given vocabulary instead of a vLLM model's tokenizer."""
    return SeqstateLogitsProcessor.over(vocabulary, min(vocabulary.eos_ids))


def params(args=None) -> SamplingParams:
    return SamplingParams(extra_args=None if args is None else {"seqstate": args})


def update(size, removed=(), added=(), moved=()) -> BatchUpdate:
    return BatchUpdate(batch_size=size, removed=list(removed), added=list(added), moved=list(moved))


def index_of(args, vocabulary) -> fsm.TokenIndex:
    from backends.request_specs import spec_from_args

    return fsm.compile_index(spec_from_args(args), vocabulary)


def state_after(index: fsm.TokenIndex, tokens) -> int:
    state = index.initial_state
    for token in tokens:
        state = index.next_state(state, token)
    return state


def masked(processor, rows: int, vocabulary) -> np.ndarray:
    """Which logits columns ``apply`` leaves finite, per row."""
    logits = torch.zeros(rows, vocabulary.size + PADDING)
    return torch.isfinite(processor.apply(logits)).numpy()


def expected_row(index: fsm.TokenIndex, state: int, vocabulary) -> np.ndarray:
    row = np.zeros(vocabulary.size + PADDING, bool)
    row[index.allowed_tokens(state)] = True
    return row


def test_constrained_rows_are_masked_and_free_rows_untouched(vocabulary):
    processor = processor_over(vocabulary)
    outputs = [[], [], []]
    added = [(0, params(REGEX), [1], outputs[0]), (1, params(), [1], outputs[1])]
    added.append((2, params(CHOICE), [1], outputs[2]))
    processor.update_state(update(3, added=added))
    got = masked(processor, 3, vocabulary)
    regex, choice = index_of(REGEX, vocabulary), index_of(CHOICE, vocabulary)
    assert (got[0] == expected_row(regex, regex.initial_state, vocabulary)).all()
    assert got[1].all()
    assert (got[2] == expected_row(choice, choice.initial_state, vocabulary)).all()
    assert not got[0, vocabulary.size :].any()  # padding columns are never allowed


def test_state_follows_the_growing_output_list(vocabulary, smol_tokenizer):
    processor = processor_over(vocabulary)
    output: list[int] = []
    processor.update_state(update(1, added=[(0, params(REGEX), [1], output)]))
    regex = index_of(REGEX, vocabulary)
    tokens = smol_tokenizer.encode("12-ab", add_special_tokens=False)
    for n, token in enumerate(tokens):
        output.append(token)  # vLLM appends to the list it handed over
        processor.update_state(None)
        state = state_after(regex, tokens[: n + 1])
        assert (masked(processor, 1, vocabulary)[0] == expected_row(regex, state, vocabulary)).all()
    final = masked(processor, 1, vocabulary)[0]
    assert set(np.flatnonzero(final)) == set(vocabulary.eos_ids)  # the end, and only it


def test_removed_then_condensed_rows_keep_their_states(vocabulary, smol_tokenizer):
    processor = processor_over(vocabulary)
    first, second, third = [], [], []
    processor.update_state(
        update(
            3,
            added=[
                (0, params(CHOICE), [1], first),
                (1, params(), [1], second),
                (2, params(REGEX), [1], third),
            ],
        )
    )
    third.extend(smol_tokenizer.encode("12", add_special_tokens=False))
    # Row 0 finishes; vLLM condenses by moving the last row (2) into the hole.
    processor.update_state(
        update(2, removed=[0], moved=[(2, 0, MoveDirectionality.UNIDIRECTIONAL)])
    )
    regex = index_of(REGEX, vocabulary)
    got = masked(processor, 2, vocabulary)
    assert (got[0] == expected_row(regex, state_after(regex, third), vocabulary)).all()
    assert got[1].all()


def test_swapped_rows_swap_their_states(vocabulary, smol_tokenizer):
    processor = processor_over(vocabulary)
    first, second = [], []
    processor.update_state(
        update(2, added=[(0, params(CHOICE), [1], first), (1, params(REGEX), [1], second)])
    )
    first.extend(smol_tokenizer.encode("ma", add_special_tokens=False))
    processor.update_state(update(2, moved=[(0, 1, MoveDirectionality.SWAP)]))
    choice, regex = index_of(CHOICE, vocabulary), index_of(REGEX, vocabulary)
    got = masked(processor, 2, vocabulary)
    assert (got[0] == expected_row(regex, regex.initial_state, vocabulary)).all()
    assert (got[1] == expected_row(choice, state_after(choice, first), vocabulary)).all()


def test_added_request_replaces_the_row_it_lands_on(vocabulary):
    processor = processor_over(vocabulary)
    processor.update_state(update(1, added=[(0, params(REGEX), [1], [])]))
    processor.update_state(update(1, removed=[0]))
    processor.update_state(update(1, added=[(0, params(), [1], [])]))
    assert masked(processor, 1, vocabulary)[0].all()  # the free request is not masked


def test_resumed_request_reads_the_output_it_already_has(vocabulary, smol_tokenizer):
    """A preempted request comes back with the tokens it generated before."""
    processor = processor_over(vocabulary)
    output = smol_tokenizer.encode("34-", add_special_tokens=False)
    processor.update_state(update(1, added=[(0, params(REGEX), [1], output)]))
    regex = index_of(REGEX, vocabulary)
    expected = expected_row(regex, state_after(regex, output), vocabulary)
    assert (masked(processor, 1, vocabulary)[0] == expected).all()


def test_async_placeholder_is_read_once_filled_in(vocabulary, smol_tokenizer):
    processor = processor_over(vocabulary)
    tokens = smol_tokenizer.encode("56", add_special_tokens=False)
    output = [tokens[0], -1]  # async scheduling: the last id is not known yet
    processor.update_state(update(1, added=[(0, params(REGEX), [1], output)]))
    output[-1:] = tokens[1:]  # filled in before the sampler runs
    regex = index_of(REGEX, vocabulary)
    expected = expected_row(regex, state_after(regex, tokens), vocabulary)
    assert (masked(processor, 1, vocabulary)[0] == expected).all()


def test_token_outside_the_constraint_leaves_only_the_end(vocabulary, smol_tokenizer):
    processor = processor_over(vocabulary)
    output = smol_tokenizer.encode("hello", add_special_tokens=False)
    processor.update_state(update(1, added=[(0, params(REGEX), [1], output)]))
    got = masked(processor, 1, vocabulary)[0]
    assert set(np.flatnonzero(got)) == set(vocabulary.eos_ids)
    assert "not allowed" in processor.constraint_of(0).broken


def test_requests_with_one_spec_share_one_index(vocabulary):
    processor = processor_over(vocabulary)
    added = [(row, params(REGEX), [1], []) for row in range(4)]
    processor.update_state(update(4, added=added))
    assert len(processor.indexes) == 1 and processor.indexes.hits == 3


def test_validate_params_names_the_problem():
    SeqstateLogitsProcessor.validate_params(params())
    SeqstateLogitsProcessor.validate_params(params({"json": {"type": "integer"}}))
    with pytest.raises(VLLMValidationError, match="not a valid regex"):
        SeqstateLogitsProcessor.validate_params(params({"regex": "(ab"}))
    with pytest.raises(VLLMValidationError, match="exactly one of"):
        SeqstateLogitsProcessor.validate_params(params({"rgx": "a"}))
    with pytest.raises(VLLMValidationError, match="accepts no text"):
        SeqstateLogitsProcessor.validate_params(
            params({"json": {"type": "integer", "minimum": 3, "maximum": 1}})
        )


def test_final_state_end_takes_the_refused_mass(vocabulary, smol_tokenizer):
    """As in seqstate's own engine: in a final state the end token's probability is
    that of the end plus every refused token."""
    processor = processor_over(vocabulary)
    output = smol_tokenizer.encode("12-ab", add_special_tokens=False)
    processor.update_state(update(1, added=[(0, params(REGEX), [1], output)]))
    logits = torch.randn(1, vocabulary.size)
    end = processor.end_token
    expected = torch.logsumexp(torch.cat([logits[0, :end], logits[0, end + 1 :]]), 0)
    expected = torch.logaddexp(expected, logits[0, end])
    got = processor.apply(logits.clone())
    assert torch.isclose(got[0, end], expected)


def test_not_argmax_invariant(vocabulary):
    assert processor_over(vocabulary).is_argmax_invariant() is False
