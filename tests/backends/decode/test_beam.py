"""Beam search (backends/decode/beam.py): end-token scores, merged texts, and the same
ranking as transformers' ``generate(num_beams=n)``."""

from __future__ import annotations

import pytest

import seqstate as ss
from tests.conftest import tiny_llama

from .scripted import ScriptedEngine

# xa: likely, then an unlikely end; xb: less likely, then a near-certain end;
# after c the end is certain.
ENDINGS = {
    "x": {"a": 5.0, "b": 4.5},
    "xa": {"<eos>": 1.0, "c": 5.0},
    "xb": {"<eos>": 5.0, "c": 1.0},
    "c": {"<eos>": 5.0},
}


def test_scores_count_the_end_token():
    engine = ScriptedEngine(ENDINGS)
    state = engine("x") + ss.gen(max_tokens=4, heal=False, sampler=ss.beam(2, length_penalty=0.0))
    # xac+end = -0.49 and xb+end = -0.99 beat xa+end = -4.49 (-0.47 without the end token)
    assert state.texts == [["xac", "xb"]]
    assert state.finish_reasons == [["eos", "eos"]]


def test_length_penalty_divides_by_the_length_with_the_end_token():
    engine = ScriptedEngine(ENDINGS)
    state = engine("x") + ss.gen(max_tokens=4, heal=False, sampler=ss.beam(2, length_penalty=1.0))
    # per token, end included: xb -0.99/2, xac -0.49/3 (the best), xa -4.49/2
    assert state.texts == [["xac", "xb"]]


def test_hypotheses_with_the_same_text_are_merged():
    # "ab" as one token or as 'a' + 'b': one hypothesis, the better one
    engine = ScriptedEngine(
        {"x": {"ab": 5.0, "a": 4.9}, "xa": {"b": 5.0, "c": 4.0}, "": {"<eos>": 0.0}}
    )
    state = engine("x") + ss.regex("a[bc]", heal=False, sampler=ss.beam(2))
    assert sorted(state.texts[0]) == ["xab", "xac"]


def test_a_beam_with_no_allowed_continuation_is_dropped():
    engine = ScriptedEngine({"x": {"a": 5.0, "b": 4.0}, "": {"1": 1.0}})
    state = engine("x") + ss.regex("b1", heal=False, sampler=ss.beam(2))
    assert state.texts == [["xb1", "xb1"]]  # one distinct hypothesis, repeated


def eos_prone_model(tokenizer, scale: float):
    """A tiny random Llama whose end token often wins (its head row scaled up)."""
    import torch

    model = tiny_llama(tokenizer, tie_word_embeddings=False)
    with torch.no_grad():
        model.lm_head.weight[tokenizer.eos_token_id] *= scale
    return model


@pytest.fixture(scope="module")
def eos_prone(smol_tokenizer):
    from backends.model import load_model

    hf = eos_prone_model(smol_tokenizer, 20.0)
    return hf, load_model((hf, smol_tokenizer), device="cpu")


@pytest.mark.parametrize("text", ["Once upon a time", "The cat", "Hello world", "1, 2, 3,"])
@pytest.mark.parametrize("penalty", [1.0, 0.0, 2.0])
def test_ranking_equals_transformers_with_end_tokens(eos_prone, smol_tokenizer, text, penalty):
    import torch

    hf, model = eos_prone
    prompt = model(text)
    ours = prompt + ss.gen(max_tokens=8, heal=False, sampler=ss.beam(4, length_penalty=penalty))
    ids = torch.tensor([list(prompt.rows[0].token_ids)])
    out = hf.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        num_beams=4,
        num_return_sequences=4,
        max_new_tokens=8,
        do_sample=False,
        length_penalty=penalty,
        early_stopping=False,  # transformers' default
        pad_token_id=smol_tokenizer.eos_token_id,
    )
    theirs = [
        text + smol_tokenizer.decode(o[ids.shape[1] :], skip_special_tokens=True) for o in out
    ]
    assert ours.texts[0] == theirs
    if text != "Hello world":  # the comparison covers hypotheses that ended
        assert "eos" in ours.finish_reasons[0]
