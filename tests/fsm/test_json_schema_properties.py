"""Property tests: for random schemas and instances our verdict equals jsonschema's.

Schemas are drawn from the keywords whose jsonschema semantics is exact (integer
``multipleOf`` only: jsonschema divides floats). Instances use the same small key and
value alphabets as the schemas so that both verdicts occur.
"""

from __future__ import annotations

import json
from decimal import Context, Decimal, localcontext

import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fsm.json_schema import matches, schema_term
from fsm.json_schema.numbers import MAX_EXPONENT, NumberChecker

KEYS = ["a", "b", "é"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    st.sampled_from([0.5, 2.0, -1.25, 1e-7, 3e20]),
    st.sampled_from(["", "a", "ab", 'b"', "日本", "x1"]),
)
instances = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=8,
)


def _leaf_schemas() -> st.SearchStrategy[dict]:
    number = st.fixed_dictionaries(
        {"type": st.sampled_from(["integer", "number"])},
        optional={
            "minimum": st.integers(-2, 5),
            "exclusiveMaximum": st.sampled_from([3, 4.5, 10]),
            "multipleOf": st.sampled_from([2, 3]),
        },
    )
    string = st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "minLength": st.integers(0, 2),
            "maxLength": st.integers(1, 3),
            "pattern": st.sampled_from(["a", "^a", "b$", "^[a-z]*$", "\\d"]),
        },
    )
    constant = st.one_of(
        st.builds(lambda v: {"const": v}, instances),
        st.builds(lambda vs: {"enum": vs}, st.lists(instances, min_size=1, max_size=3)),
    )
    simple = st.sampled_from(
        [{}, {"type": "null"}, {"type": "boolean"}, {"type": ["string", "null"]}, True, False]
    )
    return st.one_of(number, string, constant, simple)


def _compound(inner: st.SearchStrategy) -> st.SearchStrategy:
    obj = st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={
            "properties": st.dictionaries(st.sampled_from(KEYS), inner, max_size=2),
            "required": st.lists(st.sampled_from(KEYS), max_size=2, unique=True),
            "additionalProperties": st.one_of(st.booleans(), inner),
            "patternProperties": st.dictionaries(
                st.sampled_from(["^a", "b", "a$"]), inner, max_size=2
            ),
            "maxProperties": st.integers(0, 2),
        },
    )
    arr = st.fixed_dictionaries(
        {"type": st.just("array")},
        optional={
            "items": inner,
            "prefixItems": st.lists(inner, max_size=2),
            "minItems": st.integers(0, 2),
            "maxItems": st.integers(0, 3),
            "contains": inner,
        },
    )
    combos = st.one_of(
        st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: {"allOf": xs}, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda xs: {"oneOf": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda x: {"not": x}, inner),
        st.builds(lambda a, b, c: {"if": a, "then": b, "else": c}, inner, inner, inner),
    )
    return st.one_of(obj, arr, combos)


schemas = st.recursive(_leaf_schemas(), _compound, max_leaves=6)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, st.lists(instances, min_size=1, max_size=6))
@example({"type": "integer"}, [3e20, 1.0, 1e2, 15.0, 1.5, -0.0, 1e-5])  # integer-valued numbers
@example({"type": "integer", "minimum": 0}, [3e20, 1e2, 1.5])
def test_verdicts_match_jsonschema(schema: object, values: list) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    term = schema_term(schema)
    for value in values:
        for text in (
            json.dumps(value, ensure_ascii=False),
            json.dumps(value, separators=(",", ":"), ensure_ascii=False),
        ):
            assert matches(term, text.encode()) == validator.is_valid(value), (schema, text)


def canonical(text: str) -> str:
    """A decimal with a canonical fraction (``.0`` or no trailing zero), as printed
    by Python and JavaScript."""
    if "." not in text:
        return text
    whole, fraction = text.split(".")
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


