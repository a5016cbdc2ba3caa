"""seqstate: composable structured generation over immutable sequence states."""

from seqstate.builtin_generators import (
    InvalidGenerator,
    SpanGenerator,
    choice,
    gen,
    grammar,
    json,
    regex,
    step,
)
from seqstate.detokenize import Chunk, Decoded, Detokenizer, DetokState, StopMatch, decode_tokens
from seqstate.engine import Engine, VocabularyLike
from seqstate.errors import (
    BacktrackPastSpanStart,
    CaptureParseError,
    DetokenizerFinished,
    EngineMismatch,
    GenerationError,
    IncompatibleOperand,
    InvalidSegment,
    MissingCapture,
    NotScalarState,
    SeqStateError,
    ShapeMismatch,
    StateIndexError,
    TokenizationMismatch,
    TruncatedCapture,
    UnknownTokenId,
    UnsupportedOnEngine,
)
from seqstate.generator import Generator
from seqstate.hooks import Accept, Backtrack, Replace, Resample, TokenEvent
from seqstate.kv import KVRef, kv_prefix
from seqstate.row import ResumePoint, Row
from seqstate.samplers import Beam, Greedy, InvalidSampler, Sample, beam, greedy, sample
from seqstate.segment import UNKNOWN_STATE, Origin, Segment, Span
from seqstate.state import SequenceState, TokenView, batch

_CONSTRAINT_ERRORS = (
    "ConstraintTooLarge",
    "FsmError",
    "InvalidSpec",
    "Unsatisfiable",
    "UnsupportedRegex",
    "UnsupportedSchema",
)
"""Errors of the constraint compiler (all derive from `SeqStateError`), exported here
lazily: importing ``fsm`` loads numba, which ``import seqstate`` does not."""


__all__ = [
    *_CONSTRAINT_ERRORS,
    "Accept",
    "BacktrackPastSpanStart",
    "GenerationError",
    "Backtrack",
    "Beam",
    "Greedy",
    "InvalidGenerator",
    "InvalidSampler",
    "Replace",
    "Resample",
    "Sample",
    "SpanGenerator",
    "TokenEvent",
    "beam",
    "choice",
    "gen",
    "grammar",
    "greedy",
    "json",
    "load_model",
    "Model",
    "regex",
    "sample",
    "step",
    "UNKNOWN_STATE",
    "CaptureParseError",
    "Chunk",
    "Decoded",
    "DetokState",
    "Detokenizer",
    "DetokenizerFinished",
    "Engine",
    "EngineMismatch",
    "Generator",
    "IncompatibleOperand",
    "InvalidSegment",
    "KVRef",
    "MissingCapture",
    "NotScalarState",
    "Origin",
    "ResumePoint",
    "Row",
    "Segment",
    "SeqStateError",
    "SequenceState",
    "ShapeMismatch",
    "Span",
    "StateIndexError",
    "StopMatch",
    "TokenView",
    "TokenizationMismatch",
    "TruncatedCapture",
    "UnknownTokenId",
    "UnsupportedOnEngine",
    "VocabularyLike",
    "batch",
    "decode_tokens",
    "kv_prefix",
]


def __getattr__(name: str):
    """``ss.load_model`` and ``ss.Model`` come from ``backends`` on first use, so that
    ``import seqstate`` never loads torch (and no import cycle exists); the constraint
    errors come from ``fsm`` on first use."""
    if name in ("load_model", "Model"):
        import backends.model

        return getattr(backends.model, name)
    if name in _CONSTRAINT_ERRORS:
        import fsm.errors

        return getattr(fsm.errors, name)
    raise AttributeError(f"module 'seqstate' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names plus the lazy ones (``load_model``, ``Model``, the constraint
    errors), so ``dir(ss)`` and tab completion show them before first use."""
    return sorted(set(globals()) | set(__all__))
