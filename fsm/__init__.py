"""Constraint compilation: regex, choice, JSON schema and lark grammars to token indexes.

Pure numpy/numba; never imports torch or transformers.
"""

from fsm.automaton import DEAD, ByteAutomaton, TableAutomaton
from fsm.cache import IndexCache
from fsm.errors import (
    ConstraintTooLarge,
    FsmError,
    InvalidSpec,
    InvalidVocabulary,
    UnsupportedRegex,
    UnsupportedSchema,
)
from fsm.index import TokenIndex
from fsm.vocabulary import Vocabulary

__all__ = [
    "DEAD",
    "ByteAutomaton",
    "TableAutomaton",
    "ConstraintTooLarge",
    "FsmError",
    "IndexCache",
    "InvalidSpec",
    "InvalidVocabulary",
    "TokenIndex",
    "UnsupportedRegex",
    "UnsupportedSchema",
    "Vocabulary",
]