numbers = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: canonical(f"{d:f}")),
    st.floats(allow_nan=False, allow_infinity=False).map(json.dumps),
)
checkers = st.builds(
    NumberChecker,
    minimum=st.none() | st.decimals(-100, 100, places=2),
    exclusive_minimum=st.booleans(),
    maximum=st.none() | st.decimals(-100, 1000, places=2),
    exclusive_maximum=st.booleans(),
    multiple_of=st.none() | st.sampled_from([Decimal("0.5"), Decimal(3), Decimal("0.01")]),
    integer=st.booleans(),
)


WIDE = Context(prec=200)
"""Exact for every number the tests below build."""


def within_bounds(checker: NumberChecker, value: Decimal) -> bool:
    """The checker's bounds and integrality, by exact value (not ``multiple_of``)."""
    return (
        (
            checker.minimum is None
            or value > checker.minimum
            or (value == checker.minimum and not checker.exclusive_minimum)
        )
        and (
            checker.maximum is None
            or value < checker.maximum
            or (value == checker.maximum and not checker.exclusive_maximum)
        )
        and (not checker.integer or value == value.to_integral_value(context=WIDE))
    )


@settings(max_examples=400, deadline=None)
@given(checkers, numbers)
def test_number_checker_never_prunes_an_accepted_number(checker: NumberChecker, text: str) -> None:
    data = text.encode()
    if checker.accepts(data):
        assert all(checker.viable(data[:i]) for i in range(len(data) + 1))


@settings(max_examples=400, deadline=None)
@given(checkers, numbers)
def test_number_checker_accepts_by_exact_value(checker: NumberChecker, text: str) -> None:
    value = Decimal(text)
    with localcontext(Context(prec=2000)):
        multiple = checker.multiple_of is None or (value / checker.multiple_of) % 1 == 0
    assert checker.accepts(text.encode()) == (within_bounds(checker, value) and multiple)


long_decimals = st.builds(
    lambda digits, point, negative: Decimal(f"{'-' if negative else ''}0.{digits}").scaleb(
        point, WIDE
    ),
    st.from_regex(r"[1-9][0-9]{27,44}", fullmatch=True),
    st.integers(-3, 3),
    st.booleans(),
)
"""Decimals with 28 to 45 significant digits: more than decimal's default context keeps."""


@st.composite
def near_a_long_bound(draw) -> tuple[NumberChecker, str]:
    """A checker with a long bound, and a number written a few units of its last digit
    (or a tenth or a hundredth of one) away from it, plainly or with an exponent."""
    bound = draw(long_decimals)
    unit = Decimal(1).scaleb(bound.as_tuple().exponent - draw(st.integers(0, 2)), WIDE)
    value = WIDE.add(bound, WIDE.multiply(Decimal(draw(st.integers(-3, 3))), unit))
    exclusive, integer, as_maximum = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
    other = draw(st.none() | long_decimals)
    if as_maximum:
        checker = NumberChecker(
            minimum=other, maximum=bound, exclusive_maximum=exclusive, integer=integer
        )
    else:
        checker = NumberChecker(
            minimum=bound, exclusive_minimum=exclusive, maximum=other, integer=integer
        )
    exponent = draw(st.none() | st.integers(-40, 40).filter(bool))  # no "e0": not canonical
    if exponent is None:
        return checker, canonical(f"{value:f}")
    return checker, f"{canonical(f'{value.scaleb(-exponent, WIDE):f}')}e{exponent}"


@settings(max_examples=300, deadline=None)
@given(near_a_long_bound())
@example(
    (
        NumberChecker(
            minimum=Decimal("0.1"), maximum=Decimal("0.12345678901234568"), exclusive_maximum=True
        ),
        "0.1234567890123456799999999999999",
    )
)
@example(
    (
        NumberChecker(minimum=Decimal("-0.2"), maximum=Decimal("-0.10000000000000000000000000015")),
        "-0.10000000000000000000000000015",
    )
)
def test_long_numbers_near_their_bounds_are_judged_exactly(case) -> None:
    """The checker accepts by exact value, and never prunes a prefix of a number it
    accepts: rounding to decimal's default 28 digits did, at an exclusive bound."""
    checker, text = case
    expected = within_bounds(checker, Decimal(text))
    assert checker.accepts(text.encode()) == expected, (checker, text)
    if expected:
        data = text.encode()
        pruned = [data[:i] for i in range(len(data) + 1) if not checker.viable(data[:i])]
        assert not pruned, (checker, text, pruned)


