"""``VllmModel``: a seqstate engine whose generator calls run as vLLM requests.

``ss.load_model(path, engine="vllm", **vllm_kwargs)`` builds a ``vllm.LLM`` and wraps
it. States are the same values as on the native engine; only ``generate`` differs:
each call sends one request per row (``backends.vllm.requests``), all rows of a call
in one ``LLM.generate`` batch, and vLLM's automatic prefix caching supplies the KV reuse
the native block pool gives (rows carry no ``KVRef``: vLLM finds their blocks by
hashing their token ids). ``kv_stats`` reports those prefix-cache hits.

What cannot run on vLLM (beam search, hooks, banned strings, resuming a cut span)
raises ``ss.UnsupportedOnEngine`` before any request is sent; ``ss.step`` works (it
needs no forward pass); ``stream`` yields one chunk per part, not per token.

Threads: ``lock`` serializes calls into the ``LLM`` (which is not thread-safe).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch
from vllm import LLM
from vllm.platforms import current_platform

import fsm
from backends.generation import span_generator
from backends.loading import ModelSourceError
from backends.masks import DeviceMasks
from backends.prompts import PromptStates
from backends.short_path import ask_value
from backends.streaming import new_text
from backends.vllm.processor import model_tokens
from backends.vllm.requests import check_supported, run_call
from fsm.vocabulary import text_bytes
from seqstate.errors import GenerationError
from seqstate.state import SequenceState

CPU_BLOCK_SIZE = 32
"""Only whole blocks are shared by the prefix cache, so chained calls reuse more of
their prefix with small blocks; vLLM's CPU default is 128 tokens, and its CPU attention
needs a multiple of 32 (the native pool uses 16)."""

PROCESSOR = "backends.vllm.program_processor:ProgramLogitsProcessor"

DEFAULTS: dict[str, Any] = {
    "enable_prefix_caching": True,
    # Log-probabilities after the constraint, as the native loop records them.
    "logprobs_mode": "processed_logprobs",
}


@dataclass
class PrefixCacheStats:
    """Prompt tokens sent and found in vLLM's prefix cache, summed over requests."""

    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    generated_tokens: int = 0

    def record(self, outputs: Sequence[Any]) -> None:
        for output in outputs:
            self.requests += 1
            self.prompt_tokens += len(output.prompt_token_ids or ())
            self.cached_tokens += int(output.num_cached_tokens or 0)
            self.generated_tokens += sum(len(c.token_ids) for c in output.outputs)


