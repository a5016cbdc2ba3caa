"""The cold-mask benchmark's order of engines (``benchmarks/cold_masks.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture
def cold_masks(benchmark_script):
    """The benchmark's module."""
    return benchmark_script("cold_masks")


@pytest.mark.parametrize("engines", [1, 2, 5])
def test_each_engine_is_asked_first_in_turn(cold_masks, engines):
    """Each turn asks every engine once, in the same cyclic order, and over as many
    turns as there are engines each is asked first once: no engine is always first."""
    workers = {f"engine{k}": object() for k in range(engines)}
    names = list(workers)
    firsts = []
    for turn in range(2 * engines):
        order = [name for name, _ in cold_masks._rotated(workers, turn)]
        assert sorted(order) == sorted(names)
        start = names.index(order[0])
        assert order == names[start:] + names[:start]
        firsts.append(order[0])
    assert firsts[:engines] == names and firsts[engines:] == names


class _RecordingWorker:
    """Stands for an engine's worker: logs each request it is asked, answers one empty
    accepted walk."""

    def __init__(self, name: str, log: list[tuple[str, object]]) -> None:
        self.name, self.log = name, log

    def ask(self, request: dict) -> dict:
        self.log.append((self.name, request["source"]))
        return {"walks": [{"compile": 0, "cold": [], "warm": [], "accepted": True}]}


@pytest.mark.parametrize(("schemas", "block"), [(7, 3), (6, 3), (5, 1)])
def test_sample_blocks_run_back_to_back_after_a_warm_up(cold_masks, monkeypatch, schemas, block):
    """Each engine walks every schema once, ``block`` at a time back to back after one
    untimed warm-up request, engines in turn with the first one rotating per block;
    ``block`` 1 asks one schema at a time with no warm-up (the interleaved mode). Each
    walk is labelled with its schema's name, the warm-up's walks are not recorded."""
    monkeypatch.setattr(cold_masks, "_encode", lambda tokenizer, data, kind: [0])
    log: list[tuple[str, object]] = []
    workers = {name: _RecordingWorker(name, log) for name in ("a", "b")}
    entries = [
        {"name": f"s{k}", "schema": k, "tests": [{"valid": True, "data": k}]}
        for k in range(schemas)
    ]
    results = cold_masks.run_sample(workers, None, entries, block)
    for name in workers:
        assert results[name]["labels"] == [f"s{k}" for k in range(schemas)]
    warm_up = cold_masks.WARMUP_SCHEMA[0]
    expected = []
    for turn, first in enumerate(range(0, schemas, block)):
        for name, _ in cold_masks._rotated(workers, turn):
            expected += [(name, warm_up)] if block > 1 else []
            expected += [(name, k) for k in range(first, min(first + block, schemas))]
    assert log == expected


def test_ours_is_started_first(cold_masks):
    """Ours takes the first start (the slower place in A/A runs), then its variants and
    the older tree, then the peers in the order given."""
    namespace = type(
        "Args",
        (),
        {
            "engines": "llguidance, seqstate,xgrammar",
            "frozen": False,
            "no_gc": True,
            "young_threshold": 50_000,
            "isolated": False,
            "again": True,
            "objects": True,
            "before": "/tmp/old",
        },
    )()
    assert cold_masks.started_in_order(namespace) == [
        "seqstate",
        f"seqstate{cold_masks.NO_GC}",
        f"seqstate{cold_masks.YOUNG}50000",
        f"seqstate{cold_masks.AGAIN}",
        f"seqstate{cold_masks.OBJECTS}",
        "seqstate@/tmp/old",
        "llguidance",
        "xgrammar",
    ]


def test_every_variant_of_ours_takes_our_adapter_and_says_what_it_changes(cold_masks):
    young = f"seqstate{cold_masks.YOUNG}50000"
    for name in (young, f"seqstate{cold_masks.NO_GC}", "seqstate@/tmp/old#1", "seqstate"):
        assert cold_masks._adapter(name) == "seqstate"
    assert cold_masks._adapter("llguidance") == "llguidance"
    assert cold_masks._young_threshold(young) == 50_000
    assert cold_masks._young_threshold("seqstate") is None
    assert cold_masks._label(young) == "seqstate, young collections per 50,000 objects"
    assert cold_masks._label(f"seqstate{cold_masks.OBJECTS}") == "seqstate over objects"


