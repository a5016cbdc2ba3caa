"""``backends.loading.gc_paused``: model loading runs with the cyclic collector paused
and gives it back in the state it found it, also when loading fails."""

from __future__ import annotations

import gc

import pytest

from backends.loading import gc_paused
from backends.model import load_model


def test_the_collector_is_paused_inside_and_enabled_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_is_enabled_again_after_an_error():
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("loading failed")
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_load_model_leaves_the_collector_enabled(tiny_hf_model, smol_tokenizer):
    seen = []

    class Probe:
        """Records whether the collector ran while load_model was building the model."""

        def __init__(self, model):
            self.model = model

        def __getattr__(self, name):
            seen.append(gc.isenabled())
            return getattr(self.model, name)

    load_model((Probe(tiny_hf_model), smol_tokenizer), device="cpu")
    assert seen and not any(seen)
    assert gc.isenabled()
