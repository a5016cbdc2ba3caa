"""JSON schema to terms: each keyword means what the specification says.

``accepts`` walks the bytes of ``json.dumps(instance)`` over the term's derivatives;
``jsonschema`` (with format checking) is the oracle wherever it agrees with the spec.
"""

from __future__ import annotations

import json
import warnings

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsm
from fsm.json_schema import matches, schema_term
from fsm.terms import And, Not, Term


def accepts(schema: object, instance: object, **options: object) -> bool:
    return matches(
        schema_term(schema, **options), json.dumps(instance, ensure_ascii=False).encode()
    )


def accepts_text(schema: object, text: str, **options: object) -> bool:
    return matches(schema_term(schema, **options), text.encode())


def agrees_with_oracle(schema: dict, instances: list) -> None:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    oracle = cls(schema, format_checker=cls.FORMAT_CHECKER)
    term = schema_term(schema)
    for instance in instances:
        text = json.dumps(instance, ensure_ascii=False).encode()
        assert matches(term, text) == oracle.is_valid(instance), (schema, instance)


# ------------------------------------------------------------------ objects


PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
}


def test_object_keys_in_any_order_each_named_key_once() -> None:
    assert accepts(PERSON, {"name": "a", "age": 3})
    assert accepts(PERSON, {"age": 3, "name": "a"})
    assert not accepts_text(PERSON, '{"name": "a", "name": "b"}')
    assert not accepts(PERSON, {"age": 3})


ORDERED = {
    "type": "object",
    "properties": {
        "a": {"type": "integer"},
        "b": {"type": "integer"},
        "c": {"type": "integer"},
        "d": {"type": "integer"},
    },
    "required": ["a", "c"],
}


@settings(max_examples=60, deadline=None)
@given(
    st.permutations(["a", "b", "c", "d", "x"]).flatmap(
        lambda keys: st.lists(st.sampled_from(keys), unique=True).map(
            lambda chosen: [k for k in keys if k in chosen]
        )
    )
)
def test_schema_key_order_accepts_exactly_the_valid_instances_in_order(keys) -> None:
    """``key_order="schema"``: valid instances whose named keys follow the schema order
    (other keys anywhere); "any" accepts every valid instance."""
    instance = {k: 1 for k in keys}
    named = [k for k in keys if k != "x"]
    valid = jsonschema.Draft202012Validator(ORDERED).is_valid(instance)
    assert accepts(ORDERED, instance) == valid
    assert accepts(ORDERED, instance, key_order="schema") == (valid and named == sorted(named))


def test_schema_key_order_is_part_of_the_fingerprint() -> None:
    swapped = {**ORDERED, "properties": dict(reversed(ORDERED["properties"].items()))}
    assert fsm.JsonSchema(ORDERED).fingerprint == fsm.JsonSchema(swapped).fingerprint
    ours = fsm.JsonSchema(ORDERED, key_order="schema")
    assert ours.fingerprint != fsm.JsonSchema(swapped, key_order="schema").fingerprint
    assert ours.fingerprint != fsm.JsonSchema(ORDERED).fingerprint
    with pytest.raises(fsm.InvalidSpec):
        fsm.JsonSchema(ORDERED, key_order="sorted")


def test_schemas_in_another_key_order_compile_to_terms_that_differ() -> None:
    """A compile names its thunks after the schema's text, keys in their own order:
    with ``key_order="schema"`` two orders mean two languages, so their terms must not
    compare equal (an equality found makes one term take the other's parts). Keys
    sorted for the name made them equal, and the swapped schema then accepted the
    first one's order."""
    swapped = {**ORDERED, "properties": dict(reversed(ORDERED["properties"].items()))}
    in_order = schema_term(ORDERED, key_order="schema")
    reversed_order = schema_term(swapped, key_order="schema")
    assert in_order != reversed_order
    text = json.dumps({"a": 1, "c": 1}).encode()
    assert matches(in_order, text)
    assert not matches(reversed_order, text)
    assert schema_term(ORDERED, key_order="schema") == in_order  # one schema, one name
    assert schema_term(ORDERED, key_order="schema", whitespace_max=1) != in_order


