"""The transformers ``LogitsProcessor``: ``model.generate`` under a constraint gives the
tokens seqstate's own engine gives (greedy, fp32, tiny random model)."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
import torch

import fsm
import seqstate as ss
from backends.hf_processor import HFConstraints
from backends.model import load_model

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 6},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "pet": {"enum": ["cat", "dog"]},
    },
    "required": ["name", "age", "pet"],
}
GENERATORS = {
    "regex": ss.regex(r"[a-z]{2,5}-[0-9]{1,3}", heal=False),
    "json": ss.json(PERSON, heal=False),
    "choice": ss.choice(["alpha", "beta", "alphabet"], heal=False),
}
PROMPTS = ["Hello there", "The answer is", "JSON:"]


@pytest.fixture(scope="module")
def native(tiny_hf_model, smol_tokenizer):
    """seqstate's engine with the options a logits processor cannot mirror turned off:
    jump-forward (it appends forced text as the tokenizer splits it) and the restricted
    head (it computes allowed logits only, which may round differently)."""
    model = load_model((tiny_hf_model, smol_tokenizer), device="cpu", dtype="float32")
    model.jump_forward = False
    model.restrict_head = False
    return model


@pytest.fixture(scope="module")
def constraints(tiny_hf_model, smol_tokenizer):
    return HFConstraints(smol_tokenizer, tiny_hf_model)


def hf_generate(model, tokenizer, prompt: str, processor, max_new_tokens: int = 256) -> list[int]:
    ids = torch.tensor([tokenizer.encode(prompt, add_special_tokens=False)])
    out = model.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        logits_processor=[processor],
        max_new_tokens=max_new_tokens,
        do_sample=False,
        pad_token_id=tokenizer.eos_token_id,
    )
    return out[0, ids.shape[1] :].tolist()


def without_end(tokens: list[int], ends) -> list[int]:
    return tokens[:-1] if tokens and tokens[-1] in ends else tokens


@pytest.mark.parametrize("kind", sorted(GENERATORS))
@pytest.mark.parametrize("prompt", PROMPTS)
def test_same_tokens_as_the_native_engine(
    native, constraints, tiny_hf_model, smol_tokenizer, kind, prompt
):
    generator = GENERATORS[kind]
    state = native(prompt) + generator
    prompt_length = len(native.encode(prompt))
    expected = [int(t) for t in state.token_ids[0][0][prompt_length:]]
    got = hf_generate(tiny_hf_model, smol_tokenizer, prompt, constraints.processor(generator))
    assert got[-1] in constraints.vocabulary.eos_ids  # the constraint ended, not the budget
    assert without_end(got, constraints.vocabulary.eos_ids) == expected


def test_batch_and_reuse(constraints, tiny_hf_model, smol_tokenizer):
    """Left-padded batch rows are constrained independently; the processor starts
    afresh on the next ``generate`` call."""
    smol_tokenizer.padding_side = "left"
    processor = constraints.processor({"json": PERSON})
    for _ in range(2):
        batch = smol_tokenizer(PROMPTS, return_tensors="pt", padding=True)
        out = tiny_hf_model.generate(
            **batch,
            logits_processor=[processor],
            max_new_tokens=200,
            do_sample=False,
            pad_token_id=smol_tokenizer.eos_token_id,
        )
        texts = smol_tokenizer.batch_decode(
            out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True
        )
        for text in texts:
            jsonschema.validate(json.loads(text), PERSON)


def test_sampling_and_beams_stay_valid(constraints, tiny_hf_model, smol_tokenizer):
    pattern = r"(ab|cd)[0-9]{2}"
    ids = torch.tensor([smol_tokenizer.encode("Code:", add_special_tokens=False)])
    torch.manual_seed(0)
    for options in (
        {"do_sample": True, "num_return_sequences": 4},
        {"num_beams": 3, "num_return_sequences": 3},
    ):
        out = tiny_hf_model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            logits_processor=[constraints.processor(fsm.Regex(pattern))],
            max_new_tokens=16,
            pad_token_id=smol_tokenizer.eos_token_id,
            **options,
        )
        for text in smol_tokenizer.batch_decode(out[:, ids.shape[1] :], skip_special_tokens=True):
            assert re.fullmatch(pattern, text), (options, text)


def test_padded_vocabulary_is_masked(smol_tokenizer, tiny_hf_model):
    wide = HFConstraints(smol_tokenizer, vocab_size=len(smol_tokenizer) + 64)
    processor = wide.processor(fsm.Regex("[0-9]+"))
    ids = torch.tensor([[1, 2, 3]])
    scores = processor(ids, torch.zeros(1, wide.vocabulary.size))
    assert torch.isinf(scores[0, len(smol_tokenizer) :]).all()
    allowed = set(torch.isfinite(scores[0]).nonzero().flatten().tolist())
    index = wide.index(fsm.Regex("[0-9]+"))
    assert allowed == set(index.allowed_tokens(index.initial_state).tolist())


def test_not_a_constraint(constraints):
    with pytest.raises(fsm.InvalidSpec, match="not a constraint"):
        constraints.processor(ss.gen())
