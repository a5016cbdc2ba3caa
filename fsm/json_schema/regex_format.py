"""``format: regex``: encoded string contents that decode to a valid ECMA 262 pattern.

The check is Python's ``re`` on the pattern rewritten from ECMA 262's spellings
(``RegexSyntaxChecker.accepts``). Read byte by byte, every prefix of a pattern would
be a state of its own, so one token row over a 49,152-token vocabulary met tens of
thousands of new states, each searched for a completion: minutes per mask.
``canonical_prefix`` merges prefixes that have the same future. A run of plain
characters (letters, digits, ``_``, space) whose meaning cannot depend on its letters
is one literal as far as validity goes: outside a character class it is rewritten to
``a``; inside one only its last character can matter (the start of a range), and its
first where it ends a range. What decides "cannot depend" is kept conservative: the
run must follow a character that closes whatever came before it (``|``, ``)``, a
quantifier, a one-character escape such as ``\\d``). A prefix holding a spelling that
the rewrite to Python reads across characters (``[]``, ``[^]``, ``\\cA``) is first
written as Python reads it, which ECMA 262 reads the same way (``_written_as_read``);
one holding a named group or backreference (``(?<``, ``\\k``), whose reading ECMA 262
refuses, is left as it is. ``tests/fsm/test_regex_format.py`` checks the equivalence
against ``accepts`` on random prefixes and continuations.
"""

from __future__ import annotations

import codecs
import json
import re
import warnings
from collections.abc import Hashable
from dataclasses import dataclass

_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_ ")
"""ASCII letters, digits, ``_`` and space: literals, in a class or out of one (so is
every character past ASCII)."""

_LITERAL_OUTSIDE = _PLAIN | frozenset("!\"#%&',-/:;<=>@`~")
"""What a run outside a class may hold: ``_PLAIN`` and the punctuation that is a
literal there (where it reads otherwise, in ``(?<``, ``(?-i:`` or ``{2,3}``, the run
follows ``(?`` or ``{`` and is kept)."""

_LITERAL_INSIDE = _PLAIN | frozenset("!\"#$%&'()*+,./:;<=>?@{|}~`")
"""What a run inside a class may hold: all but ``\\``, ``]``, ``-`` (a range) and
``[`` and ``^`` (which ``[]`` and ``[^]`` read)."""

_CLOSING = frozenset("|)*+.$}(^]")
"""Outside a class: characters after which a run starts a fresh literal (``_closes``
says when ``(``, ``?`` and ``{`` do)."""

_UNREPEATABLE = frozenset("AbBZ")
"""Escapes that are assertions: a quantifier after them has nothing to repeat."""

_REPEATABLE = frozenset("dDsSwWfnrtv")
"""Escapes that are one character (a class or a control): an item to repeat."""

_ONE_CHARACTER_ESCAPES = _UNREPEATABLE | _REPEATABLE
"""Escapes that end with their letter: the run after them is a literal."""

_HEX_DIGITS = b"0123456789abcdefABCDEF"
_HEX_TEXT = frozenset(_HEX_DIGITS.decode())
_JSON_ESCAPES = frozenset(b'"\\/bfnrt')
"""JSON's one-character escapes (besides ``\\u``), as byte values."""

_CROSS_READ = ("(?<", "\\k", "\\c", "[]", "[^]")
"""Spellings that ``_ecma_to_python`` rewrites by reading across characters."""

_NAMED = ("(?<", "\\k")
"""The cross-read spellings whose Python reading ECMA 262 refuses (``(?P<``, ``(?P=``):
a prefix holding one cannot be written as its reading."""

_REFUSED = re.compile(r"\(\?[P#aimsux]|\\a")
"""Python's extensions (named groups ``(?P``, comments, inline flags) and ``\\a``,
which ECMA 262 does not have."""