def test_the_spec_names_its_compile_as_the_schema_alone_would() -> None:
    """``fsm.JsonSchema`` hands its JSON text to the compile, which names its thunks
    after it: the same names, so the same terms, as a compile from the schema alone."""
    spec = fsm.JsonSchema(ORDERED, key_order="schema")
    assert spec.term() == schema_term(ORDERED, key_order="schema")


def test_additional_properties_absent_allows_any_value() -> None:
    assert accepts(PERSON, {"name": "a", "extra": [1, {"x": None}]})
    assert accepts({"type": "object"}, {"anything": {"goes": [True, 1.5, "s"]}})


def test_additional_properties_false_and_schema() -> None:
    closed = {**PERSON, "additionalProperties": False}
    assert not accepts(closed, {"name": "a", "extra": 1})
    typed = {**PERSON, "additionalProperties": {"type": "integer"}}
    assert accepts(typed, {"name": "a", "extra": 1})
    assert not accepts(typed, {"name": "a", "extra": "no"})


def test_pattern_properties_combine_with_names_and_additional() -> None:
    schema = {
        "properties": {"x_fixed": {"type": "string"}},
        "patternProperties": {"^x_": {"maxLength": 3}, "^n": {"type": "number"}},
        "additionalProperties": False,
    }
    agrees_with_oracle(
        schema,
        [
            {"x_fixed": "abc"},
            {"x_fixed": "abcd"},
            {"x_other": "ab"},
            {"x_other": "abcdef"},
            {"num": 3},
            {"num": "3"},
            {"other": 1},
            {"x_n": 5},
        ],
    )


def test_key_cases_no_key_takes_are_left_out() -> None:
    """A key in a pattern and outside it, or in one of the patterns and outside all of
    them, is no key: such a case is not offered, so no liveness search has to show it
    dead while an instance is walked (one pattern with a value, extra keys refused:
    kept, the case cost a search in this walk, 16 in a MaskBench schema's). The keys
    still read as the oracle says."""
    from fsm.json_schema.compile import KeySide, contradictory

    p, q = fsm.terms.literal(b"p"), fsm.terms.literal(b"q")
    assert contradictory((KeySide(matched=(p,)), KeySide(unmatched=(p,))))
    assert contradictory((KeySide(unmatched=(p,)), KeySide(one_of=(p, q), unmatched=(q,))))
    assert not contradictory((KeySide(matched=(p,)), KeySide(one_of=(p, q))))
    assert not contradictory((KeySide(unmatched=(p,)), KeySide(one_of=(p, q))))

    schema = {
        "type": "object",
        "patternProperties": {"^method\\.response\\.header\\..+$": {"enum": ["true", "false"]}},
        "additionalProperties": False,
    }
    agrees_with_oracle(
        schema,
        [
            {"method.response.header.X-A": "true"},
            {"method.response.header.X-A": "maybe"},
            {"method.response.header.": "true"},
            {"other": "true"},
            {},
        ],
    )
    vocabulary = fsm.Vocabulary.from_raw([bytes([b]) for b in range(256)] + [None], eos_ids=256)
    index = fsm.compile_index(fsm.JsonSchema(schema), vocabulary)
    state = index.initial_state
    for byte in json.dumps(
        {"method.response.header.X-A": "true", "method.response.header.B": "false"}
    ).encode():
        index.allowed_tokens(state)
        state = index.next_state(state, byte)
    assert index.is_final(state)
    assert index.automaton.searches == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("pattern", [".*", "^[a-z]*", "x*$", ""])
def test_a_pattern_every_key_matches_leaves_no_other_keys(pattern: str) -> None:
    """A pattern open at one end whose core matches the empty string matches every
    key (``fsm.regex.search_in``): the keys outside it are none, found so when the
    schema is compiled, so no liveness search has to show them dead while an instance
    is walked (``.*`` as written cost 11 searches on its first key, 5 ms compiled).
    Every key, a line break in it too, takes the pattern's value schema."""
    schema = {"type": "object", "patternProperties": {pattern: {"type": "number"}}}
    agrees_with_oracle(
        schema,
        [{"a": 1}, {"a": "x"}, {"line\nbreak": 2}, {"line\nbreak": None}, {"": 0.5}, {}],
    )
    vocabulary = fsm.Vocabulary.from_raw([bytes([b]) for b in range(256)] + [None], eos_ids=256)
    index = fsm.compile_index(fsm.JsonSchema(schema), vocabulary)
    state = index.initial_state
    for byte in json.dumps({"alpha": 1, "be\nta": 2.5}).encode():
        index.allowed_tokens(state)
        state = index.next_state(state, byte)
    assert index.is_final(state)
    assert index.automaton.searches == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("patterns", [2, 5])
