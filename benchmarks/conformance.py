"""Conformance of the JSON-schema compiler against labelled instances.

    python -m benchmarks.conformance DATA.jsonl[.gz] [--limit N] [--bytes] [--errors-out FILE]
                              [--peer llguidance|xgrammar]

Each line holds a schema and tests ``{"valid", "data"}`` (the maskbench format,
``name``; or the JSON-Schema-Test-Suite export, ``file`` + ``description``). Every
schema is compiled within a time budget; every instance, written with
``json.dumps(data, ensure_ascii=False)``, is walked through the constraint: token by
token with the default model's tokenizer (default), or byte by byte over term
derivatives (``--bytes``, fast and the best debugging tool). Token by token, the schema is
compiled as the product compiles it (``fsm.compile_index``: rows of the vocabulary's
term store, ``fsm.schema_rows``); a schema it proves empty rejects every instance. A
valid instance must be
accepted whole, an invalid one rejected. A schema passes when it compiles and every
test is right.
"""

from __future__ import annotations

import argparse
import gzip
import json
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fsm.compiler import compile_index
from fsm.errors import ConstraintTooLarge, Unsatisfiable, UnsupportedRegex, UnsupportedSchema
from fsm.json_schema import schema_term
from fsm.specs import JsonSchema
from fsm.terms import EMPTY, Term, derivative, nullable
from fsm.token_index import TokenIndex
from fsm.vocabulary import Vocabulary


class Timeout(Exception):
    """The time budget of one step ran out."""


def _on_alarm(signum: int, frame: object) -> None:
    raise Timeout


def _raised_by_timeout(error: BaseException | None) -> bool:
    """Whether ``Timeout`` is in the chain of exceptions that led to ``error``."""
    while error is not None:
        if isinstance(error, Timeout):
            return True
        error = error.__cause__ or error.__context__
    return False


def with_budget(seconds: float, work: Callable[[], object]) -> object:
    """``work()``, interrupted by ``Timeout`` after ``seconds`` (SIGALRM, main thread)."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return work()
    except SystemError as error:  # the alarm landed inside a numba call, which wraps it
        if _raised_by_timeout(error):
            raise Timeout from error
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Case:
    name: str
    schema: object
    tests: list[dict]


def read_cases(path: Path) -> Iterator[Case]:
    """Cases from a maskbench or Test-Suite JSON-lines file (gzip or not)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            row = json.loads(line)
            name = row.get("name") or f"{row.get('file', '?')}: {row.get('description', '')}"
            yield Case(name, row["schema"], row.get("tests", []))


class ByteWalker:
    """Validates instances byte by byte over the derivatives of the schema's term."""

    def __init__(self, schema: object, options: dict) -> None:
        self.term: Term = schema_term(schema, **options)

    def accepts(self, text: str) -> bool:
        term = self.term
        for byte in text.encode():
            term = derivative(term, byte)
            if term is EMPTY:
                return False
        return nullable(term)


class TokenWalker:
    """Validates instances token by token through the schema's ``fsm.compile_index``
    (None when the compile proves the schema empty: every instance is rejected), timing
    masks."""

    def __init__(
        self,
        schema: object,
        options: dict,
        vocabulary: Vocabulary,
        tokenizer: Any,
        mask_times: list[float],
    ) -> None:
        try:
            self.index: TokenIndex | None = compile_index(JsonSchema(schema, **options), vocabulary)
        except Unsatisfiable:
            self.index = None
        self.tokenizer = tokenizer
        self.mask_times = mask_times

    def accepts(self, text: str) -> bool:
        if self.index is None:
            return False
        state = self.index.initial_state
        for token in self.tokenizer.encode(text, add_special_tokens=False):
            start = time.perf_counter()
            self.index.bitmask(state)
            self.mask_times.append(time.perf_counter() - start)
            state = self.index.next_state(state, token)
            if state < 0:
                return False
        return self.index.is_final(state)


@dataclass
class Report:
    schemas: int = 0
    outcomes: Counter = field(default_factory=Counter)
    unsupported: Counter = field(default_factory=Counter)
    tests: int = 0
    tests_right: int = 0
    passing: int = 0
    wrong: list[tuple[str, str, bool, str]] = field(default_factory=list)
    compile_times: list[float] = field(default_factory=list)
    mask_times: list[float] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    per_case: list[tuple[str, str, int, int]] = field(default_factory=list)

    def group_table(self) -> str:
        """Markdown table per group (the Test-Suite file: the name before ``:``)."""
        groups: dict[str, Counter] = {}
        for name, outcome, total, right in self.per_case:
            group = groups.setdefault(name.split(":")[0], Counter())
            group["schemas"] += 1
            group[outcome] += 1
            group["tests"] += total
            group["right"] += right
            group["compiled tests"] += total if outcome == "compiled" else 0
        lines = [
            "| file | schemas | compiled | unsupported | tests right | wrong |",
            "|---|---|---|---|---|---|",
        ]
        for name in sorted(groups):
            g = groups[name]
            lines.append(
                f"| {name} | {g['schemas']} | {g['compiled']} | {g['schemas'] - g['compiled']} "
                f"| {g['right']} / {g['tests']} | {g['compiled tests'] - g['right']} |"
            )
        return "\n".join(lines)

    def table(self) -> str:
        def pct(values: list[float], q: float) -> str:
            return f"{np.percentile(values, q) * 1000:.2f} ms" if values else "-"

        rows = [
            ("schemas", self.schemas),
            ("compiled", self.outcomes["compiled"]),
            ("unsupported", self.outcomes["unsupported"]),
            ("too large (timeout or state cap)", self.outcomes["too large"]),
            ("errors", self.outcomes["error"]),
            ("tests right", f"{self.tests_right} / {self.tests}"),
            ("validation errors (wrong accept)", sum(1 for w in self.wrong if not w[2])),
            ("validation errors (wrong reject)", sum(1 for w in self.wrong if w[2])),
            (
                "passing schemas",
                f"{self.passing} ({100 * self.passing / max(self.schemas, 1):.2f}%)",
            ),
            (
                "compile time p50 / p90 / p99",
                " / ".join(pct(self.compile_times, q) for q in (50, 90, 99)),
            ),
            (
                "per-token mask time p50 / p99",
                " / ".join(pct(self.mask_times, q) for q in (50, 99)),
            ),
        ]
        width = max(len(r[0]) for r in rows)
        lines = [f"{label.ljust(width)}  {value}" for label, value in rows]
        if self.unsupported:
            lines.append(
                "unsupported keywords: "
                + ", ".join(f"{k} {n}" for k, n in self.unsupported.most_common())
            )
        return "\n".join(lines)