@settings(max_examples=200, deadline=None)
@given(st.integers(-300, 300), st.integers(0, 300), st.integers(-5000, 5000))
def test_bounded_integer_prefixes_are_viable_exactly_when_completable(low, width, value):
    """Soundness and tightness on plain integer prefixes: a digit prefix is viable iff
    some integer in the bounds is written with that prefix or scaled down from it."""
    from decimal import Decimal

    from fsm.json_schema.numbers import NumberChecker

    checker = NumberChecker(minimum=Decimal(low), maximum=Decimal(low + width), integer=True)
    text = str(value).encode()
    reachable = [x for x in range(low, low + width + 1) if str(x).startswith(str(value))]
    digits = str(abs(value))
    scaled = [
        value // 10**k if value >= 0 else -(abs(value) // 10**k)
        for k in range(len(digits) - len(digits.rstrip("0")) + 1)
    ]
    expected = bool(reachable) or any(low <= x <= low + width for x in scaled)
    if value != 0:
        assert checker.viable(text) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.integers(-300, 300),
    st.integers(0, 300),
    st.integers(-5000, 5000),
    st.sampled_from([None, 1, 3, 7, 25, "2.5", "0.5", "0.3"]),
)
def test_plain_integer_prefixes_are_viable_exactly_when_completable(low, width, value, step):
    """With integer syntax (draft 4, ``plain_integers``) no exponent can scale a prefix
    down: a prefix is viable iff some integer in the bounds (a multiple of ``step``) is
    written starting with it (``330`` under ``maximum: 120`` is a dead end, though
    ``330e-1`` is 33; so is ``1`` under ``maximum: 12, multipleOf: 5``)."""
    from decimal import Decimal

    from fsm.json_schema.numbers import NumberChecker

    multiple = None if step is None else Decimal(str(step))
    checker = NumberChecker(
        minimum=Decimal(low),
        maximum=Decimal(low + width),
        multiple_of=multiple,
        integer=True,
        integer_syntax=True,
    )
    values = [x for x in range(low, low + width + 1) if multiple is None or x % multiple == 0]
    if not values:
        return  # an empty range: the compiler refuses it before any mask (Unsatisfiable)
    written = [str(x) for x in values] + ["-0"] * (0 in values)  # JSON's negative zero
    for text in (str(value), str(value)[:-1] or "-", str(value) + "0"):
        expected = any(number.startswith(text) for number in written)
        assert checker.viable(text.encode()) == expected, (checker, text)


def _completable(checker, text: bytes, depth: int) -> bool:
    """Some string of at most ``depth`` bytes completes ``text`` into an accepted
    number (breadth-first, through viable prefixes only)."""
    level = [text]
    for _ in range(depth + 1):
        if any(checker.accepts(prefix) for prefix in level):
            return True
        level = [
            prefix + bytes([byte])
            for prefix in level
            for byte in checker.alphabet
            if checker.viable(prefix + bytes([byte]))
        ][:3000]
    return False


@settings(max_examples=300, deadline=None)
@given(
    st.integers(-400, 400),
    st.integers(0, 400),
    st.sampled_from(["0.01", "0.05", "0.5", "2.5", "3", "7", "0.3"]),
    st.integers(-99999, 99999),
    st.integers(0, 3),
)
def test_bounded_multiples_have_no_dead_prefix(low, width, step, mantissa, places):
    """``multipleOf`` with bounds: every viable prefix of a number written near the
    bounds can still be completed (``99.999`` under ``maximum: 100, multipleOf: 0.01``
    was viable, with no multiple left to reach); and no accepted number is pruned."""
    from decimal import Decimal

    from fsm.json_schema.numbers import NumberChecker

    checker = NumberChecker(
        minimum=Decimal(low) / 4, maximum=Decimal(low + width) / 4, multiple_of=Decimal(step)
    )
    text = str(Decimal(mantissa).scaleb(-places)).encode()
    for cut in range(1, len(text) + 1):
        prefix = text[:cut]
        if prefix.strip(b"-0.") and checker.viable(prefix):  # leading digits decide
            assert _completable(checker, prefix, 4), (checker, prefix)
    if checker.accepts(text):
        assert all(checker.viable(text[:cut]) for cut in range(len(text) + 1))


