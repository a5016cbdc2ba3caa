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
    """One span to generate: constraint (``None`` = free text), sampler and limits.

    Built by ``ss.gen``, ``ss.regex``, ``ss.json``, ``ss.choice`` and ``ss.grammar``
    (whose docstrings explain the arguments); frozen and hashable, so one generator can
    be reused in many programs. ``state + generator`` or ``generator(state)`` extends
    every row of ``state`` with one span.

    Args:
        kind: ``"gen"``, ``"regex"``, ``"json"``, ``"choice"`` or ``"grammar"`` (display).
        constraint: an ``fsm`` spec (``Regex``, ``Choice``, ``JsonSchema``,
            ``Grammar``), or ``None`` for free text.
        sampler: ``Greedy``, ``Sample`` or ``Beam``.
        max_tokens, stop, name, hooks, banned, heal, max_retries: as in ``ss.gen``.
        parse: turns the captured text into a value (``ss.json`` sets it).
        resume: continue the span each row ends in (set by ``resumed``).

    Example:
        >>> g = ss.regex(r"[0-9]{3}", name="code")
        >>> g.kind, g.name, g.max_tokens
        ('regex', 'code', 256)
    """

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
        """A copy that continues the span a row was cut in (``SequenceState.resume``).

        Args:
            changes: fields to override (``max_tokens``, ``sampler``, ...).

        Example:
            >>> ss.gen(max_tokens=8).resumed(max_tokens=4).max_tokens
            4
        """
        return replace(self, resume=True, **changes)


