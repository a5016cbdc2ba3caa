"""Row-level contracts the backend uses: tokenizing pending text, healing, KV, spans."""

from __future__ import annotations

import numpy as np
import pytest

from seqstate import (
    UNKNOWN_STATE,
    InvalidSegment,
    Origin,
    Row,
    SequenceState,
    Span,
    TokenizationMismatch,
    decode_tokens,
)
from tests.seqstate.conftest import FakeKV, ScriptedGenerator


def test_healing_replaces_the_seam_and_keeps_provenance(engine):
    s = SequenceState.from_text(engine, "The answer is") + " 42."
    row = s.row(0).with_kv(FakeKV(engine.pool, 3))
    healed = row.with_tokenized_tail(1, engine.encode(" is 42."), s.detokenizer())
    assert healed.text == row.text and healed.pending_text == ""
    assert list(healed.token_ids) == engine.encode("The answer") + engine.encode(" is 42.")
    assert [seg.kind for seg in healed.segments] == ["prompt", "prompt", "text"]
    assert [seg.text for seg in healed.segments] == ["The answer", " is", " 42."]
    assert healed.kv == FakeKV(engine.pool, 2)
    assert row.pending_text == " 42."  # the operand is unchanged


def test_a_token_straddling_segments_joins_the_segment_of_its_first_character(engine):
    s = SequenceState.from_text(engine, "Hello") + " world"
    merged = s.row(0).with_tokenized_tail(1, engine.encode("Hello world"), s.detokenizer())
    assert [(seg.kind, seg.text) for seg in merged.segments] == [
        ("prompt", "Hello"),
        ("text", " world"),
    ]
    glued = SequenceState.from_text(engine, "Hel") + "lo"
    healed = glued.row(0).with_tokenized_tail(1, engine.encode("Hello"), glued.detokenizer())
    assert [(seg.kind, seg.text) for seg in healed.segments] == [("prompt", "Hello")]


def test_healed_generated_tokens_have_unknown_constraint_state(engine):
    s = SequenceState.from_text(engine, "x") + ScriptedGenerator(tuple(engine.encode(" ab"))) + "c"
    row = s.row(0)
    healed = row.with_tokenized_tail(1, engine.encode(" abc"), s.detokenizer())
    assert [(seg.kind, seg.text) for seg in healed.segments] == [
        ("prompt", "x"),
        ("generated", " abc"),
    ]
    assert healed.resume_point.constraint_state == UNKNOWN_STATE


def test_wrong_ids_for_the_tail_are_rejected(engine):
    s = SequenceState.from_text(engine, "Hello") + " world"
    with pytest.raises(TokenizationMismatch):
        s.row(0).with_tokenized_tail(0, engine.encode(" planet"), s.detokenizer())
    with pytest.raises(InvalidSegment):
        s.row(0).with_tokenized_tail(5, [], s.detokenizer())


def test_tail_tokenization_needs_a_settled_row(engine):
    s = SequenceState.from_text(engine, "a") + "b" + SequenceState.from_text(engine, "c")
    assert not s.row(0).is_settled
    with pytest.raises(InvalidSegment, match="settle"):
        s.row(0).with_tokenized_tail(0, engine.encode("b"), s.detokenizer())


def test_settle_tokenizes_inner_pending_runs_as_one_text(engine):
    s = (
        SequenceState.from_text(engine, "a")
        + " big"
        + " cat"
        + SequenceState.from_text(engine, "!")
    )
    settled = s.settle().row(0)
    assert settled.is_settled and settled.text == "a big cat!"
    assert list(settled.token_ids) == engine.encode("a") + engine.encode(
        " big cat"
    ) + engine.encode("!")
    assert [seg.kind for seg in settled.segments] == ["prompt", "text", "text", "prompt"]


def test_a_kv_longer_than_the_settled_tokens_is_rejected(engine):
    s = SequenceState.from_text(engine, "a b") + "c"
    with pytest.raises(InvalidSegment):
        s.row(0).with_kv(FakeKV(engine.pool, 3))
    assert s.row(0).with_kv(FakeKV(engine.pool, 2)).kv.length == 2


def test_spans_validate_their_arrays(engine):
    detokenizer = SequenceState.from_text(engine, "").detokenizer()
    decoded = decode_tokens(detokenizer, engine.encode("hi there"))
    with pytest.raises(InvalidSegment):
        Span.of_tokens([1], decoded, Origin("prompt"))
    with pytest.raises(InvalidSegment):
        Span.of_tokens(engine.encode("hi there"), decoded, Origin("generated"), logprobs=[0.0])
    span = Span.of_tokens(engine.encode("hi there"), decoded, Origin("prompt"))
    assert not span.token_ids.flags.writeable and span.token_ids.dtype == np.int32


def test_appended_generated_span_is_the_generation_layer_entry_point(engine):
    detokenizer = SequenceState.from_text(engine, "").detokenizer()
    ids = engine.encode(" done")
    origin = Origin("generated", generator="spec", capture="c", finish_reason="eos")
    span = Span.of_tokens(ids, decode_tokens(detokenizer, ids), origin, [-0.5], [7])
    prompt = SequenceState.from_text(engine, "Task:").row(0)
    row = prompt.appended(span, kv=FakeKV(engine.pool, 3))
    assert row.text == "Task: done" and row.finish_reason == "eos"
    assert row.capture("c") == " done" and row.logprob == pytest.approx(-0.5)
    assert row.resume_point.constraint_state == 7 and row.resume_point.complete
    assert Row().appended(Span.of_text("", origin), kv=None).is_empty