@dataclass(frozen=True)
class RegexSyntaxChecker:
    """Encoded string contents that decode to a valid regular expression (``format: regex``).

    Validity is Python's ``re`` minus its own extensions (named groups ``(?P``,
    comments ``(?#``, inline flags), as ECMA 262 has none of them. A prefix is viable
    unless it holds an unescaped quote (which would end the string).
    """

    alphabet = bytes(range(256))
    alike = ()  # every byte may change what follows

    def viable(self, text: bytes) -> bool:
        """Whether ``text`` begins well-formed string contents: no quote or control
        byte unescaped, JSON's escapes only, UTF-8 so far (no continuation repairs any
        of these, and a search would otherwise wander through them)."""
        i = 0
        while i < len(text):
            byte = text[i]
            if byte == 0x5C:
                escaped = text[i + 1] if i + 1 < len(text) else None
                if escaped == 0x75:  # \u and four hex digits
                    if text[i + 2 : i + 6].strip(_HEX_DIGITS):
                        return False
                    i += 6
                    continue
                if escaped is not None and escaped not in _JSON_ESCAPES:
                    return False
                i += 2
                continue
            if byte == 0x22 or byte < 0x20:
                return False
            i += 1
        begun = text[_decodable_end(text) :]
        if begun[:1] == b"\xed" and begun[1:2] >= b"\xa0":
            return False  # a surrogate's UTF-8, which the decoder refuses a byte later
        try:
            codecs.getincrementaldecoder("utf-8")().decode(text)
            pattern = json.loads(b'"' + text[: _decodable_end(text, pairs=False)] + b'"')
        except ValueError:
            return False
        return not _certainly_invalid(pattern)

    def canonical(self, text: bytes) -> bytes:
        return canonical_prefix(text)

    def state_key(self, text: bytes) -> Hashable | None:
        return None  # ``canonical`` writes the prefixes it knows alike

    def completions(self, text: bytes) -> tuple[bytes, ...]:
        """Endings worth trying first when a search needs a valid pattern after
        ``text``: finish the character being written, an escape, a class, then close
        the open groups (after ``(?``, a group's kind first)."""
        return regex_completions(text)

    def accepts(self, text: bytes) -> bool:
        """Whether ``text`` decodes to a pattern Python's ``re`` compiles once
        rewritten (``_ecma_to_python``). A pattern whose class, group or escape is
        left open (``_closing``), most prefixes a row meets, is refused without a
        compile: the parser would fail on it, and only a lookbehind's width error,
        which the parser can raise first, is read as accepted."""
        try:
            pattern = json.loads(b'"' + text + b'"')
            if _REFUSED.search(pattern):
                return False
            read = _ecma_to_python(pattern)
            if "(?<" not in read and _closing(read) != "":
                return False  # left open, so Python's parser refuses it (see below)
            with warnings.catch_warnings():  # "possible nested set" and the like
                warnings.simplefilter("ignore", FutureWarning)
                re.compile(read)
        except re.error as error:  # ECMA 262 allows variable-width lookbehind
            return "look-behind requires fixed-width" in str(error)
        except (ValueError, RecursionError, OverflowError):
            return False
        return True


def _ecma_to_python(pattern: str) -> str:
    """Rewrite the ECMA 262 forms Python's ``re`` spells differently."""
    pattern = re.sub(r"\(\?<(?![=!])", "(?P<", pattern)
    pattern = re.sub(r"\\k<(\w+)>", r"(?P=\1)", pattern)
    pattern = pattern.replace("[^]", "[\\s\\S]").replace("[]", "(?!)")
    return re.sub(r"\\c[A-Za-z]", "\\\\x01", pattern)


def canonical_prefix(text: bytes) -> bytes:
    """A prefix of encoded string contents with exactly the valid continuations of
    ``text``, with plain runs shortened (the module's docstring says which), and a
    character's first UTF-8 bytes written as those of any other character whose
    remaining bytes are the same, where the character will be shortened away."""
    cut = _decodable_end(text)
    try:
        pattern = json.loads(b'"' + text[:cut] + b'"')
    except ValueError:
        return text  # no continuation decodes: the text is dead as it is
    if _REFUSED.search(pattern):
        return text
    written = pattern
    if any(spelling in pattern for spelling in _CROSS_READ):
        read = _written_as_read(pattern)
        if read is None:
            return text
        pattern = read
    shortened = _shorten_runs(pattern)
    tail = text[cut:]
    if tail[:1] >= b"\xc0":  # a character begun, which will be a literal
        ahead = _shorten_runs(pattern + "x")
        if ahead == _shorten_runs(pattern + "y"):
            tail = _utf8_representative(tail)  # it will be shortened away
        elif ahead.endswith("x"):
            shortened = ahead[:-1]  # it will be kept: what is before it reads as then
    if shortened == written and tail == text[cut:]:
        return text
    try:
        encoded = json.dumps(shortened, ensure_ascii=False)[1:-1].encode()
    except UnicodeEncodeError:  # a lone surrogate: keep the text as it was written
        return text
    return encoded + tail


