"""Vocabulary: exact token bytes for byte-level BPE and SentencePiece, end ids,
fingerprints, and the flat trie built from it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fsm import InvalidVocabulary, Vocabulary
from fsm.trie import TokenTrie, preorder_layout, preorder_layout_py
from fsm.vocabulary import (
    byte_level_alphabet,
    byte_level_table,
    decode_byte_level,
    detect_kind,
)

# --------------------------------------------------------------- fake tokenizers


@dataclass
class AddedToken:
    content: str
    special: bool


class FakeTokenizer:
    """Exposes the duck-typed surface ``Vocabulary.from_tokenizer`` reads."""

    def __init__(self, pieces, special_ids, eos_token_id, added=None):
        self._vocab = {piece: i for i, piece in enumerate(pieces)}
        self.all_special_ids = list(special_ids)
        self.eos_token_id = eos_token_id
        self.added_tokens_decoder = added or {}

    def get_vocab(self):
        return dict(self._vocab)


SP_PIECES = [
    "<unk>",
    "<s>",
    "</s>",
    "<0x0A>",
    "<0xE4>",
    "<0xB8>",
    "<0xAD>",
    "▁",
    "▁the",
    "▁a",
    "b",
    "ing",
    "▁▁",
    "é",
    "<tool>",
]


def sentencepiece_tokenizer() -> FakeTokenizer:
    added = {14: AddedToken("<tool>", special=False), 2: AddedToken("</s>", special=True)}
    return FakeTokenizer(SP_PIECES, special_ids=[0, 1, 2], eos_token_id=2, added=added)


# ------------------------------------------------------------------ byte level


@pytest.fixture(scope="module")
def smol_vocab(smol_tokenizer) -> Vocabulary:
    return Vocabulary.from_tokenizer(smol_tokenizer)


def test_byte_level_alphabet_is_a_bijection_onto_bytes():
    alphabet = byte_level_alphabet()
    assert sorted(alphabet.values()) == list(range(256))
    assert alphabet["Ġ"] == ord(" ")
    assert alphabet["Ċ"] == ord("\n")
    assert alphabet["a"] == ord("a")
    assert all(c.isprintable() for c in alphabet)


@pytest.mark.parametrize(
    ("token", "expected"),
    [("Ġthe", b" the"), ("ĊĉĠ", b"\n\t "), ("Ã©", "é".encode()), ("ÿĀ", b"\xff\x00")],
)
def test_byte_level_decoding(token, expected):
    assert decode_byte_level(token, byte_level_table(byte_level_alphabet())) == expected


@pytest.mark.parametrize("token", [" the", "a\nb", "\x00", "é中", "\u0144", "😀"])
def test_byte_level_decoding_refuses_characters_outside_the_alphabet(token):
    # A raw space, newline or control, and anything past U+0143 stand for no byte.
    assert decode_byte_level(token, byte_level_table(byte_level_alphabet())) is None


def test_smol_vocabulary_shape_and_specials(smol_tokenizer):
    vocab = Vocabulary.from_tokenizer(smol_tokenizer)
    assert vocab.size == len(vocab.token_bytes) == 49152
    assert vocab.eos_ids == frozenset({smol_tokenizer.eos_token_id})
    for token_id, token in smol_tokenizer.added_tokens_decoder.items():
        if token.special:
            assert vocab.token_bytes[token_id] is None
    assert vocab.token_bytes[smol_tokenizer.convert_tokens_to_ids("Ġthe")] == b" the"


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x1FFFF, exclude_categories=["Cs"])))
def test_smol_token_bytes_concatenate_to_the_text(smol_tokenizer, smol_vocab, text):
    ids = smol_tokenizer.encode(text, add_special_tokens=False)
    # The GGUF vocabulary lacks a few rare lead bytes (e.g. 0xF1): such text is lost by
    # the tokenizer itself, so only text it round-trips is compared.
    assume(smol_tokenizer.decode(ids) == text)
    assert b"".join(smol_vocab.token_bytes[i] for i in ids) == text.encode("utf-8")


@pytest.mark.parametrize(
    "text", ["Hello, world!", "  two  spaces\n\ttab", '{"a": [1, 2.5e-3]}', "中文 é ß 😀", "\r\n"]
)
def test_smol_token_bytes_of_fixed_texts(smol_tokenizer, smol_vocab, text):
    ids = smol_tokenizer.encode(text, add_special_tokens=False)
    assert b"".join(smol_vocab.token_bytes[i] for i in ids) == text.encode("utf-8")


def test_smol_size_and_extra_eos(smol_tokenizer):
    vocab = Vocabulary.from_tokenizer(smol_tokenizer, size=49280, eos_ids=[0])
    assert vocab.size == 49280
    assert vocab.eos_ids == frozenset({0, smol_tokenizer.eos_token_id})


# ---------------------------------------------------------------- sentencepiece


def test_sentencepiece_bytes():
    vocab = Vocabulary.from_tokenizer(sentencepiece_tokenizer())
    tb = vocab.token_bytes
    assert tb[0] is None and tb[1] is None and tb[2] is None
    assert tb[3] == b"\n"
    assert tb[4:7] == (b"\xe4", b"\xb8", b"\xad")
    assert tb[7] == b" "
    assert tb[8] == b" the"
    assert tb[12] == b"  "
    assert tb[13] == "é".encode()
    assert tb[14] == b"<tool>"  # non-special added token: its text
    assert vocab.eos_ids == frozenset({2})
    assert b"".join(tb[i] for i in (4, 5, 6)).decode() == "中"


def test_kind_detection():
    assert detect_kind(["Ġthe", "a", "Ċ"]) == "byte_level"
    assert detect_kind(["▁the", "<0x0A>", "a"]) == "sentencepiece"
    assert detect_kind(["the", "a"]) == "plain"
    assert detect_kind(["▁x"], decoder="ByteLevel(add_prefix_space=True)") == "byte_level"
    assert detect_kind(["Ġx"], decoder="Sequence([Replace, ByteFallback])") == "sentencepiece"


def test_plain_tokenizer_uses_utf8():
    tokenizer = FakeTokenizer(["<eos>", "ab", "é"], special_ids=[0], eos_token_id=0)
    vocab = Vocabulary.from_tokenizer(tokenizer)
    assert vocab.token_bytes == (None, b"ab", "é".encode())


# ------------------------------------------------------------ value semantics


def test_from_raw_and_fingerprint():
    a = Vocabulary.from_raw([b"a", b"", None, b"</s>"], eos_ids=3)
    assert a.token_bytes == (b"a", None, None, b"</s>")
    assert a.size == 4
    b = Vocabulary.from_raw([b"a", None, None, b"</s>"], eos_ids=[3])
    assert a == b and hash(a) == hash(b) and a.fingerprint == b.fingerprint
    assert len(a.fingerprint) == 64
    assert Vocabulary.from_raw([b"a", None, None, b"</s>"], eos_ids=3, size=8) != a
    assert Vocabulary.from_raw([b"b", None, None, b"</s>"], eos_ids=3) != a
    assert Vocabulary.from_raw([b"a", None, b"x", b"</s>"], eos_ids=[2, 3]) != a


def test_fingerprint_separates_token_boundaries():
    one = Vocabulary.from_raw([b"ab", b"c"], eos_ids=0)
    two = Vocabulary.from_raw([b"a", b"bc"], eos_ids=0)
    assert one.fingerprint != two.fingerprint


def test_vocabulary_is_frozen():
    vocab = Vocabulary.from_raw([b"a"], eos_ids=0)
    with pytest.raises(AttributeError):
        vocab.size = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "tokens, eos, size",
    [([b"a", b"b"], [0], 1), ([b"a"], [1], None), ([b"a"], [], None), ([b"a"], [-1], None)],
)
def test_invalid_vocabularies(tokens, eos, size):
    with pytest.raises(InvalidVocabulary):
        Vocabulary.from_raw(tokens, eos_ids=eos, size=size)


# ------------------------------------------------------------------------ trie


def _node_strings(trie: TokenTrie) -> list[bytes]:
    """Byte string of every node, rebuilt from the preorder labels and depths."""
    path: list[int] = []
    strings = []
    for label, depth in zip(trie.labels.tolist(), trie.depths.tolist(), strict=True):
        del path[max(depth - 1, 0) :]
        if depth:
            path.append(label)
        strings.append(bytes(path))
    return strings


def _check_trie(token_bytes, exclude):
    trie = TokenTrie.build(token_bytes, exclude=exclude)
    strings = _node_strings(trie)
    assert len(set(strings)) == len(strings)  # one node per prefix
    depths = trie.depths
    for node in range(trie.num_nodes):
        end = trie.ends[node]
        assert all(depths[i] > depths[node] for i in range(node + 1, end))
        assert end == trie.num_nodes or depths[end] <= depths[node]
    found = {}
    for node in range(trie.num_nodes):
        for k in range(trie.token_starts[node], trie.token_starts[node + 1]):
            found[int(trie.token_ids[k])] = strings[node]
    expected = {i: b for i, b in enumerate(token_bytes) if b and i not in exclude}
    assert found == expected
    prefixes = {b[:n] for b in expected.values() for n in range(len(b) + 1)}
    assert set(strings) == prefixes | {b""}
    assert trie.labels.dtype == np.uint8 and trie.token_ids.dtype == np.int32
    children = [node for node in range(trie.num_nodes) if depths[node] == 1]
    assert trie.root_children.tolist() == children


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.binary(max_size=5)), max_size=30),
    st.sets(st.integers(0, 29), max_size=3),
)
def test_trie_holds_exactly_the_tokens(token_bytes, exclude):
    _check_trie(token_bytes, exclude)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=6), max_size=40))
def test_the_layout_kernel_equals_its_python_twin(strings):
    """Labels, depths, each string's node and subtree ends, for strings in byte order
    with repeats (two ids with the same bytes share a node)."""
    strings = sorted(strings + strings[:3])
    lengths = np.asarray([len(data) for data in strings], np.int32)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int32)
    joined = np.frombuffer(b"".join(strings), np.uint8)
    for got, expected in zip(
        preorder_layout(joined, starts, lengths), preorder_layout_py(strings), strict=True
    ):
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype


def test_trie_of_smol_vocabulary(smol_vocab):
    vocab = smol_vocab
    trie = vocab.trie
    assert vocab.trie is trie  # built once per vocabulary
    assert trie.num_tokens == sum(
        1 for i, b in enumerate(vocab.token_bytes) if b and i not in vocab.eos_ids
    )
    assert trie.ends[0] == trie.num_nodes
