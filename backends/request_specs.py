"""Constraint specs as JSON-able request arguments, and back.

Serving layers (the vLLM logits processor, a seqstate engine that turns generator calls
into vLLM requests, an HTTP client) pass a constraint between processes as a small
dict, exactly one of::

    {"regex": pattern}
    {"json": schema, "key_order": ..., "extra_keys": ..., "plain_integers": ...,
     "whitespace_max": ..., "strict": ...}      # options optional
    {"choice": [option, ...]}
    {"grammar": lark_text, "start": "start"}    # "start" optional

``spec_from_args(args)`` turns such a dict (or its JSON text, as ``vllm_xargs`` values
are flat) into an ``fsm`` spec, with the same defaults as ``ss.regex`` / ``ss.json`` /
``ss.choice`` / ``ss.grammar``: ``{"json": schema}`` is the spec of ``ss.json(schema)``
(schema key order, objects closed to undeclared keys, integers without fraction).
``spec_to_args(spec)`` is its inverse: ``spec_from_args(spec_to_args(s)) == s`` for
every ``fsm.Regex``, ``fsm.JsonSchema``, ``fsm.Choice`` and ``fsm.Grammar``; options
equal to the request defaults are left out.

``check_spec(spec)`` parses the spec now (regex syntax, schema keywords, grammar, empty
languages), so a bad request is refused before it is scheduled. Every error is an
``fsm.InvalidSpec`` (or another ``fsm`` error, all ``ValueError``s) naming the problem.
Imports only ``fsm``: usable where torch is absent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fsm.compiler import automaton_of
from fsm.errors import InvalidSpec
from fsm.json_schema import DEFAULT_WHITESPACE_MAX
from fsm.specs import Choice, Grammar, JsonSchema, Regex

Spec = Regex | JsonSchema | Choice | Grammar

KINDS = ("regex", "json", "choice", "grammar")

JSON_DEFAULTS: dict[str, Any] = {
    "key_order": "schema",
    "extra_keys": False,
    "plain_integers": True,
    "whitespace_max": DEFAULT_WHITESPACE_MAX,
    "strict": True,
}
"""The options of ``{"json": ...}`` when a request leaves them out (those of ``ss.json``)."""

_OPTIONS: dict[str, frozenset[str]] = {
    "regex": frozenset(),
    "json": frozenset(JSON_DEFAULTS),
    "choice": frozenset(),
    "grammar": frozenset({"start"}),
}


def spec_to_args(spec: Spec) -> dict[str, Any]:
    """The request dict of ``spec`` (JSON-able; see the module docstring)."""
    if isinstance(spec, Regex):
        return {"regex": spec.pattern}
    if isinstance(spec, Choice):
        return {"choice": list(spec.options)}
    if isinstance(spec, Grammar):
        args: dict[str, Any] = {"grammar": spec.lark_text}
        if spec.start != "start":
            args["start"] = spec.start
        return args
    if isinstance(spec, JsonSchema):
        args = {"json": spec.schema}
        for option, default in JSON_DEFAULTS.items():
            value = getattr(spec, option)
            if value != default:
                args[option] = value
        return args
    raise InvalidSpec(
        f"{type(spec).__name__} is not a constraint spec; use fsm.Regex, fsm.JsonSchema, "
        "fsm.Choice or fsm.Grammar"
    )


def spec_from_args(args: Mapping[str, Any] | str) -> Spec:
    """The spec a request dict (or its JSON text) describes; ``fsm.InvalidSpec`` when
    the dict is malformed. The spec is not parsed further: see ``check_spec``."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError as error:
            raise InvalidSpec(f"seqstate constraint text is not JSON: {error}") from None
    if not isinstance(args, Mapping):
        raise InvalidSpec(
            "a seqstate constraint is a dict with one of the keys "
            f"{', '.join(KINDS)}; got {type(args).__name__}"
        )
    kinds = [kind for kind in KINDS if kind in args]
    if len(kinds) != 1:
        found = ", ".join(kinds) if kinds else "none"
        raise InvalidSpec(
            f"a seqstate constraint names exactly one of {', '.join(KINDS)}; found {found}"
        )
    kind = kinds[0]
    unknown = sorted(set(args) - {kind} - _OPTIONS[kind])
    if unknown:
        allowed = sorted(_OPTIONS[kind]) or ["none"]
        raise InvalidSpec(
            f"unknown option(s) {unknown} for a {kind!r} constraint (options: {allowed})"
        )
    return _BUILDERS[kind](args)


def _regex(args: Mapping[str, Any]) -> Spec:
    return Regex(args["regex"])


def _choice(args: Mapping[str, Any]) -> Spec:
    options = args["choice"]
    if not isinstance(options, list | tuple):
        raise InvalidSpec(f"'choice' takes a list of strings, got {type(options).__name__}")
    return Choice(options)


def _grammar(args: Mapping[str, Any]) -> Spec:
    return Grammar(args["grammar"], start=args.get("start", "start"))


def _json(args: Mapping[str, Any]) -> Spec:
    options = {**JSON_DEFAULTS, **{k: v for k, v in args.items() if k != "json"}}
    for flag in ("extra_keys", "plain_integers", "strict"):
        if not isinstance(options[flag], bool):
            raise InvalidSpec(f"'{flag}' must be true or false, got {options[flag]!r}")
    if not isinstance(options["key_order"], str):
        raise InvalidSpec(f"'key_order' must be a string, got {options['key_order']!r}")
    whitespace = options["whitespace_max"]
    if isinstance(whitespace, bool) or not isinstance(whitespace, int):
        raise InvalidSpec(f"'whitespace_max' must be an int >= 0, got {whitespace!r}")
    return JsonSchema(args["json"], **options)


_BUILDERS = {"regex": _regex, "json": _json, "choice": _choice, "grammar": _grammar}


def check_spec(spec: Spec) -> Spec:
    """``spec``, once parsed (regex, schema, grammar) and known to accept some text;
    raises the ``fsm`` error naming the problem otherwise. The automaton is lazy, so
    this costs a parse, not a compilation."""
    automaton_of(spec)
    return spec
