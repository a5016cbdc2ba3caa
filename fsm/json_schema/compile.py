"""JSON Schema to byte term: one ``SchemaCompiler`` per root schema.

Each schema node (addressed by its JSON pointer) compiles once to the union, over the
JSON types it allows, of the term each type gets from the keywords that apply to it,
intersected with its applicators (``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``,
``if``/``then``/``else``, dependent schemas) and its ``const``/``enum``. Objects and
arrays are lazily expanded bodies, so recursion through ``$ref`` is exact: a
reference to a node still being compiled becomes a thunk, which is sound because an
object member or array item lies between (recursion that consumes no input raises
``UnsupportedSchema("$ref")``).
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from decimal import ROUND_CEILING, Decimal
from itertools import product
from typing import Generic, NamedTuple, TypeVar

from fsm.errors import InvalidSpec, UnsupportedRegex, UnsupportedSchema
from fsm.json_schema.arrays import ArrayShape, array_term
from fsm.json_schema.conditions import (
    OBJECTS_ONLY,
    Alternatives,
    Source,
    condition_alternatives,
    kinds_met,
    says_of_objects,
)
from fsm.json_schema.json_text import JsonText, encode_string
from fsm.json_schema.key_rules import (
    KeyRule,
    dependencies_as_required,
    fold_key_rules,
    rule_keys,
)
from fsm.json_schema.keywords import (
    APPLICATORS,
    KEYWORDS_OF_TYPE,
    REFUSED,
    TYPES,
    ignored_by_draft,
)
from fsm.json_schema.node_facts import (
    FIRST_BYTES,
    KINDS_OF_TYPE,
    MAX_MERGED,
    asserting,
    only_constrains_objects,
    only_objects,
    plain_object,
    within_first_bytes,
)
from fsm.json_schema.numbers import EXACT, NumberChecker
from fsm.json_schema.objects import ObjectShape, object_term
from fsm.json_schema.refs import RefResolver, draft_of, escape_token
from fsm.json_schema.strings import StringTerms, count
from fsm.json_schema.values import is_word, json_equal, value_in, values_except_in
from fsm.term_builder import TermBuilder

T = TypeVar("T")

KEY_ORDERS = ("any", "schema")
"""Object key orders a schema compiles to: any order, or the order of ``properties``."""

MAX_KEY_TESTS = 4
"""Pattern tests on an object's other keys taken both ways as a union of members (2**n
of them, each a key lexeme then its value); past that, their intersection."""


def ordered_keys(key_order: str) -> bool:
    """Whether ``key_order`` asks for schema order; InvalidSpec if it is not one of ours."""
    if key_order not in KEY_ORDERS:
        raise InvalidSpec(f"key_order must be one of {KEY_ORDERS}, got {key_order!r}")
    return key_order == "schema"


def _number(value: object) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


class SchemaCompiler(Generic[T]):
    """Compiles the nodes of one root schema to terms, each once, built by the builder
    of ``strings`` (``fsm.term_builder``): object terms (``OBJECT_STRINGS``) or a
    store's rows (``strings_in(StoredTerms(store))``), by the same code."""

    def __init__(
        self,
        schema: object,
        *,
        strings: StringTerms[T],
        whitespace_max: int,
        strict: bool,
        key_order: str = "any",
        extra_keys: bool = True,
        plain_integers: bool = False,
        schema_text: str | None = None,
    ) -> None:
        """``schema_text``: ``schema`` as JSON text, when the caller has it (``fsm.JsonSchema``
        keeps it): it names this compile's thunks (``uid``), and writing the schema out
        again, keys sorted, was about a twentieth of its compile (``docs/design.md``)."""
        if not isinstance(schema, (dict, bool)):
            raise InvalidSpec(
                f"a JSON schema is an object or a boolean, got {type(schema).__name__}"
            )
        self.draft = draft_of(schema)
        self.refs = RefResolver(schema, self.draft)
        self.ws_max = whitespace_max
        self.strict = strict
        self.ordered_keys = ordered_keys(key_order)
        # Generation defaults (see docs/json_schema.md): objects that declare properties
        # and say nothing of other keys are closed; integers are written without ".0".
        self.closing = not extra_keys
        self.plain_integers = plain_integers
        if schema_text is None:
            schema_text = json.dumps(schema, ensure_ascii=False)
        options = f"{whitespace_max} {strict} {key_order} {extra_keys} {plain_integers}\n"
        # Equal thunk keys mean equal terms, so the uid names the schema with its keys in
        # their own order: with key_order="schema" that order is part of what it means.
        self.uid = hashlib.sha256((options + schema_text).encode()).hexdigest()[:24]
        self.strings = strings
        self.pieces: JsonText[T] = strings.pieces
        self.terms: TermBuilder[T] = strings.terms
        self.any = self.pieces.any_value(whitespace_max)
        self._ignored = ignored_by_draft(self.draft)
        self._terms: dict[tuple[str, bool], T] = {}
        self._allowed: dict[str, list | None] = {}  # _allowed_constants by pointer
        self._active: dict[tuple[str, bool], int] = {}
        self._guards = 0

    # ------------------------------------------------------------------ nodes

    def root_term(self) -> T:
        return self.term_at("")

    def term_at(self, pointer: str, closed: bool | None = None) -> T:
        """The term of the node at ``pointer`` (compiled once per mode).

        ``closed``: whether objects that declare properties and say nothing of other
        keys are closed to them; None for a value position, which takes the
        compiler's default. In-place subschemas of a node that declares its own keys
        are compiled open (the node closes over the names they all declare)."""
        key = (pointer, self.closing if closed is None else closed)
        known = self._terms.get(key)
        if known is not None:
            return known
        if key in self._active:
            if self._guards > self._active[key]:
                return self.terms.thunk(("schema", self.uid, *key), lambda: self._terms[key])
            raise UnsupportedSchema("$ref", f"recursion at '#{pointer}' consumes no input")
        self._active[key] = self._guards
        try:
            term = self._node_term(self.refs.node_at(pointer), pointer, key[1])
        finally:
            del self._active[key]
        self._terms[key] = term
        return term

    @contextmanager
    def _guarded(self) -> Iterator[None]:
        """Inside an object member or array item: recursion from here consumes input."""
        self._guards += 1
        try:
            yield
        finally:
            self._guards -= 1

    def _refuse(self, keyword: str, detail: str, pointer: str) -> None:
        where = f"at '#{pointer}'"
        if self.strict:
            raise UnsupportedSchema(keyword, f"{detail} {where}" if detail else where)
        warnings.warn(
            f"ignoring unsupported JSON schema keyword {keyword!r} {where}: {detail}", stacklevel=2
        )

    def _refuse_refused(self, node: dict, pointer: str) -> None:
        """Refuses the keywords of ``node`` that are never compiled (``REFUSED``), in
        the schema's order: the first is the one an ``UnsupportedSchema`` names, the
        same in every run (a set's order follows the strings' hashes, which change
        from one process to the next)."""
        for keyword in node:
            if keyword in REFUSED:
                self._refuse(keyword, "", pointer)

    def _node_term(self, node: object, pointer: str, closed: bool = False) -> T:
        if node is True:
            return self.any
        if node is False:
            return self.terms.empty
        if not isinstance(node, dict):
            raise InvalidSpec(f"the schema at '#{pointer}' is not an object or a boolean")
        if self._ignored.intersection(node):
            node = {k: v for k, v in node.items() if k not in self._ignored}
        self._refuse_refused(node, pointer)
        parts: list[T] = []
        if isinstance(node.get("$ref"), str) and self.draft <= 7:
            return self.term_at(self.refs.resolve(node["$ref"], pointer), closed)
        node, key_rules = fold_key_rules(dependencies_as_required(node))
        closing = closed and _declares_keys(node)
        inner = closed and not closing  # in-place subschemas close only if this node doesn't
        names = self._closed_names(node, pointer) if closing else None
        merged = None if inner or key_rules else self._merged_objects(node, pointer, names)
        if merged is not None:
            return merged
        if isinstance(node.get("$ref"), str):
            parts.append(self.term_at(self.refs.resolve(node["$ref"], pointer), inner))
        typed = self._types_term(node, pointer, names, key_rules)
        parts.extend(self._applicator_parts(node, pointer, inner))
        narrowed = None if names or key_rules else self._typed_by_parts(node, parts)
        parts = narrowed if narrowed is not None else [*parts, *([] if typed is None else [typed])]
        if names is not None and not isinstance(node.get("properties"), dict):
            parts.append(self._keys_within(names, pointer))
        values = self._listed_values(node)
        if values is not None:
            return self._values_term(values, parts)
        if not parts:
            return self.any
        return self.terms.intersect(*parts)

    def _typed_by_parts(self, node: dict, parts: list[T]) -> list[T] | None:
        """``parts`` with one of them narrowed to the node's types, when its ``type``
        names types only (none of their keywords) and that part's values, or the
        branches of it kept, all start with a byte of those types (a JSON value's first
        byte tells its type, integers apart from other numbers); None when no part
        can be. The type then adds nothing, and intersecting with it would only cost
        liveness searches: ``{"type": "object", "allOf": [{"$ref": ...}]}``."""
        declared = node.get("type")
        types = [declared] if isinstance(declared, str) else declared
        if not isinstance(types, list) or not types or not set(types) <= set(TYPES):
            return None
        if any(KEYWORDS_OF_TYPE[t].intersection(node) for t in types):
            return None
        allowed = 0
        for name in types:
            allowed |= FIRST_BYTES.get(name, 0)
        undecided = FIRST_BYTES["number"] & ~allowed if "integer" in types else 0
        for position, part in enumerate(parts):
            try:
                kept = within_first_bytes(self.terms, part, allowed, undecided)
            except KeyError:  # the part recurses into a node still being compiled
                continue
            if kept is not None:
                return [*parts[:position], kept, *parts[position + 1 :]]
        return None

    def _values_term(self, values: list, parts: list[T]) -> T:
        """The listed values that meet ``parts``: a string, boolean or null value has
        one writing, so it is checked now; other values are intersected. Values that
        are all such words make a lexeme (no writing of one extends another's), so
        "whitespace, then one of them" is walked as one shared lexeme."""
        b = self.terms
        options = []
        words = True
        for value in values:
            term = value_in(self.pieces, value, self.ws_max)
            if isinstance(value, (str, bool)) or value is None:
                text = json.dumps(value, ensure_ascii=False).encode()
                try:
                    if all(b.matches(part, text) for part in parts):
                        options.append(term)
                    continue
                except KeyError:  # a part recurses into a node still being compiled
                    pass
            words = False
            options.append(b.intersect(term, *parts))
        return b.lexeme(b.alt(*options)) if words else b.alt(*options)

    def _applicator_parts(self, node: dict, pointer: str, closed: bool) -> list[T]:
        """Terms of the in-place applicators; ``not`` and ``if`` are tests of the same
        instance, never generated, so they are always compiled open."""
        b = self.terms
        parts: list[T] = []
        for i, _ in enumerate(node.get("allOf") or ()):
            parts.append(self.term_at(f"{pointer}/allOf/{i}", closed))
        if isinstance(node.get("anyOf"), list):
            branches = range(len(node["anyOf"]))
            parts.append(b.alt(*(self.term_at(f"{pointer}/anyOf/{i}", closed) for i in branches)))
        if isinstance(node.get("oneOf"), list):
            parts.append(self._one_of(node["oneOf"], pointer, closed, only_objects(node)))
        if "not" in node:
            parts.append(b.intersect(self.any, b.complement(self.term_at(f"{pointer}/not", False))))
        if "if" in node and ("then" in node or "else" in node):
            condition = self.term_at(f"{pointer}/if", False)
            then = self.term_at(f"{pointer}/then", closed) if "then" in node else self.any
            otherwise = self.term_at(f"{pointer}/else", closed) if "else" in node else self.any
            parts.append(_conditional(b, condition, then, otherwise))
        for name, dependent in self._dependent_schemas(node, pointer):
            has = self._node_term(_holding(name), f"{dependent}/@has")
            parts.append(_conditional(b, has, self.term_at(dependent, closed), self.any))
        return parts

    def _dependent_schemas(self, node: dict, pointer: str) -> list[tuple[str, str]]:
        """(key, pointer of its schema) per dependent schema of ``node``: the schema
        applies to an object holding the key, and to no other value."""
        found = []
        for keyword in ("dependentSchemas", "dependencies"):
            for name, value in (node.get(keyword) or {}).items():
                if isinstance(value, (dict, bool)):
                    found.append((name, f"{pointer}/{keyword}/{escape_token(name)}"))
        return found

    # ------------------------------------------------------------------ closing

    def _closed_names(self, node: dict, pointer: str) -> frozenset[str] | None:
        """Every property name ``node`` and its in-place subschemas declare (through
        ``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``then``/``else`` and dependent
        schemas), or None when one of them opens the object explicitly (then the node
        stays open, as its author asked) or none declares any."""
        names: set[str] = set()
        declared = False
        seen: set[str] = set()
        stack: list[tuple[object, str]] = [(node, pointer)]
        while stack:
            current, where = stack.pop()
            if not isinstance(current, dict) or where in seen:
                continue
            seen.add(where)
            if _opens_keys(current):
                return None
            if isinstance(current.get("properties"), dict):
                names.update(current["properties"])
                declared = True
            names.update(r for r in current.get("required") or () if isinstance(r, str))
            if isinstance(current.get("$ref"), str):
                target = self.refs.resolve(current["$ref"], where)
                stack.append((self.refs.node_at(target), target))
            for keyword in ("allOf", "anyOf", "oneOf"):
                branches = current.get(keyword)
                for i, branch in enumerate(branches if isinstance(branches, list) else ()):
                    stack.append((branch, f"{where}/{keyword}/{i}"))
            for keyword in ("then", "else"):
                if keyword in current:
                    stack.append((current[keyword], f"{where}/{keyword}"))
            for _, dependent in self._dependent_schemas(current, where):
                stack.append((self.refs.node_at(dependent), dependent))
        return frozenset(names) if declared else None

    def _keys_within(self, names: frozenset[str], pointer: str) -> T:
        """Any value, but an object only with keys among ``names`` (each at most once)."""
        shape = ObjectShape(
            key=(self.uid, pointer, "closed"),
            named=tuple((name, self.any) for name in sorted(names)),
            ws_max=self.ws_max,
            pieces=self.pieces,
        )
        pieces = self.pieces
        return self.terms.alt(
            pieces.null,
            pieces.boolean,
            pieces.number,
            pieces.any_string,
            pieces.any_array(self.ws_max),
            object_term(shape),
        )

    # ------------------------------------------------------------------ oneOf

    def _one_of(self, branches: list, pointer: str, closed: bool, on_objects: bool) -> T:
        """``oneOf`` as a union when no instance can meet two branches, else each branch
        less the others (an intersection with a complement: exact, but every state of
        it needs a liveness search). ``on_objects``: the node holding it admits only
        objects, so the branches need to be disjoint on objects only."""
        pointers = [f"{pointer}/oneOf/{i}" for i in range(len(branches))]
        terms = [self.term_at(at, closed) for at in pointers]
        b = self.terms
        if len(terms) == 1:
            return terms[0]
        if self._pairwise_disjoint(terms, pointers, on_objects):
            return b.alt(*terms)
        objects = self._object_branches(pointers, closed)
        if objects is not None:
            return b.alt(*objects)
        return b.alt(
            *(
                b.intersect(t, b.complement(b.alt(*(terms[:i] + terms[i + 1 :]))))
                for i, t in enumerate(terms)
            )
        )

    def _pairwise_disjoint(self, terms: list[T], pointers: list[str], on_objects: bool) -> bool:
        try:
            masks = [self.terms.first_bytes(t) for t in terms]
        except KeyError:  # a branch recurses into a node still being compiled
            return False
        for i in range(len(terms)):
            for j in range(i):
                if masks[i] & masks[j] and not self._discriminated(
                    pointers[i], pointers[j], on_objects
                ):
                    return False
        return True

    def _object_branches(self, pointers: list[str], closed: bool) -> list[T] | None:
        """The branches as objects only, when each only constrains objects (so every
        non-object meets all of them, and fails ``oneOf``: there are two or more) and
        no object meets two of them (``_discriminated``); None otherwise. Exact: the
        ``oneOf`` is then the union of its branches' objects."""
        found = [self.resolved(at, exact=True) for at in pointers]
        nodes = [(node, at) for node, at in found if isinstance(node, dict)]
        if len(nodes) < len(found) or not all(only_constrains_objects(n) for n, _ in nodes):
            return None
        for i in range(len(pointers)):
            for j in range(i):
                if not self._discriminated(pointers[i], pointers[j], on_objects=True):
                    return None
        return [self._node_term({**node, "type": "object"}, at, closed) for node, at in nodes]

    def _discriminated(self, a: str, b: str, on_objects: bool) -> bool:
        """Both branches require one key whose values cannot agree (listed values in
        one that the other's listed values, or its schema for the key, refuse), so no
        object meets both; they must also admit only objects unless ``on_objects``
        (the instance is known to be one)."""
        (first, a), (second, b) = self.resolved(a), self.resolved(b)
        if not (isinstance(first, dict) and isinstance(second, dict)):
            return False
        for name in set(first.get("required") or ()) & set(second.get("required") or ()):
            if self._values_differ(first, a, second, b, name):
                return on_objects or (only_objects(first) and only_objects(second))
        return False

    def _values_differ(self, first: dict, a: str, second: dict, b: str, name: str) -> bool:
        """No value of key ``name`` is allowed by both nodes' ``properties``."""
        x = self._constants(first, a, name)
        y = self._constants(second, b, name)
        if x is not None and y is not None:
            return not any(json_equal(u, v) for u in x for v in y)
        if x is not None:
            listed, node, at = x, second, b
        elif y is not None:
            listed, node, at = y, first, a
        else:
            return False
        props = node.get("properties")
        if not isinstance(props, dict) or name not in props:
            return False
        term = self.term_at(f"{at}/properties/{escape_token(name)}")
        try:
            return not any(
                self.terms.matches(term, json.dumps(v, ensure_ascii=False).encode()) for v in listed
            )
        except KeyError:  # the schema recurses into a node still being compiled
            return False

    def resolved(self, pointer: str, exact: bool = False) -> tuple[object, str]:
        """The node at ``pointer`` after following ``$ref`` chains, and its pointer;
        ``exact``: only through references that say nothing else (a ``$ref`` beside
        other assertions, from draft 2019-09 on, is returned as it is)."""
        node = self.refs.node_at(pointer)
        for _ in range(32):
            if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
                break
            if exact and self.draft > 7 and asserting(node) - {"$ref"}:
                break
            pointer = self.refs.resolve(node["$ref"], pointer)
            node = self.refs.node_at(pointer)
        return node, pointer

    def _constants(self, node: dict, pointer: str, name: str) -> list | None:
        props = node.get("properties")
        if not isinstance(props, dict) or name not in props:
            return None
        target, _ = self.resolved(f"{pointer}/properties/{escape_token(name)}")
        return self._listed_values(target) if isinstance(target, dict) else None

    def _listed_values(self, node: dict) -> list | None:
        """The values ``const`` and ``enum`` allow (both given: those in both), or None
        when the node lists none."""
        values = node["enum"] if isinstance(node.get("enum"), list) else None
        if "const" in node and "const" not in self._ignored:
            const = node["const"]
            allowed = values is None or any(json_equal(const, v) for v in values)
            values = [const] if allowed else []
        return values

    # ------------------------------------------------------------------ types

    def _types_term(
        self,
        node: dict,
        pointer: str,
        closed_names: frozenset[str] | None = None,
        key_rules: tuple[KeyRule, ...] = (),
    ) -> T | None:
        """The union over the allowed types; None when every value is allowed."""
        declared = node.get("type")
        if declared is None or declared == "any":
            if not key_rules and not any(KEYWORDS_OF_TYPE[t].intersection(node) for t in TYPES):
                return None
            types = [t for t in TYPES if t != "integer"]
        else:
            types = [declared] if isinstance(declared, str) else list(declared)
            unknown = [t for t in types if t not in TYPES and t != "any"]
            if unknown:
                raise InvalidSpec(f"unknown type {unknown[0]!r} at '#{pointer}'")
            if "any" in types:
                types = [t for t in TYPES if t != "integer"]
            if "number" in types:
                types = [t for t in types if t != "integer"]
        return self.terms.alt(
            *(
                self._type_term(t, node, pointer, closed_names, key_rules)
                for t in dict.fromkeys(types)
            )
        )

    def _type_term(
        self,
        name: str,
        node: dict,
        pointer: str,
        closed_names: frozenset[str] | None,
        key_rules: tuple[KeyRule, ...],
    ) -> T:
        if name == "null":
            return self.pieces.null
        if name == "boolean":
            return self.pieces.boolean
        if name in ("integer", "number"):
            return self._number_term(node, integer=name == "integer")
        if name == "string":
            return self.strings.string_term(node, lambda k, d: self._refuse(k, d, pointer))
        if name == "array":
            return self._array_term(node, pointer)
        return self._object_term(node, pointer, closed_names, key_rules)

    def _number_term(self, node: dict, *, integer: bool) -> T:
        low, low_excl = _lower_bound(node)
        high, high_excl = _upper_bound(node)
        step = _number(node.get("multipleOf"))
        if step is not None and step <= 0:
            step = None
        if _no_value_between(low, low_excl, high, high_excl, Decimal(1) if integer else None):
            return self.terms.empty
        if step is not None and _no_value_between(low, low_excl, high, high_excl, step):
            return self.terms.empty
        if low is None and high is None and step is None:
            pieces = self.pieces
            if not integer:
                return pieces.number
            plain = self.draft <= 4 or self.plain_integers
            return pieces.integer_literal if plain else pieces.integral_number
        checker = NumberChecker(
            minimum=low,
            exclusive_minimum=low_excl,
            maximum=high,
            exclusive_maximum=high_excl,
            multiple_of=step,
            integer=integer,
            integer_syntax=integer and (self.draft <= 4 or self.plain_integers),
        )
        return self.terms.checked(checker)

    # ------------------------------------------------------------------ arrays

    def _array_term(self, node: dict, pointer: str) -> T:
        if not any(k in node for k in KEYWORDS_OF_TYPE["array"]):
            return self.pieces.any_array(self.ws_max)
        with self._guarded():
            prefix, rest_pointer = self._item_pointers(node, pointer)
            prefix_terms = tuple(self.term_at(p) for p in prefix)
            rest = self.term_at(rest_pointer) if rest_pointer else self.any
            contains = self.term_at(f"{pointer}/contains") if "contains" in node else None
        min_items = count(node.get("minItems"), 0)
        max_items = count(node.get("maxItems"), None)
        min_contains = count(node.get("minContains"), 1)
        max_contains = count(node.get("maxContains"), None)
        if contains is not None and min_contains == 0 and max_contains is None:
            contains = None
        unique = None
        if node.get("uniqueItems") is True and not (max_items is not None and max_items <= 1):
            unique = self._unique_values(node, pointer, prefix, rest_pointer, contains)
        shape = ArrayShape(
            key=(self.uid, pointer),
            prefix=prefix_terms,
            rest=rest,
            min_items=min_items,
            max_items=max_items,
            contains=contains,
            min_contains=min_contains,
            max_contains=max_contains,
            unique_values=unique,
            ws_max=self.ws_max,
            pieces=self.pieces,
        )
        return array_term(shape)

    def _item_pointers(self, node: dict, pointer: str) -> tuple[list[str], str | None]:
        """Pointers of the positional item schemas and of the schema of later items."""
        if isinstance(node.get("prefixItems"), list):
            prefix = [f"{pointer}/prefixItems/{i}" for i in range(len(node["prefixItems"]))]
            return prefix, f"{pointer}/items" if "items" in node else None
        if isinstance(node.get("items"), list):
            prefix = [f"{pointer}/items/{i}" for i in range(len(node["items"]))]
            return prefix, f"{pointer}/additionalItems" if "additionalItems" in node else None
        return [], f"{pointer}/items" if "items" in node else None

    def _unique_values(
        self, node: dict, pointer: str, prefix: list[str], rest: str | None, contains: T | None
    ) -> tuple[T, ...] | None:
        values = self._finite_values(rest) if rest and not prefix and contains is None else None
        if values is None:
            self._refuse("uniqueItems", "items are not from a finite set of values", pointer)
            return None
        distinct: list = []
        for value in values:
            if not any(json_equal(value, seen) for seen in distinct):
                distinct.append(value)
        return tuple(value_in(self.pieces, v, self.ws_max) for v in distinct)

    def _finite_values(self, pointer: str) -> list | None:
        node, _ = self.resolved(pointer)
        if node is False:
            return []
        if not isinstance(node, dict):
            return None
        listed = self._listed_values(node)
        if listed is not None:
            return listed
        declared = node.get("type")
        types = [declared] if isinstance(declared, str) else declared
        if isinstance(types, list) and set(types) <= {"boolean", "null"}:
            return [v for t in types for v in ((True, False) if t == "boolean" else (None,))]
        return None

    # ------------------------------------------------------------------ objects

    def _object_term(
        self,
        node: dict,
        pointer: str,
        closed_names: frozenset[str] | None = None,
        key_rules: tuple[KeyRule, ...] = (),
    ) -> T:
        """``closed_names``: when the node is closed, every key an object may have (its
        own properties and those its in-place subschemas declare); ``key_rules``: its
        applicators that only require keys (``fsm.json_schema.key_rules``)."""
        b = self.terms
        if not key_rules and not any(k in node for k in KEYWORDS_OF_TYPE["object"]):
            return self.pieces.any_object(self.ws_max)
        props = node.get("properties")
        if not isinstance(props, dict):
            props = {}
        required = (
            [r for r in node.get("required") or () if isinstance(r, str)]
            if isinstance(node.get("required"), list)
            else []
        )
        dependent = self._dependent_required(node)
        additional_pointer = self._additional_pointer(node, pointer)
        with self._guarded():
            values = {k: self.term_at(f"{pointer}/properties/{escape_token(k)}") for k in props}
            patterns = self._pattern_terms(node, pointer)
            additional = self.term_at(additional_pointer) if additional_pointer else self.any
            names = self.term_at(f"{pointer}/propertyNames") if "propertyNames" in node else None
        named_keys = list(
            dict.fromkeys(
                [
                    *props,
                    *required,
                    *(k for k, deps in dependent for k in (k, *deps)),
                    *rule_keys(key_rules),
                ]
            )
        )
        if closed_names is not None:  # the keys its subschemas declare too; no other
            named_keys += [k for k in sorted(closed_names) if k not in named_keys]
        named = []
        for key in named_keys:
            value = self._named_value(key, values.get(key), patterns, additional)
            if names is not None and not b.matches(names, encode_string(key)):
                value = b.empty
            if b.is_empty(value) and key in required:
                return b.empty
            named.append((key, value))
        shape = ObjectShape(
            key=(self.uid, pointer),
            named=tuple(named),
            required=frozenset(required),
            other_member=self._other_keys(closed_names, named_keys, patterns, additional, names),
            min_properties=count(node.get("minProperties"), 0),
            max_properties=count(node.get("maxProperties"), None),
            dependent_required=tuple((k, frozenset(deps)) for k, deps in dependent),
            key_rules=key_rules,
            ws_max=self.ws_max,
            ordered=self.ordered_keys,
            pieces=self.pieces,
        )
        return object_term(shape)

    def _merged_objects(
        self, node: dict, pointer: str, closed_names: frozenset[str] | None
    ) -> T | None:
        """``allOf`` of plain object schemas (``properties``, ``required``,
        ``additionalProperties``, ``type``) as one object, or None; ``anyOf`` and
        disjoint ``oneOf`` among them as a union of such objects (the node distributed
        over them).

        An object meets them all when it has every key any of them requires and each
        value meets every schema that speaks of its key: the property's schema where
        a node declares it, the node's ``additionalProperties`` where it does not. So
        the merged object names every key any of them declares, with the intersection
        of those schemas as the value (an intersection inside one value, where the
        intersection of whole objects would need liveness searches at every key)."""
        composes = (
            isinstance(node.get("allOf"), list)
            or "not" in node
            or ("if" in node and ("then" in node or "else" in node))
            or bool(self._dependent_schemas(node, pointer))
            or (
                any(isinstance(node.get(k), list) for k in ("anyOf", "oneOf"))
                and bool(asserting(node) - {"anyOf", "oneOf"})
            )
        )
        if not composes or self.ordered_keys:
            return None
        alternatives = self._object_alternatives(node, pointer, only_objects(node), frozenset())
        if alternatives is None:
            return None
        return self.terms.alt(
            *(
                self._merged_object(sources, f"{pointer}/allOf#{i}", closed_names)
                for i, sources in enumerate(alternatives)
            )
        )

    def _merged_object(
        self, sources: list[Source], key: str, closed_names: frozenset[str] | None
    ) -> T:
        """The values that meet every plain object schema of ``sources``. A key only a
        condition names (``fsm.json_schema.conditions``) stays out of a closed object;
        counts of members, dependent keys and key names apply as each source says."""
        required = {r for source in sources for r in source.node.get("required") or ()}
        declared = [k for source in sources for k in source.node.get("properties") or {}]
        dependent = [d for source in sources for d in self._dependent_required(source.node)]
        named_keys = list(
            dict.fromkeys(
                [
                    *declared,
                    *sorted(required),
                    *(k for k, deps in dependent for k in (k, *deps)),
                    *sorted(closed_names or ()),
                ]
            )
        )
        with self._guarded():
            additional = [
                self.term_at(f"{source.pointer}/additionalProperties")
                for source in sources
                if "additionalProperties" in source.node
            ]
            name_terms = [
                self.term_at(f"{source.pointer}/propertyNames")
                for source in sources
                if "propertyNames" in source.node
            ]
            names = self.terms.intersect(*name_terms) if name_terms else None
            named = [
                (name, self._merged_key_value(name, sources, closed_names, names))
                for name in named_keys
            ]
        b = self.terms
        other = b.intersect(*additional) if additional else self.any
        maxima = [count(s.node.get("maxProperties"), None) for s in sources]
        shape = ObjectShape(
            key=(self.uid, key),
            named=tuple(named),
            required=frozenset(required),
            other_member=self._other_keys(closed_names, named_keys, [], other, names),
            min_properties=max((count(s.node.get("minProperties"), 0) for s in sources), default=0),
            max_properties=min((m for m in maxima if m is not None), default=None),
            dependent_required=tuple((k, frozenset(deps)) for k, deps in dependent),
            ws_max=self.ws_max,
            pieces=self.pieces,
        )
        forbidden = any(b.is_empty(value) and name in required for name, value in named)
        objects = b.empty if forbidden else object_term(shape)
        kinds = kinds_met(sources)
        others = [
            self._type_term(name, {}, key, None, ())
            for name in ("null", "boolean", "integer", "number", "string", "array")
            if KINDS_OF_TYPE[name] <= kinds and not (name == "integer" and "fraction" in kinds)
        ]
        return b.alt(*others, *([objects] if "object" in kinds else []))

    def _merged_key_value(
        self,
        name: str,
        sources: list[Source],
        closed_names: frozenset[str] | None,
        names: T | None,
    ) -> T:
        """The value of key ``name`` in the merged object: ``empty`` where the object is
        closed to it, its name is refused, or no value meets every source."""
        b = self.terms
        if closed_names is not None and name not in closed_names:
            return b.empty
        if names is not None and not b.matches(names, encode_string(name)):
            return b.empty
        return self._unless_empty(self._merged_value(name, sources))

    def _unless_empty(self, value: T) -> T:
        """``value``, or ``empty`` when it is an intersection that provably matches
        nothing (``fsm.satisfiable``): an object must not offer a key no value of which
        it takes, and the liveness of the states inside the object never looks into its
        values."""
        b = self.terms
        if not b.needs_liveness_check(value):
            return value
        try:
            return b.empty if b.empty_because(value) is not None else value
        except KeyError:  # the value recurses into a node still being compiled
            return value

    def _object_alternatives(
        self, node: object, pointer: str, on_objects: bool, within: frozenset[str]
    ) -> Alternatives | None:
        """The lists of plain object schemas whose intersections, united, are ``node``:
        itself with what its ``allOf`` composes, one branch of each ``anyOf`` and (when
        the instance is known to be an object and no object meets two branches)
        ``oneOf``, the values failing its ``not``, and ``if`` with ``then`` or the
        values failing ``if`` with ``else`` (``fsm.json_schema.conditions``), through
        plain references; None when a schema is not plain or the alternatives grow
        past ``MAX_MERGED``, or a schema composes itself (``within``: the schemas being
        taken apart around this one). Alternatives that no object can meet (a key
        required and forbidden, or required with no value its schemas all list) are
        dropped as they are found."""
        if isinstance(node, dict) and self._ignored.intersection(node):
            node = {k: v for k, v in node.items() if k not in self._ignored}
        if isinstance(node, dict):
            node = dependencies_as_required(node)
        if not isinstance(node, dict) or not plain_object(node) or pointer in within:
            return None
        unions = self._applicator_unions(node, pointer, on_objects, within | {pointer})
        if unions is None:
            return None
        return self._multiplied([[Source(node, pointer)] if says_of_objects(node) else []], unions)

    def _multiplied(
        self, alternatives: Alternatives, unions: list[Alternatives], spent: int = 0
    ) -> Alternatives | None:
        """``alternatives`` combined with one alternative of each of ``unions`` (the
        smallest first: they prune early), those no value meets dropped as they form
        (``_simplified``); None past ``MAX_MERGED`` sources, ``spent`` of them used."""
        for union in sorted(unions, key=len):
            combined = (
                self._simplified([*mine, *theirs]) for mine in alternatives for theirs in union
            )
            alternatives = [sources for sources in combined if sources is not None]
            if spent + sum(map(len, alternatives)) > MAX_MERGED:
                return None
        return alternatives

    def _applicator_unions(
        self, node: dict, pointer: str, on_objects: bool, inside: frozenset[str]
    ) -> list[Alternatives] | None:
        """Per applicator of ``node``, the alternatives one of which an object meeting
        it meets; None when one of them is not plain (or a ``oneOf`` not disjoint)."""
        unions: list[Alternatives | None] = [
            self._branch_alternatives(f"{pointer}/allOf/{i}", on_objects, inside)
            for i in range(len(node.get("allOf") or ()))
        ]
        for keyword in ("anyOf", "oneOf"):
            if keyword in node:
                part = [f"{pointer}/{keyword}/{i}" for i in range(len(node[keyword]))]
                if keyword == "oneOf" and not self._disjoint_on_objects(part, on_objects):
                    unions.append(self._exactly_one(part, on_objects, inside))
                    continue
                found = [self._branch_alternatives(at, on_objects, inside) for at in part]
                union: Alternatives | None = []
                for branch in found:
                    union = None if union is None or branch is None else [*union, *branch]
                unions.append(union)
        if "not" in node:
            unions.append(
                condition_alternatives(node["not"], f"{pointer}/not", self._plain_ref, False)
            )
        if "if" in node and ("then" in node or "else" in node):
            condition = (node["if"], f"{pointer}/if")
            then = f"{pointer}/then" if "then" in node else None
            otherwise = f"{pointer}/else" if "else" in node else None
            unions.append(self._either(condition, then, otherwise, on_objects, inside))
        for name, dependent in self._dependent_schemas(node, pointer):
            condition = (_holding(name), f"#holding/{escape_token(name)}")
            unions.append(self._either(condition, dependent, None, on_objects, inside))
        plain = [union for union in unions if union is not None]
        return plain if len(plain) == len(unions) else None

    def _disjoint_on_objects(self, branches: list[str], on_objects: bool) -> bool:
        """The instance is an object and no object meets two ``branches`` (as
        ``_one_of`` would decide it, the branches compiled open for merging)."""
        if not on_objects:
            return False
        return self._pairwise_disjoint([self.term_at(at, False) for at in branches], branches, True)

    def _exactly_one(
        self, branches: list[str], on_objects: bool, within: frozenset[str]
    ) -> Alternatives | None:
        """``oneOf`` whose branches may overlap: one branch met and every other failed
        (``conditions``), for each branch in turn (so the alternatives are disjoint).
        Failing a branch that only requires a key and says what its value is takes one
        source (``{"required": ["equal"], "properties": {"equal": S}}`` fails where
        ``equal`` is absent or not ``S``), so a ``oneOf`` keyed by which of n keys is
        present gives n alternatives of n sources, not 2^n. None when a branch is not
        plain or a condition, or the alternatives grow past ``MAX_MERGED``."""
        failing: list[Alternatives] = []
        for at in branches:  # first: cheaper than taking the branches apart
            fails = condition_alternatives(*self.resolved(at, exact=True), self._plain_ref, False)
            if fails is None:
                return None
            failing.append(fails)
        seed: Alternatives = [[OBJECTS_ONLY]] if on_objects else [[]]
        found: Alternatives = []
        for i, at in enumerate(branches):
            meets = self._branch_alternatives(at, on_objects, within)
            if meets is None:
                return None
            others = [fails for j, fails in enumerate(failing) if j != i]
            alternatives = self._multiplied(seed, [meets, *others], sum(map(len, found)))
            if alternatives is None:
                return None
            found.extend(alternatives)
        return found

    def _branch_alternatives(
        self, pointer: str, on_objects: bool, within: frozenset[str]
    ) -> Alternatives | None:
        return self._object_alternatives(*self.resolved(pointer, exact=True), on_objects, within)

    def _either(
        self,
        condition: tuple[object, str],
        then: str | None,
        otherwise: str | None,
        on_objects: bool,
        within: frozenset[str],
    ) -> Alternatives | None:
        """The values meeting ``condition`` (a schema and its pointer) and the schema at
        ``then``, or failing it and meeting the schema at ``otherwise`` (``None``: any
        value): ``if``/``then``/``else``, and a dependent schema (its condition an
        object holding its key, ``otherwise`` absent)."""
        meets = condition_alternatives(*condition, self._plain_ref, True)
        fails = condition_alternatives(*condition, self._plain_ref, False)
        found: Alternatives = []
        for outcome, pointer in ((meets, then), (fails, otherwise)):
            branch = (
                [[]] if pointer is None else self._branch_alternatives(pointer, on_objects, within)
            )
            if outcome is None or branch is None:
                return None
            found.extend([*a, *b] for a in outcome for b in branch)
        return found

    def _plain_ref(self, pointer: str) -> tuple[object, str]:
        return self.resolved(pointer, exact=True)

    def _simplified(self, sources: list[Source]) -> list[Source] | None:
        """``sources`` without repeats and without the negations the others imply, or
        None when no value meets them all (no object does: a required key is
        forbidden, or no value its schemas list is left; and no other value does)."""
        sources = list({source.identity(): source for source in sources}.values())
        kinds = kinds_met(sources)
        if not kinds:
            return None
        required = {r for source in sources for r in source.node.get("required") or ()}
        implied: set[tuple] = set()
        for name in required:
            found = self._key_values(name, sources)
            if found is None:
                continue
            listed, left, negations = found
            if not left and kinds == {"object"}:
                return None
            if left and len(left) == len(listed):  # its negations refuse no listed
                implied.update(s.identity() for s in _unless_requiring(name, sources, negations))
        if not implied:
            return sources
        kept = [source for source in sources if source.identity() not in implied]
        return [*kept, OBJECTS_ONLY]  # what the negations said beside their values

    def _key_values(
        self, name: str, sources: list[Source]
    ) -> tuple[list, list, list[Source]] | None:
        """For a required key: the values all its listing schemas allow, those of them
        its negations do not refuse (none when it is forbidden), and the sources
        negating it whose refused values are listed; None when no source lists its
        values."""
        listed: list | None = None
        refused_values: list = []
        negations: list[Source] = []
        for source in sources:
            schema = (source.node.get("properties") or {}).get(name, True)
            if schema is False:
                return [], [], []
            if schema is True and source.negated != name:
                continue
            values = self._allowed_constants(source, name)
            if values is None:
                continue
            if source.negated == name:
                refused_values.extend(values)
                negations.append(source)
            elif listed is None:
                listed = values
            else:
                listed = [v for v in listed if any(json_equal(v, u) for u in values)]
        if listed is None:
            return None
        left = [v for v in listed if not any(json_equal(v, r) for r in refused_values)]
        return listed, left, negations

    def _merged_value(self, key: str, sources: list[Source]) -> T:
        """What every plain object schema of ``sources`` allows as the value of ``key``:
        its property's schema (refused, where the source negates the key), else its
        ``additionalProperties``, else anything."""
        b = self.terms
        values = []
        refused = self._refused_words(key, sources)
        if refused is not None:
            values.append(values_except_in(self.pieces, refused, self.ws_max))
        for source in sources:
            properties = source.node.get("properties") or {}
            if key in properties:
                schema = properties[key]
                at = f"{source.pointer}/properties/{escape_token(key)}"
                if source.negated == key:
                    if refused is None:
                        values.append(b.intersect(self.any, b.complement(self.term_at(at))))
                elif isinstance(schema, bool):
                    values.append(self.any if schema else b.empty)
                else:
                    values.append(self.term_at(at))
            elif "additionalProperties" in source.node:
                values.append(self.term_at(f"{source.pointer}/additionalProperties"))
        values = [value for value in values if value != self.any]
        return b.intersect(*values) if values else self.any

    def _allowed_constants(self, source: Source, key: str) -> list | None:
        """The values the schema of ``key`` in ``source`` allows, when it lists them:
        those of ``const``/``enum`` it matches (its other keywords may refuse some)."""
        at = f"{source.pointer}/properties/{escape_token(key)}"
        if at in self._allowed:  # asked again for every product an alternative joins
            return self._allowed[at]
        listed = self._constants(source.node, source.pointer, key)
        if listed is not None:
            term = self.term_at(at)
            try:
                listed = [
                    v
                    for v in listed
                    if self.terms.matches(term, json.dumps(v, ensure_ascii=False).encode())
                ]
            except KeyError:  # the schema recurses into a node still being compiled
                return None  # (asked again later, when it may be)
        self._allowed[at] = listed
        return listed

    def _refused_words(self, key: str, sources: list[Source]) -> list | None:
        """The values the sources negating ``key`` refuse, when there are some and
        every one lists only strings, booleans and ``null`` (then one plain term says
        what is left: ``values_except``); None otherwise."""
        refused: list = []
        for source in sources:
            if source.negated == key:
                listed = self._allowed_constants(source, key)
                if listed is None or not all(is_word(v) for v in listed):
                    return None
                refused.extend(listed)
        return refused or None

    def _additional_pointer(self, node: dict, pointer: str) -> str | None:
        if "additionalProperties" in node:
            return f"{pointer}/additionalProperties"
        if "unevaluatedProperties" in node and node["unevaluatedProperties"] is not True:
            if any(k in node for k in APPLICATORS):
                self._refuse("unevaluatedProperties", "together with applicators", pointer)
                return None
            return f"{pointer}/unevaluatedProperties"
        return None

    def _dependent_required(self, node: dict) -> list[tuple[str, list[str]]]:
        found = []
        for keyword in ("dependentRequired", "dependencies"):
            for name, deps in (node.get(keyword) or {}).items():
                if isinstance(deps, list):
                    found.append((name, [d for d in deps if isinstance(d, str)]))
        return found

    def _pattern_terms(self, node: dict, pointer: str) -> list[tuple[T, T]]:
        found = []
        for pattern in node.get("patternProperties") or {}:
            try:
                content = self.strings.pattern_content(pattern)
            except UnsupportedRegex as error:
                self._refuse("patternProperties", str(error), pointer)
                continue
            found.append(
                (content, self.term_at(f"{pointer}/patternProperties/{escape_token(pattern)}"))
            )
        return found

    def _named_value(
        self, key: str, declared: T | None, patterns: list[tuple[T, T]], additional: T
    ) -> T:
        b = self.terms
        content = encode_string(key)[1:-1]
        matching = [value for pattern, value in patterns if b.matches(pattern, content)]
        if declared is None and not matching:
            declared = additional
        return b.intersect(*([declared] if declared is not None else []), *matching)

    def _other_keys(
        self,
        closed_names: frozenset[str] | None,
        named: list[str],
        patterns: list[tuple[T, T]],
        additional: T,
        names: T | None,
    ) -> T:
        """The member term of keys not in ``named``: none when the object is closed
        (``closed_names``), else ``_other_member``."""
        if closed_names is not None:
            return self.terms.empty
        return self._other_member(named, patterns, additional, names)

    def _other_member(
        self,
        named: list[str],
        patterns: list[tuple[T, T]],
        additional: T,
        names: T | None,
    ) -> T:
        b = self.terms
        pieces = self.pieces
        key = pieces.string_except(named)
        if names is not None:
            key = b.intersect(key, names)
        if not patterns:
            if b.is_empty(additional):
                return b.empty
            return pieces.member(key, additional, self.ws_max)

        # both ways of each test that bounds a value: the keys, the value they require,
        # and what the way says of the patterns the key matches (``contradictory``)
        tests: list[tuple[KeyWay[T], KeyWay[T]]] = []
        for content, value in patterns:
            if value != self.any:
                inside = (pieces.string_of(content), value, KeySide(matched=(content,)))
                outside = (self._outside(content), self.any, KeySide(unmatched=(content,)))
                tests.append((inside, outside))
        if additional != self.any:
            contents = tuple(content for content, _ in patterns)
            some = b.alt(*contents)
            inside = (pieces.string_of(some), self.any, KeySide(one_of=contents))
            tests.append((inside, (self._outside(some), additional, KeySide(unmatched=contents))))
        if len(tests) > MAX_KEY_TESTS:
            parts = [pieces.member(key, self.any, self.ws_max)]
            parts.extend(
                b.alt(*(pieces.member(keys, value, self.ws_max) for keys, value, _ in test))
                for test in tests
            )
            return b.intersect(*parts)
        return b.alt(
            *(
                self._key_case(key, ways)
                for ways in product(*tests)
                if not contradictory(tuple(side for _, _, side in ways))
            )
        )

    def _key_case(self, key: T, ways: tuple[KeyWay[T], ...]) -> T:
        """The members whose key is ``key`` and takes each test the way chosen: the keys
        met (one lexeme, ``fsm.terms.intersect``), their values met, ``any`` left out."""
        b = self.terms
        values = [value for _, value, _ in ways if value != self.any]
        value = b.intersect(*values) if values else self.any
        keys = b.intersect(key, *(keys for keys, _, _ in ways))
        return self.pieces.member(keys, value, self.ws_max)

    def _outside(self, content: T) -> T:
        """The JSON strings whose content ``content`` does not match (a key no pattern
        matches)."""
        b = self.terms
        return self.pieces.string_of(
            b.intersect(b.star(self.pieces.json_char), b.complement(content))
        )


