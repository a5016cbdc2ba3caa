"""Regex syntax (Python's ``re`` and ECMAScript's common ground) parsed into a small tree.

``parse_regex`` reads a pattern in one pass, with no backtracking, into ``RegexNode``
values that ``fsm.regex`` turns into byte-level terms. It replaces a general parser
library that cost 0.3-0.6 ms per short pattern, as much as the rest of a regex's
compile and first masks together.

What it reads, and how it differs from Python's ``re``:

* Literals, ``.``, escapes (``\\n``, ``\\xhh``, ``\\uhhhh``, ``\\Uhhhhhhhh``,
  ``\\N{name}``, ECMAScript's ``\\cX``, octal, escaped punctuation), classes with
  ranges and negation, groups (capturing, ``(?:``, ``(?P<name>``, ECMAScript's
  ``(?<name>``), comments ``(?#...)``, alternation, the quantifiers
  ``* + ? {m} {m,} {,n} {m,n}`` and their lazy forms (the same language for a full
  match), and the flags ``i``, ``s``, ``a`` and ``u``, global (``(?i)``) or scoped
  (``(?i:...)``, ``(?-i:...)``).
* ECMAScript's meanings where JSON-schema patterns need them: ``\\d`` and ``\\w`` are
  ASCII, ``\\s`` includes the Unicode spaces, and a class ends at its first ``]``
  (``[]`` matches nothing, ``[^]`` any character).
* A ``{`` that does not start a quantifier is a literal, as in both dialects.
* Refused with ``UnsupportedRegex``: anchors and word boundaries, backreferences,
  lookaround, conditionals, atomic groups and possessive quantifiers (they change
  the language), Unicode properties, surrogate code points, and the ``m`` and ``x``
  flags. Anything else malformed raises ``InvalidSpec`` with the position.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from fsm.errors import InvalidSpec, UnsupportedRegex
from fsm.unicode import Ranges, complement_ranges

CodeRanges = tuple[tuple[int, int], ...]
"""Code-point ranges as the tree keeps them (immutable, sorted)."""

IGNORECASE = 1
DOTALL = 2
ASCII_ONLY = 4

MAX_REPEAT = 4294967295
"""The largest bound of a counted repetition Python's ``re`` accepts (``MAXREPEAT``)."""

