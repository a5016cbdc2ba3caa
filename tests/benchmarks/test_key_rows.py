"""The new-keys benchmark's schemas, instances and records (``benchmarks/key_rows.py``)."""

from __future__ import annotations

import random
import re

import pytest

TYPES = {"string": str, "integer": int, "boolean": bool}


@pytest.fixture
def key_rows(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("key_rows")


class _Tokenizer:
    """Stands for the tokenizer: ids are indexes into ``pieces``; ``Ġ`` marks a space."""

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces

    def __len__(self) -> int:
        return len(self.pieces)

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return [self.pieces[i] for i in ids]

    def decode(self, ids: list[int]) -> str:
        return "".join(self.pieces[i] for i in ids).replace("\u0120", " ")


WORDS = ["\u0120alpha", "\u0120beta", "\u0120Gamma", "\u0120delta", "\u0120ep", "eps", "\u0120zeta"]


@pytest.mark.parametrize(("keys", "open_"), [(1, True), (5, False), (12, True)])
def test_a_schema_has_its_count_of_new_keys_and_a_valid_instance(key_rows, keys, open_):
    """``keys`` distinct names made of two lowercase words of 3-8 letters and a number,
    open or closed to other keys as asked; the instance holds the first three, each of
    its declared type."""
    words = key_rows.key_words(_Tokenizer(WORDS))
    assert words == ["alpha", "beta", "delta", "zeta"]
    schema = key_rows.object_schema(random.Random(keys), words, keys, open_)
    assert schema["additionalProperties"] is open_ and len(schema["properties"]) == keys
    assert all(re.fullmatch(r"[a-z]{3,8}_[a-z]{3,8}\d+", name) for name in schema["properties"])
    value = key_rows.instance(schema)
    assert list(value) == list(schema["properties"])[: key_rows.INSTANCE_KEYS]
    for name, item in value.items():
        assert type(item) is TYPES[schema["properties"][name]["type"]]


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [(['{"', "ab", '":'], 1), (["{", '"', "ab"], 2), (['{"ab', '":'], None), (["{", '"a'], None)],
)
def test_the_key_row_is_the_step_right_after_the_opening(key_rows, pieces, expected):
    tokenizer = _Tokenizer(pieces)
    assert key_rows.key_row_step(tokenizer, list(range(len(pieces)))) == expected


class _Worker:
    """Answers every request with one walk whose steps are 1..n µs, and logs it."""

    def __init__(self, log: list[object]) -> None:
        self.log = log

    def ask(self, request: dict) -> dict:
        self.log.append(request["source"])
        steps = [1000 * (k + 1) for k in range(len(request["instances"][0]))]
        return {"walks": [{"compile": 2_000_000, "cold": steps}]}


def test_each_engine_walks_the_same_schemas_after_a_warm_up(key_rows, monkeypatch):
    """Per configuration both engines get the same fresh schemas after one warm-up
    walk; a walk is recorded as compile + its steps, its key row and its slowest step."""
    monkeypatch.setattr(key_rows, "_encode", lambda tokenizer, value, kind: [0, 1, 2])
    monkeypatch.setattr(
        key_rows, "_warm_up_request", lambda tokenizer: {"source": "warm", "instances": [[0]]}
    )
    tokenizer = _Tokenizer(['{"', "x", '":', *WORDS])
    logs: dict[str, list[object]] = {"a": [], "b": []}
    workers = {name: _Worker(log) for name, log in logs.items()}
    results = key_rows.run(workers, tokenizer, [2, 3], reps=4)
    assert list(results) == [(2, True), (2, False), (3, True), (3, False)]
    assert logs["a"] == logs["b"] and logs["a"].count("warm") == 4
    schemas = [source for source in logs["a"] if source != "warm"]
    assert len(schemas) == 16 and all(isinstance(schema, dict) for schema in schemas)
    for record in results.values():
        for name in workers:
            assert record[name] == {
                "total": [2.006] * 4,
                "key_row": [2.0] * 4,
                "slowest": [3.0] * 4,
            }