class _Counting:
    """An index of ours' shape whose states count the tokens read."""

    initial_state = 0

    def fill_bitmask(self, state: int, buffer: list) -> None:
        buffer.append(state)

    def next_state(self, state: int, token: int) -> int:
        return state + 1


class _Engine:
    """Ours' adapter's shape, logging each compile and each mask filled."""

    def __init__(self) -> None:
        self.buffer: list[int] = []
        self.compiles: list[str] = []

    def compile(self, kind: str, source: object, mode: str) -> _Counting:
        self.compiles.append(mode)
        return _Counting()


def test_ours_walked_again_walks_each_instance_once_untimed_first(cold_masks):
    tokens = [7, 8, 9]
    engine = _Engine()
    walked = cold_masks._walk_fresh(f"seqstate{cold_masks.AGAIN}", engine, "json", {}, tokens)
    # the untimed walk, then the timed one and its warm walk over the same index
    assert engine.compiles == ["lazy", "lazy"] and engine.buffer == [0, 1, 2] * 3
    assert len(walked["cold"]) == len(tokens) and walked["accepted"]
    plain = _Engine()
    cold_masks._walk_fresh("seqstate", plain, "json", {}, tokens)
    assert plain.compiles == ["lazy"] and plain.buffer == [0, 1, 2] * 2
    assert cold_masks._label(f"seqstate{cold_masks.AGAIN}") == "seqstate, schema walked before"


def test_the_sample_table_gives_the_compile_apart(cold_masks):
    """Each walk's compile is kept beside its total (compile + cold steps), and the
    sample's table prints their p50 / p90 in a column of their own."""
    record = cold_masks._record()
    for compiled, steps in ((2_000_000, [1_000_000, 3_000_000]), (4_000_000, [2_000_000])):
        walk = {"compile": compiled, "cold": steps, "warm": [1_000], "accepted": True}
        cold_masks._add(record, {"walks": [walk]}, "schema")
    assert record["compiles"] == [2.0, 4.0]
    assert record["totals"] == [6.0, 6.0]
    table = cold_masks.sample_table({"seqstate": record})
    header, _, row = table.splitlines()[:3]
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[columns.index("compile p50 / p90 (ms)")] == "2.00 / 4.00"
    assert cells[columns.index("compile + cold walk p50 / p90 (ms)")] == "6.00 / 6.00"


def test_engines_are_compared_over_the_instances_every_one_walked(cold_masks):
    """An instance is its schema and its rank among that schema's walks; one that an
    engine refused or failed is left out for all, and the ratio is instance by
    instance (ours 2, 4 and 9 ms against 1, 4 and 3: 2.0, 1.0 and 3.0), over all of
    them and over schemas' first and later instances apart."""
    sample = {
        "seqstate": {"labels": ["a", "a", "b", "c"], "totals": [2.0, 4.0, 9.0, 7.0]},
        "llguidance": {"labels": ["a", "a", "b"], "totals": [1.0, 4.0, 3.0]},
    }
    common = cold_masks.common_instances(sample)
    assert common == {"seqstate": [2.0, 4.0, 9.0], "llguidance": [1.0, 4.0, 3.0]}
    assert cold_masks.common_ranks(sample) == [0, 1, 0]  # a's first, a's second, b's
    line = cold_masks.paired_line(sample)
    assert "Paired over the 3 sample instances" in line
    assert "seqstate 4.00 / 9.00 ms, llguidance 3.00 / 4.00 ms" in line
    assert "median 2.00, p90 3.00" in line
    # a schema's first instances (a, b: 2.0 and 3.0) apart from its later ones (a: 1.0)
    assert (
        "(a schema's first instances, 2: median 2.00, p90 3.00; "
        "later ones, 1: median 1.00, p90 1.00)"
    ) in line


