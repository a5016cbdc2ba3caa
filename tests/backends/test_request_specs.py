"""Request dicts of constraint specs: round trips through JSON, the defaults of the
``ss`` generators, and clear errors for malformed dicts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fsm
import seqstate as ss
from backends.request_specs import check_spec, spec_from_args, spec_to_args

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
schemas = st.recursive(
    st.sampled_from([{"type": t} for t in ("integer", "string", "boolean", "null", "number")]),
    lambda inner: st.one_of(
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.dictionaries(names, inner, max_size=4).map(
            lambda props: {"type": "object", "properties": props, "required": list(props)[:1]}
        ),
    ),
    max_leaves=6,
)
json_specs = st.builds(
    fsm.JsonSchema,
    st.one_of(schemas, schemas.map(json.dumps)),
    whitespace_max=st.integers(0, 12),
    strict=st.booleans(),
    key_order=st.sampled_from(["any", "schema"]),
    extra_keys=st.booleans(),
    plain_integers=st.booleans(),
)
specs = st.one_of(
    json_specs,
    st.builds(fsm.Regex, st.sampled_from([r"[a-z]+", r"\d{3}-\d{2}", "(yes|no)", "é+ü?"])),
    st.builds(fsm.Choice, st.lists(names, min_size=1, max_size=5)),
    st.builds(fsm.Grammar, st.just('start: "a" start | "b"'), start=st.just("start")),
)


@given(specs)
def test_round_trip_through_json_text(spec):
    args = spec_to_args(spec)
    back = spec_from_args(json.loads(json.dumps(args)))
    assert back == spec
    assert back.fingerprint == spec.fingerprint  # key order included when it matters
    assert spec_from_args(json.dumps(args)) == spec  # the flat form of vllm_xargs


@pytest.mark.parametrize(
    "generator",
    [
        ss.json({"type": "object", "properties": {"b": {"type": "integer"}, "a": {}}}),
        ss.json('{"type": "array"}', whitespace_max=2, key_order="any", extra_keys=True),
        ss.regex(r"[0-9]+"),
        ss.choice(["yes", "no"]),
        ss.grammar('start: "x"+'),
    ],
)
def test_generators_round_trip_and_defaults_match(generator):
    args = spec_to_args(generator.constraint)
    assert spec_from_args(args) == generator.constraint


def test_bare_json_request_means_ss_json():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert spec_from_args({"json": schema}) == ss.json(schema).constraint
    assert spec_to_args(ss.json(schema).constraint) == {"json": schema}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "exactly one of"),
        ({"regex": "a", "choice": ["a"]}, "found regex, choice"),
        ({"regex": "a", "start": "s"}, "unknown option"),
        ({"json": {}, "extra_keys": "yes"}, "true or false"),
        ({"json": {}, "whitespace_max": -1}, "non-negative"),
        ({"json": {}, "key_order": "sorted"}, "key_order"),
        ({"choice": "yes"}, "list of strings"),
        ({"choice": []}, "at least one"),
        ({"regex": 5}, "must be a str"),
        ("[1, 2]", "dict"),
        ("{not json", "not JSON"),
    ],
)
def test_malformed_dicts_are_refused_by_name(args, message):
    with pytest.raises(fsm.InvalidSpec, match=message):
        spec_from_args(args)


def test_check_spec_parses_now():
    with pytest.raises(fsm.UnsupportedRegex):
        check_spec(spec_from_args({"regex": "a(?=b)"}))
    with pytest.raises(fsm.Unsatisfiable):
        check_spec(spec_from_args({"json": {"type": "string", "minLength": 3, "maxLength": 1}}))
    with pytest.raises(fsm.UnsupportedSchema):
        check_spec(spec_from_args({"json": {"type": "string", "format": "uri-template"}}))


def test_not_a_spec():
    with pytest.raises(fsm.InvalidSpec, match="not a constraint spec"):
        spec_to_args("a+")  # type: ignore[arg-type]