def _written_as_read(pattern: str) -> str | None:
    """``pattern`` written as Python reads it (``[]`` as ``(?!)``, ``[^]`` as
    ``[\\s\\S]``, ``\\cA`` as ``\\x01``), or None where that may change what a
    continuation means.

    The rewrite is textual, so it reads the same text the same way wherever a
    continuation starts, unless a spelling straddles the cut: ``_python_reading`` is
    None exactly when the pattern's end may begin one. ECMA 262 reads the three
    replacements as Python does and the rewrite leaves them as they are, so the pattern
    and its reading have one Python reading under every continuation. The named forms
    are left alone: their reading (``(?P<``) is refused in ECMA 262. Without this,
    every prefix after an empty class was a state of its own (a minute per mask)."""
    if any(spelling in pattern for spelling in _NAMED):
        return None
    read = _python_reading(pattern)
    if read is None or _python_reading(read) != read or _REFUSED.search(read):
        return None
    return read


def _utf8_representative(begun: bytes) -> bytes:
    """The first bytes of one UTF-8 sequence, as those of a fixed sequence that takes
    the same continuation bytes (after E0, ED, F0 and F4 the next byte's range is
    narrower, so they stand for themselves)."""
    lead = begun[0]
    if len(begun) > 1:
        return b"\xf1\x80\x80"[: len(begun)] if lead >= 0xF0 else b"\xe1\x80"
    if lead in (0xE0, 0xED, 0xF0, 0xF4):
        return begun
    return b"\xc2" if lead < 0xE0 else b"\xe1" if lead < 0xF0 else b"\xf1"


def regex_completions(text: bytes) -> tuple[bytes, ...]:
    """``RegexSyntaxChecker.completions``: the character being written finished, then
    the pattern's open escape, class and groups closed, with a few starts that open
    groups' kinds need (``(?`` wants ``:``, ``(?<`` wants ``=``)."""
    finished = _finish_character(text[_decodable_end(text, pairs=False) :])
    try:
        pattern = json.loads(b'"' + text + finished + b'"')
    except ValueError:
        return ()
    closing = _closing(_python_reading(pattern) or pattern)
    if closing is None:
        return ()
    return tuple(
        finished + json.dumps(start + closing)[1:-1].encode() for start in ("", ":", "=", "a")
    )


def _finish_character(tail: bytes) -> bytes:
    """Bytes that complete the character ``tail`` begins: an escape (as ``a``) or a
    UTF-8 sequence."""
    if not tail:
        return b""
    if tail[0] == 0x5C:
        if tail == b"\\":
            return b"u0061"
        return b"0061"[len(tail) - 2 :]
    need = _utf8_length(tail[0]) - len(tail)
    second = {0xE0: 0xA0, 0xF0: 0x90}.get(tail[0], 0x80) if len(tail) == 1 else 0x80
    return bytes([second] + [0x80] * (need - 1)) if need > 0 else b""


def _closing(pattern: str) -> str | None:
    """What closes ``pattern``'s open escape, class and groups (None: a group closed
    that was never opened)."""
    depth, in_class, i = 0, False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 == len(pattern):
                return "." + "]" * in_class + ")" * depth
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 2 if pattern[i + 1 : i + 2] == "^" else 1
            if pattern[i : i + 1] == "]":  # [] and [^] are whole classes in ECMA 262
                in_class = False
                i += 1
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
        i += 1
    return "]" * in_class + ")" * depth


_QUANTIFIER = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")
"""A counted repeat as Python reads one (anything else from ``{`` on is a literal)."""

_QUANTIFIER_BEGUN = re.compile(r"\{\d*(?:,\d*)?")
"""A ``{`` that more text may still make a counted repeat."""

_REWRITE_BEGUN = re.compile(r"(?:\[\^?|\((?:\?<?)?|\\(?:k<?\w*|c)?)\Z")
"""An end of a pattern that may begin a spelling ``_ecma_to_python`` rewrites."""

_GROUP_KIND = re.compile(r"\(\?(?:[:=!>]|<[=!])")
"""The kinds of group that take no name: a quantifier after one repeats the group
(for a lookaround Python may refuse that: then a prefix is called viable, which
only costs a search)."""


