"""Generators: pure data describing one generated span, callable on a state.

``state + generator`` (or ``generator(state)``) asks the state's engine to extend every
row with a span produced under the generator's constraint and sampler. Generators are
frozen and hashable; building one compiles nothing (the engine compiles and caches the
constraint's token index on first use).
"""

from __future__ import annotations

import json as _json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from seqstate.errors import InvalidGenerator
from seqstate.generator import Generator
from seqstate.hooks import Hook
from seqstate.samplers import Greedy, SamplerSpec

if TYPE_CHECKING:
    from seqstate.state import SequenceState

DEFAULT_MAX_TOKENS = 256
DEFAULT_MAX_RETRIES = 32


@dataclass(frozen=True)
class SpanGenerator(Generator["SequenceState"]):
    """One span to generate: constraint (``None`` = free text), sampler and limits."""

    kind: str  # "gen" | "regex" | "json" | "choice" | "grammar", for display
    constraint: Any = None  # an fsm spec: Regex, Choice, JsonSchema, Grammar
    sampler: SamplerSpec = field(default_factory=Greedy)
    max_tokens: int = DEFAULT_MAX_TOKENS
    stop: tuple[str, ...] = ()
    name: str | None = None
    hooks: tuple[Hook, ...] = ()
    banned: tuple[str, ...] = ()
    heal: bool = True
    parse: Callable[[str], Any] | None = None  # turns the captured text into a value
    max_retries: int = DEFAULT_MAX_RETRIES  # bound on resamples/backtracks per position
    resume: bool = False  # continue the generated span each row ends in (see ``resume``)

    def __post_init__(self) -> None:
        _check_count("max_tokens", self.max_tokens, 1)
        _check_count("max_retries", self.max_retries, 0)
        for argument, strings in (("stop", self.stop), ("banned", self.banned)):
            if not all(isinstance(s, str) and s for s in strings):
                raise InvalidGenerator(f"{argument} takes non-empty strings, got {strings!r}")
        if self.name is not None and not isinstance(self.name, str):
            raise InvalidGenerator(f"name must be a str, got {type(self.name).__name__}")
        if not isinstance(self.sampler, SamplerSpec):
            raise InvalidGenerator(
                f"sampler must be ss.greedy(), ss.sample(...) or ss.beam(n), got {self.sampler!r}"
            )
        if not all(callable(hook) for hook in self.hooks):
            raise InvalidGenerator("hooks must be callables taking a TokenEvent")

    def __call__(self, state: SequenceState) -> SequenceState:
        return state.engine.generate(state, self)

    def resumed(self, **changes: Any) -> SpanGenerator:
        """A copy that continues the span a row was cut in (``SequenceState.resume``)."""
        return replace(self, resume=True, **changes)


