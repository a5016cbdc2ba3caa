"""Which terms lie on reference cycles (issue 15): what stands between the terms and
compiled classes without the collector's header.

A compiled class marked acyclic has no header for Python's cyclic collector, so the
collector neither scans its objects (the gain: a walk's terms are most of what it
scans) nor frees a cycle that passes through one (the price: such a cycle leaks). This
script counts the cycles the terms make, over the MaskBench sample of ``cold_masks.py``
(seed 0, each schema's first valid instance, after the benchmark's warm-up walk):

* **Garbage** (default): each schema compiled, walked and dropped twice with the
  collector off (the first fills the process's shared memos), then one collection
  keeps what it frees (``gc.DEBUG_SAVEALL``): the objects only the collector could
  free, their strongly connected components, and how many of those hold no thunk.
* **Alive** (``--alive N``): the first N instances' indexes kept, then every term in
  the process: how many hold no thunk below them (``thunk_free``), and the strongly
  connected components of everything tracked that hold such a term. Untracking only
  thunk-free terms would be safe if there were none.

    .venv/bin/python benchmarks/term_cycles.py [--sample 200] [--alive 80]
        [--leave-out notnames9]
"""

from __future__ import annotations

import argparse
import gc
import json
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from _common import command_line, markdown_table, run_header
from walk_parts import _setup, _walk

import fsm
from fsm import terms
from fsm.compiler import automaton_of
from fsm.token_index import TokenIndex


