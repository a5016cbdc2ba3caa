"""Distinct keys while generating JSON: the scanner, the hook and when it is installed."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

import seqstate as ss
from seqstate.hooks import Resample, TokenEvent
from seqstate.json_keys import DistinctKeys, allows_undeclared_keys, repeats_a_key

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(value=_json, cut=st.integers(0, 200))
def test_prefixes_of_valid_json_never_repeat_a_key(value, cut):
    text = json.dumps(value)
    assert not repeats_a_key(text[:cut])


def test_repeated_keys_are_found_in_their_own_object_only():
    assert repeats_a_key('{"a": 1, "a"')
    assert repeats_a_key('{"x": {"a": 1, "b": 2, "a"')
    assert not repeats_a_key('{"a": {"a": 1}, "b"')
    assert not repeats_a_key('[{"a": 1}, {"a"')
    assert not repeats_a_key('{"a": "\\"a\\"", "b"')
    assert repeats_a_key(' {"k\\n": 1, "k\\n"'), "leading non-JSON text (a healed token) is skipped"


def _event(text: str, token_text: str) -> TokenEvent:
    return TokenEvent(0, 0, 0, token_text, 1.0, (), (), text, None)


def test_hook_resamples_only_a_token_that_closes_a_used_key():
    hook = DistinctKeys()
    assert hook(_event('{"a": 1, "', 'a"')) == Resample()
    assert hook(_event('{"a": 1, "', 'ab"')) is None
    assert hook(_event('{"a": 1, "a', "b")) is None


def test_hook_is_installed_where_keys_can_repeat():
    assert not allows_undeclared_keys({"type": "object", "properties": {"a": {"type": "integer"}}})
    assert allows_undeclared_keys({"type": "object", "additionalProperties": {"type": "integer"}})
    assert allows_undeclared_keys({"type": "array", "items": {"type": "object"}})
    assert allows_undeclared_keys(True)
    assert not allows_undeclared_keys({"type": "integer", "exclusiveMinimum": True})
    assert DistinctKeys() in ss.json(dict[str, int]).hooks
    assert DistinctKeys() not in ss.json({"properties": {"a": {"type": "string"}}}).hooks
    assert DistinctKeys() in ss.json({"properties": {"a": {}}}, extra_keys=True).hooks
