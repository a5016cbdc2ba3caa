"""Every error a user can trigger while building a generator is typed (under
`ss.SeqStateError`), raised at once, and says what is wrong."""

from __future__ import annotations

import pytest

import seqstate as ss


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: ss.regex("("), ss.InvalidSpec, "missing )"),
        (lambda: ss.regex(5), ss.InvalidSpec, "str"),
        (lambda: ss.json({1, 2}), ss.InvalidSpec, "{1, 2}"),
        (lambda: ss.json(object()), ss.InvalidSpec, "JSON schema"),
        (lambda: ss.json("{not json"), ss.InvalidSpec, "not JSON"),
        (lambda: ss.json({"type": "object"}, key_order="sorted"), ss.InvalidSpec, "key_order"),
        (lambda: ss.choice([]), ss.InvalidSpec, "at least one"),
        (lambda: ss.choice("abc"), ss.InvalidGenerator, "list of strings"),
        (lambda: ss.choice(["a", 1]), ss.InvalidSpec, "str"),
        (lambda: ss.gen(max_tokens=-1), ss.InvalidGenerator, "max_tokens"),
        (lambda: ss.gen(max_tokens=2.5), ss.InvalidGenerator, "max_tokens"),
        (lambda: ss.gen(max_retries=-1), ss.InvalidGenerator, "max_retries"),
        (lambda: ss.gen(stop=""), ss.InvalidGenerator, "stop"),
        (lambda: ss.gen(banned=[""]), ss.InvalidGenerator, "banned"),
        (lambda: ss.gen(name=3), ss.InvalidGenerator, "name"),
        (lambda: ss.gen(sampler="greedy"), ss.InvalidGenerator, "sampler"),
        (lambda: ss.gen(hooks=[1]), ss.InvalidGenerator, "hooks"),
        (lambda: ss.grammar("start: ("), ss.InvalidSpec, "grammar"),
    ],
)
def test_bad_arguments_raise_typed_errors_at_construction(build, error, words):
    with pytest.raises(error) as caught:
        build()
    assert isinstance(caught.value, ss.SeqStateError)
    assert words in str(caught.value)


def test_constraint_errors_are_exported_and_rooted_in_seqstate_error():
    for name in ("InvalidSpec", "UnsupportedSchema", "UnsupportedRegex", "ConstraintTooLarge"):
        assert issubclass(getattr(ss, name), ss.SeqStateError)
    assert issubclass(ss.TruncatedCapture, ss.CaptureParseError)
    assert issubclass(ss.Unsatisfiable, ss.InvalidSpec)
    assert issubclass(ss.BacktrackPastSpanStart, ss.GenerationError)
    assert issubclass(ss.GenerationError, ss.SeqStateError)


def test_a_single_hook_and_max_retries_are_accepted():
    hook = lambda event: None  # noqa: E731
    assert ss.gen(hooks=hook, max_retries=3).hooks == (hook,)
    assert ss.regex("a", max_retries=0).max_retries == 0