def strongly_connected(successors: Mapping[Hashable, Sequence[Hashable]]) -> list[list[Hashable]]:
    """The strongly connected components of a graph that are cycles: more than one node,
    or one node with an edge to itself (Tarjan's algorithm, iterative: the graphs are a
    whole process's objects). Successors outside the mapping are ignored."""
    number: dict[Hashable, int] = {}
    low: dict[Hashable, int] = {}
    on_stack: set[Hashable] = set()
    stack: list[Hashable] = []
    found: list[list[Hashable]] = []
    for root in successors:
        if root in number:
            continue
        number[root] = low[root] = len(number)
        stack.append(root)
        on_stack.add(root)
        frames = [(root, iter(successors[root]))]
        while frames:
            node, edges = frames[-1]
            for nxt in edges:
                if nxt not in successors:
                    continue
                if nxt not in number:
                    number[nxt] = low[nxt] = len(number)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    frames.append((nxt, iter(successors[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], number[nxt])
            else:
                frames.pop()
                if frames:
                    parent = frames[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == number[node]:
                    component = _popped_to(node, stack, on_stack)
                    if len(component) > 1 or node in successors[node]:
                        found.append(component)
    return found


def _popped_to(node: Hashable, stack: list[Hashable], on_stack: set[Hashable]) -> list[Hashable]:
    """The nodes of ``stack`` down to ``node``, taken off it: one component."""
    component = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
        if member == node:
            return component


def object_graph(objects: Iterable[object]) -> tuple[dict[int, object], dict[int, list[int]]]:
    """``objects`` by id, and each one's referents among them (``gc.get_referents``)."""
    by_id = {id(item): item for item in objects}
    edges = {
        key: [id(referent) for referent in gc.get_referents(item) if id(referent) in by_id]
        for key, item in by_id.items()
    }
    return by_id, edges


def sub_terms(term: terms.Term) -> list[terms.Term]:
    """The terms a term holds as its value or as a promise about it (not its memos)."""
    if isinstance(term, terms.Cat):
        held = list(term.items)
        return held if term._rest is None else [*held, term._rest]
    if isinstance(term, (terms.Alt, terms.And)):
        return list(term.items)
    if isinstance(term, (terms.Not, terms.Repeat)):
        return [term.item]
    if isinstance(term, terms.Lexeme):
        promised = [t for t in (term.within, term.bound) if t is not None]
        return [term.item, *promised, *(term.inner_split or ())]
    return []


def thunk_free(term: terms.Term, known: dict[int, bool]) -> bool:
    """Whether no thunk lies below ``term`` (``known``: answers so far, by id). Without
    thunks the sub-term edges go from newer terms to older ones, so they make no cycle
    and the recursion ends."""
    answer = known.get(id(term))
    if answer is None:
        if isinstance(term, terms.Thunk):
            answer = False
        else:
            answer = all(thunk_free(item, known) for item in sub_terms(term))
        known[id(term)] = answer
    return answer


def garbage_of(walk: Callable[[], object]) -> list[object]:
    """What only the cyclic collector frees once ``walk`` (which builds and walks an
    index, dropped with whatever it returns) is done; the collector off meanwhile."""
    gc.collect()
    gc.disable()
    try:
        walk()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = list(gc.garbage)
        gc.garbage.clear()
    finally:
        gc.set_debug(0)
        gc.enable()
    return left


def garbage_census(garbage: list[object]) -> dict[str, Any]:
    """The garbage's size, its cycles, and those holding no thunk."""
    by_id, edges = object_graph(garbage)
    components = strongly_connected(edges)
    without = [c for c in components if not any(isinstance(by_id[i], terms.Thunk) for i in c)]
    kinds = Counter(type(item).__name__ for item in garbage)
    return {
        "objects": len(garbage),
        "cycles": len(components),
        "cycles without a thunk": len(without),
        "kinds": dict(kinds.most_common(6)),
    }


def alive_census() -> dict[str, Any]:
    """The terms alive now, the thunk-free ones, and the tracked cycles holding any."""
    objects = gc.get_objects()
    with warnings.catch_warnings():  # isinstance on a deprecated module attribute warns
        warnings.simplefilter("ignore")
        alive = [item for item in objects if isinstance(item, terms.Term)]
    known: dict[int, bool] = {}
    free = [term for term in alive if thunk_free(term, known)]
    by_id, edges = object_graph(objects)
    holding = [
        component
        for component in strongly_connected(edges)
        if any(known.get(i, False) for i in component)  # ``known`` holds the terms alone
    ]
    kinds = Counter(type(term).__name__ for term in free)
    return {
        "terms": len(alive),
        "thunk-free": len(free),
        "thunk-free kinds": dict(kinds.most_common(6)),
        "cycles holding thunk-free terms": len(holding),
    }


def _first_instances(work: list[tuple[dict, list[int]]]) -> list[tuple[dict, list[int]]]:
    """Each schema once, with its first valid instance's tokens."""
    first: dict[str, tuple[dict, list[int]]] = {}
    for schema, tokens in work:
        first.setdefault(json.dumps(schema, sort_keys=True), (schema, tokens))
    return list(first.values())


def _build_and_walk(schema: dict, tokens: list[int], vocabulary: fsm.Vocabulary) -> Any:
    """The schema's index over object terms after its walk; None where it is refused.
    (``fsm.compile_index`` walks a store's rows, which make no cycles of terms.)"""
    try:
        index = TokenIndex(automaton_of(fsm.JsonSchema(schema)), vocabulary)
        _walk(index, tokens)
    except fsm.FsmError:
        return None
    return index


GARBAGE_COLUMNS = ("objects", "cycles", "cycles without a thunk", "kinds")
"""The columns of ``garbage_table`` after the schema's number (``garbage_census``)."""


def garbage_table(instances: list[tuple[dict, list[int]]], vocabulary: fsm.Vocabulary) -> str:
    """The schemas whose dropped index leaves cyclic garbage, and the totals."""
    rows, totals = [], Counter()
    for number, (schema, tokens) in enumerate(instances):
        walk = partial(_build_and_walk, schema, tokens, vocabulary)
        garbage_of(walk)  # the first walk fills the process's shared memos
        census = garbage_census(garbage_of(walk))
        if census["objects"]:
            totals.update(schemas=1, objects=census["objects"], cycles=census["cycles"])
            totals["without"] += census["cycles without a thunk"]
            rows.append([number, *(census[key] for key in GARBAGE_COLUMNS)])
    return (
        markdown_table(["schema", *GARBAGE_COLUMNS], rows)
        + f"\n\n{totals['schemas']} of {len(instances)} schemas leave cyclic garbage: "
        f"{totals['objects']} objects, {totals['cycles']} cycles, {totals['without']} of "
        "them without a thunk."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--alive", type=int, default=0, help="keep N indexes, then count")
    parser.add_argument("--leave-out", action="append", default=[])
    args = parser.parse_args()
    vocabulary, work = _setup(args.sample, args.leave_out)
    instances = _first_instances(work)
    print(run_header(command_line()))
    if args.alive:
        kept = [_build_and_walk(s, t, vocabulary) for s, t in instances[: args.alive]]
        census = alive_census()
        print(f"{sum(index is not None for index in kept)} indexes alive: {census}")
        return
    print(garbage_table(instances, vocabulary))


if __name__ == "__main__":
    main()
