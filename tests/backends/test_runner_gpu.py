"""ModelRunner on CUDA: the same equivalences as on CPU (skipped without a device)."""

from __future__ import annotations

import gc
import json

import numpy as np
import pytest
import torch

from backends.runner import ModelRunner
from tests.backends.greedy import greedy

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


@pytest.fixture(scope="module")
def cuda_model(tiny_hf_model):
    import copy

    return copy.deepcopy(tiny_hf_model).to("cuda")


def test_incremental_equals_recompute_on_cuda(cuda_model):
    runner = ModelRunner(cuda_model, block_size=4)
    assert runner.pool.keys.is_cuda
    tokens = np.random.default_rng(0).integers(10, 40000, 19)
    with torch.inference_mode():
        full = cuda_model(torch.as_tensor(tokens, device="cuda")[None], use_cache=False).logits[0]
    kv, start = None, 0
    for size in (3, 1, 6, 9):
        logits, (kv,) = runner.forward_all([(kv, tokens[start : start + size])])
        torch.testing.assert_close(logits[0], full[start : start + size], rtol=1e-4, atol=1e-4)
        start += size


def test_batched_greedy_equals_alone_on_cuda(cuda_model):
    runner = ModelRunner(cuda_model, block_size=4)
    prompts = [[11, 12, 13], list(range(100, 111)), [7] * 6]
    together = greedy(runner, prompts, 10)
    assert together == [greedy(runner, [p], 10)[0] for p in prompts]
    gc.collect()
    assert runner.kv_stats()["blocks_used"] == 0


def test_masks_are_built_during_the_forward_pass_on_cuda(cuda_model, smol_tokenizer):
    """On an accelerator ``overlap_masks`` defaults to on; the output equals the
    masks-first run's."""
    import seqstate as ss
    from backends.model import Model

    model = Model(cuda_model, smol_tokenizer)
    assert model.mask_worker is not None
    generator = ss.regex(r"[a-z]{2,6}@[a-z]{2,6}\.(com|org)", max_tokens=24)
    overlapped = model(["Mail: ", "Email: "]) + generator
    model.overlap_masks = False
    assert model.mask_worker is None
    model.indexes.clear()
    assert (model(["Mail: ", "Email: "]) + generator).texts == overlapped.texts


PROGRAM_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 0, "maximum": 99},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2},
    },
    "required": ["id", "tags"],
    "additionalProperties": False,
}


def _program(model):
    """A chained program over two prompts: regex, choice, JSON and free text."""
    import seqstate as ss

    return (
        model(["Record\n", "Entry\n"])
        + "Year: "
        + ss.regex(r"1[89][0-9]{2}", name="year")
        + "\nColor: "
        + ss.choice(["red", "blue"], name="color")
        + "\nData: "
        + ss.json(PROGRAM_SCHEMA, name="data", max_tokens=48)
        + "\nNote: "
        + ss.gen(max_tokens=5)
    )


def test_chained_program_and_beam_search_on_cuda_equal_cpu(tiny_hf_model, smol_tokenizer):
    """fp32 on both devices: greedy programs and a constrained beam search give the
    same texts, with on-device masks and the mask worker on (the CUDA default)."""
    import copy

    import seqstate as ss
    from backends.model import load_model

    cpu = load_model((tiny_hf_model, smol_tokenizer), device="cpu")
    cuda = load_model(
        (copy.deepcopy(tiny_hf_model), smol_tokenizer), device="cuda", dtype="float32"
    )
    assert cuda.device.type == "cuda" and cuda.mask_worker is not None
    on_cuda, on_cpu = _program(cuda), _program(cpu)
    assert on_cuda.texts == on_cpu.texts
    assert on_cuda["data"] == on_cpu["data"]

    def beams(model):
        return model("Code: ") + ss.regex(r"[A-Z]{2}[0-9]{2}", sampler=ss.beam(4), name="c")

    beam_cuda, beam_cpu = beams(cuda), beams(cpu)
    assert beam_cuda.texts == beam_cpu.texts
    torch.testing.assert_close(
        torch.tensor(beam_cuda.logprobs[0]),
        torch.tensor(beam_cpu.logprobs[0]),
        rtol=1e-4,
        atol=1e-4,
    )


def test_sampling_on_cuda_is_reproducible_and_bfloat16_keeps_constraints(
    tiny_hf_model, smol_tokenizer
):
    """Seeded sampling repeats on the device; in bfloat16 (the CUDA default) every
    constraint still holds."""
    import copy
    import re

    import jsonschema

    import seqstate as ss
    from backends.model import load_model

    model = load_model((copy.deepcopy(tiny_hf_model), smol_tokenizer), device="cuda")
    assert model.runner.dtype == torch.bfloat16

    def check() -> None:
        prompt = model("The quick brown fox " * 10)
        forks = prompt.fork(4) + ss.gen(max_tokens=6, sampler=ss.sample(seed=7))
        again = prompt.fork(4) + ss.gen(max_tokens=6, sampler=ss.sample(seed=7))
        assert forks.texts == again.texts
        program = _program(model)
        for row in program.rows:
            assert re.fullmatch(r"1[89][0-9]{2}", row.capture("year"))
            assert row.capture("color") in ("red", "blue")
            data = row.capture("data")
            jsonschema.validate(json.loads(data) if isinstance(data, str) else data, PROGRAM_SCHEMA)

    check()
    gc.collect()
    assert model.runner.kv_stats()["blocks_used"] == 0