@pytest.mark.parametrize(
    ("written", "canonical_form"),
    [(b"1.50", b"1.5"), (b"2.00", b"2.0"), (b"0.10e3", b"0.1e3"), (b"-3.10", b"-3.1")],
)
def test_non_canonical_fractions_are_refused(written: bytes, canonical_form: bytes) -> None:
    assert not NumberChecker().accepts(written)
    assert NumberChecker().accepts(canonical_form)
    assert matches(schema_term({"type": "number"}), canonical_form)
    assert not matches(schema_term({"type": "number"}), written)


def _some_exponent_accepted(checker: NumberChecker, prefix: bytes) -> bool:
    """Whether ``checker`` accepts a number that starts with ``prefix`` (a mantissa, an
    exponent mark and part of an exponent), by writing every exponent up to the limit
    in every form the syntax has (a sign or none, Python's ``e05`` padding)."""
    mark = max(prefix.find(b"e"), prefix.find(b"E"))
    mantissa, written = prefix[:mark], prefix[mark + 1 :]
    for exponent in range(MAX_EXPONENT + 2):
        digits = [str(exponent).encode()] + ([b"0%d" % exponent] if exponent < 10 else [])
        for form in (sign + digit for sign in (b"", b"+", b"-") for digit in digits):
            if form.startswith(written) and checker.accepts(mantissa + b"e" + form):
                return True
    return False


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["3", "7", "0.3", "0.01", "2.5", "123.456", "1024", "0.0625"]),
    st.sampled_from([None, -1000, -3, 0, 1, 50]),
    st.sampled_from([None, -2, 0, 10, 1000, 10**6]),
    st.booleans(),
    st.decimals(-9999, 9999, places=3).filter(bool).map(lambda d: canonical(f"{d:f}")),
    st.sampled_from(["e", "E", "e+", "e-", "E-"]),
    st.sampled_from(["", "0", "1", "2", "3", "5", "9", "10", "12", "100", "109"]),
)
@example("7", None, None, False, "12", "e", "")  # no power of ten makes 12 a multiple of 7
@example("7", None, None, False, "14", "e-", "")  # 1.4 is not a multiple: no tenth of it is
@example("1024", None, None, True, "0.5", "e", "")  # 0.5e11 = 5 * 2**10 * 5**10
@example("0.0625", None, 1000, False, "3.1", "e-", "")  # 3.1 is no multiple of 1/16, nor its tenths
def test_exponent_prefixes_under_multiple_of_are_viable_exactly_when_completable(
    step, minimum, maximum, integer, mantissa, mark, digits
) -> None:
    """With ``multipleOf``, a mantissa then part of an exponent is viable exactly when
    some exponent it can still be written with gives an accepted number (the search
    over exponents stops where no later one can make a multiple)."""
    checker = NumberChecker(
        minimum=None if minimum is None else Decimal(minimum),
        maximum=None if maximum is None else Decimal(maximum),
        multiple_of=Decimal(step),
        integer=integer,
    )
    prefix = (mantissa + mark + digits).encode()
    assert checker.viable(prefix) == _some_exponent_accepted(checker, prefix), (checker, prefix)


