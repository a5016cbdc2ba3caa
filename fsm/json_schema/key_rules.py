"""Applicators that only require keys, read as conditions on an object's key set.

``"oneOf": [{"required": ["card"]}, {"required": ["iban"]}]`` says which keys an object
may hold together. Compiled as written it is an intersection with a complement
(exactly one branch), and every state inside the object is then an intersection whose
liveness must be searched. Read as a condition on the set of keys used, it is checked
where the object closes, like ``required``, and the object stays a plain term.

A branch qualifies when it is an object holding only ``required`` (a list of strings)
and annotations. On objects: ``oneOf`` holds when exactly one branch's keys are all
present, ``anyOf`` when at least one's are, ``not`` when its keys are not all present,
``allOf`` when every branch's are. On other values each branch holds (``required``
applies to objects only), so ``anyOf`` and ``allOf`` hold, and ``oneOf`` with two
branches or more and ``not`` do not: those restrict the node to objects.

Adding a key can break ``oneOf`` and ``not``, so an object body must know whether the
keys used so far can still be completed (``completable``): otherwise a state that can
never close would look live.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples", "default"})

_WITH_KEY_SETS = ("maxProperties", "oneOf", "anyOf", "allOf", "not")
"""Keywords that decide, with a node's dependencies, which key sets close an object."""

MAX_RULE_KEYS = 12
"""Keys the rules of one node may name; beyond, the completability check (over subsets
of them) would cost too much and the applicators compile as written."""


@dataclass(frozen=True)
class KeyRule:
    """``kind``: "one" (exactly one group present), "any" (at least one), "all" (every
    group), "not" (the single group not all present)."""

    kind: str
    groups: tuple[frozenset[str], ...]

    def holds(self, keys: frozenset[str]) -> bool:
        present = sum(group <= keys for group in self.groups)
        if self.kind == "one":
            return present == 1
        if self.kind == "any":
            return present >= 1
        if self.kind == "all":
            return present == len(self.groups)
        return present == 0  # "not"

    def refuses_non_objects(self) -> bool:
        return self.kind == "not" or (self.kind == "one" and len(self.groups) > 1)


def fold_key_rules(node: dict) -> tuple[dict, tuple[KeyRule, ...]]:
    """``node`` without its applicators that only require keys, and those as rules;
    the node is restricted to objects when a rule refuses other values. Unchanged (and
    no rules) when nothing qualifies or the rules cannot be folded safely."""
    rules: list[KeyRule] = []
    folded = dict(node)
    for keyword, kind in (("oneOf", "one"), ("anyOf", "any"), ("allOf", "all")):
        groups = _groups(node.get(keyword))
        if groups is not None:
            rules.append(KeyRule(kind, groups))
            del folded[keyword]
    negated = _groups([node["not"]]) if isinstance(node.get("not"), dict) else None
    if negated is not None:
        rules.append(KeyRule("not", negated))
        del folded["not"]
    if not rules or "maxProperties" in node:
        return node, ()
    if len(rule_keys(tuple(rules))) > MAX_RULE_KEYS:
        return node, ()
    if any(rule.refuses_non_objects() for rule in rules):
        declared = node.get("type")
        if declared is None or (isinstance(declared, list) and "object" in declared):
            folded["type"] = "object"
        elif declared != "object":
            return node, ()
    return folded, tuple(rules)


def _groups(branches: object) -> tuple[frozenset[str], ...] | None:
    if not isinstance(branches, list) or not branches:
        return None
    groups = []
    for branch in branches:
        required = _required_only(branch)
        if required is None:
            return None
        groups.append(frozenset(required))
    return tuple(groups)


def _required_only(node: object) -> list[str] | None:
    """The keys a schema requires when that is all it says (annotations aside), as
    ``{"required": ["a", "b"]}``; None for any other schema."""
    if not isinstance(node, dict) or not set(node) <= _ANNOTATIONS | {"required"}:
        return None
    required = node.get("required")
    if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
        return None
    return required


def rule_keys(rules: tuple[KeyRule, ...]) -> list[str]:
    """The keys the rules name, sorted."""
    return sorted(frozenset().union(*(g for rule in rules for g in rule.groups)))


def completable(
    rules: tuple[KeyRule, ...],
    used: frozenset[str],
    required: frozenset[str],
    addable: frozenset[str],
) -> bool:
    """Whether some key set ``used | required | more``, with ``more`` drawn from the
    ``addable`` keys, satisfies every rule (only the keys the rules name matter)."""
    named = frozenset(rule_keys(rules))
    base = (used | required) & named
    free = sorted((addable & named) - base)
    for size in range(len(free) + 1):
        for more in combinations(free, size):
            keys = base | frozenset(more)
            if all(rule.holds(keys) for rule in rules):
                return True
    return False


def dependencies_as_required(node: dict) -> dict:
    """``node`` with its dependent schemas that only require keys written as the key
    lists they mean (``dependentRequired``, or the list form of ``dependencies``).

    Compiled as written, ``"dependentSchemas": {"a": {"required": ["b"]}}`` is an
    intersection with a complement, and every state inside the object is then an
    intersection whose liveness must be searched; as a list it is checked where the
    object closes, and each key is offered only while its dependencies may still come
    (``fsm.json_schema.objects``). Left as written beside the keywords that also decide
    which key sets close (``_WITH_KEY_SETS``): the object body checks dependencies on
    their own."""
    if any(keyword in node for keyword in _WITH_KEY_SETS):
        return node
    as_schemas = _required_lists(node.get("dependentSchemas"))
    as_lists = _required_lists(node.get("dependencies"))
    if not as_schemas and not as_lists:
        return node
    changed = dict(node)
    if as_schemas:
        changed["dependentSchemas"] = {
            k: v for k, v in node["dependentSchemas"].items() if k not in as_schemas
        }
        declared = node.get("dependentRequired")
        merged = dict(declared) if isinstance(declared, dict) else {}
        for name, keys in as_schemas.items():
            known = merged.get(name)
            merged[name] = [*(known if isinstance(known, list) else []), *keys]
        changed["dependentRequired"] = merged
    if as_lists:
        changed["dependencies"] = {**node["dependencies"], **as_lists}
    return changed


def _required_lists(dependencies: object) -> dict[str, list[str]]:
    """The entries of a ``dependentSchemas`` / ``dependencies`` value that only require
    keys, as the keys they require."""
    if not isinstance(dependencies, dict):
        return {}
    lists = {name: _required_only(schema) for name, schema in dependencies.items()}
    return {name: keys for name, keys in lists.items() if keys is not None}
