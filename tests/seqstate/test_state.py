"""SequenceState: construction, indexing, concatenation, reading, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import seqstate as ss
from seqstate import (
    CaptureParseError,
    EngineMismatch,
    IncompatibleOperand,
    MissingCapture,
    NotScalarState,
    SeqStateError,
    SequenceState,
    ShapeMismatch,
    StateIndexError,
)
from tests.seqstate.conftest import FakeKV, ScriptedGenerator


@pytest.fixture
def grid(engine):
    texts = [["a0", "a1", "a2"], ["b0", "b1", "b2"]]
    return SequenceState.from_text(engine, texts)


def test_from_text_shapes(engine):
    assert SequenceState.from_text(engine, "hi").shape == (1, 1)
    assert SequenceState.from_text(engine, ["x", "y"]).shape == (2, 1)
    assert SequenceState.from_text(engine, [["x", "y", "z"]]).shape == (1, 3)
    with pytest.raises(ShapeMismatch):
        SequenceState.from_text(engine, [["x"], ["y", "z"]])


def test_from_text_tokenizes_now_and_records_offsets(engine):
    s = SequenceState.from_text(engine, "Hello world")
    row = s.row(0)
    assert list(row.token_ids) == engine.encode("Hello world")
    assert row.token_offsets.tolist() == [[0, 5], [5, 11]]
    assert row.pending_text == "" and row.segments[0].kind == "prompt"


def test_from_token_ids_shapes_and_kind(engine):
    ids = engine.encode("Hi there")
    s = SequenceState.from_token_ids(engine, [[ids, ids]], kind="text")
    assert s.shape == (1, 2) and s.texts == [["Hi there", "Hi there"]]
    assert SequenceState.from_token_ids(engine, np.asarray(ids)).shape == (1, 1)
    assert SequenceState.from_token_ids(engine, [ids, ids]).shape == (2, 1)


def test_integer_and_slice_indexing_keeps_two_axes(grid):
    assert grid[1].texts == [["b0", "b1", "b2"]]
    assert grid[-1, -1].texts == [["b2"]]
    assert grid[:, 1:].texts == [["a1", "a2"], ["b1", "b2"]]
    assert grid[..., 1:].texts == [["0", "1", "2"], ["0", "1", "2"]]
    assert grid[0, ...].shape == (1, 3)
    assert grid[np.int64(1), 0].texts == [["b0"]]


def test_last_index_slices_characters(engine):
    s = SequenceState.from_text(engine, "Hello world")
    assert str(s[0, 0, 3:8]) == "lo wo"
    assert str(s[0, 0, -5:]) == "world"
    assert str(s[0, 0, 4]) == "o"
    assert str(s[0, 0, 20:]) == ""


def test_character_cut_inside_a_token_keeps_its_leading_characters_pending(engine):
    s = SequenceState.from_text(engine, "Hello world")
    row = s[..., :8].row(0)
    assert list(row.token_ids) == engine.encode("Hello")
    assert row.pending_text == " wo"


def test_cut_inside_a_multibyte_split_keeps_only_whole_characters(engine):
    s = SequenceState.from_text(engine, "a 日本")  # ' 日' is split over three tokens
    row = s[..., :2].row(0)
    assert row.text == "a " and row.pending_text == " "
    assert engine.tokenizer.decode(row.token_ids) == "a"


def test_index_errors_are_typed(grid):
    for key in [(2,), (0, 3), (-3,), (0, 0, 50), ("x", 0), (0, 0, slice(0, 2, 2)), (0, 0, 0, 0)]:
        with pytest.raises(StateIndexError):
            grid[key]
    with pytest.raises(StateIndexError):
        grid[5:]
    with pytest.raises(IndexError):  # also a builtin IndexError
        grid[9]


def test_token_slicing_is_exact(engine):
    s = SequenceState.from_text(engine, "Hello world again") + " tail"
    ids = engine.encode("Hello world again")
    assert list(s.tokens[..., 1:3].token_ids[0][0]) == ids[1:3]
    assert str(s.tokens[..., 1:3]) == " world again"
    assert str(s.tokens[..., :2]) == "Hello world"
    assert str(s.tokens[..., 2:]) == " again tail"
    assert str(s.tokens[..., -1]) == " again"
    with pytest.raises(StateIndexError):
        s.tokens[..., 10]


def test_add_text_both_sides_and_states(engine):
    s = SequenceState.from_text(engine, "mid")
    assert str("<" + s + ">") == "<mid>"
    t = SequenceState.from_text(engine, "!")
    assert str(s + t) == "mid!"
    assert (s + "x").row(0).pending_text == "x"


def test_broadcasting_follows_numpy(engine):
    column = SequenceState.from_text(engine, ["a", "b"])
    row = SequenceState.from_text(engine, [["1", "2", "3"]])
    assert (column + row).texts == [["a1", "a2", "a3"], ["b1", "b2", "b3"]]
    with pytest.raises(ShapeMismatch):
        column + SequenceState.from_text(engine, ["x", "y", "z"])


def test_mixing_engines_is_a_typed_error(engine, other_engine):
    a = SequenceState.from_text(engine, "a")
    b = SequenceState.from_text(other_engine, "b")
    with pytest.raises(EngineMismatch):
        a + b
    with pytest.raises(EngineMismatch):
        ss.batch([a, b])


def test_adding_unsupported_types_is_a_typed_error(engine):
    s = SequenceState.from_text(engine, "a")
    for bad in [1, None, b"bytes", ["list"]]:
        with pytest.raises(IncompatibleOperand):
            s + bad
        with pytest.raises(TypeError):
            bad + s


def test_adding_a_generator_calls_it(engine):
    s = SequenceState.from_text(engine, "Name:")
    gen = ScriptedGenerator(tuple(engine.encode(" Bob")), name="name")
    out = s + gen
    assert str(out) == "Name: Bob" and out["name"] == " Bob"
    assert gen.__radd__(s) == out
    with pytest.raises(IncompatibleOperand):
        "text" + gen


def test_batch_fork_flatten_reshape(engine, grid):
    a = SequenceState.from_text(engine, [["x", "y", "z"]])
    stacked = ss.batch([grid, a])
    assert stacked.shape == (3, 3) and stacked[2].texts == [["x", "y", "z"]]
    with pytest.raises(ShapeMismatch):
        ss.batch([grid, SequenceState.from_text(engine, "q")])
    forked = grid.fork(2)
    assert forked.shape == (2, 6) and forked.texts[0] == ["a0", "a0", "a1", "a1", "a2", "a2"]
    assert forked.rows[0] is forked.rows[1]
    assert grid.flatten().shape == (6, 1) and grid.flatten().texts[3] == ["b0"]
    assert grid.reshape(3, 2).texts == [["a0", "a1"], ["a2", "b0"], ["b1", "b2"]]
    with pytest.raises(ShapeMismatch):
        grid.reshape(4, 2)
    with pytest.raises(IncompatibleOperand):
        grid.fork(0)


def test_str_needs_one_row(grid):
    assert str(grid[0, 0]) == "a0"
    with pytest.raises(NotScalarState, match=r"shape \(2, 3\)"):
        str(grid)


def test_iteration_gives_texts_shaped_like_the_state(engine, grid):
    assert list(grid) == [["a0", "a1", "a2"], ["b0", "b1", "b2"]] and len(grid) == 2
    column = SequenceState.from_text(engine, ["x", "y"])
    assert list(column) == ["x", "y"] and len(column) == 2
    assert list(grid[0]) == ["a0", "a1", "a2"] and len(grid[0]) == 3
    one = SequenceState.from_text(engine, "only")
    assert list(one) == ["only"] and len(one) == 1  # never the characters


def test_shortcuts_follow_the_shape(engine, grid):
    one = SequenceState.from_text(engine, "Hello world")
    assert str(one[0:5]) == "Hello" and str(one[-5:]) == "world"
    assert str(one[4]) == "o"  # one key on a 1x1 state: a character
    assert one[0, 0:5] == one[0, 0, 0:5] == one[-1, 0:5]
    assert one.tokens[1:] == one.tokens[0, 0, 1:]
    samples = SequenceState.from_text(engine, [["a0", "a1", "a2"]])
    assert samples[2].texts == [["a2"]]  # a batch of one: the key picks a sample
    assert str(samples[1, 1:]) == "1" and samples[1, 1:] == samples[0, 1, 1:]
    column = SequenceState.from_text(engine, ["x0", "y0"])
    assert column[1].texts == [["y0"]] and str(column[1, :1]) == "y"
    assert column[:, 1:].texts == [["0"], ["0"]]
    assert grid[1, 2].texts == [["b2"]]  # both axes > 1: no shortcut
    assert grid[1, 2, 1:].texts == [["2"]]


def test_shortcut_index_errors_are_typed(engine):
    one = SequenceState.from_text(engine, "abc")
    samples = SequenceState.from_text(engine, [["a0", "a1"]])
    for state, key in [
        (one, 3),
        (one, -4),
        (one, (1, 0)),
        (one, b"x"),
        (one, True),
        (one, None),
        (one, slice(0, 2, 2)),
        (samples, 2),
        (samples, (0, 5)),
        (samples, (0, 0, 0, 0)),
    ]:
        with pytest.raises(StateIndexError):
            state[key]
    with pytest.raises(StateIndexError):
        one.tokens[5]


def test_token_ids_and_logprobs(engine):
    s = SequenceState.from_text(engine, "Q:") + ScriptedGenerator(tuple(engine.encode(" yes no")))
    assert list(s.token_ids[0][0]) == engine.encode("Q:") + engine.encode(" yes no")
    assert s.logprobs[0][0] == pytest.approx(-0.1 - 0.2)
    assert s.finish_reasons == [["stop"]]


def test_captures_with_parser_and_errors(engine):
    ids = tuple(engine.encode('{"a": 1}'))
    s = SequenceState.from_text(engine, "J:") + ScriptedGenerator(ids, name="j", parser=json.loads)
    assert s["j"] == {"a": 1}
    assert s.fork(2)["j"] == [[{"a": 1}, {"a": 1}]]
    with pytest.raises(MissingCapture, match="'nope'.*captures present: \\['j'\\]"):
        s["nope"]
    with pytest.raises(KeyError):
        s["nope"]
    with pytest.raises(CaptureParseError):
        s[..., :-2]["j"]  # the cut JSON no longer parses


def test_last_capture_of_a_name_wins(engine):
    first = ScriptedGenerator(tuple(engine.encode(" one")), name="n")
    second = ScriptedGenerator(tuple(engine.encode(" two")), name="n")
    s = SequenceState.from_text(engine, "x") + first + "," + second
    assert s["n"] == " two"


def test_equality_and_hash_ignore_kv_and_provenance(engine):
    ids = engine.encode("Hello")
    prompt = SequenceState.from_token_ids(engine, ids)
    generated = SequenceState.from_token_ids(engine, ids, kind="generated")
    with_kv = prompt.with_rows([prompt.row(0).with_kv(FakeKV(object(), 1))])
    assert prompt == generated == with_kv
    assert hash(prompt) == hash(with_kv)
    assert prompt != SequenceState.from_text(engine, "Hello ")
    assert prompt != prompt.fork(2)
    pending = SequenceState.from_text(engine, "") + "Hello"
    assert str(pending) == str(prompt) and pending != prompt  # same text, not tokenized


def test_kv_rules_for_slices_and_concatenation(engine):
    s = SequenceState.from_text(engine, "One two three") + ScriptedGenerator(
        tuple(engine.encode(" four five"))
    )
    kv = s.row(0).kv
    assert kv.length == s.row(0).n_tokens
    assert s[..., :7].row(0).kv == FakeKV(kv.pool, 2)  # "One two" is two tokens
    assert s.tokens[..., :3].row(0).kv == FakeKV(kv.pool, 3)
    assert s[..., :].row(0).kv is kv
    assert s[..., 1:].row(0).kv is None
    assert s.tokens[..., 1:].row(0).kv is None
    other = SequenceState.from_text(engine, "x") + ScriptedGenerator((87,))
    assert (s + other).row(0).kv is kv
    assert (other + s).row(0).kv is other.row(0).kv
    empty = SequenceState.from_text(engine, "")
    assert (empty + s).row(0).kv is kv
    assert ("pre" + s).row(0).kv is None


def test_resume_point_after_a_cut_inside_a_generated_span(engine):
    gen = ScriptedGenerator(tuple(engine.encode(" alpha beta gamma")))
    s = SequenceState.from_text(engine, "Go:") + gen
    whole = s.row(0).resume_point
    assert whole.complete and whole.constraint_state == 3
    cut = s[..., :-3].row(0).resume_point
    assert cut.generator is gen and not cut.complete
    assert cut.constraint_state == 2 and cut.pending_text == " ga" and cut.tokens_kept == 2
    at_start = s[..., :5].row(0).resume_point
    assert at_start.constraint_state is None and at_start.pending_text == " a"
    assert (s + "x").row(0).resume_point is None


def test_errors_share_a_base_class():
    for error in [StateIndexError, ShapeMismatch, IncompatibleOperand, EngineMismatch,
                  MissingCapture, CaptureParseError, NotScalarState]:  # fmt: skip
        assert issubclass(error, SeqStateError)


def test_operands_survive_failed_operations(engine):
    a = SequenceState.from_text(engine, ["a", "b"])
    b = SequenceState.from_text(engine, ["x", "y", "z"])
    before = (a.texts, b.texts, a.rows, b.rows)
    with pytest.raises(ShapeMismatch):
        a + b
    assert (a.texts, b.texts, a.rows, b.rows) == before


def test_repr_shows_the_shape_and_labels_rows_by_their_index(engine, grid):
    assert repr(grid).splitlines()[1].startswith("  [0, 0] 'a0'")
    column = SequenceState.from_text(engine, ["x", "y"])
    assert repr(column).splitlines()[1:] == ["  [0] 'x' · 1 tok", "  [1] 'y' · 1 tok"]
    samples = SequenceState.from_text(engine, [["x", "y"]])
    assert repr(samples).splitlines()[2] == "  [1] 'y' · 1 tok"
    one = SequenceState.from_text(engine, "x")
    assert repr(one).splitlines() == [
        "SequenceState(shape=(1, 1), engine=FakeEngine)",
        "  'x' · 1 tok",
    ]
