"""Own and total time per method of the compiled cold path (issue 15), by timers.

Sampling with frame-pointer stacks attributes mypyc code poorly here (most samples land
in CPython's functions, their compiled callers unseen), and cProfile sees only the calls
that cross into Python, not those between compiled methods. ``perf record --call-graph
dwarf`` does see the compiled methods (``CPyDef_...``) on each stack, without timers'
cost (``docs/design.md``, "Seventy-fourth session"), but not how many calls each
made. This script times a *copy* of the package instead: in a git worktree it wraps
each method of ``METHODS`` in a timer, and a stack of the children's times gives each
method its own time besides its total. The worktree is then built as usual, and
``report`` walks the MaskBench sample there (every valid instance, a fresh compile
each, the collector off; ``--leave-out`` drops the schemas whose name holds a text,
such as ``notnames9``, whose liveness searches take a third of the sample's time
alone) and prints the table.

    git worktree add /tmp/profiled HEAD
    .venv/bin/python scripts/compiled_profile.py instrument /tmp/profiled
    (cd /tmp/profiled && PYTHONPATH=. /work/main/.venv/bin/python scripts/build_native.py)
    .venv/bin/python scripts/compiled_profile.py report /tmp/profiled [--sample 200]
        [--leave-out notnames9]

The timers add about 0.4 µs a call (two calls into Python): read a method's own time
per call less that. Never run ``instrument`` on a checkout you work in: it rewrites the
sources in place.
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "store_automaton.py": (
        "StoreAutomaton",
        ("expand", "lexeme_split", "branches", "lexeme_key", "lexeme_state", "step",
         "join", "union", "is_live", "_row", "after", "lexeme_within", "lexeme_strings",
         "counting", "counted_states", "head_split", "_unbuilt_cat", "branch_parts",
         "branch_openings"),
    ),
    "term_store.py": (
        "TermStore",
        ("cat", "alt", "derivative", "byte_partition", "nullable", "first_bytes_over",
         "intersect", "finite_strings"),
    ),
    "store_decompose.py": (
        "StoreSplits",
        ("split_lexeme", "nested_split", "branch_terms", "_items_of_union", "branches_unbuilt",
         "_shared_heads_joined", "_behind_separator", "openings_unbuilt"),
    ),
    "row_walk.py": (
        "RowWalker",
        ("walk", "_root_walk", "_renumbered", "_below_walk", "_within_walk",
         "_counted_walk", "_literal_walk", "_walk", "target", "_keys_walked_together",
         "_finite_walk", "_union_state", "joined", "_by_first_bytes", "_lexeme_walk_each",
         "_through_lexeme", "_taken_apart", "_below", "_plain", "_below_each",
         "_in_trie_order", "_literal_tokens", "_down_strings", "_one_string", "_branch_items"),
    ),
    "index_core.py": ("IndexCore", ("_build_row", "next_state", "bitmask")),
    "byte_table.py": ("ByteTable", ("expand",)),
    "token_row.py": ("TokenRow", ("__init__", "items_of", "merged")),
    "lexeme_cache.py": ("LexemeWalkCache", ("get", "put")),
    "json_schema/objects.py": ("ObjectShape", ("__call__",)),
}  # fmt: skip
"""Per module of ``fsm``: the class whose methods are timed, and those methods."""

TIMERS = '''"""Timers written by scripts/compiled_profile.py (a profiling copy only)."""

from time import perf_counter_ns

TIMES: dict[str, list[int]] = {}
"""Per method: own ns, total ns, calls."""
CHILDREN: list[int] = [0]


def begin() -> int:
    CHILDREN.append(0)
    return perf_counter_ns()


def end(name: str, start: int) -> None:
    elapsed = perf_counter_ns() - start
    child = CHILDREN.pop()
    CHILDREN[-1] += elapsed
    entry = TIMES.setdefault(name, [0, 0, 0])
    entry[0] += elapsed - child
    entry[1] += elapsed
    entry[2] += 1
'''

IMPORTS = (
    "from fsm._timers import begin as _timer_begin\nfrom fsm._timers import end as _timer_end\n"
)


def timed_source(source: str, cls: str, methods: tuple[str, ...]) -> str:
    """``source`` with each of ``cls``'s ``methods`` renamed ``_timed_<name>`` and a
    method of the old name and signature that times a call to it."""
    lines = source.split("\n")
    tree = ast.parse(source)
    (klass,) = (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    found = [n for n in klass.body if isinstance(n, ast.FunctionDef) and n.name in methods]
    missing = set(methods) - {n.name for n in found}
    if missing:
        raise ValueError(f"{cls} has no method {', '.join(sorted(missing))}")
    for node in sorted(found, key=lambda n: n.lineno, reverse=True):
        first = (node.decorator_list[0] if node.decorator_list else node).lineno - 1
        signature = lines[node.lineno - 1 : node.body[0].lineno - 1]
        arguments = [a.arg for a in node.args.args[1:]]
        arguments += [f"{a.arg}={a.arg}" for a in node.args.kwonlyargs]
        call = f"self._timed_{node.name}({', '.join(arguments)})"
        returns_none = isinstance(node.returns, ast.Constant) and node.returns.value is None
        body = (
            [f"        {call}", f"        _timer_end('{cls}.{node.name}', _start)"]
            if returns_none
            else [
                f"        _result = {call}",
                f"        _timer_end('{cls}.{node.name}', _start)",
                "        return _result",
            ]
        )
        lines[node.lineno - 1] = lines[node.lineno - 1].replace(
            f"def {node.name}(", f"def _timed_{node.name}(", 1
        )
        lines[first:first] = [*signature, "        _start = _timer_begin()", *body, ""]
    timed = "\n".join(lines)
    future = "from __future__ import annotations\n"
    return timed.replace(future, future + "\n" + IMPORTS, 1)


def instrument(tree: Path) -> None:
    """Rewrites ``tree``'s ``fsm`` modules of ``METHODS`` with timers, and adds the
    timers' module."""
    if not (tree / ".git").is_file():
        raise SystemExit(f"{tree} is not a git worktree: instrument a copy, never a checkout")
    package = tree / "fsm"
    for module, (cls, methods) in METHODS.items():
        path = package / module
        path.write_text(timed_source(path.read_text(), cls, methods))
    (package / "_timers.py").write_text(TIMERS)