sign_blind_checkers = st.builds(
    NumberChecker,
    minimum=st.sampled_from(
        [None, Decimal(0), Decimal(-5), Decimal(3), Decimal(1), Decimal("0.5")]
    ),
    exclusive_minimum=st.booleans(),
    maximum=st.sampled_from(
        [None, Decimal(0), Decimal(7), Decimal(-2), Decimal(-1), Decimal("-0.5")]
    ),
    exclusive_maximum=st.booleans(),
    multiple_of=st.sampled_from([None, None, Decimal(3)]),
    integer=st.booleans(),
)
"""Checkers whose bounds often leave one sign's magnitudes free (``canonical`` then
rewrites digits), and often do not (it must then keep them)."""
continuations = st.from_regex(
    r"[0-9]{0,4}(\.[0-9]{0,3})?([eE][+-]?(0|1|10|109|110|1099|1100|1101|[0-9]{1,3})?)?",
    fullmatch=True,
).map(str.encode)
"""Mantissa digits, a fraction, and exponents around ``numbers.MAX_EXPONENT``."""


@settings(max_examples=600, deadline=None)
@given(sign_blind_checkers, numbers, st.integers(0, 40), continuations)
@example(NumberChecker(integer=True), "1200", 4, b"e-2")  # trailing zeros divide away
@example(NumberChecker(integer=True), "5", 1, b"e1100")  # the written exponent's limit
@example(NumberChecker(integer=True), "55", 2, b"e1100")  # ... whatever the digits before
@example(NumberChecker(integer=True), "1210", 4, b"e-1")  # trailing zeros kept apart
@example(NumberChecker(maximum=Decimal(7), integer=True), "55", 2, b"e1099")  # digits count
@example(NumberChecker(integer=True), "0.05", 4, b"e1101")
@example(NumberChecker(minimum=Decimal(0), exclusive_minimum=True), "0.0", 3, b"")
@example(NumberChecker(multiple_of=Decimal(3)), "3", 1, b"")  # the digits decide
@example(NumberChecker(minimum=Decimal(1), exclusive_minimum=True, integer=True), "2", 1, b"")
@example(NumberChecker(minimum=Decimal("0.5")), "0.7", 3, b"")  # not integral: digits decide
@example(NumberChecker(maximum=Decimal(7)), "5E1", 2, b"1")  # the mark's case is written away
@example(NumberChecker(integer=True), "12E", 3, b"-1")
def test_a_canonical_prefix_has_the_same_continuations(checker, text, cut, rest) -> None:
    """``canonical`` keeps a prefix's future: every continuation, and each of its
    prefixes, is judged the same after the written and the canonical prefix."""
    written = text.encode()[:cut]
    canonical_prefix = checker.canonical(written)
    assert checker.canonical(canonical_prefix) == canonical_prefix
    assert checker.canonical(written + rest) == checker.canonical(canonical_prefix + rest)
    for end in range(len(rest) + 1):
        assert checker.viable(written + rest[:end]) == checker.viable(
            canonical_prefix + rest[:end]
        ), (checker, written, canonical_prefix, rest[:end])
    assert checker.accepts(written + rest) == checker.accepts(canonical_prefix + rest)