class KeySide(NamedTuple):
    """What one way of a key test says of the key: it matches each pattern of
    ``matched``, at least one of ``one_of`` (when given), none of ``unmatched`` (the
    patterns' terms, of whichever kind the compile builds)."""

    matched: tuple[Hashable, ...] = ()
    one_of: tuple[Hashable, ...] = ()
    unmatched: tuple[Hashable, ...] = ()


KeyWay = tuple[T, T, KeySide]
"""One way of a key test: the keys it takes, the value they require, what it says of
the patterns the key matches."""


def contradictory(sides: tuple[KeySide, ...]) -> bool:
    """Whether no key takes every way chosen: one must match a pattern another must
    not, or match one of patterns that another excludes all of. Such a case (a key in
    a pattern and outside every pattern) is empty by construction; left in, it is a
    member whose key no string reaches, which the automaton can only show dead by
    searching the intersection each time it is met."""
    matched = {content for side in sides for content in side.matched}
    unmatched = {content for side in sides for content in side.unmatched}
    if matched & unmatched:
        return True
    return any(side.one_of and unmatched.issuperset(side.one_of) for side in sides)


def _unless_requiring(name: str, sources: list[Source], negations: list[Source]) -> list[Source]:
    """The ``negations`` of key ``name`` that may be dropped as implied: all of them when
    a source that does not negate it requires it, else all but one that requires it
    (kept, so the key stays required)."""

    def requires(source: Source) -> bool:
        return name in (source.node.get("required") or ())

    if any(requires(source) and source.negated != name for source in sources):
        return negations
    keep = next((source for source in negations if requires(source)), None)
    return [source for source in negations if source is not keep]


