"""``ss.load_model(engine=...)``: the engine is checked before anything is loaded."""

from __future__ import annotations

import importlib.util

import pytest

import seqstate as ss
from backends.loading import ModelSourceError


def test_unknown_engine_is_refused_by_name():
    with pytest.raises(ModelSourceError, match="'sglang'"):
        ss.load_model(engine="sglang")


def test_vllm_arguments_on_the_native_engine_are_refused():
    with pytest.raises(ModelSourceError, match="tensor_parallel_size"):
        ss.load_model(tensor_parallel_size=2)


def test_vllm_engine_without_vllm_names_the_install():
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here: tests/vllm/test_engine.py loads the engine")
    with pytest.raises(ModelSourceError, match=r"seqstate\[vllm\]"):
        ss.load_model(engine="vllm")