UNICODE_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""What ECMAScript's ``\\s`` (the dialect of JSON-schema patterns) matches beyond ASCII
whitespace. Python's ``\\s`` differs slightly (it adds U+001C-U+001F and U+0085 and
omits U+FEFF); we follow ECMAScript for both."""


_DIGITS: CodeRanges = ((0x30, 0x39),)
_WORD: CodeRanges = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SPACES: CodeRanges = tuple(
    (ord(char), ord(char)) for char in sorted(" \t\n\r\f\v" + UNICODE_SPACES)
)
_CLASS_ESCAPES: dict[str, tuple[CodeRanges, bool]] = {
    "d": (_DIGITS, False),
    "D": (_DIGITS, True),
    "w": (_WORD, False),
    "W": (_WORD, True),
    "s": (_SPACES, False),
    "S": (_SPACES, True),
}
"""Escapes that stand for a class: its ranges and whether it is their complement."""
_CONTROL_ESCAPES = {"a": 7, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
_ASSERTIONS = {"b": "word boundaries", "B": "word boundaries", "A": "anchors", "Z": "anchors"}
_FLAG_LETTERS = {"i": IGNORECASE, "s": DOTALL, "a": ASCII_ONLY, "u": 0}
_REPEATERS = "*+?"
"""The one-character quantifiers (a ``{`` is one only when it parses as one)."""
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"


# The tree's nodes are plain classes with ``Final`` attributes, not frozen dataclasses: in
# a compiled module a dataclass's generated ``__init__`` runs as interpreted Python
# (~600 ns a node against ~40 ns), and a compile builds a node per atom of its pattern.


class CharClass:
    """Characters: ``listed`` (folded under ``IGNORECASE``) and ``fixed`` (class
    escapes, already closed under case) united, complemented when ``negated``."""

    __slots__ = ("fixed", "listed", "negated")

    def __init__(self, listed: CodeRanges, fixed: tuple[CodeRanges, ...], negated: bool) -> None:
        self.listed: Final = listed
        self.fixed: Final = fixed
        self.negated: Final = negated


class AnyChar:
    """``.``: any character but a newline, unless ``DOTALL``."""

    __slots__ = ()


class Sequence:
    __slots__ = ("items",)

    def __init__(self, items: tuple[RegexNode, ...]) -> None:
        self.items: Final = items


class Alternation:
    __slots__ = ("options",)

    def __init__(self, options: tuple[RegexNode, ...]) -> None:
        self.options: Final = options


class Repetition:
    __slots__ = ("high", "item", "low")

    def __init__(self, item: RegexNode, low: int, high: int | None) -> None:
        self.item: Final = item
        self.low: Final = low
        self.high: Final = high


class Flagged:
    """A group with its own flags: ``(?i:...)`` adds, ``(?-i:...)`` removes."""

    __slots__ = ("added", "item", "removed")

    def __init__(self, item: RegexNode, added: int, removed: int) -> None:
        self.item: Final = item
        self.added: Final = added
        self.removed: Final = removed


RegexNode = CharClass | AnyChar | Sequence | Alternation | Repetition | Flagged


class ParsedRegex:
    """A parsed pattern and the flags set for all of it (``(?i)``)."""

    __slots__ = ("flags", "root")

    def __init__(self, root: RegexNode, flags: int) -> None:
        self.root: Final = root
        self.flags: Final = flags


def parse_regex(pattern: str) -> ParsedRegex:
    """The tree of ``pattern``; ``InvalidSpec`` or ``UnsupportedRegex`` when it has none."""
    return _Parser(pattern).parse()


class _Parser:
    """Recursive descent over ``pattern``; ``at`` is the next character's index."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.at = 0
        self.flags = 0

    def parse(self) -> ParsedRegex:
        root = self._alternation()
        if self.at < len(self.pattern):  # only a ")" stops the top level early
            raise self._invalid("unbalanced parenthesis")
        return ParsedRegex(root, self.flags)

    # ------------------------------------------------------------------ errors

    def _invalid(self, what: str) -> InvalidSpec:
        return InvalidSpec(f"{self.pattern!r} is not a valid regex: {what} at position {self.at}")

    def _unsupported(self, what: str) -> UnsupportedRegex:
        return UnsupportedRegex(f"{self.pattern!r}: {what} are not supported")

    # ------------------------------------------------------------------ reading

    def _peek(self, offset: int = 0) -> str:
        index = self.at + offset
        return self.pattern[index] if index < len(self.pattern) else ""

    def _take(self, char: str) -> bool:
        """Takes ``char`` (one character) if it is next. Compared as a character:
        ``str.startswith`` with an offset is a generic method call in compiled code, and
        the parser asks this about once per character of a pattern."""
        if self.at < len(self.pattern) and self.pattern[self.at] == char:
            self.at += 1
            return True
        return False

    def _run(self, allowed: str, most: int) -> str:
        """Up to ``most`` characters from ``allowed``, taken."""
        start = self.at
        while self.at < len(self.pattern) and self.at - start < most:
            if self.pattern[self.at] not in allowed:
                break
            self.at += 1
        return self.pattern[start : self.at]

    # ------------------------------------------------------------------ structure

    def _alternation(self) -> RegexNode:
        options = [self._sequence()]
        while self._take("|"):
            options.append(self._sequence())
        return options[0] if len(options) == 1 else Alternation(tuple(options))

    def _sequence(self) -> RegexNode:
        items: list[RegexNode] = []
        while self.at < len(self.pattern):
            char = self.pattern[self.at]
            if char == "|" or char == ")":
                break
            item = self._atom()
            if item is None:  # a flag group or a comment: nothing to repeat
                if self._quantifier_here():
                    raise self._invalid("nothing to repeat")
                continue
            items.append(self._quantified(item))
        return items[0] if len(items) == 1 else Sequence(tuple(items))

    def _quantified(self, item: RegexNode) -> RegexNode:
        bounds = self._quantifier()
        if bounds is None:
            return item
        if not self._take("?") and self._peek() == "+":
            raise self._unsupported("possessive quantifiers")
        if self._quantifier_here():
            raise self._invalid("multiple repeat")
        low, high = bounds
        return Repetition(item, low, high)

    def _quantifier_here(self) -> bool:
        """Whether a quantifier starts here (a ``{`` only when it parses as one)."""
        char = self._peek()
        if char == "{":
            start = self.at
            found = self._braces() is not None
            self.at = start
            return found
        return char != "" and char in _REPEATERS

    def _quantifier(self) -> tuple[int, int | None] | None:
        char = self._peek()
        if char == "{":
            return self._braces()
        if char == "" or char not in _REPEATERS:
            return None
        self.at += 1
        return (0, None) if char == "*" else (1, None) if char == "+" else (0, 1)

    def _braces(self) -> tuple[int, int | None] | None:
        """``{m}``, ``{m,}``, ``{,n}``, ``{m,n}`` taken; None (nothing taken) when the
        ``{`` here is a literal."""
        start = self.at
        if not self._take("{"):
            return None
        low_digits = self._run("0123456789", len(self.pattern))
        comma = self._take(",")
        high_digits = self._run("0123456789", len(self.pattern)) if comma else low_digits
        if not self._take("}") or not (low_digits or comma):
            self.at = start
            return None
        low = int(low_digits) if low_digits else 0
        high = int(high_digits) if high_digits else None
        if low > MAX_REPEAT or (high is not None and high > MAX_REPEAT):
            raise self._invalid("the repetition number is too large")
        if high is not None and high < low:
            raise self._invalid("min repeat greater than max repeat")
        return low, high

    def _atom(self) -> RegexNode | None:
        char = self.pattern[self.at]
        if char == "(":
            self.at += 1
            return self._group()
        if char == "[":
            self.at += 1
            return self._class()
        if char == "\\":
            self.at += 1
            return self._escape_outside()
        if char == ".":
            self.at += 1
            return AnyChar()
        if char == "^" or char == "$":
            raise self._unsupported("anchors (^ and $) inside the pattern")
        if char in _REPEATERS or (char == "{" and self._quantifier_here()):
            raise self._invalid("nothing to repeat")
        self.at += 1
        return _literal(ord(char))

    def _group(self) -> RegexNode | None:
        """After ``(``: the group's tree, or None for a flag group or a comment."""
        if self._take("?"):
            kind = self._peek()
            if kind == ":":
                self.at += 1
            elif kind == "#":
                end = self.pattern.find(")", self.at)
                if end < 0:
                    raise self._invalid("missing ), unterminated comment")
                self.at = end + 1
                return None
            elif kind == "P" and self._peek(1) == "<":
                self.at += 2
                self._group_name()
            elif kind == "<" and self._peek(1) not in ("=", "!"):
                self.at += 1
                self._group_name()
            elif kind in ("=", "!") or (kind == "<" and self._peek(1) in ("=", "!")):
                raise self._unsupported("lookahead and lookbehind assertions")
            elif kind == "P" and self._peek(1) == "=":
                raise self._unsupported("backreferences")
            elif kind == "(":
                raise self._unsupported("conditional groups")
            elif kind == ">":
                raise self._unsupported("atomic groups")
            else:
                return self._flag_group()
        return self._group_body()

    def _group_body(self) -> RegexNode:
        inner = self._alternation()
        if not self._take(")"):
            raise self._invalid("missing ), unterminated subpattern")
        return inner

    def _group_name(self) -> None:
        end = self.pattern.find(">", self.at)
        if end < 0 or not self.pattern[self.at : end].isidentifier():
            raise self._invalid("bad group name")
        self.at = end + 1

    def _flag_group(self) -> RegexNode | None:
        """``(?flags)`` (for the whole pattern) or ``(?flags-flags:...)``."""
        start = self.at
        added = self._flag_letters()
        named = self.at > start
        removing = self._take("-")
        removed = self._flag_letters() if removing else 0
        if removing and self.pattern[self.at - 1] == "-":
            raise self._invalid("missing flag after -")
        if self._take(":"):
            return Flagged(self._group_body(), added, removed)
        if not named or removing or not self._take(")"):
            raise self._invalid("unknown extension, or flags without a : and a group")
        self.flags |= added
        return None

    def _flag_letters(self) -> int:
        """The flags named here (``u`` names none: it is the default)."""
        flags = 0
        while self.at < len(self.pattern) and self.pattern[self.at].isalpha():
            letter = self.pattern[self.at]
            if letter == "m":
                raise self._unsupported("the multiline flag (?m) and its anchors")
            if letter == "x":
                raise self._unsupported("verbose patterns (?x)")
            if letter not in _FLAG_LETTERS:
                raise self._invalid(f"unknown flag {letter!r}")
            flags |= _FLAG_LETTERS[letter]
            self.at += 1
        return flags

    # ------------------------------------------------------------------ classes

    def _class(self) -> CharClass:
        """After ``[``: items up to the first ``]`` (ECMAScript: ``[]`` is empty)."""
        negated = self._take("^")
        listed: Ranges = []
        fixed: list[CodeRanges] = []
        while True:
            if self.at >= len(self.pattern):
                raise self._invalid("unterminated character set")
            if self._take("]"):
                return CharClass(tuple(listed), tuple(fixed), negated)
            low = self._class_item()
            if isinstance(low, tuple):
                fixed.append(low)
                if self._peek() == "-" and self._peek(1) not in ("]", ""):
                    raise self._invalid("bad character range")
                continue
            if self._peek() == "-" and self._peek(1) not in ("]", ""):
                self.at += 1
                high = self._class_item()
                if isinstance(high, tuple) or high < low:
                    raise self._invalid("bad character range")
                listed.append((low, high))
            else:
                listed.append((low, low))

    def _class_item(self) -> int | CodeRanges:
        """One code point of a class, or a class escape's ranges."""
        char = self.pattern[self.at]
        self.at += 1
        if char != "\\":
            return ord(char)
        letter = self._escape_letter()
        escaped = self._class_escape(letter)
        if escaped is not None:
            ranges, complemented = escaped
            return tuple(complement_ranges(list(ranges))) if complemented else ranges
        if letter == "b":
            self.at += 1
            return 8
        if letter in _OCTAL:
            digits = self._run(_OCTAL, 3)
            return self._octal(digits)
        return self._code_escape()

    # ------------------------------------------------------------------ escapes

    def _escape_outside(self) -> RegexNode:
        """After ``\\`` outside a class."""
        letter = self._escape_letter()
        escaped = self._class_escape(letter)
        if escaped is not None:
            ranges, complemented = escaped
            return CharClass((), (ranges,), complemented)
        if letter in _ASSERTIONS:
            raise self._unsupported(_ASSERTIONS[letter])
        if letter == "0":
            return _literal(self._octal(self._run(_OCTAL, 3)))
        if letter in "123456789":
            if all(_is_octal(self._peek(offset)) for offset in range(3)):
                return _literal(self._octal(self._run(_OCTAL, 3)))
            raise self._unsupported("backreferences")
        if letter == "k" and self._peek(1) == "<":
            raise self._unsupported("backreferences")
        return _literal(self._code_escape())

    def _escape_letter(self) -> str:
        """The character after a ``\\`` (not taken); a ``\\`` cannot end a pattern."""
        if self.at >= len(self.pattern):
            raise self._invalid("bad escape (end of pattern)")
        return self.pattern[self.at]

    def _class_escape(self, letter: str) -> tuple[CodeRanges, bool] | None:
        """``\\d``, ``\\w``, ``\\s`` and their complements, taken: their ranges and
        whether the class is their complement; None for any other escape."""
        found = _CLASS_ESCAPES.get(letter)
        if found is not None:
            self.at += 1
        return found

    def _code_escape(self) -> int:
        """After ``\\``: an escape that stands for one code point."""
        letter = self.pattern[self.at]
        self.at += 1
        if letter in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[letter]
        if letter == "x":
            return self._hex(2)
        if letter == "u":
            return self._hex(4)
        if letter == "U":
            return self._hex(8)
        if letter == "N":
            return self._named_char()
        if letter == "c" and self._peek().isascii() and self._peek().isalpha():
            self.at += 1
            return ord(self.pattern[self.at - 1]) % 32
        if letter in "pP":
            raise self._unsupported("Unicode properties (\\p, \\P)")
        if letter.isascii() and letter.isalnum():
            self.at -= 1
            raise self._invalid(f"bad escape \\{letter}")
        return ord(letter)

    def _hex(self, count: int) -> int:
        digits = self._run(_HEX, count)
        if len(digits) != count:
            raise self._invalid(f"incomplete escape of {count} hexadecimal digits")
        return self._code_point(int(digits, 16))

    def _octal(self, digits: str) -> int:
        value = int(digits, 8)
        if value > 0o377:
            raise self._invalid("octal escape value outside of range 0-0o377")
        return value

    def _named_char(self) -> int:
        if not self._take("{"):
            raise self._invalid("missing { after \\N")
        end = self.pattern.find("}", self.at)
        if end < 0:
            raise self._invalid("missing } after \\N{")
        try:
            char = unicodedata.lookup(self.pattern[self.at : end])
        except KeyError:
            raise self._invalid("undefined character name") from None
        self.at = end + 1
        return self._code_point(ord(char))

    def _code_point(self, value: int) -> int:
        if value > 0x10FFFF:
            raise self._invalid("escape beyond U+10FFFF")
        if 0xD800 <= value <= 0xDFFF:
            raise self._unsupported("surrogate code points (write the character itself)")
        return value


def _is_octal(char: str) -> bool:
    return char != "" and char in _OCTAL


def _literal(code_point: int) -> CharClass:
    return CharClass(((code_point, code_point),), (), False)