def _check_count(argument: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidGenerator(f"{argument} must be an int >= {least}, got {value!r}")


def step(
    state: SequenceState, logits: Any, generator: SpanGenerator, **options: Any
) -> SequenceState:
    """Extend every row by one token sampled from ``logits`` that the caller computed
    (``[rows, vocab]``, one row per state row): constraint, sampler, hooks, stop strings
    and detokenization apply as in the model's own loop, which is built on the same step.
    A row that ends in an unfinished span of ``generator`` continues it."""
    return state.engine.step(state, logits, generator, **options)


def _common(
    sampler: SamplerSpec | None,
    max_tokens: int | None,
    stop: str | Iterable[str] | None,
    name: str | None,
    hooks: Iterable[Hook] | None,
    banned: str | Iterable[str] | None,
    heal: bool,
    max_retries: int,
) -> dict[str, Any]:
    def strings(value: str | Iterable[str] | None) -> tuple[str, ...]:
        if value is None:
            return ()
        return (value,) if isinstance(value, str) else tuple(value)

    if hooks is not None and callable(hooks):
        hooks = (hooks,)  # one hook given bare

    return {
        "sampler": sampler or Greedy(),
        "max_tokens": DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
        "stop": strings(stop),
        "name": name,
        "hooks": tuple(hooks or ()),
        "banned": strings(banned),
        "heal": heal,
        "max_retries": max_retries,
    }


def gen(
    *,
    max_tokens: int | None = None,
    stop: str | Iterable[str] | None = None,
    name: str | None = None,
    sampler: SamplerSpec | None = None,
    hooks: Iterable[Hook] | None = None,
    banned: str | Iterable[str] | None = None,
    heal: bool = True,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> SpanGenerator:
    """Free text until end-of-generation, a stop string or ``max_tokens``."""
    return SpanGenerator(
        "gen", None, **_common(sampler, max_tokens, stop, name, hooks, banned, heal, max_retries)
    )


def regex(
    pattern: str,
    *,
    max_tokens: int | None = None,
    stop: str | Iterable[str] | None = None,
    name: str | None = None,
    sampler: SamplerSpec | None = None,
    hooks: Iterable[Hook] | None = None,
    banned: str | Iterable[str] | None = None,
    heal: bool = True,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> SpanGenerator:
    """Text that fully matches ``pattern`` (checked now: a pattern that does not parse
    or uses an unsupported feature raises here, naming the problem)."""
    from fsm.specs import Regex

    spec = Regex(pattern)
    spec.term()  # parse now: errors belong to the call that made the generator
    return SpanGenerator(
        "regex", spec, **_common(sampler, max_tokens, stop, name, hooks, banned, heal, max_retries)
    )


def choice(
    options: Iterable[str],
    *,
    name: str | None = None,
    sampler: SamplerSpec | None = None,
    hooks: Iterable[Hook] | None = None,
    heal: bool = True,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> SpanGenerator:
    """Exactly one of ``options``: a non-empty list (or other iterable) of literal
    strings. A bare string is refused rather than read as its characters."""
    from fsm.specs import Choice

    if isinstance(options, str | bytes) or not isinstance(options, Iterable):
        raise InvalidGenerator(
            f"choice(options) takes a list of strings, e.g. ss.choice(['yes', 'no']); got {options!r}"
        )
    return SpanGenerator(
        "choice",
        Choice(list(options)),
        **_common(sampler, None, None, name, hooks, None, heal, max_retries),
    )


def json(
    schema: Any,
    *,
    max_tokens: int | None = None,
    name: str | None = None,
    sampler: SamplerSpec | None = None,
    hooks: Iterable[Hook] | None = None,
    heal: bool = True,
    max_retries: int = DEFAULT_MAX_RETRIES,
    whitespace_max: int | None = None,
    key_order: str = "schema",
    extra_keys: bool = False,
) -> SpanGenerator:
    """A JSON value valid under ``schema``: a dict, a JSON string, a pydantic model or a
    Python type. The capture parses to a pydantic instance for models, else to the
    decoded JSON value.

    Generation defaults (docs/json_schema.md): an object that declares properties and
    says nothing of other keys gets only its declared keys (pydantic ``extra="allow"``
    and ``additionalProperties`` keep theirs; ``extra_keys=True`` opens every such
    object); no key is written twice; integers are written without ``.0``. Keys are
    written in schema order (optional keys may be left out), which lets every key be
    forced rather than sampled; ``key_order="any"`` lets the model choose."""
    from fsm.specs import JsonSchema
    from seqstate.json_keys import DistinctKeys, allows_undeclared_keys

    options: dict[str, Any] = {
        "key_order": key_order,
        "extra_keys": extra_keys,
        "plain_integers": True,
    }
    if whitespace_max is not None:
        options["whitespace_max"] = whitespace_max
    spec = JsonSchema(schema, **options)
    common = _common(sampler, max_tokens, None, name, hooks, None, heal, max_retries)
    if extra_keys or allows_undeclared_keys(spec.schema):
        common["hooks"] = (*common["hooks"], DistinctKeys())
    return SpanGenerator("json", spec, parse=_json_parser(schema), **common)


def _json_parser(schema: Any) -> Callable[[str], Any]:
    """Captures parse to what the schema names: a pydantic model instance, a value of a
    Python type (validated by pydantic when it is installed, so ``ss.json(int)`` gives an
    ``int`` even for ``1.0``), else the decoded JSON value."""
    validate_json = getattr(schema, "model_validate_json", None)
    if callable(validate_json):
        return validate_json
    if isinstance(schema, dict | str | bool):
        return _json.loads
    try:
        from pydantic import TypeAdapter
    except ImportError:
        return _json.loads
    return TypeAdapter(schema).validate_json


def grammar(
    lark_text: str,
    *,
    start: str = "start",
    max_tokens: int | None = None,
    name: str | None = None,
    sampler: SamplerSpec | None = None,
    hooks: Iterable[Hook] | None = None,
    heal: bool = True,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> SpanGenerator:
    """Text in the language of a lark grammar (LALR(1)), checked now: a grammar lark
    rejects, or one that is not LALR(1), raises here."""
    from fsm.specs import Grammar

    spec = Grammar(lark_text, start=start)
    spec.automaton()  # parse the grammar now: errors belong to this call
    return SpanGenerator(
        "grammar",
        spec,
        **_common(sampler, max_tokens, None, name, hooks, None, heal, max_retries),
    )
