"""Algebraic laws of states built from the SmolLM2 tokenizer (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqstate import Detokenizer, SequenceState, StateIndexError
from tests.strategies import (
    char_slices,
    generated_states,
    partial_utf8_ids,
    states,
    text_ids,
    token_id_runs,
)

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def id_runs(smol_vocabulary):
    return token_id_runs(text_ids(smol_vocabulary), partial_utf8_ids(smol_vocabulary))


def snapshot(state):
    """Everything an operation could change: content and KV handles, row by row."""
    return [(row.content_key(), row.kv, row.segments) for row in state.rows]


def composed(outer: slice, inner: slice, length: int) -> slice:
    start, stop, _ = outer.indices(length)
    stop = max(start, stop)
    inner_start, inner_stop, _ = inner.indices(stop - start)
    return slice(start + inner_start, start + max(inner_start, inner_stop))


@SETTINGS
@given(data=st.data())
def test_prefix_of_sum_is_left_operand(engine, id_runs, data):
    a, b = data.draw(states(engine, id_runs)), data.draw(states(engine, id_runs))
    total = a + b
    assert str(total) == str(a) + str(b)
    prefix = total[..., : len(str(a))]
    assert str(prefix) == str(a)
    assert prefix == a


@SETTINGS
@given(data=st.data())
def test_addition_is_associative(engine, id_runs, data):
    a, b, c = (data.draw(states(engine, id_runs)) for _ in range(3))
    left, right = (a + b) + c, a + (b + c)
    assert left == right
    assert hash(left) == hash(right)
    assert left.row(0).kv is right.row(0).kv


@SETTINGS
@given(data=st.data(), outer=char_slices(), inner=char_slices())
def test_slice_of_slice_is_composed_slice(engine, id_runs, data, outer, inner):
    s = data.draw(states(engine, id_runs))
    twice = s[..., outer][..., inner]
    once = s[..., composed(outer, inner, len(str(s)))]
    assert str(twice) == str(s)[outer][inner]
    assert twice == once


@SETTINGS
@given(data=st.data(), outer=char_slices(12), inner=char_slices(12))
def test_token_slice_of_token_slice_is_composed(engine, id_runs, data, outer, inner):
    s = data.draw(states(engine, id_runs))
    twice = s.tokens[..., outer].tokens[..., inner]
    assert list(twice.token_ids[0][0]) == list(s.token_ids[0][0])[outer][inner]


@SETTINGS
@given(data=st.data(), cut=char_slices())
def test_operations_never_change_operands(engine, id_runs, data, cut):
    a, b = data.draw(states(engine, id_runs)), data.draw(states(engine, id_runs))
    before_a, before_b = snapshot(a), snapshot(b)
    _ = [a + b, b + a, a + "x", "y" + a, a[..., cut], a.tokens[..., cut], a.fork(3), a.settle()]
    assert snapshot(a) == before_a
    assert snapshot(b) == before_b


@SETTINGS
@given(data=st.data(), n=st.integers(1, 5))
def test_fork_rows_are_equal_and_shared(engine, id_runs, data, n):
    s = data.draw(states(engine, id_runs))
    forked = (s + data.draw(states(engine, id_runs))).fork(n)
    assert forked.shape == (1, n)
    assert all(row is forked.rows[0] for row in forked.rows)
    assert list(forked) == [forked.texts[0][0]] * n
    assert all(forked[0, k, :] == forked[0, 0, :] for k in range(n))


@SETTINGS
@given(data=st.data(), cut=st.integers(0, 60))
def test_prefix_slices_keep_a_valid_kv_prefix(engine, id_runs, data, cut):
    from tests.seqstate.conftest import ScriptedGenerator

    s = data.draw(states(engine, id_runs))
    generated = s + ScriptedGenerator(tuple(engine.encode(" then é 日本")))
    row = generated.row(0)
    assert row.kv is not None and row.kv.length == row.n_tokens
    prefix = generated[..., :cut].row(0)
    expected = min(prefix.settled_tokens, row.kv.length)
    assert (prefix.kv.length if prefix.kv else 0) == expected
    assert list(prefix.token_ids[:expected]) == list(row.token_ids[:expected])
    assert generated[..., 1:].row(0).kv is None


@SETTINGS
@given(data=st.data())
def test_settle_keeps_text_and_tokenizes_inner_pending(engine, id_runs, data):
    s = data.draw(states(engine, id_runs)) + data.draw(states(engine, id_runs))
    settled = s.settle()
    assert str(settled) == str(s)
    assert settled.row(0).is_settled


@SETTINGS
@given(data=st.data())
def test_segment_tokens_decode_to_their_text(engine, smol_tokenizer, id_runs, data):
    """Character cuts keep only tokens whose bytes lie inside the cut (the rest of a cut
    token stays as text), so each segment's ids decode to exactly its tokenized text."""
    s = data.draw(states(engine, id_runs)) + data.draw(generated_states(engine, id_runs))
    n = len(str(s))
    for cut in [slice(None, c) for c in range(n + 1)] + [slice(c, None) for c in range(n + 1)]:
        row = s[..., cut].row(0)
        assert row.text == str(s)[cut]
        for segment in row.segments:
            token_text = segment.span.text[segment.lo : segment.tokens_end]
            assert smol_tokenizer.decode(segment.token_ids) == token_text


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_detokenizer_chunks_equal_tokenizer_decode(smol_tokenizer, smol_vocabulary, data):
    ids = data.draw(token_id_runs(text_ids(smol_vocabulary), partial_utf8_ids(smol_vocabulary), 24))
    detokenizer = Detokenizer(smol_vocabulary.token_bytes)
    state, chunks = detokenizer.start(), []
    for token_id in ids:
        state, chunk = detokenizer.feed(state, token_id)
        chunks.append(chunk.text)
    state, last = detokenizer.finish(state)
    chunks.append(last.text)
    assert "".join(chunks) == smol_tokenizer.decode(ids)


