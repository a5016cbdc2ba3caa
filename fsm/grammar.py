"""Lark grammars as byte automata: lexing by derivatives, parsing by LALR(1) tables.

A state of ``GrammarAutomaton`` is a set of *configurations* ``(stack, lexeme)``:

* ``stack``: the LALR state stack (an immutable tuple, stepped by ``fsm.lalr``);
* ``lexeme``: the terminals the bytes since the last token boundary may still become,
  each with the derivative of its term by those bytes: ``((terminal, term), ...)``.
  ``()`` means "at a boundary, nothing read yet" (only the initial state has it).

Reading a byte advances every pending term; where a term is complete (nullable) the
lexeme may also end there: its terminal is fed to the parser (ignored terminals leave
the stack alone) and a new lexeme starts with the byte, over the terminals the new
stack accepts plus the ignored ones. A lexeme only ever holds terminals that the parser
would shift, so every configuration kept can be completed (LR parsers keep viable
prefixes; rules that derive no finite string are rejected up front): no successor the
automaton returns is dead.

Token boundaries are nondeterministic: every split of the bytes into terminals that the
parser accepts is kept. This accepts a superset of lark's contextual lexer, which is
greedy, wherever two terminals the grammar allows side by side can be glued into one
(``NAME NAME`` without a separator, or a ``NAME`` directly followed by a keyword such
as ``x=band`` for ``x=b and``). Where no terminal can run into the next one, both accept
the same strings. Terminal priorities are not used.
"""

from __future__ import annotations

import numpy as np
from lark.lexer import PatternStr, TerminalDef

from fsm.automaton import DEAD
from fsm.errors import ConstraintTooLarge, InvalidSpec, UnsupportedRegex
from fsm.lalr import (
    END,
    LalrTable,
    Stack,
    accepts_end,
    check_productive,
    load_lark,
    shift,
    table_from_lark,
)
from fsm.limits import DEFAULT_MAX_STATES
from fsm.regex import regex_term
from fsm.terms import EMPTY, Term, byte_partition, derivative, literal, nullable

Lexeme = tuple[tuple[int, Term], ...]
"""Pending terminals (by index) with what each still has to match; sorted by index."""

Config = tuple[Stack, Lexeme]

LARK_ESCAPED_STRING = r'".*?(?<!\\)(\\\\)*?"'
"""Lark's ``common.ESCAPED_STRING``: a lookbehind, which byte terms cannot express."""

ESCAPED_STRING_EQUIVALENT = r'"(?:[^"\\\n]|\\[^\n])*"'
"""The same language without lookbehind: what the lazy match above can produce (no
newline; a quote inside is preceded by an odd run of backslashes)."""


def terminal_term(terminal: TerminalDef) -> Term:
    """The byte strings that a lark terminal matches (UTF-8), flags included."""
    pattern = terminal.pattern
    if isinstance(pattern, PatternStr) and not pattern.flags:
        return literal(pattern.value.encode("utf-8"))
    regexp = pattern.to_regexp()
    if regexp == LARK_ESCAPED_STRING:
        regexp = ESCAPED_STRING_EQUIVALENT
    try:
        term = regex_term(regexp)
    except UnsupportedRegex as error:
        raise UnsupportedRegex(f"terminal {terminal.name}: {error}") from None
    if term is EMPTY or nullable(term):
        raise InvalidSpec(f"terminal {terminal.name} must match a non-empty string")
    return term