def test_overlapping_patterns_meet_on_the_keys_they_share(patterns: int) -> None:
    """Each pattern taken both ways as a union of members (up to
    ``compile.MAX_KEY_TESTS`` tests), or their intersection past that: a key that
    several patterns match takes all their values, one none match takes
    ``additionalProperties``, a named key its own and the patterns'."""
    bounds = [{"maxLength": 4}, {"minLength": 2}, {"pattern": "^[a-c]*$"}, {}, {"maxLength": 6}]
    schema = {
        "properties": {"ab": {"type": "string"}},
        "patternProperties": {
            f"^{'ab'[i % 2]}{'x' * (i // 2)}": {"type": "string", **bounds[i]}
            for i in range(patterns)
        },
        "additionalProperties": {"type": "integer"},
    }
    agrees_with_oracle(
        schema,
        [
            {"ab": "abcd"},
            {"ab": "abcde"},
            {"ab": "a"},
            {"a": "abc"},
            {"a": "abcde"},
            {"axx": "ccc"},
            {"axx": "cdc"},
            {"bx": "a"},
            {"bx": "aaaaaaa"},
            {"c": 3},
            {"c": "3"},
            {"ab": "abc", "a": "xy", "c": 1},
        ],
    )


def test_property_count_and_names() -> None:
    schema = {"minProperties": 1, "maxProperties": 2, "propertyNames": {"maxLength": 2}}
    agrees_with_oracle(
        schema, [{}, {"a": 1}, {"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3}, {"abc": 1}, 5]
    )


def test_dependent_required_and_schemas() -> None:
    schema = {
        "dependentRequired": {"card": ["billing"]},
        "dependentSchemas": {"a": {"required": ["b"]}},
    }
    agrees_with_oracle(
        schema, [{}, {"card": 1}, {"card": 1, "billing": 2}, {"a": 1}, {"a": 1, "b": 2}, "x"]
    )


# ------------------------------------------------------------------ whitespace


def test_whitespace_dumps_compact_and_bounded() -> None:
    value = {"a": [1, 2], "b": {"c": None}}
    assert accepts(PERSON | {"required": []}, value)
    assert accepts_text({}, json.dumps(value, separators=(",", ":")))
    assert accepts_text({}, json.dumps(value, indent=2))
    assert not accepts_text({}, json.dumps(value, indent="\t"))  # one kind: spaces
    assert not accepts_text({}, '{\r\n  "a": 1}')
    assert accepts_text({}, '{ "a": [ 1 ] }')
    deep = '{"a": 1,' + "\n" + " " * 9 + '"b": 2}'
    assert not accepts_text({}, deep)
    assert accepts_text({}, deep, whitespace_max=9)
    assert not accepts_text({}, '{"a":  1}')  # a run is one space, or a line break + indent
    assert not accepts_text({}, '{"a": 1,\n\n\n"b": 2}')  # no blank-line padding
    assert not accepts_text({}, " 1")  # nothing before or after the value
    assert not accepts_text({}, '{"a": 1}', whitespace_max=0)


@pytest.mark.parametrize("schema", [{}, PERSON, {"type": "array", "items": {"type": "integer"}}])
def test_no_whitespace_before_separators_and_at_most_a_space_after_the_colon(schema) -> None:
    for text in (
        '{"name" : "x"}',
        '{"name": "x" , "age": 1}',
        '{"name":\n"x"}',
        "[1 , 2]",
        '{"name": "x"\n, "age": 1}',
    ):
        assert not accepts_text(schema, text), text
    for text in ('{"name":"x"}', '{"name": "x",\n  "age": 1\n}', "[1, 2]", "[\n  1,\n  2\n]"):
        valid = jsonschema.Draft202012Validator(schema).is_valid(json.loads(text))
        assert accepts_text(schema, text) == valid, text


# ------------------------------------------------------------------ values


def test_enum_and_const_compare_values() -> None:
    schema = {"enum": [1, "a", {"x": [1, 2], "y": None}, True]}
    assert accepts(schema, 1.0)
    assert accepts_text(schema, '{"y": null, "x": [1, 2]}')
    assert not accepts(schema, {"x": [1, 2]})
    assert not accepts(schema, 2)
    assert accepts({"const": True}, True) and not accepts({"const": True}, 1)
    assert not accepts({"const": 1}, True)


def test_type_lists_and_nullable_unions() -> None:
    schema = {"type": ["string", "null"], "minLength": 2}
    agrees_with_oracle(schema, ["ab", "a", None, 3, [], {}])


# ------------------------------------------------------------------ numbers


def test_number_bounds_exact() -> None:
    schema = {"type": "number", "minimum": 1.5, "exclusiveMaximum": 10}
    agrees_with_oracle(schema, [1.5, 1.4999, 9.999, 10, 10.0, 15e-1, 1e1, -3, 0, "x"])


@pytest.mark.parametrize("low", [10**28 + 15, 10**28 + 5, -(10**30) - 1])
def test_integer_ranges_beyond_28_digits_are_exact(low: int) -> None:
    """An integer range with one member above decimal's default 28 digits: finding its
    first integer rounded the bound there and called the range empty."""
    schema = {"type": "integer", "exclusiveMinimum": low, "maximum": low + 1}
    agrees_with_oracle(schema, [low - 1, low, low + 1, low + 2])


@pytest.mark.parametrize("schema", [{"type": "number"}, {"type": "number", "maximum": 1e300}])
def test_exponents_are_canonical(schema) -> None:
    """Every exponent Python or JavaScript prints is accepted; zero padding is not."""
    for text in ("1e-05", "1e+16", "1.5e+300", "2E-7", "1e21", "-3e-310"):
        within = "maximum" not in schema or float(text) <= schema["maximum"]
        assert accepts_text(schema, text) == within, text
    for text in ("1e0", "1e00", "1e005", "1e-005", "1E+010"):
        assert not accepts_text(schema, text), text


def test_draft4_boolean_exclusive_bounds() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "integer",
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 5,
    }
    agrees_with_oracle(schema, [0, 1, 5, 6, -1])


def test_integer_values_by_draft() -> None:
    assert accepts({"type": "integer"}, 1.0)
    assert accepts({"type": "integer", "minimum": 0}, 2.0)
    assert not accepts({"type": "integer"}, 1.5)
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}
    assert not accepts(draft4, 1.0) and accepts(draft4, -12)