def _certainly_invalid(pattern: str) -> bool:
    """Whether no continuation of the decoded ``pattern`` compiles, for the errors
    Python's parser meets left to right and no later character can undo: a refused
    spelling, a ``)`` closing no group, a quantifier with nothing to repeat or after a
    repeat, a counted repeat whose maximum is below its minimum, a bad escape, a bad
    range in a class. It reads the pattern as Python's parser does
    (``_ecma_to_python``), less an end that a rewrite may still read across, and only
    up to the first construct it does not follow (a group that names one, an escape
    that reads on); from there on it answers "not known": False."""
    if _REFUSED.search(pattern):
        return True
    while begun := _REWRITE_BEGUN.search(pattern):
        pattern = pattern[: begun.start()]  # a prefix of a dead pattern is dead too
    pattern = _ecma_to_python(pattern)
    depth, repeatable, repeated, i = 0, False, 0, 0  # repeated: 1 a repeat, 2 and lazy
    while i < len(pattern):
        kind, i = _item(pattern, i)
        if kind == "unknown":
            return False
        if kind == "refused":
            return True
        if kind in ("repeat", "modifier"):
            if kind == "modifier" and repeated == 1:
                repeated = 2
            elif repeated or not repeatable:
                return True
            else:
                repeated = 1
            continue
        depth += {"open": 1, "close": -1}.get(kind, 0)
        if depth < 0:
            return True
        repeatable, repeated = kind in ("atom", "close"), 0
    return False


def _item(pattern: str, i: int) -> tuple[str, int]:
    """The kind of the syntax item at ``i`` and where it ends: ``atom`` (something to
    repeat), ``assertion`` (nothing to repeat: ``^``, ``|``, ``\\b``), ``open``,
    ``close``, ``repeat``, ``modifier`` (``?`` or ``+``, a lazy or possessive mark after
    a repeat, else a repeat), ``refused`` (a counted repeat below its minimum) or
    ``unknown``."""
    char = pattern[i]
    if char == "[":
        return _class_item(pattern, i)
    if char == "\\":
        return _escape_item(pattern, i)
    if char == "{":
        return _brace(pattern, i)
    if char in "?+":
        return "modifier", i + 1
    if char == "*":
        return "repeat", i + 1
    if char == "(":
        if pattern[i + 1 : i + 2] != "?":
            return "open", i + 1
        kind = _GROUP_KIND.match(pattern, i)  # one that names no group: (?: (?= (?<!
        return ("open", kind.end()) if kind else ("unknown", i)
    if char == ")":
        return "close", i + 1
    return ("assertion" if char in "|^$" else "atom"), i + 1


def _escape_item(pattern: str, i: int) -> tuple[str, int]:
    """``_item`` at a backslash."""
    escaped = pattern[i + 1 : i + 2]
    if escaped in _UNREPEATABLE:
        return "assertion", i + 2
    digits, bad = _code_digits(pattern, i)
    if bad:
        return "refused", i
    if _code_of_escape(pattern, i, digits) is not None:
        return "atom", i + 2 + digits
    if not escaped or escaped in _LONG_ESCAPES:
        return "unknown", i  # \1, \N{...}, \x4 cut short: not followed here
    if escaped.isascii() and escaped.isalpha() and escaped not in _REPEATABLE:
        return "refused", i  # a bad escape: \q, \p, \e
    return "atom", i + 2


def _python_reading(pattern: str) -> str | None:
    """``pattern`` as Python's parser reads it (``_ecma_to_python``), or None while its
    end may begin a spelling that the rewrite reads across (``[`` of ``[]``, ``(?<``,
    ``\\k<name``): only then does the reading of a prefix hold for every text
    that goes on from it."""
    return None if _REWRITE_BEGUN.search(pattern) else _ecma_to_python(pattern)


def _brace(pattern: str, i: int) -> tuple[str, int]:
    """``_item`` at a ``{``: a counted repeat, a literal, or still either."""
    counted = _QUANTIFIER.match(pattern, i)
    if counted is None or pattern[i + 1 : i + 2] == "}":
        if _QUANTIFIER_BEGUN.fullmatch(pattern, i):
            return "unknown", i  # "{2," may yet close
        return "atom", i + 1  # a literal "{"
    low, comma, high = counted.groups()
    if comma and high and int(high) < int(low or 0):
        return "refused", i
    return "repeat", counted.end()


_CLASS_CATEGORIES = frozenset("dDsSwW")
"""Class escapes that stand for a set: no end of a range."""