class GrammarAutomaton:
    """``ByteAutomaton`` of the texts that lark's LALR(1) parser for a grammar accepts
    (up to lexing ambiguity, see the module docstring). States are built on demand.

    Args:
        lark_text: the grammar in lark's syntax (``InvalidSpec`` if lark rejects it or
            it is not LALR(1)).
        start: the start rule.
        max_states: cap on the states built (``ConstraintTooLarge`` past it).

    Example:
        >>> automaton = fsm.GrammarAutomaton('start: "a"+ "c"')
        >>> automaton.terminal_names
        ('A', 'C')
    """

    def __init__(
        self, lark_text: str, start: str = "start", *, max_states: int = DEFAULT_MAX_STATES
    ) -> None:
        parser = load_lark(lark_text, start)
        check_productive(parser)
        self._table: LalrTable = table_from_lark(parser, start)
        definitions = {t.name: t for t in parser.terminals}
        used = {s for row in self._table.actions for s in row if s in definitions}
        undefined = sorted(
            {s for row in self._table.actions for s in row}
            - definitions.keys()
            - {END}
            - {rule.origin.name for rule in parser.rules}
        )
        if undefined:
            raise InvalidSpec(f"terminals {undefined} are declared without a pattern")
        ignored = set(parser.ignore_tokens)
        self._names: tuple[str, ...] = tuple(sorted(used | ignored))
        self._index = {name: i for i, name in enumerate(self._names)}
        self._terms: tuple[Term, ...] = tuple(terminal_term(definitions[n]) for n in self._names)
        self._ignored: frozenset[int] = frozenset(self._index[n] for n in ignored)
        self._max_states = max_states
        # Memos of the pure functions below, owned by this automaton.
        self._shifts: dict[tuple[Stack, int], Stack | None] = {}
        self._ends: dict[Stack, bool] = {}
        self._openings: dict[Stack, Lexeme] = {}
        self._moves: dict[Config, tuple[frozenset[tuple[Stack, Lexeme]], bool]] = {}
        self._classes: dict[frozenset[Term], tuple[np.ndarray, np.ndarray]] = {}
        # Interned states.
        self._sets: list[frozenset[Config]] = []
        self._ids: dict[frozenset[Config], int] = {}
        self._initial = self._intern(frozenset({((self._table.start_state,), ())}))

    @property
    def initial(self) -> int:
        return self._initial

    @property
    def num_states(self) -> int:
        """States interned so far."""
        return len(self._sets)

    @property
    def terminal_names(self) -> tuple[str, ...]:
        """Lark's names of the terminals in play, in the order configurations index them."""
        return self._names

    def configurations(self, state: int) -> frozenset[Config]:
        """The parser configurations ``state`` stands for."""
        return self._sets[state]

    def expand(self, state: int) -> tuple[np.ndarray, bool]:
        branches: set[tuple[Stack, Lexeme]] = set()
        final = False
        for config in self._sets[state]:
            options, accepting = self._move(config)
            branches |= options
            final = final or accepting
        representatives, classes = self._byte_classes(
            frozenset(term for _, lexeme in branches for _, term in lexeme)
        )
        targets = np.full(len(representatives), DEAD, np.int32)
        for k, byte in enumerate(representatives.tolist()):
            successor = frozenset(
                config
                for config in (_advance(branch, byte) for branch in branches)
                if config is not None
            )
            if successor:
                targets[k] = self._intern(successor)
        return targets[classes], final

    # ------------------------------------------------------------------ steps

    def _move(self, config: Config) -> tuple[frozenset[tuple[Stack, Lexeme]], bool]:
        """What the next byte continues (the lexeme itself, or a fresh one after each
        way to end it here), and whether the input may end here."""
        known = self._moves.get(config)
        if known is not None:
            return known
        stack, lexeme = config
        if not lexeme:
            result = frozenset({(stack, self._opening(stack))}), self._accepts_end(stack)
        else:
            branches = {config}
            final = False
            for terminal, term in lexeme:
                if not nullable(term):
                    continue
                after = stack if terminal in self._ignored else self._shift(stack, terminal)
                if after is None:
                    continue
                branches.add((after, self._opening(after)))
                final = final or self._accepts_end(after)
            result = frozenset(branches), final
        self._moves[config] = result
        return result

    def _opening(self, stack: Stack) -> Lexeme:
        """A fresh lexeme: the terminals ``stack`` can shift, and the ignored ones."""
        lexeme = self._openings.get(stack)
        if lexeme is None:
            expected = self._table.expected(stack)
            lexeme = tuple(
                (i, term)
                for i, (name, term) in enumerate(zip(self._names, self._terms, strict=True))
                if i in self._ignored or (name in expected and self._shift(stack, i) is not None)
            )
            self._openings[stack] = lexeme
        return lexeme

    def _shift(self, stack: Stack, terminal: int) -> Stack | None:
        key = (stack, terminal)
        if key not in self._shifts:
            self._shifts[key] = shift(self._table, stack, self._names[terminal])
        return self._shifts[key]

    def _accepts_end(self, stack: Stack) -> bool:
        known = self._ends.get(stack)
        if known is None:
            known = self._ends[stack] = accepts_end(self._table, stack)
        return known

    def _byte_classes(self, terms: frozenset[Term]) -> tuple[np.ndarray, np.ndarray]:
        """``(representatives, classes)``: one byte per class, and the class of every
        byte, such that bytes of a class have equal derivatives in all of ``terms``."""
        known = self._classes.get(terms)
        if known is None:
            partitions = list({id(p): p for p in map(byte_partition, terms)}.values())
            labels = partitions[0].astype(np.int64) if partitions else np.zeros(256, np.int64)
            for partition in partitions[1:]:
                labels = np.unique(labels * 65536 + partition, return_inverse=True)[1]
            known = np.unique(labels, return_index=True, return_inverse=True)[1:]
            self._classes[terms] = known
        return known

    def _intern(self, configs: frozenset[Config]) -> int:
        state = self._ids.get(configs)
        if state is None:
            if len(self._sets) >= self._max_states:
                raise ConstraintTooLarge(
                    f"the grammar needs more than max_states={self._max_states} automaton "
                    "states; simplify it or raise max_states"
                )
            state = len(self._sets)
            self._sets.append(configs)
            self._ids[configs] = state
        return state


def _advance(branch: tuple[Stack, Lexeme], byte: int) -> Config | None:
    """The configuration after ``byte`` extends the lexeme of ``branch``, if any term
    survives."""
    stack, lexeme = branch
    alive = []
    for terminal, term in lexeme:
        rest = derivative(term, byte)
        if rest is not EMPTY:
            alive.append((terminal, rest))
    return (stack, tuple(alive)) if alive else None