def test_multiple_of_exact_with_decimals() -> None:
    # Decimal arithmetic, as the spec means it (jsonschema's float division rejects 0.07).
    schema = {"type": "number", "multipleOf": 0.01}
    for value in (0.07, 1.23, 100, -0.5, 1e-2):
        assert accepts(schema, value), value
    for value in (1.234, 0.001, "1"):
        assert not accepts(schema, value), value


# ------------------------------------------------------------------ strings


def test_string_lengths_count_code_points() -> None:
    schema = {"type": "string", "minLength": 2, "maxLength": 3}
    agrees_with_oracle(schema, ["é", "éé", "日本語", "日本語x", 'a"', "\n\t"])


def test_pattern_searches_unless_anchored() -> None:
    assert accepts({"pattern": "b+"}, "abbc")
    assert not accepts({"pattern": "^b+$"}, "abbc")
    assert accepts({"pattern": "^a|c$"}, "abc")
    assert accepts({"pattern": '^"\\\\$'}, '"\\')
    assert not accepts({"pattern": "(^[^5]*$)"}, "a5")  # anchors inside an enclosing group
    assert accepts({"pattern": "(^[^5]*$)|7"}, "a57") and not accepts(
        {"pattern": "(^[^5]*$)|7"}, "a5"
    )