def _conditional(b: TermBuilder[T], condition: T, then: T, otherwise: T) -> T:
    """``then`` where ``condition`` holds, ``otherwise`` where it fails: ``if``/``then``/
    ``else`` and a dependent schema compiled as written (a complement)."""
    return b.alt(b.intersect(condition, then), b.intersect(otherwise, b.complement(condition)))


def _holding(name: str) -> dict:
    """The schema of an object holding key ``name``: where a dependent schema applies
    (``{"required": [name]}`` alone would also hold for every value not an object)."""
    return {"type": "object", "required": [name]}


def _no_value_between(
    low: Decimal | None, low_excl: bool, high: Decimal | None, high_excl: bool, step: Decimal | None
) -> bool:
    """Whether no multiple of ``step`` (any number when None) lies within the bounds:
    such a node is empty, which the checker alone (it over-approximates viability)
    would not show."""
    if low is None or high is None:
        return False
    if step is None:
        return low > high or (low == high and (low_excl or high_excl))
    ceiling = EXACT.divide(low, step).to_integral_value(rounding=ROUND_CEILING, context=EXACT)
    first = EXACT.multiply(ceiling, step)
    if low_excl and first == low:
        first = EXACT.add(first, step)
    return first > high or (high_excl and first == high)


def _lower_bound(node: dict) -> tuple[Decimal | None, bool]:
    return _bound(node, "minimum", "exclusiveMinimum", max)