_CONTROL_ESCAPES = {"b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, "\\": 92}
"""Escapes of one character, in a class (``\\b`` is a backspace there), by code."""

_LONG_ESCAPES = frozenset("xuUN0123456789")
"""Escapes that read on (a code, a name, an octal or a group number): not followed."""


def _class_item(pattern: str, start: int) -> tuple[str, int]:
    """``_item`` at a ``[``: the class read as Python's parser reads it, member by
    member: ``refused`` at a bad escape or a range whose ends are a set or out of
    order, ``atom`` once it closes, ``unknown`` while it is open or at an escape that
    reads on."""
    i = start + 1
    if pattern[i : i + 1] == "^":
        i += 1
    first = True
    while i < len(pattern):
        if pattern[i] == "]" and not first:
            return "atom", i + 1
        first = False
        low, i = _class_member(pattern, i)
        if low == "refused" or low == "unknown":
            return low, i
        if pattern[i : i + 1] != "-" or pattern[i + 1 : i + 2] in ("]", ""):
            continue
        high, i = _class_member(pattern, i + 1)
        if high == "refused" or high == "unknown":
            return high, i
        if not isinstance(low, int) or not isinstance(high, int) or high < low:
            return "refused", i  # a bad character range
    return "unknown", i


def _class_member(pattern: str, i: int) -> tuple[int | str, int]:
    """One member of a class at ``i``: its code, ``set`` (``\\d``), ``refused`` (a
    bad escape) or ``unknown`` (an escape that reads on, or none yet)."""
    if pattern[i] != "\\":
        return ord(pattern[i]), i + 1
    escaped = pattern[i + 1 : i + 2]
    digits, bad = _code_digits(pattern, i)
    if bad:
        return "refused", i
    code = _code_of_escape(pattern, i, digits)
    if code is not None:
        return code, i + 2 + digits
    if not escaped or escaped in _LONG_ESCAPES:
        return "unknown", i
    if escaped in _CLASS_CATEGORIES:
        return "set", i + 2
    if escaped in _CONTROL_ESCAPES:
        return _CONTROL_ESCAPES[escaped], i + 2
    if escaped.isascii() and escaped.isalpha():
        return "refused", i  # \q, and \A, \B, \Z, which are no members
    return ord(escaped), i + 2


def _decodable_end(text: bytes, pairs: bool = True) -> int:
    """Where the last whole character of ``text`` ends: an escape cut short and a
    UTF-8 sequence cut short are left after it, and so is a high surrogate (which may
    pair with what follows) unless ``pairs`` is false."""
    cut = i = 0
    while i < len(text):
        byte = text[i]
        if byte == 0x5C:  # a JSON escape
            if i + 1 >= len(text):
                break
            if text[i + 1] != 0x75:  # not \u: two bytes
                i += 2
                cut = i
                continue
            digits = text[i + 2 : i + 6]
            if len(digits) < 4:
                break
            i += 6
            try:
                high_surrogate = 0xD800 <= int(digits, 16) < 0xDC00
            except ValueError:  # not hex: no continuation decodes
                return 0
            if not (high_surrogate and pairs):
                cut = i
            continue
        i += 1 if byte < 0x80 else _utf8_length(byte)
        if i > len(text):
            break
        cut = i
    return cut


def _utf8_length(lead: int) -> int:
    """Bytes of the UTF-8 sequence ``lead`` begins (1 for a stray byte: the decode fails)."""
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    return 2 if lead >= 0xC0 else 1


def _shorten_runs(pattern: str) -> str:
    """``pattern`` with its runs of literals shortened where their characters cannot
    matter."""
    pieces: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escape, i = _escape_piece(pattern, i, in_class)
            pieces.append(escape)
        elif char in (_LITERAL_INSIDE if in_class else _LITERAL_OUTSIDE) or char >= "\x80":
            end = _run_end(pattern, i, in_class)
            run = pattern[i:end]
            if in_class:
                pieces.append(_shortened(run, in_class, ends_range=pattern[i - 1] == "-"))
            elif i == 0 or _closes(pattern, i):
                pieces.append(_shortened(run, in_class, ends_range=False))
            elif pattern[i - 2 : i] == "(?" and run[0] in ":=!>":  # then the group's body
                pieces.append(run[0] + _shortened(run[1:], in_class, ends_range=False))
            else:  # after "(?" or "{": a group's kind or flags, a count, a name
                pieces.append(run)
            i = end
        elif in_class and char == "-":
            end = i
            while pattern[end : end + 1] == "-":
                end += 1
            pieces.append("-" * _dashes_kept(end - i))
            i = end
        else:
            if in_class and char == "]":
                in_class = False
            elif not in_class and char == "[":
                in_class = True
                if pattern[i + 1 : i + 2] == "^":
                    pieces.append(char)
                    i += 1
                    char = "^"
            pieces.append(char)
            i += 1
    return "".join(pieces)


def _escape_piece(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """An escape at ``i`` and the run of literals after it, shortened where the escape
    is whole (one character, or a code and its digits), and where they end."""
    escaped = pattern[i + 1 : i + 2]
    width = 2 + _code_digits(pattern, i)[0]
    end = _run_end(pattern, i + width, in_class)
    run = pattern[i + width : end]
    if width > 2 or escaped in _ONE_CHARACTER_ESCAPES or _literal_escape(escaped):
        run = _shortened(run, in_class, ends_range=False)
    # else \x4, \1, \N{...}: the run is the escape's own digits or name
    return pattern[i : i + width] + run, end


_CODE_DIGITS = {"x": 2, "u": 4, "U": 8}
"""Escapes that read a character's code in a fixed number of hex digits."""


def _code_digits(pattern: str, start: int) -> tuple[int, bool]:
    """For a ``\\x41``, ``\\u0041`` or ``\\U00000041`` escape at ``start``: how many
    hex digits it has when whole (0 for any other escape, or one whose digits are not
    all there yet; the parser reads exactly that many, so a run after them is a
    literal of its own), and whether a character where its digits go is no hex digit
    (the parser calls it incomplete)."""
    count = _CODE_DIGITS.get(pattern[start + 1 : start + 2], 0)
    digits = pattern[start + 2 : start + 2 + count]
    bad = any(digit not in _HEX_TEXT for digit in digits)
    return (count if len(digits) == count and not bad else 0), bad


def _code_of_escape(pattern: str, start: int, digits: int) -> int | None:
    """The character code a whole ``\\x``, ``\\u`` or ``\\U`` escape at ``start`` with
    ``digits`` hex digits (``_code_digits``) stands for, where Python takes it (None
    otherwise: past U+10FFFF it is refused)."""
    if not digits:
        return None
    code = int(pattern[start + 2 : start + 2 + digits], 16)
    return code if code <= 0x10FFFF else None


def _literal_escape(escaped: str) -> bool:
    """Whether a backslash and ``escaped`` are one literal character and no more: any
    character but an ASCII letter or digit (which may read on or be refused) and a
    backslash (``\\a`` is refused as written, reading across an escaped backslash)."""
    return bool(escaped) and escaped != "\\" and not (escaped.isascii() and escaped.isalnum())


def _dashes_kept(count: int) -> int:
    """How many of ``count`` dashes in a row inside a class to keep. The parser reads a
    class as members, each maybe ``-`` and another member (a range), so past the first
    two dashes (which may end a range begun before them) each three dashes are one
    range ``-`` to ``-`` and bring it back where it was: a run of five or more reads as
    two, three or four. Without this, a vocabulary's rules of dashes made one state per
    length inside ``[``."""
    return count if count < 5 else 2 + (count - 2) % 3


def _closes(pattern: str, i: int) -> bool:
    """Whether the character before ``i`` (outside a class) ends what came before it,
    so that a run at ``i`` starts a fresh literal. Not the ``(`` of ``(?(``, whose run
    is a condition; a ``?`` only as a quantifier (``(?`` begins a group's kind); a
    ``{`` only before a run that does not begin with a digit or ``,`` (which makes the
    brace a literal), and not the ``{`` of ``\\N{``, whose run is a character's name."""
    before, earlier = pattern[i - 1], pattern[i - 2 : i - 1]
    if before == "?":
        return earlier not in ("", "(")
    if before == "(":
        return earlier != "?"
    if before == "{":
        return pattern[i] not in "0123456789," and pattern[i - 3 : i - 1] != "\\N"
    return before in _CLOSING


def _run_end(pattern: str, start: int, in_class: bool) -> int:
    literal = _LITERAL_INSIDE if in_class else _LITERAL_OUTSIDE
    end = start
    while end < len(pattern) and (pattern[end] in literal or pattern[end] >= "\x80"):
        end += 1
    return end


def _shortened(run: str, in_class: bool, ends_range: bool) -> str:
    """A run of literals as short as its context allows: one ``a`` outside a class;
    inside one its last character (a range may start there), after its first where
    the run ends a range. A run ending in ``(?`` keeps both: with a letter after them
    they are a refused spelling (``_REFUSED`` reads the text, classes too)."""
    if not run:
        return run
    if not in_class:
        return "a"
    kept = 2 if run.endswith("(?") else 1
    if ends_range and len(run) > kept:
        return run[0] + run[-kept:]
    return run[-kept:]