def test_formats_are_asserted() -> None:
    cases = {
        "date": (["2024-02-29", "2023-12-31"], ["2023-02-29", "2024-13-01", "24-01-01"]),
        "date-time": (
            ["2024-01-01T12:00:00Z", "2024-01-01T12:00:00.5+02:00"],
            ["2024-01-01 12:00:00"],
        ),
        "time": (["23:59:60Z", "10:00:00-05:00"], ["22:59:60Z", "10:00"]),
        "email": (["a.b@example.com"], ["nope", "a@@b"]),
        "uuid": (["123e4567-e89b-12d3-a456-426614174000"], ["123e4567"]),
        "uri": (["https://example.com/a?b#c", "urn:isbn:123"], ["example.com", "http://a b"]),
        "ipv4": (["192.168.0.1"], ["256.0.0.1", "1.2.3"]),
        "ipv6": (["::1", "2001:db8::8a2e:370:7334"], ["12345::", "1:2"]),
        "hostname": (["example.com"], ["-bad.com", "a..b"]),
        "regex": (["^a+$", "['\"]x"], ["*", "(unclosed"]),
    }
    for name, (good, bad) in cases.items():
        term = schema_term({"format": name})
        for value in good:
            assert matches(term, json.dumps(value).encode()), (name, value)
        for value in bad:
            assert not matches(term, json.dumps(value).encode()), (name, value)
    assert accepts({"format": "made-up"}, "anything")  # unknown formats annotate


# ------------------------------------------------------------------ arrays


def test_items_prefix_items_and_counts() -> None:
    schema = {
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "items": {"type": "boolean"},
        "maxItems": 3,
    }
    agrees_with_oracle(
        schema, [[], [1], [1, "a"], [1, "a", True], [1, "a", True, False], ["a"], [1, 2]]
    )


def test_draft4_array_items_and_additional_items() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "items": [{"type": "integer"}],
        "additionalItems": False,
        "minItems": 1,
    }
    agrees_with_oracle(schema, [[], [1], [1, 2], ["a"]])


def test_contains_counts() -> None:
    schema = {"contains": {"type": "integer"}, "minContains": 2, "maxContains": 3}
    agrees_with_oracle(schema, [[1], [1, 2], [1, "a", 2, 3], [1, 2, 3, 4], []])


def test_unique_items_over_finite_values() -> None:
    schema = {"type": "array", "items": {"enum": ["a", "b", 1]}, "uniqueItems": True}
    agrees_with_oracle(schema, [[], ["a", "b"], ["a", "a"], [1, 1.0], ["a", 1, "b"], ["c"]])


def test_unique_items_over_infinite_values_is_refused() -> None:
    with pytest.raises(fsm.UnsupportedSchema) as error:
        schema_term({"items": {"type": "string"}, "uniqueItems": True})
    assert error.value.keyword == "uniqueItems"
    with pytest.warns(UserWarning):
        term = schema_term({"items": {"type": "string"}, "uniqueItems": True}, strict=False)
    assert matches(term, b'["a", "a"]')


# ------------------------------------------------------------------ applicators


def test_one_of_is_exact_when_branches_overlap() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"minimum": 5}]}
    agrees_with_oracle(schema, [1, 7, 7.5, "x"])


def test_one_of_discriminated_objects() -> None:
    schema = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"k": {"const": "a"}, "v": {"type": "integer"}},
                "required": ["k"],
            },
            {
                "type": "object",
                "properties": {"k": {"const": "b"}, "v": {"type": "string"}},
                "required": ["k"],
            },
        ]
    }
    agrees_with_oracle(
        schema, [{"k": "a", "v": 1}, {"k": "b", "v": "s"}, {"k": "a", "v": "s"}, {"k": "c"}]
    )


def test_one_of_discriminated_inside_an_object_node() -> None:
    """Branches that admit any type but require a key with different values are
    disjoint on objects, which the node holding them requires."""
    branch_a = {"properties": {"k": {"enum": ["a"]}, "v": {"type": "integer"}}, "required": ["k"]}
    branch_b = {"properties": {"k": {"const": "b"}, "v": {"type": "string"}}, "required": ["k"]}
    schema = {"type": "object", "oneOf": [branch_a, branch_b]}
    assert not _holds_complement(schema_term(schema))
    agrees_with_oracle(
        schema,
        [{"k": "a", "v": 1}, {"k": "b", "v": "s"}, {"k": "a", "v": "s"}, {"k": "c"}, {}, "a", 1],
    )
    # without the object node, every non-object meets both branches and fails oneOf:
    # the union of the branches' objects is still exact
    open_schema = {"oneOf": [branch_a, branch_b]}
    assert not _holds_complement(schema_term(open_schema))
    agrees_with_oracle(open_schema, [{"k": "a", "v": 1}, {"k": "b"}, {"k": "b", "v": 1}, "a", 1])
    # a branch that also constrains numbers: a number may meet one branch only
    numeric = {"oneOf": [{**branch_a, "minimum": 5}, branch_b]}
    assert _holds_complement(schema_term(numeric))
    agrees_with_oracle(numeric, [{"k": "a", "v": 1}, {"k": "b"}, 7, 3, "a"])


