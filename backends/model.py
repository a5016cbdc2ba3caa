"""``Model``: a transformers causal LM as a seqstate engine, and ``load_model``.

A ``Model`` owns everything with a lifetime tied to the weights: the runner and its KV
block pool, the vocabulary seen by the constraint compiler, and the cache of compiled
token indexes. Calling it on text gives a ``SequenceState``; generators extend states
through ``generate``.

Threads: ``lock`` (reentrant) serializes everything that runs the model or touches
its KV pool storage, device masks and counters: ``generate``, ``step``, and each step
of a ``stream``. A call made from several threads therefore gives each caller the
result it would get alone (docs/design.md, "Threads").
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import torch

import fsm
from backends import generation
from backends.loading import ModelSourceError, gc_paused, load_default_hf, load_hf
from backends.masks import DeviceMasks
from backends.progress import Progress, ProgressSetting
from backends.prompts import PromptStates
from backends.runner import SUPPORTED_ATTENTION, ModelRunner
from backends.short_path import Prompt, ask_value
from backends.streaming import Stream
from fsm.vocabulary import text_bytes
from seqstate.generator import Generator
from seqstate.state import SequenceState

if TYPE_CHECKING:
    from backends.vllm.engine import VllmModel


class Model(PromptStates):
    """A transformers causal LM with a paged KV pool, usable as ``model("prompt")``.

    Usually made by ``ss.load_model()``; build one directly to wrap a model you have
    already loaded. It owns the KV block pool, the constraint vocabulary and the cache
    of compiled constraints, so keep one per set of weights.

    Args:
        hf_model: a transformers causal LM (``sdpa`` or ``eager`` attention).
        tokenizer: its tokenizer.
        block_size: tokens per KV block (sharing and copy-on-write happen per block).
        progress: ``True`` shows a tqdm bar per generation (terminal or Jupyter); a
            callable receives ``(done, total)``; ``False`` (default) is silent.
        jump_forward: append the text a constraint forces without sampling it.
        restrict_head: compute a constrained step's logits for its allowed tokens only.
        overlap_masks: build the next step's constraint masks in a worker thread while
            the forward pass runs (``mask_worker``), instead of before it. ``None``
            (default): only when the model runs on an accelerator; on the CPU the
            forward pass already uses every core, so the thread only takes turns with
            it (docs/benchmarks.md, "A fresh schema per request").

    Example::

        from transformers import AutoModelForCausalLM, AutoTokenizer
        hf = AutoModelForCausalLM.from_pretrained(path, attn_implementation="sdpa")
        model = ss.Model(hf, AutoTokenizer.from_pretrained(path))
        s = model("The capital of France is") + ss.gen(max_tokens=5)
    """

    def __init__(
        self,
        hf_model: Any,
        tokenizer: Any,
        *,
        block_size: int = 16,
        progress: ProgressSetting = False,
        jump_forward: bool = True,
        restrict_head: bool = True,
        overlap_masks: bool | None = None,
    ) -> None:
        self.hf_model = hf_model.eval()
        # Held while the model runs (generate, step, one step of a stream); code that
        # drives ``runner`` itself from several threads takes it too.
        self.lock = threading.RLock()
        self.progress = progress  # True: a tqdm bar per generation; a callable gets (done, total)
        # Append the text a constraint forces without sampling it (one forward pass).
        self.jump_forward = jump_forward
        # Compute a constrained step's logits for its allowed tokens only (backends.head).
        self.restrict_head = restrict_head
        # Build the next step's masks while the forward pass runs (see mask_worker).
        self.overlap_masks = overlap_masks
        self._mask_worker: ThreadPoolExecutor | None = None
        self.counters = {"tokens_sampled": 0, "tokens_forced": 0}
        self.tokenizer = tokenizer
        self.runner = ModelRunner(self.hf_model, block_size=block_size)
        eos = _end_of_generation_ids(hf_model, tokenizer)
        self.vocabulary = fsm.Vocabulary.from_tokenizer(
            tokenizer, size=self.runner.vocab_size, eos_ids=eos
        )
        self.text_bytes = text_bytes(self.vocabulary, tokenizer)
        # The id that ends a span: the tokenizer's EOS when it is one, else the smallest.
        preferred = tokenizer.eos_token_id
        self.end_token = (
            preferred if preferred in self.vocabulary.eos_ids else min(self.vocabulary.eos_ids)
        )
        # Generated spans record constraint states by number, so an index must live as
        # long as the states that refer to it: keep many.
        self.indexes = fsm.IndexCache(max_entries=1024)
        self.masks = DeviceMasks(self.runner.device)

    # ------------------------------------------------------------ the Engine protocol

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no special tokens added).

        Args:
            text: the text to tokenize.

        Example: ``model.encode("Hello")`` gives e.g. ``[19556]``.
        """
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def generate(self, state: SequenceState, generator: Generator[SequenceState]) -> SequenceState:
        """Run a span generator on every row of ``state`` (what ``state + generator`` calls).

        Args:
            state: the state to extend.
            generator: a span generator (``ss.gen``, ``ss.regex``, ...).

        Example: ``model.generate(model("Hi"), ss.gen(max_tokens=4))`` equals
        ``model("Hi") + ss.gen(max_tokens=4)``.
        """
        with self.lock:
            return generation.generate(self, state, generation.span_generator(generator))

    # ------------------------------------------------------------------ user API

    def step(
        self,
        state: SequenceState,
        logits: Any,
        generator: Generator[SequenceState],
        *,
        rng: Any = None,
    ) -> SequenceState:
        """One token per row from logits computed by the caller (``ss.step`` calls it).

        Args:
            state: the state to extend by one token per row.
            logits: ``[rows, vocab]`` next-token scores from your own forward pass.
            generator: the span being generated; a row ending in an unfinished span of
                it continues that span.
            rng: a ``torch.Generator`` for sampling (default: the sampler's seed).

        Example::

            s = model.step(model("Count: 1, 2,"), logits, ss.regex(r" [0-9]+"))
        """
        with self.lock:
            return generation.step(
                self, state, logits, generation.span_generator(generator), rng=rng
            )

    def ask(
        self,
        prompt: Prompt,
        output: Any = str,
        *,
        system: str | None = None,
        max_tokens: int | None = None,
        sampler: Any = None,
        chat: bool | None = None,
    ) -> Any:
        """The short path: prompt in, parsed value out (``backends.short_path``).

        ``prompt`` is a str, chat messages, or a list of either (a batch: a list of
        values comes back); it goes through the chat template when the tokenizer has one
        (``chat=False``: plain text). ``output`` is ``str``, a generator (its capture
        value) or what ``ss.json`` takes (a pydantic model gives an instance).
        ``system`` adds a system message, ``max_tokens`` and ``sampler`` go to the
        generator built for ``output``.

        Example::

            person = model.ask("Invent a person.", Person)
            pet = model.ask("Cat or dog?", ss.choice(["cat", "dog"]))
        """
        return ask_value(
            self, prompt, output, system=system, max_tokens=max_tokens, sampler=sampler, chat=chat
        )

    def stream(self, state: SequenceState, *parts: Any) -> Stream:
        """Append ``parts`` (text, states, generators) to ``state`` as ``+`` would,
        yielding each row's new text as it settles; ``.state`` is the result after the
        loop (see ``backends.streaming``). The model's lock is held during each step,
        not between them, so streams may be interleaved, in one thread or several.

        Args:
            state: the state to extend.
            parts: text, states and generators, appended in order.

        Example::

            stream = model.stream(model("Name: "), ss.regex(r"[A-Z][a-z]+", name="n"))
            for chunks in stream:          # one string per row
                print(chunks[0], end="", flush=True)
            stream.state["n"]
        """
        return Stream(self, state, parts)

    def index(self, spec: Any, *, eager: bool = False) -> fsm.TokenIndex:
        """The token index of a constraint spec, compiled once per model. Rows are built
        lazily as generation visits states; ``eager`` builds every reachable row now
        (reported through the model's ``progress`` setting).

        Args:
            spec: an ``fsm`` spec (``fsm.Regex``, ``fsm.JsonSchema``, ...) or a
                generator's ``constraint``.
            eager: build every reachable row now (long for big constraints; set
                ``model.progress = True`` to see a bar).

        Example::

            index = model.index(ss.json(Person).constraint, eager=True)
            index.num_states
        """
        index = fsm.compile_index(spec, self.vocabulary, cache=self.indexes)
        if eager:
            report = Progress(self.progress, 1, unit="rows")
            index.build_all(report.update)
            report.close()
        return index

    def generation_stats(self) -> dict[str, float]:
        """Tokens sampled and tokens forced by jump-forward (cumulative), and the share
        of forced tokens among all generated ones.

        Example: ``model.generation_stats()`` gives e.g.
        ``{"tokens_sampled": 40, "tokens_forced": 12, "forced_share": 0.23}``.
        """
        total = self.counters["tokens_sampled"] + self.counters["tokens_forced"]
        share = self.counters["tokens_forced"] / total if total else 0.0
        return {**self.counters, "forced_share": share}

    def kv_stats(self) -> dict[str, int]:
        """KV pool figures: block_size, blocks_used, blocks_total, tokens_computed, tokens_reused.

        Example: after ``s.fork(8) + ss.gen(...)``, ``tokens_reused`` counts the
        prompt tokens the forks shared instead of recomputing.
        """
        return self.runner.kv_stats()

    @property
    def mask_worker(self) -> ThreadPoolExecutor | None:
        """The thread that builds the next step's masks during the forward pass (one
        per model, started on first use), or None when masks are built before it
        (``overlap_masks``)."""
        overlap = self.device.type != "cpu" if self.overlap_masks is None else self.overlap_masks
        if not overlap:
            return None
        if self._mask_worker is None:
            self._mask_worker = ThreadPoolExecutor(1, thread_name_prefix="seqstate-masks")
        return self._mask_worker

    @property
    def device(self) -> torch.device:
        """The device the weights and the KV pool live on."""
        return self.runner.device

    def __repr__(self) -> str:
        name = getattr(self.hf_model.config, "_name_or_path", "") or type(self.hf_model).__name__
        return f"Model({name!r}, device={self.device}, dtype={self.runner.dtype})"