def run(
    cases: Iterator[Case],
    make_walker: Callable[[object, dict], object],
    *,
    compile_budget: float = 10.0,
    test_budget: float = 60.0,
    whitespace_max: int | None = None,
) -> Report:
    report = Report()
    options = {} if whitespace_max is None else {"whitespace_max": whitespace_max}
    for case in cases:
        report.schemas += 1
        report.tests += len(case.tests)
        start = time.perf_counter()
        try:
            walker = with_budget(
                compile_budget,
                lambda: make_walker(case.schema, options),  # noqa: B023
            )
        except (UnsupportedSchema, UnsupportedRegex) as error:
            report.per_case.append((case.name, "unsupported", len(case.tests), 0))
            report.outcomes["unsupported"] += 1
            report.unsupported[getattr(error, "keyword", "regex")] += 1
            report.failures.append((case.name, f"unsupported: {error}"))
            continue
        except (Timeout, ConstraintTooLarge, RecursionError) as error:
            report.per_case.append((case.name, "too large", len(case.tests), 0))
            report.outcomes["too large"] += 1
            report.failures.append((case.name, f"too large: {type(error).__name__} {error}"))
            continue
        except Exception as error:  # noqa: BLE001 - every other failure is counted and listed
            report.per_case.append((case.name, "error", len(case.tests), 0))
            report.outcomes["error"] += 1
            report.failures.append((case.name, f"error: {type(error).__name__}: {error}"))
            continue
        report.compile_times.append(time.perf_counter() - start)
        report.outcomes["compiled"] += 1
        all_right = True
        right_before = report.tests_right
        for test in case.tests:
            text = json.dumps(test["data"], ensure_ascii=False)
            try:
                verdict = with_budget(test_budget, lambda: walker.accepts(text))  # noqa: B023
            except (Timeout, ConstraintTooLarge, RecursionError) as error:
                all_right = False
                report.failures.append((case.name, f"test too large: {type(error).__name__}"))
                continue
            if verdict == test["valid"]:
                report.tests_right += 1
            else:
                all_right = False
                report.wrong.append((case.name, text, test["valid"], ""))
        report.passing += all_right
        report.per_case.append(
            (case.name, "compiled", len(case.tests), report.tests_right - right_before)
        )
    return report


def _token_walker_factory(report_masks: list[float]) -> Callable[[object, dict], object]:
    from backends.loading import load_default_tokenizer

    tokenizer = load_default_tokenizer()
    vocabulary = Vocabulary.from_tokenizer(tokenizer)
    return lambda schema, options: TokenWalker(schema, options, vocabulary, tokenizer, report_masks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.conformance", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("data", type=Path)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--skip", type=int, default=0, help="skip the first N schemas")
    parser.add_argument("--stride", type=int, default=1, help="take every K-th schema")
    parser.add_argument("--bytes", action="store_true", help="walk bytes over term derivatives")
    parser.add_argument("--errors-out", type=Path, default=None)
    parser.add_argument("--compile-budget", type=float, default=10.0)
    parser.add_argument("--whitespace-max", type=int, default=None)
    parser.add_argument("--by-file", action="store_true", help="also print a table per file")
    parser.add_argument("--peer", choices=("llguidance", "xgrammar"), default=None)
    args = parser.parse_args(argv)
    if args.peer:
        print(f"peer {args.peer}: not installed in this environment", file=sys.stderr)
        return 2
    cases = read_cases(args.data)
    picked = (
        c for i, c in enumerate(cases) if i >= args.skip and (i - args.skip) % args.stride == 0
    )
    selected = (c for i, c in enumerate(picked) if args.limit is None or i < args.limit)
    mask_times: list[float] = []
    make_walker = ByteWalker if args.bytes else _token_walker_factory(mask_times)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))
    report = run(
        selected,
        make_walker,
        compile_budget=args.compile_budget,
        whitespace_max=args.whitespace_max,
    )
    report.mask_times = mask_times
    print(report.table())
    if args.by_file:
        print(report.group_table())
    if args.errors_out:
        with open(args.errors_out, "w", encoding="utf-8") as out:
            for name, text, valid, _ in report.wrong:
                out.write(f"WRONG {'REJECT' if valid else 'ACCEPT'}\t{name}\t{text[:2000]}\n")
            for name, detail in report.failures:
                out.write(f"FAIL\t{name}\t{detail[:500]}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