def test_one_of_discriminated_by_a_listed_value_the_other_schema_refuses() -> None:
    listed = {"properties": {"changes": {"enum": [["deleted"]]}}, "required": ["changes"]}
    typed = {
        "properties": {
            "changes": {"type": "array", "items": {"enum": ["size", "mode"]}, "minItems": 1}
        },
        "required": ["changes"],
    }
    schema = {"type": "object", "oneOf": [listed, typed]}
    assert not _holds_complement(schema_term(schema))
    agrees_with_oracle(
        schema, [{"changes": ["deleted"]}, {"changes": ["size"]}, {"changes": []}, {}]
    )
    # overlapping branches: one met and the other failed, merged as objects (the
    # complement stays inside the value of ``changes``, ``test_conditions.py``)
    overlapping = {"properties": {"changes": {"type": "array"}}, "required": ["changes"]}
    schema = {"type": "object", "oneOf": [listed, overlapping]}
    assert not _holds_complement(schema_term(schema))
    agrees_with_oracle(
        schema, [{"changes": ["deleted"]}, {"changes": ["size"]}, {"changes": 1}, {}]
    )


def test_a_type_the_applicators_imply_is_not_intersected() -> None:
    """``type`` adds nothing when an applicator's values, or the branches of it kept,
    all have those types; a type that may still refuse some values is kept."""
    defs = {"$defs": {"a": {"type": "object", "properties": {"n": {"type": "integer"}}}}}
    untyped = {"$defs": {"a": {"properties": {"n": {"type": "integer"}}, "required": ["n"]}}}
    values = [{"n": 1}, {"n": "x"}, {}, [], "s", "abc", None, 2, 2.5, -4]
    for implied in (
        {"type": "object", "allOf": [{"$ref": "#/$defs/a"}], **defs},
        {"type": "object", "anyOf": [{"$ref": "#/$defs/a"}], **untyped},  # other types dropped
        {
            "type": ["string", "null"],
            "anyOf": [{"type": "string", "maxLength": 2}, {"const": None}],
        },
        {"type": "string", "anyOf": [{"type": "object"}, {"maxLength": 2}]},
    ):
        assert not _holds_intersection(schema_term(implied)), implied
        agrees_with_oracle(implied, values)
    for kept in (
        {"type": "integer", "anyOf": [{"minimum": 3}, {"maximum": -3}]},  # 3.5 is no integer
        {
            "type": "object",
            "patternProperties": {"^m": {"type": "string"}},  # not merged with allOf
            "allOf": [{"$ref": "#/$defs/a"}],
            **defs,
        },
        {"type": "string", "not": {"maxLength": 2}},
    ):
        assert _holds_intersection(schema_term(kept)), kept
        agrees_with_oracle(kept, [3, 3.5, -4, 0, *values, {"n": 1.5}, {"m": 1}, {"m": "x"}])


