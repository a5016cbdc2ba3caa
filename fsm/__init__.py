"""Constraint compilation: regex, choice, JSON schema and lark grammars to token indexes.

Pure numpy/numba; never imports torch or transformers.
"""

from fsm.automaton import DEAD, ByteAutomaton, TableAutomaton

__all__ = ["DEAD", "ByteAutomaton", "TableAutomaton"]
