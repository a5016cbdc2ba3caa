"""``fsm.compile_index``: a spec and a vocabulary in, a token index out (cached when asked)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from fsm.automaton import ByteAutomaton
from fsm.cache import IndexCache
from fsm.derivative_automaton import DerivativeAutomaton
from fsm.errors import InvalidSpec, Unsatisfiable
from fsm.limits import DEFAULT_MAX_ROW_STATES, DEFAULT_MAX_STATES
from fsm.positions import position_automaton
from fsm.prefixed import Prefixed
from fsm.satisfiable import empty_because
from fsm.specs import JsonSchema
from fsm.terms import Term
from fsm.token_index import TokenIndex
from fsm.vocabulary import Vocabulary


class Spec(Protocol):
    """What ``compile_index`` accepts: a fingerprint and either a term or an automaton."""

    @property
    def fingerprint(self) -> str: ...


def automaton_of(spec: Spec, *, max_states: int = DEFAULT_MAX_STATES) -> ByteAutomaton:
    """The byte automaton of a spec: its own, the position sets of a plain regular
    term (a regex, a choice: ``fsm.positions``), or the derivatives of its term.
    Raises ``Unsatisfiable`` when the spec provably accepts no text at all, so an
    empty constraint fails here rather than after tokens were spent on it."""
    build = getattr(spec, "automaton", None)
    if callable(build):  # a grammar: lark refuses rules that derive no finite string
        return build(max_states=max_states)
    make_term = getattr(spec, "term", None)
    if not callable(make_term):
        raise InvalidSpec(
            f"{type(spec).__name__} is not a constraint spec; use fsm.Regex, fsm.Choice, "
            "fsm.JsonSchema or fsm.Grammar"
        )
    term: Term = make_term()
    # A plain term's positions (``fsm.positions``) exist only when it holds no empty
    # byte set, and then its language is not empty: the test is left to other terms.
    positions = position_automaton(term, max_states=max_states)
    if positions is not None:
        return positions
    reason = empty_because(term)
    if reason is not None:
        raise _unsatisfiable(spec, reason)
    return DerivativeAutomaton(term, max_states=max_states)


def _unsatisfiable(spec: Spec, reason: str) -> Unsatisfiable:
    return Unsatisfiable(f"{type(spec).__name__} accepts no text at all: {reason}")


def compile_index(
    spec: Spec,
    vocabulary: Vocabulary,
    *,
    cache: IndexCache | None = None,
    eager: bool = False,
    max_states: int = DEFAULT_MAX_STATES,
    max_row_states: int = DEFAULT_MAX_ROW_STATES,
    progress: Callable[[int, int], None] | None = None,
) -> TokenIndex:
    """The token index of ``spec`` over ``vocabulary``; built once per cache key.
    ``eager`` builds every reachable row now, reporting to ``progress(done, known)``.
    A JSON schema, healed prefix or not (``fsm.Prefixed``), is built as rows of the
    vocabulary's term store (``vocabulary.schema_rows``, ``fsm.schema_rows``); other
    specs as their automata (``automaton_of``).

    Compiling is cheap: rows (the allowed tokens of a state) are built as generation
    visits states, unless ``eager``. Unsatisfiable specs raise ``Unsatisfiable`` here.

    Args:
        spec: a ``Regex``, ``Choice``, ``JsonSchema`` or ``Grammar``.
        vocabulary: the model's ``Vocabulary`` (``model.vocabulary``).
        cache: an ``IndexCache`` keyed by (spec, vocabulary) fingerprints, so equal
            specs share one index; ``None`` builds a new one.
        eager: build every reachable row now.
        max_states: cap on automaton states (``ConstraintTooLarge`` past it).
        max_row_states: cap on the states one mask may expand, so no single decode
            step stalls (``ConstraintTooLarge`` past it).
        progress: called with ``(rows done, rows known)`` during an eager build.

    Example:
        >>> vocabulary = fsm.Vocabulary.from_raw([b"1", b"2", b"12", None], eos_ids=3)
        >>> index = fsm.compile_index(fsm.Regex("[12]{2}"), vocabulary, eager=True)
        >>> index.allowed_tokens(0).tolist(), index.num_states
        ([0, 1, 2], 3)
    """

    def build() -> TokenIndex:
        automaton: ByteAutomaton
        if isinstance(spec, JsonSchema):  # rows of the vocabulary's store (fsm.schema_rows)
            automaton, lock = vocabulary.schema_rows.compile(spec, max_states=max_states)
        elif isinstance(spec, Prefixed) and isinstance(spec.inner, JsonSchema):  # healed
            automaton, lock = vocabulary.schema_rows.compile(
                spec.inner, prefix=spec.prefix, max_states=max_states
            )
        else:
            automaton, lock = automaton_of(spec, max_states=max_states), None
        return TokenIndex(
            automaton,
            vocabulary,
            max_states=max_states,
            eager=eager,
            progress=progress,
            max_row_states=max_row_states,
            lock=lock,
        )

    if cache is None:
        return build()
    return cache.get_or_build((spec.fingerprint, vocabulary.fingerprint), build)