def test_all_of_plain_objects_is_one_object() -> None:
    """``allOf`` of plain object schemas compiles to one object whose values are
    intersected, with the same instances as the intersection of the objects."""
    base = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    objects = [{"a": 1, "b": 2}, {"a": 1}, {"b": 2}, {"a": "x", "b": 1}, {"a": 1, "c": 3}, {}]
    others = ["s", 1, None, []]
    cases = [
        {"allOf": [{"$ref": "#/$defs/base"}, {"properties": {"b": {}}, "required": ["b"]}]},
        {"allOf": [{"properties": {"a": {}}, "additionalProperties": False}, {"required": ["b"]}]},
        {"allOf": [{"properties": {"a": {}}, "additionalProperties": False}, {"required": ["a"]}]},
        {
            "allOf": [
                {"properties": {"a": {"type": "integer"}}},
                {"properties": {"a": {"minimum": 3}}},
            ]
        },
        {"allOf": [{"additionalProperties": {"type": "integer"}}, {"properties": {"a": {}}}]},
        {"type": "object", "allOf": [{"allOf": [{"$ref": "#/$defs/base"}]}, {"required": ["c"]}]},
        {"properties": {"b": {"type": "string"}}, "allOf": [{"$ref": "#/$defs/base"}]},
        {"allOf": [{"type": ["object", "null"], "required": ["a"]}, {"type": ["null", "object"]}]},
        {"allOf": [{"type": ["object", "null"], "required": ["a"]}, {"$ref": "#/$defs/base"}]},
        {"allOf": [{"type": ["object", "integer"]}, {"type": "number", "properties": {}}]},
    ]
    for schema in cases:
        schema = {**schema, "$defs": {"base": base}}
        assert not _holds_intersection(schema_term(schema)), schema
        agrees_with_oracle(schema, [*objects, {"a": 5}, {"a": 2}, {"a": 5.5}, 2.5, *others])
    recursive = {
        "allOf": [
            {"properties": {"child": {"$ref": "#"}}},
            {"properties": {"name": {"type": "string"}}, "required": ["name"]},
        ]
    }
    assert not _holds_intersection(schema_term(recursive))
    agrees_with_oracle(
        recursive,
        [{"name": "a"}, {"name": "a", "child": {"name": "b"}}, {"name": "a", "child": {}}],
    )


def test_an_object_node_is_distributed_over_its_union_of_objects() -> None:
    """A node's own object constraints beside ``anyOf``, or a ``oneOf`` whose branches
    no object meets twice, become one merged object per branch; a ``oneOf`` whose
    branches overlap, one per branch met with the others failed."""
    tagged = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "oneOf": [
            {"properties": {"k": {"const": "a"}, "v": {"type": "integer"}}, "required": ["k"]},
            {"$ref": "#/$defs/b"},
        ],
        "$defs": {"b": {"properties": {"k": {"enum": ["b"]}}, "required": ["k", "w"]}},
    }
    either = {
        "properties": {"a": {"type": "integer"}},
        "anyOf": [
            {"required": ["a"]},
            {"properties": {"b": {"type": "string"}}, "required": ["b"]},
        ],
    }
    instances = [
        {"name": "x", "k": "a", "v": 1},
        {"name": "x", "k": "a", "v": "s"},
        {"name": "x", "k": "b", "w": 0},
        {"name": "x", "k": "b"},
        {"k": "a"},
        {"a": 1},
        {"a": "s"},
        {"b": "s"},
        {"a": 1.5, "b": "s"},
        {},
        "s",
        None,
    ]
    for schema in (tagged, either):
        term = schema_term(schema)
        assert not _holds_intersection(term) and not _holds_complement(term), schema
        agrees_with_oracle(schema, instances)
    overlapping = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "oneOf": [
            {"properties": {"a": {"type": "integer"}}},
            {"properties": {"a": {"minimum": 3}}},
        ],
    }
    # branches that overlap: one met and the others failed, still merged objects (the
    # complement is inside the value of ``a``, ``test_conditions.py``)
    assert not _holds_complement(schema_term(overlapping))
    agrees_with_oracle(overlapping, [{"a": 1}, {"a": 4}, {"a": 4.5}, {}, {"name": 1}])


def test_all_of_plain_objects_closed_for_generation() -> None:
    """With ``extra_keys=False`` the merged object takes the keys every part declares,
    and no other (as the node closing over its parts' names did)."""
    schema = {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}},
        ]
    }
    term = schema_term(schema, extra_keys=False)
    assert not _holds_intersection(term)
    for text, expected in [
        (b'{"a": 1}', True),
        (b'{"a": 1, "b": "x"}', True),
        (b'{"b": "x", "a": 1}', True),
        (b'{"a": 1, "c": 2}', False),
        (b'{"b": "x"}', False),
        (b'{"a": 1, "b": 2}', False),
    ]:
        assert matches(term, text) == expected, text


def _holds_intersection(term: Term) -> bool:
    """Whether an intersection appears in ``term`` (thunks are not opened)."""
    return _holds(term, And)


def _holds_complement(term: Term) -> bool:
    """Whether a complement appears in ``term`` (thunks are not opened)."""
    return _holds(term, Not)


def _holds(term: Term, kind: type) -> bool:
    todo, seen = [term], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return True
        todo.extend(getattr(current, "items", ()))
        if hasattr(current, "item"):
            todo.append(current.item)
    return False