def test_cold_steps_are_compared_over_the_instances_every_one_walked(cold_masks):
    """The paired line's step percentiles leave out the steps of an instance another
    engine refused: ours walked "c" in one slow step, which llguidance did not walk."""
    sample = {
        "seqstate": {
            "labels": ["a", "b", "c"],
            "totals": [1.0, 1.0, 9.0],
            "steps": [2, 1, 1],
            "cold": [10_000, 30_000, 20_000, 900_000],
        },
        "llguidance": {
            "labels": ["a", "b"],
            "totals": [1.0, 1.0],
            "steps": [1, 2],
            "cold": [5_000, 6_000, 7_000],
        },
    }
    assert cold_masks.common_steps(sample) == {
        "seqstate": [10_000, 30_000, 20_000],
        "llguidance": [5_000, 6_000, 7_000],
    }
    line = cold_masks.paired_line(sample)
    # ours' p99 and max are over a and b (30 µs), not c's 900
    assert (
        "cold steps p50 / p99 / max (µs): seqstate 20.0 / 30.0 / 30, llguidance 6.0 / 7.0 / 7"
        in line
    )


def test_an_instance_an_engine_stopped_at_a_refused_token_is_left_out(cold_masks):
    """llguidance refused a token of b's instance after one step: its time is that of a
    shorter walk, so b is paired for no engine, while ``rejected`` still counts it."""
    sample = {
        "seqstate": {
            "labels": ["a", "b"],
            "totals": [2.0, 50.0],
            "steps": [1, 3],
            "cold": [10_000, 20_000, 30_000, 40_000],
            "accepted": [True, True],
        },
        "llguidance": {
            "labels": ["a", "b"],
            "totals": [1.0, 1.0],
            "steps": [1, 1],
            "cold": [5_000, 6_000],
            "accepted": [True, False],
        },
    }
    assert cold_masks.common_instances(sample) == {"seqstate": [2.0], "llguidance": [1.0]}
    assert cold_masks.common_steps(sample) == {"seqstate": [10_000], "llguidance": [5_000]}
    assert "Paired over the 1 sample instances" in cold_masks.paired_line(sample)


def test_a_walk_records_whether_it_read_the_whole_instance(cold_masks):
    record = cold_masks._record()
    for accepted in (True, False):
        walk = {"compile": 1e6, "cold": [1_000], "warm": [500], "accepted": accepted}
        cold_masks._add(record, {"walks": [walk]}, "schema")
    assert record["accepted"] == [True, False]
    assert record["rejected"] == 1


def test_ours_over_objects_walks_a_schema_and_is_reported(cold_masks) -> None:
    """``--objects``: a schema compiled to object terms and walked by a token index over
    its ``DerivativeAutomaton``; the ratios name it with its cold p99 against
    llguidance's."""
    import numpy as np

    import fsm
    from fsm.derivative_automaton import DerivativeAutomaton

    tokens = [b"{", b"}", b'"a"', b":", b"1", b"2", None]
    vocabulary = fsm.Vocabulary.from_raw(tokens, eos_ids=len(tokens) - 1)

    class Engine:
        vocab = vocabulary
        buffer = np.zeros((len(tokens) + 31) // 32, np.int32)

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert isinstance(cold_masks._object_index(schema, vocabulary).automaton, DerivativeAutomaton)
    name = f"seqstate{cold_masks.OBJECTS}"
    walk = cold_masks._walk_fresh(name, Engine(), "json", schema, [0, 2, 3, 4, 5, 1], True)
    assert walk["accepted"] and len(walk["cold"]) == 6
    refused = cold_masks._walk_fresh(name, Engine(), "json", schema, [0, 1], True)
    assert not refused["accepted"]
    record = {"totals": [2.0], "compiles": [1.0], "cold": [1e3, 4e3], "warm": [1.0]}
    records = {
        "seqstate": record,
        name: {**record, "totals": [1.5], "cold": [1e3, 2e3]},
        "llguidance": {**record, "totals": [1.0], "cold": [1e3, 1e3]},
    }
    (line,) = cold_masks.ratios({"case": records}, None)
    assert "ours over objects 1.50 ms (cold p99 / llguidance's: 2.0x)" in line