bounded_checkers = st.builds(
    NumberChecker,
    minimum=st.sampled_from(
        [None, Decimal(1000), Decimal(-250), Decimal(7), Decimal("0.35"), Decimal("1E+3")]
    ),
    exclusive_minimum=st.booleans(),
    maximum=st.sampled_from(
        [None, Decimal(10**9), Decimal(65535), Decimal(40), Decimal(-3), Decimal("99.5")]
    ),
    exclusive_maximum=st.booleans(),
    integer=st.booleans(),
    integer_syntax=st.sampled_from([False, False, True]),
)
"""Checkers with a bound on the magnitude, where ``state_key`` takes numbers together."""
number_prefixes = st.from_regex(
    r"-?[1-9][0-9]{0,2}(\.[0-9]{0,2})?([eE][+-]?[0-9]{0,2})?", fullmatch=True
).map(str.encode)
SMALL_INTEGERS = [sign + str(value).encode() for sign in (b"", b"-") for value in range(1, 100)]
ENDINGS = [b"", b"0", b"5", b"9", b"00", b"99", b"000", b".0", b".5", b"e1", b"e-1", b"0e-1"]
"""Continuations that cross the bounds' digits, add places, or divide them away."""


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bounded_checkers, st.lists(number_prefixes, max_size=30), continuations)
@example(NumberChecker(minimum=Decimal(1000), integer=True), [b"120", b"130"], b"0e-1")
@example(NumberChecker(maximum=Decimal(40)), [b"1.35", b"1.50"], b"")  # must go on
@example(NumberChecker(maximum=Decimal(40)), [b"1."], b"")  # a point must be followed
@example(NumberChecker(maximum=Decimal(40), integer=True), [b"1.5", b"2.5"], b"e1")
@example(NumberChecker(maximum=Decimal(40)), [b"1e1", b"1e2"], b"")  # the exponent's digits
@example(NumberChecker(maximum=Decimal(1000)), [], b"00")  # 10 is 1000's first digits, 11 not
def test_numbers_with_one_state_key_have_one_future(checker, texts, rest) -> None:
    """``state_key`` takes together only texts with one future: each continuation, and
    each of its prefixes, is judged the same after every text of a key (the integers
    below 100 and drawn numbers, against endings that cross the bounds)."""
    first_of_key: dict = {}
    for text in SMALL_INTEGERS + texts:
        key = checker.state_key(text)
        if key is None:
            continue
        first = first_of_key.setdefault(key, text)
        for ending in (*ENDINGS, rest):
            for end in range(len(ending) + 1):
                assert checker.viable(text + ending[:end]) == checker.viable(
                    first + ending[:end]
                ), (checker, text, first, ending[:end])
            assert checker.accepts(text + ending) == checker.accepts(first + ending), (
                checker,
                text,
                first,
                ending,
            )


def test_a_bound_keeps_apart_only_the_numbers_it_tells_apart() -> None:
    """Between 1,000 and 10**9, ``2`` and ``9`` (each above both bounds' first digit)
    continue alike, ``1`` (both bounds' first digit) does not; ``11``..``19`` are
    alike, ``10`` is not. An integer's trailing zeros stay apart (``120e-1`` is
    integral), and where ``canonical`` decides, or under ``multipleOf``, there is no
    key."""
    checker = NumberChecker(minimum=Decimal(1000), maximum=Decimal(10**9), integer=True)
    key = checker.state_key
    assert key(b"2") == key(b"9") != key(b"1")
    assert key(b"11") == key(b"19") != key(b"10")
    assert key(b"11.5e") == key(b"12.5e") != key(b"11.5e+")
    assert key(b"120") == key(b"130") != key(b"121")
    assert key(b"1200") != key(b"1210")
    assert key(b"0") is None and key(b"-0.5") is None
    assert NumberChecker(minimum=Decimal(0), integer=True).state_key(b"42") is None
    assert NumberChecker(maximum=Decimal(9), multiple_of=Decimal(3)).state_key(b"4") is None


def test_numbers_with_one_future_are_one_state() -> None:
    """Without a keyword on the magnitude, ``42`` and ``17`` continue alike and are one
    term; ``40`` (a trailing zero an exponent may divide away) is another. A bound on
    the magnitude keeps every number apart."""
    from fsm.terms import checked

    free = NumberChecker(integer=True)
    assert checked(free, b"42") == checked(free, b"17") != checked(free, b"40")
    assert checked(free, b"7") == checked(free, b"42") == checked(free, b"123456789")
    assert checked(free, b"1200") == checked(free, b"300") != checked(free, b"30")
    assert checked(free, b"-3.25e1") == checked(free, b"-9.99e1")
    assert checked(free, b"1e12") != checked(free, b"1e13")  # exponents are kept
    assert checked(NumberChecker(multiple_of=Decimal(3)), b"42") != checked(
        NumberChecker(multiple_of=Decimal(3)), b"17"
    )
    bounded = NumberChecker(minimum=Decimal(20), integer=True)
    assert checked(bounded, b"42") != checked(bounded, b"17")
    positive = NumberChecker(minimum=Decimal(1), integer=True)  # every integer but zero
    assert checked(positive, b"42") == checked(positive, b"17")
    at_most_100 = NumberChecker(maximum=Decimal(100), integer=True)
    assert checked(at_most_100, b"-42") == checked(at_most_100, b"-17")  # all below it
    assert checked(at_most_100, b"42") != checked(at_most_100, b"17")