def child(sample: int, leave_out: list[str]) -> None:
    """In the worktree: the sample walked, then the timers as JSON on stdout."""
    sys.path[:0] = [".", "benchmarks"]
    from cold_masks import _warm_up_request
    from fsm_compile import _encode, _tokenizer, maskbench_sample

    import fsm
    from fsm import _timers  # type: ignore[attr-defined]

    tokenizer = _tokenizer()
    vocabulary = fsm.Vocabulary.from_tokenizer(tokenizer)
    warm = _warm_up_request(tokenizer)
    index = fsm.compile_index(fsm.JsonSchema(warm["source"]), vocabulary)
    state = index.initial_state
    for token in warm["instances"][0]:
        index.bitmask(state)
        state = index.next_state(state, token)
    _timers.TIMES.clear()
    gc.freeze()
    walked = 0.0
    for entry in maskbench_sample(sample):
        if any(text in entry["name"] for text in leave_out):
            continue
        for test in (t for t in entry["tests"] if t["valid"]):
            tokens = _encode(tokenizer, test["data"], "json")
            gc.collect()
            gc.disable()
            start = time.perf_counter_ns()
            try:
                index = fsm.compile_index(fsm.JsonSchema(entry["schema"]), vocabulary)
                state = index.initial_state
                for token in tokens:
                    index.bitmask(state)
                    state = index.next_state(state, token)
            except fsm.FsmError:
                pass
            finally:
                walked += time.perf_counter_ns() - start
                gc.enable()
    print(json.dumps({"native": bool(fsm.NATIVE), "walked": walked, "times": _timers.TIMES}))


def report(tree: Path, sample: int, leave_out: list[str]) -> str:
    """The table of ``tree``'s timers over the sample, own time first."""
    result = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "child",
            str(tree),
            "--sample",
            str(sample),
            *(f"--leave-out={text}" for text in leave_out),
        ],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(result.stdout.strip().splitlines()[-1])
    rows = sorted(found["times"].items(), key=lambda item: -item[1][0])
    lines = [
        f"Compiled: {found['native']}. Compile + walk of the sample: "
        f"{found['walked'] / 1e6:,.0f} ms (timers included).",
        "",
        "| method | own (ms) | total (ms) | calls | own per call (µs) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, (own, total, calls) in rows:
        lines.append(
            f"| {name} | {own / 1e6:,.0f} | {total / 1e6:,.0f} | {calls:,} | {own / calls / 1e3:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("instrument", "report", "child"))
    parser.add_argument("tree", type=Path, help="a git worktree of this repository")
    parser.add_argument("--sample", type=int, default=200, help="MaskBench-dev schemas")
    parser.add_argument(
        "--leave-out", action="append", default=[], help="skip schemas whose name holds this"
    )
    args = parser.parse_args()
    if args.action == "instrument":
        instrument(args.tree.resolve())
    elif args.action == "report":
        print(report(args.tree.resolve(), args.sample, args.leave_out))
    else:
        child(args.sample, args.leave_out)


if __name__ == "__main__":
    main()