def _end_of_generation_ids(hf_model: Any, tokenizer: Any) -> set[int]:
    """EOS ids from the tokenizer and the generation config (which may list several)."""
    ids: set[int] = set()
    for source in (
        tokenizer.eos_token_id,
        getattr(hf_model.generation_config, "eos_token_id", None),
    ):
        if source is None:
            continue
        ids.update(source if isinstance(source, list | tuple | set) else [source])
    return ids


def _pick_device(device: str | torch.device | None) -> torch.device:
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def _pick_dtype(dtype: torch.dtype | str | None, device: torch.device) -> torch.dtype:
    if dtype is None:
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    if isinstance(dtype, str):
        resolved = getattr(torch, dtype, None)
        if not isinstance(resolved, torch.dtype):
            raise ModelSourceError(f"unknown dtype {dtype!r}; use e.g. 'float32' or 'bfloat16'")
        return resolved
    return dtype


@gc_paused()
def load_model(
    source: str | tuple[Any, Any] | None = None,
    *,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    block_size: int = 16,
    progress: ProgressSetting = False,
    engine: str = "native",
    **vllm_kwargs: Any,
) -> Model | VllmModel:
    """Load a model: ``None`` = the embedded SmolLM2-135M-Instruct, a transformers model id
    or local directory, or an already built ``(model, tokenizer)`` pair. ``device=None``
    picks CUDA when available, else CPU. ``progress=True`` shows a tqdm bar while
    generating; a callable receives ``(tokens done, max tokens)`` instead.

    The default model's first load converts its GGUF file once (~30 s on CPU, with a
    progress bar) into ``~/.cache/seqstate`` (``SEQSTATE_CACHE`` overrides); later
    loads read that directory (docs/benchmarks.md compares the time with
    transformers' own ``from_pretrained``).

    Args:
        source: ``None``, a model id or directory, or a ``(model, tokenizer)`` pair.
        device: ``"cpu"``, ``"cuda"``, a ``torch.device``, or ``None`` (auto).
        dtype: a ``torch.dtype`` or its name (``"bfloat16"``); default bfloat16 on
            CUDA, float32 on CPU.
        block_size: tokens per KV-cache block.
        progress: ``True``, a callable or ``False`` (see above).
        engine: ``"native"`` (this package's decode loop and KV pool) or ``"vllm"``:
            a ``backends.vllm.engine.VllmModel`` whose generator calls run as vLLM
            requests (needs vLLM: scripts/bootstrap_vllm.sh); ``source`` is then
            ``None`` or a model id or directory, and ``vllm_kwargs`` go to
            ``vllm.LLM`` (``device``, ``block_size`` and ``progress`` are native only).

    Raises ``ModelSourceError`` (naming the fix) when the source cannot be loaded.

    Example::

        model = ss.load_model()                       # the default model
        model = ss.load_model("path/to/model", device="cuda", dtype="bfloat16")
    """
    if engine == "vllm":
        try:
            from backends.vllm.engine import load_vllm_model
        except ImportError as error:
            raise ModelSourceError(
                f"engine='vllm' needs vLLM ({error}): pip install 'seqstate[vllm]' (its CPU "
                "build) or pip install vllm (GPUs); from a checkout, scripts/bootstrap_vllm.sh"
            ) from error
        if dtype is not None:
            vllm_kwargs["dtype"] = str(dtype).removeprefix("torch.")
        return load_vllm_model(source, **vllm_kwargs)
    if engine != "native" or vllm_kwargs:
        raise ModelSourceError(
            f"engine must be 'native' or 'vllm' (got {engine!r}); keyword arguments "
            f"{sorted(vllm_kwargs)} are for engine='vllm' only"
        )
    target = _pick_device(device)
    wanted = _pick_dtype(dtype, target)
    if source is None:
        hf_model, tokenizer = load_default_hf(wanted)
    elif isinstance(source, tuple) and len(source) == 2:
        hf_model, tokenizer = source
    elif isinstance(source, str):
        hf_model, tokenizer = load_hf(source, wanted)
    else:
        raise ModelSourceError(
            f"cannot load a model from {type(source).__name__}; pass None (the default model), "
            "a model id or directory, or a (model, tokenizer) pair"
        )
    attention = hf_model.config.get_text_config()._attn_implementation
    if attention not in SUPPORTED_ATTENTION:
        hf_model.set_attn_implementation("sdpa")
    hf_model = hf_model.to(device=target, dtype=wanted)
    return Model(hf_model, tokenizer, block_size=block_size, progress=progress)
