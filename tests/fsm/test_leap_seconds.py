"""The leap-second part of the ``time`` format: exactly HH:MM:60 at 23:59:60 UTC."""

from __future__ import annotations

from fsm.json_schema.formats import OBJECT_FORMATS
from fsm.terms import Thunk, derivative, nullable


def accepts(term, data: bytes) -> bool:
    for byte in data:
        term = derivative(term, byte)
    return nullable(term)


def offsets(sign: str) -> list[tuple[str, int]]:
    """Every ``±HH:MM`` offset within a day and its value in minutes east of UTC."""
    step = 1 if sign == "+" else -1
    return [(f"{sign}{m // 60:02d}:{m % 60:02d}", step * m) for m in range(24 * 60)]


def test_leap_seconds_are_exactly_2359_utc():
    term = OBJECT_FORMATS.leap_seconds()
    all_offsets = offsets("+") + offsets("-")
    for local in range(0, 24 * 60, 7):  # every 7th minute of the day, all offsets
        stamp = f"{local // 60:02d}:{local % 60:02d}:60"
        ahead = (local - (23 * 60 + 59)) % (24 * 60)
        right = [all_offsets[ahead], all_offsets[24 * 60 + (24 * 60 - ahead) % (24 * 60)]]
        for text, east in all_offsets[::13] + right + [("Z", 0), ("z", 0)]:
            expected = (local - east) % (24 * 60) == 23 * 60 + 59
            assert accepts(term, f"{stamp}{text}".encode()) == expected, (stamp, text)
            if expected:
                assert accepts(term, f"{stamp}.25{text}".encode())
        assert not accepts(term, f"{stamp}".encode())
    assert accepts(term, b"23:59:60Z") and accepts(term, b"15:59:60-08:00")
    assert not accepts(term, b"23:59:59Z") and not accepts(term, b"23:59:60+00:01")


def test_leap_second_nodes_state_their_shortest_completion():
    """Every node of the tree (a thunk) states the shortest, then lowest, rest of the
    times below it: the one found by trying each stamp with each offset that makes it
    23:59:60 UTC (accepted by the term itself)."""
    term = OBJECT_FORMATS.leap_seconds()
    all_offsets = offsets("+") + offsets("-")
    times = []
    for local in range(24 * 60):
        stamp = f"{local // 60:02d}:{local % 60:02d}:60"
        ahead = (local - (23 * 60 + 59)) % (24 * 60)
        east, west = all_offsets[ahead][0], all_offsets[24 * 60 + (-ahead) % (24 * 60)][0]
        for offset in (east, west, "Z", "z"):
            if accepts(term, f"{stamp}{offset}".encode()):
                times.append(f"{stamp}{offset}".encode())
    assert len(times) == 2 * 24 * 60 + 2
    for prefix in sorted({time[:n] for time in times[::29] for n in range(1, 9)}):
        node = term
        for byte in prefix:
            node = derivative(node, byte)
        assert isinstance(node, Thunk) and node.shortest is not None
        rests = [time[len(prefix) :] for time in times if time.startswith(prefix)]
        assert node.shortest() == min(rests, key=lambda rest: (len(rest), rest))