# ---------------------------------------------------------------- indexing by shape


@st.composite
def grids(draw: st.DrawFn, engine, ids) -> SequenceState:
    """A state of random shape (1..3 x 1..3) whose rows are drawn like user states."""
    shape = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    rows = [draw(states(engine, ids, max_parts=2)).row(0) for _ in range(shape[0] * shape[1])]
    return SequenceState(engine, tuple(rows), shape)


def axis_keys(size: int) -> st.SearchStrategy:
    """An int (possibly negative, possibly out of range) or a slice along an axis."""
    return st.integers(-size - 1, size) | char_slices(size + 1)


def outcome(read):
    """The value of ``read()``, or the type of the typed error it raised."""
    try:
        return read()
    except StateIndexError as error:
        return type(error)


@SETTINGS
@given(data=st.data())
def test_shortcut_index_equals_the_three_key_index(engine, id_runs, data):
    s = data.draw(grids(engine, id_runs))
    batch_key, sample_key = data.draw(axis_keys(s.shape[0])), data.draw(axis_keys(s.shape[1]))
    text_key = data.draw(st.integers(-12, 12) | char_slices(12))
    free = [key for key, size in zip((batch_key, sample_key), s.shape) if size > 1]
    full = (batch_key if s.shape[0] > 1 else 0, sample_key if s.shape[1] > 1 else slice(None))
    if len(free) == 2:  # no shortcut: the keys are (batch, samples), whole texts
        assert outcome(lambda: s[tuple(free)]) == outcome(lambda: s[(*full, slice(None))])
        assert outcome(lambda: s[free[0]]) == outcome(lambda: s[free[0], :, :])
    else:
        key = (*free, text_key)
        assert outcome(lambda: s[key]) == outcome(lambda: s[(*full, text_key)])
        assert outcome(lambda: s.tokens[key]) == outcome(lambda: s.tokens[(*full, text_key)])
        if free:  # the whole texts of the chosen rows
            assert outcome(lambda: s[free[0]]) == outcome(lambda: s[(*full, slice(None))])
    assert outcome(lambda: s[..., text_key]) == outcome(lambda: s[:, :, text_key])


@SETTINGS
@given(data=st.data(), cut=char_slices())
def test_one_key_on_a_1x1_state_cuts_its_text(engine, id_runs, data, cut):
    s = data.draw(states(engine, id_runs))
    assert str(s[cut]) == str(s)[cut]
    assert s[cut] == s[0, 0, cut] == s[-1, cut]
    assert s.tokens[cut] == s.tokens[0, 0, cut]
    for i in range(-len(str(s)), len(str(s))):
        assert str(s[i]) == str(s)[i]


@SETTINGS
@given(data=st.data())
def test_iteration_matches_texts(engine, id_runs, data):
    s = data.draw(grids(engine, id_runs))
    items = list(s)
    assert len(s) == len(items)
    if s.shape[0] > 1 and s.shape[1] > 1:
        assert items == s.texts
    else:
        assert items == [text for row in s.texts for text in row]
    assert all(isinstance(item, str) for item in items) or all(
        isinstance(text, str) for row in items for text in row
    )
