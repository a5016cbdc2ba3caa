"""The exact bytes of every token id of a tokenizer, its end ids and the mask width.

A token index works on bytes, so each token string of a tokenizer is turned back into
the bytes it stands for: GPT-2 style byte-level BPE writes each byte as a printable
character (``Ġ`` is a space), SentencePiece writes a space as ``▁`` and unknown bytes as
``<0xXX>`` pieces. The tokenizer is used duck-typed (``get_vocab``, ``all_special_ids``,
``added_tokens_decoder``, ``eos_token_id``), so this module never imports transformers.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from fsm.errors import InvalidVocabulary
from fsm.lexeme_cache import LexemeWalkCache
from fsm.schema_rows import SchemaRows
from fsm.trie import TokenTrie

SENTENCEPIECE_SPACE = "\u2581"  # ▁
_BYTE_PIECE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def byte_level_alphabet() -> dict[str, int]:
    """GPT-2's printable stand-in character for each byte, inverted: ``{char: byte}``.

    Printable Latin-1 bytes stand for themselves; the 68 others (controls, space, ...)
    are given the characters ``chr(256)``, ``chr(257)``, ... in byte order."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    kept = set(printable)
    chars = {b: chr(b) for b in printable}
    extra = (b for b in range(256) if b not in kept)
    chars.update({b: chr(256 + n) for n, b in enumerate(extra)})
    return {c: b for b, c in chars.items()}


def byte_level_table(alphabet: Mapping[str, int]) -> dict[int, int]:
    """A ``str.translate`` table from byte-level BPE text to the Latin-1 text of its bytes.

    Each alphabet character becomes the character of its byte; every other character
    below U+0100 becomes U+0100, which Latin-1 cannot encode (the alphabet covers
    U+0100 to U+0143 and nothing above), so foreign text fails to encode."""
    table = {ord(c): b for c, b in alphabet.items()}
    table.update({o: 0x100 for o in range(0x100) if o not in table})
    return table


def decode_byte_level(token: str, table: Mapping[int, int]) -> bytes | None:
    """Bytes of a byte-level BPE token (``table`` from ``byte_level_table``), or ``None``
    if a character is outside the alphabet. One C-level translate and encode per token:
    a 49k-token vocabulary decodes in milliseconds, which model loading pays."""
    try:
        return token.translate(table).encode("latin-1")
    except UnicodeEncodeError:
        return None


def decode_sentencepiece(token: str) -> bytes:
    """Bytes of a SentencePiece piece: ``<0xXX>`` is that byte, ``▁`` is a space."""
    match = _BYTE_PIECE.match(token)
    if match:
        return bytes([int(match.group(1), 16)])
    return token.replace(SENTENCEPIECE_SPACE, " ").encode("utf-8")


def detect_kind(tokens: Iterable[str], decoder: Any = None) -> str:
    """``"byte_level"``, ``"sentencepiece"`` or ``"plain"`` (token text is its UTF-8).

    The tokenizer's decoder names the scheme when it is exposed; otherwise the marker
    characters of each scheme are counted in the vocabulary."""
    described = repr(decoder) if decoder is not None else ""
    if "ByteLevel" in described:
        return "byte_level"
    if "Metaspace" in described or "ByteFallback" in described:
        return "sentencepiece"
    byte_level = sentencepiece = 0
    for token in tokens:
        if "Ġ" in token or "Ċ" in token:
            byte_level += 1
        if SENTENCEPIECE_SPACE in token or _BYTE_PIECE.match(token):
            sentencepiece += 1
    if sentencepiece > byte_level:
        return "sentencepiece"
    if byte_level:
        return "byte_level"
    return "plain"


def _as_id_set(ids: int | Iterable[int] | None) -> set[int]:
    if ids is None:
        return set()
    if isinstance(ids, int):
        return {ids}
    return {int(i) for i in ids}


