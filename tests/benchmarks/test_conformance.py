"""The conformance runner on small fixed samples of the shared data (bytes mode)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from benchmarks.conformance import (
    ByteWalker,
    Case,
    Timeout,
    TokenWalker,
    main,
    read_cases,
    run,
    with_budget,
)

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
MASKBENCH = DATA / "maskbench-dev.jsonl.gz"
SUITE = DATA / "json-schema-test-suite-2020-12.jsonl.gz"
SUPPORTED_SUITE_FILES = {
    "additionalProperties.json",
    "allOf.json",
    "anyOf.json",
    "boolean_schema.json",
    "const.json",
    "contains.json",
    "default.json",
    "defs.json",
    "dependentRequired.json",
    "dependentSchemas.json",
    "enum.json",
    "exclusiveMaximum.json",
    "exclusiveMinimum.json",
    "if-then-else.json",
    "items.json",
    "maxContains.json",
    "maxItems.json",
    "maxLength.json",
    "maxProperties.json",
    "maximum.json",
    "minContains.json",
    "minItems.json",
    "minLength.json",
    "minProperties.json",
    "minimum.json",
    "multipleOf.json",
    "not.json",
    "oneOf.json",
    "pattern.json",
    "patternProperties.json",
    "prefixItems.json",
    "properties.json",
    "propertyNames.json",
    "required.json",
    "type.json",
    "uniqueItems.json",
}


def test_runner_counts_right_wrong_and_unsupported() -> None:
    cases = [
        Case(
            "ok", {"type": "integer"}, [{"valid": True, "data": 1}, {"valid": False, "data": "x"}]
        ),
        Case("mislabelled", {"type": "integer"}, [{"valid": False, "data": 1}]),
        Case("unsupported", {"$ref": "https://example.com/x.json"}, [{"valid": True, "data": 1}]),
    ]
    report = run(iter(cases), ByteWalker)
    assert report.outcomes["compiled"] == 2 and report.outcomes["unsupported"] == 1
    assert report.unsupported["$ref"] == 1
    assert report.tests_right == 2 and report.passing == 1
    assert [w[0] for w in report.wrong] == ["mislabelled"]


class _ByteTokens:
    """A tokenizer whose tokens are the text's bytes (ids 0-255)."""

    def encode(self, text: str, add_special_tokens: bool) -> list[int]:
        return list(text.encode())


def test_token_walker_compiles_as_the_product_and_an_empty_schema_rejects_all() -> None:
    from fsm.store_automaton import StoreAutomaton
    from fsm.vocabulary import Vocabulary

    vocabulary = Vocabulary.from_raw([bytes([b]) for b in range(256)] + [None], eos_ids=256)
    walker = TokenWalker({"type": "integer"}, {}, vocabulary, _ByteTokens(), [])
    assert walker.index is not None and isinstance(walker.index.automaton, StoreAutomaton)
    assert walker.accepts("12") and not walker.accepts('"x"')
    empty = {"type": "string", "minLength": 3, "maxLength": 2}
    refusing = TokenWalker(empty, {}, vocabulary, _ByteTokens(), [])
    assert refusing.index is None and not refusing.accepts('"abc"')


def test_cli_writes_table_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text(
        json.dumps({"name": "n", "schema": {"const": 1}, "tests": [{"valid": False, "data": 1}]})
        + "\n"
    )
    errors = tmp_path / "errors.txt"
    assert main([str(data), "--bytes", "--errors-out", str(errors)]) == 0
    assert "passing schemas" in capsys.readouterr().out
    assert errors.read_text().startswith("WRONG ACCEPT\tn\t1")


@pytest.mark.skipif(not MASKBENCH.exists(), reason="shared data not present")
def test_maskbench_sample_has_no_validation_errors() -> None:
    sample = itertools.islice(read_cases(MASKBENCH), 0, None, 170)
    report = run(sample, ByteWalker)
    assert report.schemas == 50
    assert report.wrong == []
    assert report.passing >= 45


@pytest.mark.skipif(not SUITE.exists(), reason="shared data not present")
def test_suite_supported_keywords_have_no_validation_errors() -> None:
    cases = [c for c in read_cases(SUITE) if c.name.split(":")[0] in SUPPORTED_SUITE_FILES]
    report = run(iter(cases), ByteWalker)
    assert report.wrong == []


def test_a_budget_that_runs_out_inside_a_numba_call_is_a_timeout():
    """numba turns an exception raised by the alarm's handler during a compiled call
    into a ``SystemError`` with the ``Timeout`` as its cause: still a timeout."""

    def wrapped_by_numba() -> None:
        try:
            raise Timeout
        except Timeout as error:
            raise SystemError("returned a result with an exception set") from error

    with pytest.raises(Timeout):
        with_budget(5.0, wrapped_by_numba)

    def other_system_error() -> None:
        raise SystemError("not a timeout")

    with pytest.raises(SystemError):
        with_budget(5.0, other_system_error)