def _check_count(argument: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidGenerator(f"{argument} must be an int >= {least}, got {value!r}")


def step(
    state: SequenceState, logits: Any, generator: SpanGenerator, **options: Any
) -> SequenceState:
    """Extend every row by one token sampled from ``logits`` that the caller computed:
    constraint, sampler, hooks, stop strings and detokenization apply as in the model's
    own loop, which is built on the same step. A row that ends in an unfinished span of
    ``generator`` continues it, so calling ``step`` repeatedly builds one span.

    Args:
        state: the state to extend (its engine applies the step).
        logits: ``[rows, vocab]`` scores for the next token, one row per state row
            (a tensor or array), e.g. from your own forward pass.
        generator: the span being generated (``ss.gen``, ``ss.regex``, ...).
        options: passed to the engine's ``step``, e.g. ``rng`` (a ``torch.Generator``).

    Example::

        g = ss.regex(r"[0-9]+", max_tokens=4)
        s = model("Pick a number: ")
        for _ in range(4):
            logits = my_forward(s.token_ids)  # your own forward pass, [rows, vocab]
            s = ss.step(s, logits, g)
    """
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
    """Free text: the span ends at the model's end token, a stop string or ``max_tokens``.

    Args:
        max_tokens: most tokens the span may add (default 256). A constrained span cut
            short ends with ``finish_reason="length"`` and its capture raises
            ``TruncatedCapture``.
        stop: a string or list of strings that ends the span when generated (matched
            across tokens; the stop string itself is not kept).
        name: capture name: ``state[name]`` then reads the span's value.
        sampler: ``ss.greedy()`` (default), ``ss.sample(...)`` or ``ss.beam(n)``.
        hooks: a callable or list of callables, each given a ``TokenEvent`` for every
            drawn token; one may return ``ss.Replace``, ``ss.Resample``, ``ss.Backtrack``
            or ``None`` (accept). Beam search calls no hooks.
        banned: a string or list of strings that must not appear: when one does, the
            row rewinds to where it starts and draws again with that token banned.
        heal: token healing (default on): the last prompt token(s) that could merge
            with the span's first token are regenerated together with it.
        max_retries: most redraws (resamples, backtracks, banned-string rewinds) at
            one position before ``GenerationError`` (default 32).

    Returns a ``SpanGenerator``: ``state + ss.gen(...)`` generates; building it runs
    nothing.

    Example:
        >>> ss.gen(max_tokens=20, stop=".", name="answer").stop
        ('.',)

        With a model::

            s = model.chat([{"role": "user", "content": "Say hi."}])
            s = s + ss.gen(max_tokens=20, stop="\\n", name="answer")
            print(s["answer"])
    """
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
    or uses an unsupported feature raises here, naming the problem).

    Args:
        pattern: a regular expression (Python ``re`` syntax without backreferences or
            lookaround); the whole span must match it.
        max_tokens: most tokens the span may add (default 256). A constrained span cut
            short ends with ``finish_reason="length"`` and its capture raises
            ``TruncatedCapture``.
        stop: a string or list of strings that ends the span when generated (matched
            across tokens; the stop string itself is not kept).
        name: capture name: ``state[name]`` then reads the span's value.
        sampler: ``ss.greedy()`` (default), ``ss.sample(...)`` or ``ss.beam(n)``.
        hooks: a callable or list of callables, each given a ``TokenEvent`` for every
            drawn token; one may return ``ss.Replace``, ``ss.Resample``, ``ss.Backtrack``
            or ``None`` (accept). Beam search calls no hooks.
        banned: a string or list of strings that must not appear: when one does, the
            row rewinds to where it starts and draws again with that token banned.
        heal: token healing (default on): the last prompt token(s) that could merge
            with the span's first token are regenerated together with it.
        max_retries: most redraws (resamples, backtracks, banned-string rewinds) at
            one position before ``GenerationError`` (default 32).

    Example:
        >>> ss.regex(r"[A-Z][a-z]+", name="city").kind
        'regex'

        With a model::

            s = model("The capital of France is ") + ss.regex(r"[A-Z][a-z]+", name="city")
            s["city"]  # e.g. 'Paris'
    """
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
    strings. A bare string is refused rather than read as its characters.

    Args:
        options: the strings to choose from.
        name: capture name: ``state[name]`` then reads the span's value.
        sampler: ``ss.greedy()`` (default), ``ss.sample(...)`` or ``ss.beam(n)``.
        hooks: a callable or list of callables, each given a ``TokenEvent`` for every
            drawn token; one may return ``ss.Replace``, ``ss.Resample``, ``ss.Backtrack``
            or ``None`` (accept). Beam search calls no hooks.
        heal: token healing (default on): the last prompt token(s) that could merge
            with the span's first token are regenerated together with it.
        max_retries: most redraws (resamples, backtracks, banned-string rewinds) at
            one position before ``GenerationError`` (default 32).

    Example:
        >>> ss.choice(["yes", "no"], name="answer").kind
        'choice'

        With a model::

            s = model("Is the sky blue? Answer: ") + ss.choice(["yes", "no"], name="answer")
            s["answer"]  # 'yes' or 'no'
    """
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
    forced rather than sampled; ``key_order="any"`` lets the model choose.

    Args:
        schema: a JSON schema (dict or JSON text), a pydantic model or a Python type
            (``int``, ``list[str]``, ``Annotated[int, Field(ge=0)]``, ...).
        max_tokens: most tokens the span may add (default 256). A constrained span cut
            short ends with ``finish_reason="length"`` and its capture raises
            ``TruncatedCapture``.
        name: capture name: ``state[name]`` then reads the span's value.
        sampler: ``ss.greedy()`` (default), ``ss.sample(...)`` or ``ss.beam(n)``.
        hooks: a callable or list of callables, each given a ``TokenEvent`` for every
            drawn token; one may return ``ss.Replace``, ``ss.Resample``, ``ss.Backtrack``
            or ``None`` (accept). Beam search calls no hooks.
        heal: token healing (default on): the last prompt token(s) that could merge
            with the span's first token are regenerated together with it.
        max_retries: most redraws (resamples, backtracks, banned-string rewinds) at
            one position before ``GenerationError`` (default 32).
        whitespace_max: most whitespace characters allowed between tokens of the JSON
            text (default: the compiler's).
        key_order: ``"schema"`` (default: keys in schema order) or ``"any"``.
        extra_keys: allow undeclared keys in every object (default: only where the
            schema opens the object).

    Example:
        >>> ss.json({"type": "integer"}, name="age").kind
        'json'

        With a model and a pydantic model::

            class Person(pydantic.BaseModel):
                name: str
                age: int

            s = model("A person as JSON: ") + ss.json(Person, name="person")
            s["person"]  # a Person instance
    """
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
    rejects, or one that is not LALR(1), raises here.

    Args:
        lark_text: the grammar in lark's syntax.
        start: the start rule (default ``"start"``).
        max_tokens: most tokens the span may add (default 256). A constrained span cut
            short ends with ``finish_reason="length"`` and its capture raises
            ``TruncatedCapture``.
        name: capture name: ``state[name]`` then reads the span's value.
        sampler: ``ss.greedy()`` (default), ``ss.sample(...)`` or ``ss.beam(n)``.
        hooks: a callable or list of callables, each given a ``TokenEvent`` for every
            drawn token; one may return ``ss.Replace``, ``ss.Resample``, ``ss.Backtrack``
            or ``None`` (accept). Beam search calls no hooks.
        heal: token healing (default on): the last prompt token(s) that could merge
            with the span's first token are regenerated together with it.
        max_retries: most redraws (resamples, backtracks, banned-string rewinds) at
            one position before ``GenerationError`` (default 32).

    Example:
        >>> sums = ss.grammar('start: NUM ("+" NUM)*\\nNUM: /[0-9]+/', name="sum")
        >>> sums.kind
        'grammar'

        With a model: ``model("2 plus 3 is ") + sums`` then ``s["sum"]``.
    """
    from fsm.specs import Grammar

    spec = Grammar(lark_text, start=start)
    spec.automaton()  # parse the grammar now: errors belong to this call
    return SpanGenerator(
        "grammar",
        spec,
        **_common(sampler, max_tokens, None, name, hooks, None, heal, max_retries),
    )