def _upper_bound(node: dict) -> tuple[Decimal | None, bool]:
    return _bound(node, "maximum", "exclusiveMaximum", min)


def _bound(
    node: dict, inclusive_key: str, exclusive_key: str, tighter
) -> tuple[Decimal | None, bool]:
    """The tighter of the inclusive bound and a numeric exclusive one; a boolean
    exclusive keyword (draft 4) makes the inclusive bound exclusive."""
    bound = _number(node.get(inclusive_key))
    flag = node.get(exclusive_key)
    if isinstance(flag, bool):
        return bound, flag and bound is not None
    exclusive = _number(flag)
    if exclusive is None:
        return bound, False
    if bound is None or tighter(bound, exclusive) == exclusive and bound != exclusive:
        return exclusive, True
    if bound == exclusive:
        return bound, True
    return bound, False


_EXTRA_KEY_KEYWORDS = ("additionalProperties", "patternProperties", "unevaluatedProperties")


def _opens_keys(node: dict) -> bool:
    """Whether the node says itself which other keys an object may have."""
    return any(k in node and node[k] is not False for k in _EXTRA_KEY_KEYWORDS)


def _declares_keys(node: dict) -> bool:
    """Whether generation closes this node's objects to undeclared keys: it declares
    properties (or composes them with ``allOf``) and says nothing of other keys."""
    declares = isinstance(node.get("properties"), dict) or isinstance(node.get("allOf"), list)
    return declares and not any(k in node for k in _EXTRA_KEY_KEYWORDS)
