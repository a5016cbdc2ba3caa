"""LALR(1) tables read from lark, and pure parser steps on immutable stacks.

Lark builds and checks the tables; this module copies what a recogniser needs (actions
per state, rule heads and lengths) into plain immutable data and steps over it with
pure functions: a parser configuration is a tuple of states, so sharing one between
many beams or automaton states costs nothing and nothing is ever copied defensively.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import lark
from lark.exceptions import LarkError
from lark.parsers.lalr_analysis import Shift

from fsm.errors import InvalidSpec

END = "$END"
"""The end-of-input terminal of lark's tables."""

Stack = tuple[int, ...]
"""LALR state stack, bottom first."""


@dataclass(frozen=True, eq=False)
class LalrTable:
    """``actions[state][symbol]``: shift/goto target (``>= 0``) or ``~rule`` (reduce).

    ``rules[i]`` is ``(head, length)``; nonterminal gotos live in ``actions`` too, as
    in lark, since terminal and rule names never clash."""

    actions: tuple[Mapping[str, int], ...]
    rules: tuple[tuple[str, int], ...]
    start_state: int
    end_state: int

    def expected(self, stack: Stack) -> frozenset[str]:
        """Terminals (and ``END``) with an action in the state on top of ``stack``."""
        return frozenset(s for s in self.actions[stack[-1]] if s == END or s.isupper())


def load_lark(text: str, start: str) -> lark.Lark:
    """Lark's LALR(1) parser for ``text``; lark's complaints become ``InvalidSpec``."""
    try:
        return lark.Lark(text, parser="lalr", start=start)
    except LarkError as error:
        message = str(error)
        if "Reduce/Reduce collision" in message:
            raise InvalidSpec(
                "the grammar is not LALR(1), which grammar constraints require "
                f"(rewrite the rules or give them priorities): {message}"
            ) from None
        raise InvalidSpec(f"invalid lark grammar: {message}") from None


def table_from_lark(parser: lark.Lark, start: str) -> LalrTable:
    """Copy the parse table of ``parser`` (built by ``load_lark``) for rule ``start``."""
    parse_table = parser.parser.parser.parser.parse_table
    rule_ids: dict[object, int] = {}
    rules: list[tuple[str, int]] = []
    size = max(parse_table.states) + 1
    actions: list[Mapping[str, int]] = [MappingProxyType({})] * size
    for state, row in parse_table.states.items():
        entries: dict[str, int] = {}
        for symbol, (action, argument) in row.items():
            if action is Shift:
                entries[symbol] = int(argument)
                continue
            index = rule_ids.get(argument)
            if index is None:
                index = rule_ids[argument] = len(rules)
                rules.append((argument.origin.name, len(argument.expansion)))
            entries[symbol] = ~index
        actions[state] = MappingProxyType(entries)
    return LalrTable(
        tuple(actions),
        tuple(rules),
        int(parse_table.start_states[start]),
        int(parse_table.end_states[start]),
    )


def check_productive(parser: lark.Lark) -> None:
    """Raise ``InvalidSpec`` if a rule can never derive a finite string: a parse that
    enters it could never finish, and the automaton promises that every prefix it keeps
    alive can be completed."""
    rules = [(r.origin.name, [s.name for s in r.expansion if not s.is_term]) for r in parser.rules]
    productive: set[str] = set()
    changed = True
    while changed:
        changed = False
        for head, nonterminals in rules:
            if head not in productive and all(n in productive for n in nonterminals):
                productive.add(head)
                changed = True
    barren = sorted({head for head, _ in rules} - productive)
    if barren:
        raise InvalidSpec(f"rules {barren} can never derive a finite string")


def shift(table: LalrTable, stack: Stack, terminal: str) -> Stack | None:
    """The stack after reading ``terminal`` (reductions, then its shift); ``None`` if
    the parser rejects it, including after LALR's spurious reductions."""
    actions, rules = table.actions, table.rules
    while True:
        action = actions[stack[-1]].get(terminal)
        if action is None:
            return None
        if action >= 0:
            return stack + (action,)
        head, length = rules[~action]
        stack = stack[: len(stack) - length]
        stack = stack + (actions[stack[-1]][head],)


def accepts_end(table: LalrTable, stack: Stack) -> bool:
    """Whether the input may end here (lark's ``$END`` handling: reduce until the
    start rule is complete)."""
    actions, rules = table.actions, table.rules
    while True:
        action = actions[stack[-1]].get(END)
        if action is None or action >= 0:
            return False
        head, length = rules[~action]
        stack = stack[: len(stack) - length]
        goto = actions[stack[-1]][head]
        if goto == table.end_state:
            return True
        stack = stack + (goto,)
