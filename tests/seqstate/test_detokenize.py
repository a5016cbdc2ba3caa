"""The incremental detokenizer on a tiny hand-made vocabulary (no model needed)."""

from __future__ import annotations

import pytest

from seqstate import Detokenizer, DetokenizerFinished, UnknownTokenId, decode_tokens

VOCAB = [
    b"Hel",
    b"lo",
    b" wor",
    b"ld",
    b"\xe6",
    b"\x97",
    b"\xa5",
    b"<",
    b"|end",
    b"|>",
    None,
    b"\xff",
    b" ",
]
HEL, LO, WOR, LD, NI1, NI2, NI3, LT, END, GT, SPECIAL, BAD, SPACE = range(len(VOCAB))


def run(detokenizer, ids):
    state, chunks = detokenizer.start(), []
    for token_id in ids:
        state, chunk = detokenizer.feed(state, token_id)
        chunks.append(chunk)
    return state, chunks


def test_partial_utf8_bytes_are_held_until_the_character_completes():
    detokenizer = Detokenizer(VOCAB)
    _, chunks = run(detokenizer, [HEL, NI1, NI2, NI3, LO])
    assert [c.text for c in chunks] == ["Hel", "", "", "日", "lo"]
    assert [c.clean for c in chunks] == [True, False, False, True, True]
    assert [c.decoded_chars for c in chunks] == [3, 3, 3, 4, 6]


def test_invalid_bytes_become_replacement_characters_like_bytes_decode():
    detokenizer = Detokenizer(VOCAB)
    ids = [NI1, LO, BAD, NI1, NI2]
    state, chunks = run(detokenizer, ids)
    _, last = detokenizer.finish(state)
    text = "".join(c.text for c in chunks) + last.text
    assert text == b"".join(VOCAB[i] for i in ids).decode("utf-8", "replace")
    assert last.text == "\ufffd"


def test_special_tokens_decode_to_nothing():
    _, chunks = run(Detokenizer(VOCAB), [HEL, SPECIAL, LO])
    assert "".join(c.text for c in chunks) == "Hello"


def test_feeding_is_pure_so_a_state_can_be_fed_twice():
    detokenizer = Detokenizer(VOCAB)
    state, _ = run(detokenizer, [HEL, NI1])
    assert detokenizer.feed(state, NI2) == detokenizer.feed(state, NI2)
    assert state.held_bytes == b"\xe6"


def test_stop_string_spanning_tokens_is_held_back_then_reported():
    detokenizer = Detokenizer(VOCAB, stop_strings=("<|end|>",))
    state, chunks = run(detokenizer, [HEL, LO, LT, END, GT])
    assert [c.text for c in chunks] == ["Hel", "lo", "", "", ""]
    match = chunks[-1].stop
    assert match is not None and (match.start, match.end) == (5, 12)
    assert chunks[-1].decoded_chars == 12
    with pytest.raises(DetokenizerFinished):
        detokenizer.feed(state, HEL)


def test_held_back_text_is_released_when_it_cannot_become_a_stop():
    detokenizer = Detokenizer(VOCAB, stop_strings=("<|end|>",))
    state, chunks = run(detokenizer, [HEL, LT, LO])
    assert [c.text for c in chunks] == ["Hel", "", "<lo"]
    state, _ = run(detokenizer, [HEL, LT])
    _, last = detokenizer.finish(state)
    assert last.text == "<"


def test_earliest_stop_wins_and_text_before_it_is_emitted():
    detokenizer = Detokenizer(VOCAB, stop_strings=("world", "lo w"))
    _, chunks = run(detokenizer, [HEL, LO, WOR])
    emitted = "".join(c.text for c in chunks)
    stop = next(c.stop for c in chunks if c.stop)
    assert emitted == "Hel" and stop.stop == "lo w" and stop.start == 3


def test_sentencepiece_rule_strips_only_the_first_leading_space():
    detokenizer = Detokenizer(VOCAB, strip_leading_space=True)
    _, chunks = run(detokenizer, [SPECIAL, SPACE, WOR, SPACE])
    assert "".join(c.text for c in chunks) == " wor "
    _, chunks = run(detokenizer, [WOR, LD])
    assert "".join(c.text for c in chunks) == "world"
    _, chunks = run(Detokenizer(VOCAB), [WOR])
    assert chunks[0].text == " wor"


def test_unknown_token_id_is_a_typed_error():
    detokenizer = Detokenizer(VOCAB)
    with pytest.raises(UnknownTokenId):
        detokenizer.feed(detokenizer.start(), len(VOCAB))
    with pytest.raises(UnknownTokenId):
        detokenizer.feed(detokenizer.start(), -1)


def test_decode_tokens_gives_offsets_and_flushes_into_the_last_token():
    decoded = decode_tokens(Detokenizer(VOCAB), [HEL, NI1, NI2, NI3, NI1])
    assert decoded.text == "Hel日\ufffd"
    assert decoded.token_ends.tolist() == [3, 3, 3, 4, 5]
    assert decoded.token_clean.tolist() == [True, False, False, True, True]
    assert not decoded.token_ends.flags.writeable
