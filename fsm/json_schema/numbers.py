"""Exact numeric keywords (bounds, ``multipleOf``, integer-valuedness) as a checker.

``NumberChecker`` is used through ``fsm.terms.checked``: ``accepts`` parses the whole
number with ``decimal.Decimal`` and tests every keyword exactly; ``viable`` decides
whether a prefix can still be completed into an accepted number. Before the exponent
is written a number can still be scaled to any magnitude, so a prefix fixes only its
sign and its leading significant digits; once the exponent has started the mantissa
is fixed and the remaining exponents are tried one by one.

Where no keyword looks at the magnitude of a number of its sign (``integer`` alone,
``minimum: 0``), only where the zeros are decides what may follow, so ``canonical``
writes ``7`` and ``77`` alike (one automaton state for an integer however many digits
are written), and the exponent limit is on the exponent written; elsewhere on the
place of the first significant digit, which bounds the arithmetic on the value.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Context, Decimal, InvalidOperation
from fractions import Fraction
from math import gcd

MAX_EXPONENT = 1100
"""Numbers whose decimal exponent exceeds this (beyond any float) are not accepted: the
exponent written when no keyword looks at the number's magnitude, else the place of its
first significant digit (``Decimal.adjusted``)."""

_NUMBER = re.compile(
    rb"-?(?:0|[1-9][0-9]*)(?:\.(?:0|[0-9]*[1-9]))?(?:[eE][+-]?(?:0[1-9]|[1-9][0-9]*))?"
)
"""JSON numbers with a canonical fraction and exponent (see json_text)."""
_EXPONENT_PREFIX = re.compile(rb"|0|0[1-9]|[1-9][0-9]*")
_INTEGER_SYNTAX = re.compile(rb"-?(?:0|[1-9][0-9]*)")
_PREFIX = re.compile(
    rb"(?P<sign>-?)(?:(?P<int>0|[1-9][0-9]*)(?:(?P<dot>\.)(?P<frac>[0-9]*))?"
    rb"(?:(?P<e>[eE])(?P<esign>[+-]?)(?P<exp>[0-9]*))?)?"
)
_EXPONENT_MARK = re.compile(rb"[eE]")
_LEADING_NONZERO = re.compile(rb"(-?)([1-9][0-9]*)(\.([0-9]*))?([eE]([+-]?)([0-9]*))?")
"""A prefix whose integer part starts with a non-zero digit (``state_key``'s): its
groups are the sign, the integer part, the fraction with its point and without, and
the exponent with its mark and without, its sign, its digits."""
_DIGITS = b"0123456789"
_NONZERO_AS_ONE = bytes.maketrans(b"23456789", b"11111111")
EXACT = Context(prec=2400, Emax=10**6, Emin=-(10**6))
"""Every operation on a number or bound names this context: exact up to 2,400
significant digits (decimal's default context keeps 28, and a longer number or bound
rounded there crossed an exclusive bound or emptied an integer range), and no
thread-local context is switched per call."""


@dataclass(frozen=True)
class NumberChecker:
    """The JSON numbers within bounds, multiples of ``multiple_of``, integral if asked.

    ``integer_syntax`` (draft 4 ``integer``) also forbids fraction and exponent.
    """

    minimum: Decimal | None = None
    exclusive_minimum: bool = False
    maximum: Decimal | None = None
    exclusive_maximum: bool = False
    multiple_of: Decimal | None = None
    integer: bool = False
    integer_syntax: bool = False
    magnitude_free: tuple[bool, bool] = field(init=False, repr=False, compare=False)
    """``_magnitude_free`` for positive, then negative numbers, found once."""
    significands: tuple[bytes, ...] = field(init=False, repr=False, compare=False)
    """The significant digits of each non-zero bound's magnitude (``state_key``)."""

    alphabet = b"0123456789-+.eE"
    alike = (b"eE",)  # an exponent's mark, either case

    def __post_init__(self) -> None:
        free = (self._magnitude_free(False), self._magnitude_free(True))
        object.__setattr__(self, "magnitude_free", free)
        significands = tuple(
            "".join(map(str, bound.as_tuple().digits)).lstrip("0").encode()
            for bound in (self.minimum, self.maximum)
            if bound is not None and bound != 0
        )
        object.__setattr__(self, "significands", significands)

    def __hash__(self) -> int:
        """The fields' hash with each absent bound as a string: before Python 3.12,
        ``hash(None)`` is the object's address, and a checked term hashes its checker
        (``fsm.terms.Repeat`` says why a term's hash must not change between runs)."""
        bounds = (self.minimum, self.maximum, self.multiple_of)
        return hash(
            (
                *("none" if bound is None else bound for bound in bounds),
                self.exclusive_minimum,
                self.exclusive_maximum,
                self.integer,
                self.integer_syntax,
            )
        )

    def accepts(self, text: bytes) -> bool:
        if not text or text[-1] not in _DIGITS:  # a number ends in a digit
            return False
        syntax = _INTEGER_SYNTAX if self.integer_syntax else _NUMBER
        if not syntax.fullmatch(text):
            return False
        try:
            value = Decimal(text.decode())
        except InvalidOperation:
            return False
        if value and not self._exponent_within_limit(text, value):
            return False
        return self._value_ok(value)

    def _exponent_within_limit(self, text: bytes, value: Decimal) -> bool:
        """``MAX_EXPONENT`` on the exponent written when the magnitude of numbers of
        this sign is free (so the mantissa's length does not matter, as ``canonical``
        needs), else on the value's first significant digit."""
        if self.magnitude_free[text.startswith(b"-")]:
            mark = _EXPONENT_MARK.search(text)
            return mark is None or abs(int(text[mark.end() :])) <= MAX_EXPONENT
        return abs(value.adjusted()) <= MAX_EXPONENT

    def _in_range(self, value: Decimal) -> bool:
        if self.minimum is not None:
            if value < self.minimum or (self.exclusive_minimum and value == self.minimum):
                return False
        if self.maximum is not None:
            if value > self.maximum or (self.exclusive_maximum and value == self.maximum):
                return False
        return True

    def _value_ok(self, value: Decimal) -> bool:
        if not self._in_range(value):
            return False
        try:
            if self.integer and value != value.to_integral_value(context=EXACT):
                return False
            if self.multiple_of is not None:
                quotient = EXACT.divide(value, self.multiple_of)
                if quotient != quotient.to_integral_value(context=EXACT):
                    return False
        except InvalidOperation:
            return False
        return True

    def completions(self, text: bytes) -> tuple[bytes, ...]:
        return ()  # the breadth-first search finds a number's shortest ending quickly

    def canonical(self, text: bytes) -> bytes:
        """``text`` with its mantissa's non-zero digits written as ``1``, and a non-zero
        integer part as ``1`` then its trailing zeros, when no keyword looks at the
        magnitude of a number of its sign (``_magnitude_free``): then only where the
        zeros are decides what may follow (syntax, integrality: ``1200e-2`` is
        integral, ``1210e-2`` is not), and the exponent limit is on the exponent
        written, so ``7``, ``42`` and ``12345`` are one state, not a state per number
        or per length. An exponent's mark is written ``e`` (``alike``)."""
        text = text.replace(b"E", b"e")
        if not self.magnitude_free[text.startswith(b"-")]:
            return text
        exponent = _EXPONENT_MARK.search(text)
        end = len(text) if exponent is None else exponent.start()
        mantissa = text[:end].translate(_NONZERO_AS_ONE)
        start = 1 if mantissa.startswith(b"-") else 0
        point = mantissa.find(b".")
        stop = len(mantissa) if point < 0 else point
        if stop - start > 1:  # a non-zero integer part (no leading zero): "1" + its zeros
            zeros = stop - len(mantissa[:stop].rstrip(b"0"))
            mantissa = mantissa[:start] + b"1" + b"0" * zeros + mantissa[stop:]
        return mantissa + text[end:]

    def state_key(self, text: bytes) -> Hashable | None:
        """What decides the future of ``text`` where a bound looks at the magnitude,
        or None where ``canonical`` says it all: texts with one key accept exactly the
        same continuations, so an automaton may take them as one state.

        After a non-zero leading digit, a number's continuations only append digits to
        its significand (integer part, then fraction) or write its exponent, so every
        value they reach is ``0.<significand> * 10**E`` for a place ``E`` the digits'
        count and the exponent decide, not their values. Against a bound whose
        significand is ``b`` at place ``P``, a value at another place is wholly above
        or below it, and at ``P`` the digits written so far compare with ``b``'s first
        as many (zeros after its end): unless they are equal, that comparison decides,
        whatever follows. So the key keeps the comparison with each bound, and what the
        syntax and integrality read: the sign, the integer part's length, the point,
        the digits' count, whether the fraction ends in a zero (``1.50`` must go on),
        for integers the trailing zeros (``1200e-2`` is integral, ``1210e-2`` is not),
        and the exponent as written. Digits equal to a bound's are the only
        ones with their key, so nothing is lost where the comparison does not decide.
        None under ``multipleOf`` (the digits' value decides)."""
        if self.multiple_of is not None:
            return None
        match = _LEADING_NONZERO.fullmatch(text)
        if match is None:
            return None
        sign, integer, point, fraction, mark, exponent_sign, exponent = match.groups()
        negative = sign == b"-"
        if self.magnitude_free[negative]:
            return None
        digits = integer + (fraction or b"")
        comparisons = tuple(_compare_leading(digits, bound) for bound in self.significands)
        if self.integer:  # where the last non-zero digit stands: integrality
            zeros = len(digits) - len(digits.rstrip(b"0"))
        else:  # whether a fraction must go on (``1.50``)
            zeros = int(fraction is not None and fraction.endswith(b"0"))
        written = None if mark is None else (exponent_sign, exponent)
        return (negative, len(integer), point is not None, len(digits), zeros, comparisons, written)

    def _magnitude_free(self, negative: bool) -> bool:
        """Whether the accepted numbers of this sign are all of them but zero, or all of
        them: no ``multipleOf``, no bound beyond zero on this side, and the bound on the
        other side below every non-zero magnitude (1 for integers, else 0)."""
        if self.multiple_of is not None:
            return False
        far, near, near_exclusive = self.maximum, self.minimum, self.exclusive_minimum
        if negative:
            far = None if self.minimum is None else self.minimum.copy_negate()
            near = None if self.maximum is None else self.maximum.copy_negate()
            near_exclusive = self.exclusive_maximum
        if far is not None:
            return False
        smallest = 1 if self.integer else 0
        return (
            near is None
            or near < smallest
            or (near == smallest and not (near_exclusive and smallest))
        )

    def viable(self, text: bytes) -> bool:
        match = _PREFIX.fullmatch(text)
        if match is None:
            return False
        if self.integer_syntax and (match["dot"] or match["e"]):
            return False
        if match["e"]:
            return self._exponent_viable(match)
        negative = match["sign"] == b"-"
        if match["int"] is None:
            return self._sign_viable(negative if match["sign"] else None)
        if self.integer_syntax:
            return self._plain_integer_prefix_viable(match["int"], negative)
        if self.integer:
            return self._integer_prefix_viable(match["int"], match["dot"], match["frac"], negative)
        digits = (match["int"] + (match["frac"] or b"")).lstrip(b"0")
        if not digits:
            return self._sign_viable(negative)
        if self.multiple_of is not None:
            fraction = match["frac"] or b""
            past = fraction.endswith(b"0") and fraction != b"0"  # a non-zero digit must follow
            return self._leading_digits_multiple_viable(digits.decode(), negative, past)
        return self._leading_digits_viable(digits.decode(), negative)

    def _leading_digits_multiple_viable(self, digits: str, negative: bool, past: bool) -> bool:
        """Some multiple of ``multiple_of`` in the bounds, of this sign, has significant
        digits that start with ``digits`` (and go on past them, with ``past``): then
        one of its writings starts with the prefix read, an exponent placing it. The
        magnitudes tried run from ``multiple_of``'s (no non-zero multiple is smaller)
        to the upper bound's; without one, a large enough magnitude holds a multiple."""
        assert self.multiple_of is not None
        step = self.multiple_of.copy_abs()
        low, low_excl, high, high_excl = self._magnitude_bounds(negative)
        if high is None:
            return True
        if high <= 0:
            return False
        start = Decimal("0." + digits)
        end = EXACT.add(start, Decimal(1).scaleb(-len(digits), EXACT))
        for k in range(step.adjusted(), high.adjusted() + 3):
            lower, lower_excl = start.scaleb(k, EXACT), past
            if low is not None and (low > lower or (low == lower and low_excl)):
                lower, lower_excl = low, low_excl
            first = _first_multiple_from(lower, step)
            if first == lower and lower_excl:
                first = EXACT.add(first, step)
            if first < end.scaleb(k, EXACT) and (first < high or (first == high and not high_excl)):
                return True
        return False

    def _magnitude_bounds(
        self, negative: bool
    ) -> tuple[Decimal | None, bool, Decimal | None, bool]:
        """``(low, low exclusive, high, high exclusive)`` on the magnitudes of numbers of
        this sign: the bounds themselves, or negated and swapped for negative numbers."""
        if negative:
            low = None if self.maximum is None else self.maximum.copy_negate()
            high = None if self.minimum is None else self.minimum.copy_negate()
            return low, self.exclusive_maximum, high, self.exclusive_minimum
        return self.minimum, self.exclusive_minimum, self.maximum, self.exclusive_maximum

    def _sign_viable(self, negative: bool | None) -> bool:
        """Whether the numbers of that sign (zero included) meet the bounds."""
        low, high = self.minimum, self.maximum
        if negative is None:
            return (
                low is None
                or high is None
                or low < high
                or (low == high and not (self.exclusive_minimum or self.exclusive_maximum))
            )
        if negative:
            return low is None or low < 0 or (low == 0 and not self.exclusive_minimum)
        return high is None or high > 0 or (high == 0 and not self.exclusive_maximum)

    def _leading_digits_viable(self, digits: str, negative: bool) -> bool:
        """Some magnitude ``0.<digits>... * 10**k`` of this sign lies within the bounds."""
        low, _, high, high_excl = self._magnitude_bounds(negative)
        if high is not None and (high < 0 or (high == 0)):
            return False
        if high is None or low is None or low <= 0:
            return True
        start = Decimal("0." + digits)
        end = EXACT.add(start, Decimal(1).scaleb(-len(digits), EXACT))
        for k in range(low.adjusted() - 1, high.adjusted() + 3):
            lower = start.scaleb(k, EXACT)
            upper = end.scaleb(k, EXACT)
            if low < upper and (lower < high or (lower == high and not high_excl)):
                return True
        return False

    def _plain_integer_prefix_viable(self, digits: bytes, negative: bool) -> bool:
        """Some integer in the bounds is written with these digits first. Integer syntax
        has no fraction or exponent to scale a prefix down (``330`` is never 33), and
        nothing follows a leading zero."""
        value = Decimal(-int(digits) if negative else int(digits))
        if self._value_ok(value):
            return True
        return digits != b"0" and self._integers_starting_with(digits.decode(), negative, True)

    def _integer_prefix_viable(
        self, integer: bytes, dot: bytes | None, fraction: bytes | None, negative: bool
    ) -> bool:
        """Some integer in the bounds can still be written from this mantissa prefix.

        With a canonical fraction, an integral value either ends the fraction as
        ``.0`` (the integer part itself) or takes an exponent at least as long as the
        fraction, so its digits start with the digits written so far (``1.11`` ->
        ``1.11e2`` = 111). Without a fraction a negative exponent may also divide
        away trailing zeros of the integer part (``1200e-2`` = 12)."""
        written = (integer + (fraction or b"")).decode()
        if not written.lstrip("0"):
            return self._sign_viable(negative)
        sign = -1 if negative else 1
        candidates = []
        if dot is None:
            stripped = len(written) - len(written.rstrip("0"))
            candidates = [int(written) // 10**k for k in range(stripped + 1)]
        elif fraction in (b"", b"0"):
            candidates = [int(integer)]  # ``.0`` may end it
        if any(self._value_ok(Decimal(sign * c)) for c in candidates):
            return True
        # A fraction ending in zeros must still get a non-zero digit: strictly longer.
        longer = fraction is not None and fraction != b"0" and fraction.endswith(b"0")
        return self._integers_starting_with(written.lstrip("0"), negative, longer)

    def _integers_starting_with(self, digits: str, negative: bool, longer: bool) -> bool:
        """Whether an integer whose digits are ``digits`` (if not ``longer``) or extend
        them meets the bounds."""
        bound = self.minimum if negative else self.maximum
        if bound is None:
            return True
        value = int(digits)
        widest = len(str(abs(int(bound)))) + 1
        for j in range(1 if longer else 0, max(widest - len(digits), 0) + 2):
            low, high = value * 10**j, value * 10**j + 10**j - 1
            lower, upper = (-high, -low) if negative else (low, high)
            if self._overlaps(Decimal(lower), Decimal(upper)):
                return True
        return False

    def _overlaps(self, lower: Decimal, upper: Decimal) -> bool:
        """Whether some integer in ``[lower, upper]`` (integral ends) meets the bounds
        and is a multiple of ``multiple_of``: the range is narrowed to the integers the
        bounds admit, then its first multiple must lie in it."""
        if self.minimum is not None:
            above = self.minimum.to_integral_value(ROUND_CEILING, EXACT)
            if above == self.minimum and self.exclusive_minimum:
                above = EXACT.add(above, 1)
            lower = max(lower, above)
        if self.maximum is not None:
            below = self.maximum.copy_negate().to_integral_value(ROUND_CEILING, EXACT)
            below = below.copy_negate()
            if below == self.maximum and self.exclusive_maximum:
                below = EXACT.subtract(below, 1)
            upper = min(upper, below)
        if self.multiple_of is None:
            return lower <= upper
        return _first_multiple_from(lower, Decimal(_integer_multiple(self.multiple_of))) <= upper

    def _exponent_viable(self, match: re.Match[bytes]) -> bool:
        mantissa = Decimal(
            (match["sign"] + match["int"] + (match["dot"] or b"") + (match["frac"] or b"")).decode()
        )
        if match["dot"] and not _NUMBER.fullmatch(match["int"] + b"." + match["frac"]):
            return False  # an exponent only follows a complete, canonical fraction
        if not _EXPONENT_PREFIX.fullmatch(match["exp"]):
            return False
        if not mantissa:
            return self._value_ok(mantissa)
        free = self.magnitude_free[match["sign"] == b"-"]  # the written exponent's limit
        signs = [match["esign"]] if match["esign"] else [b"+", b"-"]
        if match["exp"] or match["esign"]:
            signs = [match["esign"] or b"+"]
        prefix = match["exp"].decode()
        for sign in signs:
            for exponent in _exponents_with_prefix(prefix):  # increasing
                value = mantissa.scaleb(-exponent if sign == b"-" else exponent, EXACT)
                beyond_limit = not free and abs(value.adjusted()) > MAX_EXPONENT
                if beyond_limit or self._beyond(value, sign == b"+"):
                    break
                if self._value_ok(value):
                    return True
        return False

    def _beyond(self, value: Decimal, growing: bool) -> bool:
        """Whether ``value`` and every later one fail, as the exponent keeps growing
        (``growing``: the magnitude grows with it, else shrinks towards zero)."""
        # a mantissa that no power of ten makes a multiple (12 under multipleOf 7) would
        # otherwise try every exponent up to MAX_EXPONENT, of both signs
        if self.multiple_of is not None and not _multiple_ahead(value, self.multiple_of, growing):
            return True
        if growing:
            if value > 0:
                return self.maximum is not None and value > self.maximum
            return self.minimum is not None and value < self.minimum
        if self.integer and value != value.to_integral_value(context=EXACT):
            return True  # dividing a non-integer by ten never gives an integer
        if value > 0:
            return self.minimum is not None and 0 < self.minimum and value < self.minimum
        return self.maximum is not None and self.maximum < 0 and value > self.maximum


def _compare_leading(digits: bytes, significand: bytes) -> int:
    """-1, 0 or 1 as ``digits`` (no leading zero) compare with the first as many
    digits of a bound's ``significand``, zeros after its last."""
    leading = significand[: len(digits)].ljust(len(digits), b"0")
    return (digits > leading) - (digits < leading)


def _exponents_with_prefix(prefix: str) -> Iterator[int]:
    """Exponent values whose canonical digits start with ``prefix``, small first."""
    if not prefix:
        yield from range(1, MAX_EXPONENT + 1)
        return
    if prefix == "0":  # Python's two-digit form: 01..09
        yield from range(1, 10)
        return
    base = int(prefix)
    span = 1
    while base * span <= MAX_EXPONENT:
        yield from range(base * span, min(base * span + span, MAX_EXPONENT + 1))
        span *= 10


def _multiple_ahead(value: Decimal, step: Decimal, growing: bool) -> bool:
    """Whether ``value`` or some ``value * 10**k`` further on (``k > 0`` when
    ``growing``, ``k < 0`` when not) is a multiple of ``step``. Written as a reduced
    fraction, ``value / step`` reaches an integer by growing exactly when its
    denominator has no prime factor but 2 and 5; by shrinking only when it is one
    already (a tenth of a non-integer is never an integer)."""
    left = (Fraction(value) / Fraction(step)).denominator
    if not growing:
        return left == 1
    common = gcd(left, 10)
    while common > 1:
        left //= common
        common = gcd(left, 10)
    return left == 1


def _integer_multiple(multiple_of: Decimal) -> int:
    """The least positive integer that is a multiple of ``multiple_of``: ``p / gcd(p, q)``
    for ``multiple_of = p / q`` (an integer is ``n * p / q`` exactly when ``q / gcd``
    divides ``n``)."""
    numerator, denominator = abs(multiple_of).as_integer_ratio()
    return numerator // gcd(numerator, denominator)


def _first_multiple_from(value: Decimal, step: Decimal) -> Decimal:
    """The least multiple of ``step`` (positive) that is at least ``value``."""
    return EXACT.multiply(EXACT.divide(value, step).to_integral_value(ROUND_CEILING, EXACT), step)
