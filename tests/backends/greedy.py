"""A minimal greedy loop over `ModelRunner`, for tests only (the real decode loop is elsewhere)."""

from __future__ import annotations

from collections.abc import Sequence

from backends.runner import ModelRunner


def greedy(
    runner: ModelRunner, prompts: Sequence[Sequence[int]], steps: int, eos: int | None = None
) -> list[list[int]]:
    """Greedy continuations of all prompts, run as one batch; a row stops after `eos`."""
    logits, refs = runner.forward([(None, list(p)) for p in prompts])
    outputs: list[list[int]] = [[] for _ in prompts]
    live = list(range(len(prompts)))
    for step in range(steps):
        chosen = logits.argmax(dim=-1).tolist()
        for row, token in zip(live, chosen):
            outputs[row].append(token)
        keep = [i for i, token in enumerate(chosen) if token != eos]
        live, refs, chosen = (
            [live[i] for i in keep],
            [refs[i] for i in keep],
            [chosen[i] for i in keep],
        )
        if not live or step == steps - 1:
            break
        logits, refs = runner.forward([(ref, [token]) for ref, token in zip(refs, chosen)])
    return outputs