def test_all_of_any_of_not_if_then_else() -> None:
    schema = {
        "allOf": [{"type": ["integer", "string"]}, {"not": {"const": 3}}],
        "anyOf": [{"type": "string"}, {"minimum": 0}],
        "if": {"type": "integer"},
        "then": {"maximum": 10},
        "else": {"maxLength": 2},
    }
    agrees_with_oracle(schema, [1, 3, 11, -1, "ab", "abc", None, 2.5])


def test_ref_siblings_depend_on_the_draft() -> None:
    defs = {"definitions": {"s": {"type": "string"}}}
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": "#/definitions/s",
        "maxLength": 1,
        **defs,
    }
    draft2020 = {"$ref": "#/definitions/s", "maxLength": 1, **defs}
    assert accepts(draft7, "abc")
    assert not accepts(draft2020, "abc") and accepts(draft2020, "a")


def test_recursive_refs_have_no_depth_bound() -> None:
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/node"}},
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    }
    deep: dict = {}
    for _ in range(60):
        deep = {"next": deep}
    assert accepts(schema, deep)
    deep["bad"] = 1
    assert not accepts(schema, deep)


def test_refs_by_id_and_anchor() -> None:
    schema = {
        "$id": "https://example.com/root.json",
        "properties": {"a": {"$ref": "item.json"}, "b": {"$ref": "#num"}},
        "$defs": {
            "item": {"$id": "item.json", "type": "string"},
            "n": {"$anchor": "num", "type": "number"},
        },
    }
    agrees_with_oracle(schema, [{"a": "x", "b": 1}, {"a": 1}, {"b": "x"}])


def test_unsupported_refs_and_keywords_name_the_keyword() -> None:
    with pytest.raises(fsm.UnsupportedSchema) as error:
        schema_term({"$ref": "https://example.com/other.json"})
    assert error.value.keyword == "$ref"
    with pytest.raises(fsm.UnsupportedSchema) as error:
        schema_term({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"})
    assert error.value.keyword == "$ref"
    with pytest.raises(fsm.UnsupportedSchema) as error:
        schema_term({"unevaluatedItems": False})
    assert error.value.keyword == "unevaluatedItems"
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert matches(schema_term({"unevaluatedItems": False}, strict=False), b"[1]")


@pytest.mark.parametrize(
    "keywords", [("unevaluatedItems", "$dynamicRef"), ("$dynamicRef", "unevaluatedItems")]
)
def test_a_node_with_several_refused_keywords_names_its_first(keywords) -> None:
    """The keyword an ``UnsupportedSchema`` names is the node's first refused one, in
    the schema's order: a set's order follows the strings' hashes, which change from
    one process to the next, so the same schema named either keyword run to run."""
    schema = {keyword: False if keyword == "unevaluatedItems" else "#meta" for keyword in keywords}
    with pytest.raises(fsm.UnsupportedSchema) as error:
        schema_term(schema)
    assert error.value.keyword == keywords[0]


def test_draft_keywords_missing_from_old_drafts_are_annotations() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "const": 1,
        "if": {},
        "then": False,
    }
    assert accepts(draft4, 2)


# ------------------------------------------------------------------ spec


def test_json_schema_spec_is_frozen_hashable_and_fingerprinted() -> None:
    a = fsm.JsonSchema(PERSON)
    b = fsm.JsonSchema(json.dumps(PERSON))
    assert a == b and hash(a) == hash(b) and a.fingerprint == b.fingerprint
    assert fsm.JsonSchema(PERSON, whitespace_max=1).fingerprint != a.fingerprint
    with pytest.raises(AttributeError):
        a.strict = False  # type: ignore[misc]
    with pytest.raises(fsm.InvalidSpec):
        fsm.JsonSchema([1, 2])
    assert matches(a.term(), b'{"name": "x"}')


def test_annotated_constraints_become_keywords():
    from typing import Annotated

    from pydantic import Field

    import fsm

    schema = json.loads(
        fsm.JsonSchema(Annotated[int, Field(ge=0, lt=10, multiple_of=2)]).schema_json
    )
    assert schema == {"type": "integer", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2}
    text = json.loads(fsm.JsonSchema(Annotated[str, Field(min_length=1, pattern="^x")]).schema_json)
    assert text == {"type": "string", "minLength": 1, "pattern": "^x"}