def _special_and_added(tokenizer: Any) -> tuple[set[int], dict[int, str]]:
    """Ids of special tokens, and the text of non-special added tokens by id."""
    special = _as_id_set(getattr(tokenizer, "all_special_ids", None))
    added: dict[int, str] = {}
    for token_id, token in (getattr(tokenizer, "added_tokens_decoder", None) or {}).items():
        if getattr(token, "special", False):
            special.add(int(token_id))
        else:
            added[int(token_id)] = str(getattr(token, "content", token))
    return special, added


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """Exact bytes per token id (``None``: special/control, never allowed as text), the
    end-of-generation ids, and the mask width ``size`` (the model's logits width, which
    may exceed the tokenizer's; ids past the tokenizer are never allowed).

    Equality and hashing go by ``fingerprint``, a sha256 of the content, computed on
    first use (model loading does not wait for it). A model builds its own
    (``model.vocabulary``) with ``from_tokenizer``.

    Args:
        token_bytes: per token id, its bytes, or ``None``.
        eos_ids: the end-of-generation ids (at least one).
        size: the mask width (>= the number of token ids).

    Example:
        >>> fsm.Vocabulary.from_raw([b"a", b"b", None], eos_ids=2)
        Vocabulary(tokens=3, size=3, eos_ids=[2], fingerprint=f38c248b52b6)
    """

    token_bytes: tuple[bytes | None, ...]
    eos_ids: frozenset[int]
    size: int

    def __post_init__(self) -> None:
        if self.size < len(self.token_bytes):
            raise InvalidVocabulary(
                f"size {self.size} is smaller than the {len(self.token_bytes)} token ids"
            )
        if not self.eos_ids:
            raise InvalidVocabulary("a vocabulary needs at least one end-of-generation id")
        bad = sorted(i for i in self.eos_ids if not 0 <= i < self.size)
        if bad:
            raise InvalidVocabulary(f"end-of-generation ids {bad} are outside [0, {self.size})")

    @cached_property
    def fingerprint(self) -> str:
        """sha256 of the size, the end ids and every token's bytes (with its length)."""
        digest = hashlib.sha256()
        digest.update(f"size={self.size};eos={sorted(self.eos_ids)};".encode())
        for data in self.token_bytes:
            if data is None:
                digest.update(b"-;")
            else:
                digest.update(b"%d:" % len(data))
                digest.update(data)
        return digest.hexdigest()

    @classmethod
    def from_raw(
        cls,
        token_bytes: Sequence[bytes | None],
        eos_ids: int | Iterable[int],
        size: int | None = None,
    ) -> Vocabulary:
        """A vocabulary from its token bytes in id order (empty bytes count as ``None``).

        Args:
            token_bytes: the bytes of each id, or ``None``.
            eos_ids: one end id or several.
            size: the mask width (default: the number of ids).

        Example:
            >>> fsm.Vocabulary.from_raw([b"a", b"", None], eos_ids=[2], size=8).size
            8
        """
        tokens = tuple(bytes(t) if t else None for t in token_bytes)
        width = len(tokens) if size is None else int(size)
        return cls(tokens, frozenset(_as_id_set(eos_ids)), width)

    @classmethod
    def from_tokenizer(
        cls,
        tokenizer: Any,
        *,
        size: int | None = None,
        eos_ids: int | Iterable[int] | None = None,
    ) -> Vocabulary:
        """A vocabulary from a Hugging Face style tokenizer (duck-typed).

        ``size``: the model's logits width (default: one past the largest id).
        ``eos_ids``: extra end ids (e.g. a generation config's ``eos_token_id``), added to
        the tokenizer's own ``eos_token_id``.

        Args:
            tokenizer: a transformers tokenizer (or anything with ``get_vocab``,
                ``all_special_ids``, ``added_tokens_decoder`` and ``eos_token_id``).
            size: the model's logits width.
            eos_ids: extra end ids.

        Example::

            from transformers import AutoTokenizer
            tokenizer = AutoTokenizer.from_pretrained("HuggingFaceTB/SmolLM2-135M-Instruct")
            vocabulary = fsm.Vocabulary.from_tokenizer(tokenizer, size=49152)
        """
        vocab: dict[str, int] = dict(tokenizer.get_vocab())
        special, added = _special_and_added(tokenizer)
        decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
        regular = [t for t, i in vocab.items() if i not in special and i not in added]
        kind = detect_kind(regular, decoder)
        table = byte_level_table(byte_level_alphabet())
        count = max(vocab.values(), default=-1) + 1
        tokens: list[bytes | None] = [None] * count
        for text, token_id in vocab.items():
            if token_id in special:
                continue
            if token_id in added:
                tokens[token_id] = added[token_id].encode("utf-8")
            elif kind == "byte_level":
                tokens[token_id] = decode_byte_level(text, table)
            elif kind == "sentencepiece":
                tokens[token_id] = decode_sentencepiece(text)
            else:
                tokens[token_id] = text.encode("utf-8")
        ends = _as_id_set(getattr(tokenizer, "eos_token_id", None)) | _as_id_set(eos_ids)
        return cls.from_raw(tokens, ends, size)

    @cached_property
    def trie(self) -> TokenTrie:
        """The flat trie of the text tokens (end ids excluded), built on first use."""
        return TokenTrie.build(self.token_bytes, exclude=self.eos_ids)

    @cached_property
    def lexeme_walks(self) -> LexemeWalkCache:
        """Lexeme walks shared by every token index over this vocabulary (bounded)."""
        return LexemeWalkCache()

    @cached_property
    def schema_rows(self) -> SchemaRows:
        """The term store ``compile_index`` builds JSON schemas into, shared by every
        schema compiled over this vocabulary (``fsm.schema_rows``)."""
        return SchemaRows()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and other.fingerprint == self.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return (
            f"Vocabulary(tokens={len(self.token_bytes)}, size={self.size}, "
            f"eos_ids={sorted(self.eos_ids)}, fingerprint={self.fingerprint[:12]})"
        )


def text_bytes(vocabulary: Vocabulary, tokenizer: Any) -> tuple[bytes | None, ...]:
    """Bytes each id shows as text: the vocabulary's bytes, with special tokens (which
    constraints never allow) shown by their literal content, as in a chat template.
    Only the ids without bytes are looked up in the tokenizer."""
    shown = list(vocabulary.token_bytes)
    missing = [i for i, data in enumerate(shown) if data is None]
    for token_id, name in zip(missing, tokenizer.convert_ids_to_tokens(missing)):
        if name is not None:
            shown[token_id] = name.encode()
    return tuple(shown)
