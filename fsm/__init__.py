"""Constraint compilation: regex, choice, JSON schema and lark grammars to token indexes.

Pure numpy/numba; never imports torch or transformers. The hot modules run compiled
when ``scripts/build_native.py`` has built them (``fsm.native``; ``NATIVE`` says so).
"""

from fsm import native as _native

NATIVE = _native.activate(__path__)
"""Whether the compiled modules are in use (before any other module is imported)."""

from fsm.automaton import DEAD, ByteAutomaton, TableAutomaton
from fsm.cache import IndexCache
from fsm.compiler import compile_index
from fsm.errors import (
    ConstraintTooLarge,
    FsmError,
    InvalidSpec,
    InvalidVocabulary,
    Unsatisfiable,
    UnsupportedRegex,
    UnsupportedSchema,
)
from fsm.grammar import GrammarAutomaton
from fsm.specs import Choice, Grammar, JsonSchema, Regex
from fsm.token_index import TokenIndex
from fsm.vocabulary import Vocabulary

__all__ = [
    "Choice",
    "Regex",
    "compile_index",
    "DEAD",
    "ByteAutomaton",
    "TableAutomaton",
    "ConstraintTooLarge",
    "FsmError",
    "Grammar",
    "JsonSchema",
    "GrammarAutomaton",
    "IndexCache",
    "InvalidSpec",
    "InvalidVocabulary",
    "TokenIndex",
    "Unsatisfiable",
    "UnsupportedRegex",
    "UnsupportedSchema",
    "Vocabulary",
]