def test_bounded_numbers_with_one_state_key_are_one_state_of_an_index() -> None:
    """Between 1,000 and 10**9, ``25`` and ``37`` lead to one state of a compiled index
    (the store's term for their key), ``10`` to another; the verdicts stay exact at the
    bounds."""
    import fsm

    vocabulary = fsm.Vocabulary.from_raw([*(bytes([d]) for d in b"0123456789"), None], eos_ids=10)
    schema = {"type": "integer", "minimum": 1000, "maximum": 10**9}
    index = fsm.compile_index(fsm.JsonSchema(schema), vocabulary)
    start = index.initial_state
    assert index.step_bytes(start, b"25") == index.step_bytes(start, b"37")
    assert index.step_bytes(start, b"25") != index.step_bytes(start, b"10")
    for text, accepted in ((b"999", False), (b"1000", True), (b"1000000000", True)):
        assert index.is_final(index.step_bytes(start, text)) == accepted, text
    assert index.step_bytes(start, b"1000000001") == -1


def test_an_exponent_mark_in_either_case_is_one_class_and_one_state() -> None:
    """``e`` and ``E`` are read alike (``NumberChecker.alike``): a checked leaf's
    partition, over objects and over rows, holds them in one class, so one derivative
    is taken for both, and after either the number is one state."""
    from fsm.term_store import TermStore
    from fsm.terms import byte_partition, checked

    bounded = NumberChecker(minimum=Decimal(20), integer=True)
    assert checked(bounded, b"42E") == checked(bounded, b"42e") != checked(bounded, b"42")
    store = TermStore()
    row = store.checked(bounded, b"42")
    assert store.derivative(row, ord("E")) == store.derivative(row, ord("e"))
    alphabet = list(bounded.alphabet)
    for partition in (byte_partition(checked(bounded, b"42")), store.byte_partition(row)):
        assert partition[ord("e")] == partition[ord("E")]
        assert len(set(partition[alphabet].tolist())) == len(alphabet) - 1


def test_the_exponent_limit_is_on_the_written_exponent_when_magnitudes_are_free() -> None:
    """An integer of any length is one (JSON Schema sets no limit) when no keyword
    looks at its magnitude; a bound on the magnitude keeps the limit on the value's
    first digit, which bounds the arithmetic the bound needs."""
    long_integer = b"9" * 1200
    free = NumberChecker(integer=True)
    assert free.accepts(long_integer) and free.accepts(b"55e1100")
    assert not free.accepts(b"5e1101") and not free.accepts(b"5.5e-1101")
    bounded = NumberChecker(maximum=Decimal(10) ** 1300, integer=True)
    assert not bounded.accepts(long_integer) and not bounded.accepts(b"55e1100")
    assert bounded.accepts(b"5e1100")
    term = schema_term({"type": "integer"})
    assert matches(term, long_integer) and matches(term, b"-" + long_integer + b".0")


def test_an_integer_value_is_one_state_however_many_digits() -> None:
    """The digits of an integer lead back to the state they left, so its row is built
    once, not once per digit; a trailing zero (which an exponent may divide away) is
    another state. Read by bytes and read by tokens, the loop is one state each: a
    token leads to a join, numbered apart from the derivative a byte leads to
    (``DerivativeAutomaton.join``)."""
    import fsm

    vocabulary = fsm.Vocabulary.from_raw([b"7", b"0", b"}", b'{"n":', None], eos_ids=4)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    index = fsm.compile_index(fsm.JsonSchema(schema), vocabulary)
    state = index.step_bytes(index.initial_state, b'{"n":7')
    assert index.step_bytes(state, b"7") == state == index.step_bytes(state, b"777")
    assert index.step_bytes(state, b"0") != state
    by_token = index.next_state(state, 0)
    assert index.next_state(by_token, 0) == by_token != index.next_state(by_token, 1)
    assert index.automaton.row(by_token) == index.automaton.row(state)  # type: ignore[attr-defined]
    assert index.num_rows_built == 2
