"""seqstate programs on ``engine="vllm"`` (default model, CPU build, fp32, greedy): a
chained program with captures and a fork gives the native engine's tokens, text,
captures and finish reasons; what vLLM cannot run is refused before any request; the
prefix cache serves chained calls; ``ss.step`` runs on caller logits."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vllm.conftest import RUN_HINT

pytest.importorskip("vllm", reason=RUN_HINT)

import seqstate as ss  # noqa: E402

pytestmark = pytest.mark.vllm

ADDRESS = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 12}, "zip": {"type": "integer"}},
    "required": ["city", "zip"],
}


@pytest.fixture(scope="module")
def on_vllm():
    model = ss.load_model(engine="vllm", enforce_eager=True, max_model_len=1024, seed=0)
    yield model
    model.llm.llm_engine.engine_core.shutdown()  # now, not after pytest closed its output


@pytest.fixture(scope="module")
def native():
    return ss.load_model(device="cpu", dtype="float32")


def program(model):
    """Chat prompt, then regex, JSON integer, free text with a stop string, a JSON
    object, then a fork of two rows each choosing among options."""
    s = model.chat([{"role": "user", "content": "Invent a person. Give name and age."}])
    s = s + "Name:" + ss.regex(r" [A-Z][a-z]+", name="name", max_tokens=10)
    s = s + "\nAge: " + ss.json({"type": "integer"}, name="age", max_tokens=6)
    s = s + "\nHobby:" + ss.gen(stop="\n", name="hobby", max_tokens=20)
    s = s + "\nAddress (JSON): " + ss.json(ADDRESS, name="address", max_tokens=40)
    return s.fork(2) + "\nCity:" + ss.choice([" Paris", " London", " Rome"], name="city")


def spans(state):
    """Per row: every generated segment's tokens, text and finish reason."""
    return [
        [
            (seg.token_ids.tolist(), seg.text, seg.origin.finish_reason, seg.origin.complete)
            for seg in row.segments
            if seg.kind == "generated"
        ]
        for row in state.rows
    ]


def test_chained_program_with_fork_matches_native(on_vllm, native):
    ours, theirs = program(on_vllm), program(native)
    assert ours.shape == theirs.shape == (1, 2)
    assert spans(ours) == spans(theirs)
    assert ours.texts == theirs.texts
    for name in ("name", "age", "hobby", "address", "city"):
        assert ours.capture(name) == theirs.capture(name)
    assert isinstance(ours.rows[0].capture("age"), int)
    # vLLM's log-probabilities (after the constraint) are the native loop's, up to fp32
    # kernel differences (2.3e-5 at most in benchmarks/vllm_program.py).
    for mine, native_row in zip(ours.rows, theirs.rows):
        a, b = mine.token_logprobs, native_row.token_logprobs
        known = ~np.isnan(b)
        assert np.array_equal(known, ~np.isnan(a))
        np.testing.assert_allclose(a[known], b[known], atol=1e-4)


def test_tight_budget_and_healed_stop_match_native(on_vllm, native):
    """Closing bans in a budget's last tokens, and a stop string equal to the healed
    prompt text (the native loop ignores a match there; vLLM must not stop on it)."""

    def run(model):
        s = model("Three lucky numbers as a JSON list:\n")
        s = s + ss.json(list[int], name="numbers", max_tokens=9)
        return s + "\n" + ss.gen(stop="\n", name="line", max_tokens=12)

    ours, theirs = run(on_vllm), run(native)
    assert spans(ours) == spans(theirs)
    assert ours.texts == theirs.texts


def test_truncated_capture_as_on_native(on_vllm):
    s = on_vllm("Numbers: ") + ss.regex(r"[0-9]{8}", name="n", max_tokens=2)
    assert s.rows[0].finish_reason == "length"
    with pytest.raises(ss.TruncatedCapture):
        s["n"]


@pytest.mark.parametrize(
    "generator, feature",
    [
        (ss.gen(sampler=ss.beam(2), max_tokens=4), "beam search"),
        (ss.gen(hooks=[lambda event: None], max_tokens=4), "hooks"),
        (ss.gen(banned=["the"], max_tokens=4), "banned strings"),
        (ss.json({"type": "object"}, max_tokens=8), "hooks"),  # distinct-keys hook
    ],
)
def test_unsupported_features_raise_before_any_request(on_vllm, generator, feature):
    sent = on_vllm.kv_stats()["requests"]
    with pytest.raises(ss.UnsupportedOnEngine, match=feature) as caught:
        on_vllm("Hello") + generator
    assert caught.value.engine == "vLLM"
    assert isinstance(caught.value, ss.SeqStateError)
    assert on_vllm.kv_stats()["requests"] == sent


def test_resume_is_refused(on_vllm):
    s = on_vllm("Count: 1, 2,") + ss.regex(r"( [0-9]+,){3}", max_tokens=12)
    sent = on_vllm.kv_stats()["requests"]
    with pytest.raises(ss.UnsupportedOnEngine, match="resuming"):
        s[: len(str(s)) - 2].resume()
    assert on_vllm.kv_stats()["requests"] == sent


def test_chained_calls_hit_the_prefix_cache(on_vllm):
    before = on_vllm.kv_stats()
    s = on_vllm.chat([{"role": "user", "content": "List three fruits, one per line."}])
    s = s + ss.gen(stop="\n", max_tokens=12) + "\n" + ss.gen(stop="\n", max_tokens=12)
    after = on_vllm.kv_stats()
    assert after["requests"] - before["requests"] == 2
    # the second call's prompt starts with the first call's prompt: its whole blocks
    # (the chat template is longer than one block) come from the cache
    assert after["tokens_reused"] - before["tokens_reused"] >= after["block_size"]
    assert 0 < after["prefix_cache_hit_rate"] <= 1


def test_step_on_caller_logits_matches_native(on_vllm, native):
    generator = ss.regex(r" [0-9]+")
    logits = np.random.default_rng(0).standard_normal((1, on_vllm.vocabulary.size))
    ours = ss.step(on_vllm("Count:"), logits.astype(np.float32), generator)
    theirs = ss.step(native("Count:"), logits.astype(np.float32), generator)
    assert ours.rows[0].token_ids.tolist() == theirs.rows[0].token_ids.tolist()
    assert ours.texts == theirs.texts


def test_ask_and_stream_as_on_native(on_vllm, native):
    question = ("Cat or dog?", ss.choice(["cat", "dog"]))
    assert on_vllm.ask(*question) == native.ask(*question)
    parts = ("Colour:", ss.regex(r" [a-z]+", max_tokens=4), ".")
    stream = on_vllm.stream(on_vllm("My favourite"), *parts)
    chunks = list(stream)
    assert len(chunks) == len(parts)  # one chunk list per part on this engine
    assert stream.state.texts == (native("My favourite") + "Colour:" + parts[1] + ".").texts
    assert "".join(c[0][0] for c in chunks) == stream.state.texts[0][0][len("My favourite") :]
