"""seqstate: composable structured generation over immutable sequence states."""

from seqstate.detokenize import Chunk, Decoded, DetokState, Detokenizer, StopMatch, decode_tokens
from seqstate.engine import Engine, VocabularyLike
from seqstate.errors import (
    CaptureParseError,
    DetokenizerFinished,
    EngineMismatch,
    IncompatibleOperand,
    InvalidSegment,
    MissingCapture,
    NotScalarState,
    SeqStateError,
    ShapeMismatch,
    StateIndexError,
    TokenizationMismatch,
    UnknownTokenId,
)
from seqstate.generator import Generator
from seqstate.kv import KVRef, kv_prefix
from seqstate.row import ResumePoint, Row
from seqstate.segment import UNKNOWN_STATE, Origin, Segment, Span
from seqstate.state import SequenceState, TokenView, batch

__all__ = [
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
    "UnknownTokenId",
    "VocabularyLike",
    "batch",
    "decode_tokens",
    "kv_prefix",
]
