"""The processor inside vLLM's ``LLM`` on the default model (CPU build, fp32, greedy):
the same tokens as seqstate's own engine, constrained and free requests in one batch,
requests finishing at different times (the persistent batch condenses), and a bad
constraint refused while the engine keeps serving."""

from __future__ import annotations

import json
import re

import pytest

from tests.vllm.conftest import RUN_HINT, default_model_dir

pytest.importorskip("vllm", reason=RUN_HINT)

import jsonschema  # noqa: E402
from vllm import LLM, SamplingParams  # noqa: E402
from vllm.exceptions import VLLMValidationError  # noqa: E402
from vllm.inputs import TokensPrompt  # noqa: E402

import seqstate as ss  # noqa: E402
from backends.request_specs import spec_to_args  # noqa: E402

pytestmark = pytest.mark.vllm

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "city": {"type": "string", "enum": ["Paris", "Rome", "Oslo"]},
    },
    "required": ["name", "age", "city"],
}
DATE = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-[0-2][0-9]"
MOODS = ["happy", "sad", "angry", "tired"]


@pytest.fixture(scope="module")
def llm():
    engine = LLM(
        default_model_dir(), dtype="float32", enforce_eager=True, max_model_len=1024, seed=0
    )
    yield engine
    engine.llm_engine.engine_core.shutdown()  # now, not in an atexit hook after pytest closed its output


@pytest.fixture(scope="module")
def native():
    """seqstate's engine on the same weights. Jump-forward is off: it appends the text a
    constraint forces as the tokenizer splits it, where a logits processor can only
    let the model pick those tokens one by one."""
    model = ss.load_model(device="cpu", dtype="float32")
    model.jump_forward = False
    return model


def chat_text(native, question: str) -> str:
    return native.tokenizer.apply_chat_template(
        [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
    )


def prompt_ids(native, question: str) -> list[int]:
    return native.encode(chat_text(native, question))


def constrained(spec, max_tokens: int = 64, **options) -> SamplingParams:
    return SamplingParams(
        temperature=0, max_tokens=max_tokens, extra_args={"seqstate": spec_to_args(spec)}, **options
    )


def run(llm, prompts: list[list[int]], params: list[SamplingParams]):
    outputs = llm.generate(
        [TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False
    )
    return [output.outputs[0] for output in outputs]


def without_end(tokens, end_ids) -> list[int]:
    tokens = list(tokens)
    return tokens[:-1] if tokens and tokens[-1] in end_ids else tokens


@pytest.mark.parametrize(
    ("question", "generator"),
    [
        ("Invent a person as JSON.", ss.json(PERSON, heal=False, max_tokens=64)),
        ("When did the Berlin wall fall? Answer with a date.", ss.regex(DATE, heal=False)),
        ("How do you feel on a Monday morning?", ss.choice(MOODS, heal=False)),
    ],
    ids=["json", "regex", "choice"],
)
def test_same_tokens_as_the_native_engine(llm, native, question, generator):
    prompt = prompt_ids(native, question)
    state = native(chat_text(native, question)) + generator
    assert [int(t) for t in state.token_ids[0][0][: len(prompt)]] == prompt
    expected = [int(t) for t in state.token_ids[0][0][len(prompt) :]]
    (output,) = run(llm, [prompt], [constrained(generator.constraint, generator.max_tokens)])
    assert output.finish_reason == "stop"
    assert without_end(output.token_ids, native.vocabulary.eos_ids) == expected


def check_valid(text: str, args: dict) -> None:
    if "json" in args:
        jsonschema.validate(json.loads(text), args["json"])
    elif "regex" in args:
        assert re.fullmatch(args["regex"], text), text
    else:
        assert text in args["choice"]


def batch_of_eight(native) -> tuple[list[list[int]], list[dict | None]]:
    """Four constrained and four free requests, interleaved."""
    questions = [
        "Invent a person as JSON.",
        "Tell me a joke.",
        "When was Rome founded? Answer with a date.",
        "What is the capital of France?",
        "How do you feel today?",
        "Write a haiku about rain.",
        "Invent another person as JSON.",
        "Name three colors.",
    ]
    specs = [ss.json(PERSON).constraint, None, ss.regex(DATE).constraint, None]
    specs += [ss.choice(MOODS).constraint, None, ss.json(PERSON).constraint, None]
    args = [None if spec is None else spec_to_args(spec) for spec in specs]
    return [prompt_ids(native, q) for q in questions], args


def test_batch_mixing_constrained_and_free_requests(llm, native):
    prompts, args = batch_of_eight(native)
    params = [
        SamplingParams(
            temperature=0, max_tokens=48, extra_args=None if a is None else {"seqstate": a}
        )
        for a in args
    ]
    mixed = run(llm, prompts, params)
    free = run(llm, prompts, [SamplingParams(temperature=0, max_tokens=48)] * len(prompts))
    for output, alone, request in zip(mixed, free, args):
        if request is None:
            assert list(output.token_ids) == list(alone.token_ids)
        else:
            assert output.finish_reason == "stop"
            check_valid(output.text, request)


def test_rows_finishing_early_condense_the_batch(llm, native):
    """Short requests first, long ones last: as the first ones finish, vLLM moves the
    last rows into their slots, and every constraint must follow its request."""
    prompts, args = batch_of_eight(native)
    order = [4, 1, 3, 2, 5, 0, 7, 6]  # choice, short free, ..., JSON last
    budgets = [8, 2, 3, 16, 30, 64, 40, 64]
    params = [
        SamplingParams(
            temperature=0,
            max_tokens=budget,
            extra_args=None if args[i] is None else {"seqstate": args[i]},
        )
        for i, budget in zip(order, budgets)
    ]
    outputs = run(llm, [prompts[i] for i in order], params)
    for output, i, budget in zip(outputs, order, budgets):
        if args[i] is None:
            assert len(output.token_ids) <= budget
        else:
            assert output.finish_reason == "stop"
            check_valid(output.text, args[i])


def test_bad_constraint_is_refused_and_the_next_request_served(llm, native):
    prompt = prompt_ids(native, "Say something.")
    bad = SamplingParams(max_tokens=4, extra_args={"seqstate": {"regex": "[0-9"}})
    with pytest.raises(VLLMValidationError, match="invalid seqstate constraint"):
        llm.generate([TokensPrompt(prompt_token_ids=prompt)], [bad], use_tqdm=False)
    (output,) = run(llm, [prompt], [constrained(ss.regex("(yes|no)!").constraint)])
    assert output.text in ("yes!", "no!")


def test_constraint_as_json_text(llm, native):
    """The flat form ``vllm serve`` passes through ``vllm_xargs``."""
    prompt = prompt_ids(native, "Pick a mood.")
    params = SamplingParams(
        temperature=0, max_tokens=8, extra_args={"seqstate": json.dumps({"choice": MOODS})}
    )
    (output,) = run(llm, [prompt], [params])
    assert output.text in MOODS