class VllmModel(PromptStates):
    """A ``vllm.LLM`` as a seqstate engine, usable as ``model("prompt")``."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.lock = threading.RLock()
        self.tokenizer = llm.get_tokenizer()
        # The vocabulary and end token the processor builds in vLLM's engine process.
        tokens = model_tokens(llm.llm_engine.model_config)
        self.vocabulary = tokens.vocabulary
        self.end_token = tokens.end_token
        self.text_bytes = text_bytes(self.vocabulary, self.tokenizer)
        # Spans record constraint states by number: keep indexes as long as states.
        self.indexes = fsm.IndexCache(max_entries=1024)
        # What ``prepare_row`` and ``ss.step`` read from an engine.
        self.device = torch.device("cpu")
        self.masks = DeviceMasks(self.device)
        self.restrict_head = False
        # Write the text a constraint forces as its canonical tokens, as the native
        # engine does (here one forced token per step: same tokens, no speed-up).
        self.jump_forward = True
        self.counters = {"tokens_sampled": 0, "tokens_forced": 0}
        self.cache_stats = PrefixCacheStats()

    # ------------------------------------------------------------ the Engine protocol

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def generate(self, state: SequenceState, generator: Any) -> SequenceState:
        if state.engine is not self:
            raise GenerationError("this state belongs to another model")
        span = span_generator(generator)
        check_supported(span)
        with self.lock:
            return run_call(self, state, span)

    # ------------------------------------------------------------------ user API

    def ask(self, prompt: Any, output: Any = str, **options: Any) -> Any:
        """The short path: prompt in, parsed value out (``Model.ask``, ``backends.short_path``)."""
        return ask_value(self, prompt, output, **options)

    def step(
        self, state: SequenceState, logits: Any, generator: Any, *, rng: Any = None
    ) -> SequenceState:
        """One token per row from logits computed by the caller, as on the native engine."""
        from backends.decode.step import step

        with self.lock:  # step reads vocabulary, masks, device, end_token, index: no runner
            return step(cast(Any, self), state, logits, generator, rng=rng)

    def stream(self, state: SequenceState, *parts: Any) -> PartStream:
        """Append ``parts`` as ``+`` would, yielding each row's new text once per part
        (vLLM runs a span whole here); ``.state`` is the result once exhausted."""
        return PartStream(state, parts)

    def index(self, spec: Any, *, eager: bool = False) -> fsm.TokenIndex:
        """The token index of a constraint spec, compiled once per model (the engine
        replays vLLM's tokens through it to record constraint states); ``eager``
        builds every reachable row now."""
        index = fsm.compile_index(spec, self.vocabulary, cache=self.indexes)
        if eager:
            index.build_all()
        return index

    def generation_stats(self) -> dict[str, float]:
        """Tokens generated (forced tokens are not told apart: vLLM runs each one)."""
        return {**self.counters, "forced_share": 0.0}

    def kv_stats(self) -> dict[str, float]:
        """vLLM's prefix cache as seen by this engine's requests: prompt tokens sent,
        tokens found cached (``tokens_reused``), tokens computed (prompt tokens not
        cached plus generated ones), the hit rate, and the cache's block size."""
        stats = self.cache_stats
        computed = stats.prompt_tokens - stats.cached_tokens + stats.generated_tokens
        rate = stats.cached_tokens / stats.prompt_tokens if stats.prompt_tokens else 0.0
        return {
            "block_size": int(self.llm.llm_engine.vllm_config.cache_config.block_size),
            "requests": stats.requests,
            "prompt_tokens": stats.prompt_tokens,
            "tokens_reused": stats.cached_tokens,
            "tokens_computed": computed,
            "prefix_cache_hit_rate": rate,
        }

    def __repr__(self) -> str:
        name = self.llm.llm_engine.model_config.model
        return f"VllmModel({name!r})"


class PartStream(Iterator[list[list[str]]]):
    """``VllmModel.stream``: one chunk list per part; ``state`` holds the result."""

    def __init__(self, state: SequenceState, parts: tuple[Any, ...]) -> None:
        if not parts:
            raise ValueError("stream() needs at least one part to append (text or a generator)")
        self._parts = iter(parts)
        self._current = state
        self.state: SequenceState | None = None

    def __next__(self) -> list[list[str]]:
        part = next(self._parts, None)
        if part is None:
            self.state = self._current
            raise StopIteration
        extended = self._current + part
        chunks = new_text(self._current, extended)
        self._current = extended
        return chunks


def load_vllm_model(source: object = None, **vllm_kwargs: Any) -> VllmModel:
    """A ``VllmModel`` on ``source`` (a model id or directory vLLM can load; ``None``: the
    embedded default model's transformers directory, in float32 as the native engine
    runs it on CPU; anything else is a ``ModelSourceError``). ``vllm_kwargs`` go to ``vllm.LLM`` over ``DEFAULTS``; the program
    processor (``PROCESSOR``) is added to ``logits_processors``."""
    if source is not None and not isinstance(source, str):
        raise ModelSourceError(
            f"engine='vllm' loads a model id or directory (or None), not {type(source).__name__}"
        )
    if source is None:
        source = str(_default_model_dir())
        vllm_kwargs.setdefault("dtype", "float32")
    options = {**DEFAULTS, **vllm_kwargs}
    if current_platform.is_cpu():
        options.setdefault("block_size", CPU_BLOCK_SIZE)
    # By name: vLLM's workers import it after their start-up (a class passed here is
    # unpickled earlier, and numba's objects then break vLLM's kernel registration).
    options["logits_processors"] = [*options.get("logits_processors", ()), PROCESSOR]
    return VllmModel(LLM(source, **options))


def _default_model_dir() -> Any:
    """The default model's transformers directory, converted from its GGUF on first use."""
    from backends.loading import default_model_dir, load_default_hf

    folder = default_model_dir()
    if not (folder / "config.json").exists():
        load_default_hf()  # converts and caches; the weights loaded here are dropped
    return folder
