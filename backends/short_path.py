"""The short path: ``model.ask(prompt, output)`` gives a parsed value, for callers who
do not need states.

It is the full form, written once for them: the prompt goes through the model's chat
template (when it has one) and one generator, named ``answer``, extends it; its capture
is returned. ::

    person = model.ask("Invent a person.", Person)
    # is
    s = model.chat([{"role": "user", "content": "Invent a person."}])
    person = (s + ss.json(Person, name="answer"))["answer"]

``output`` is ``str`` (free text), a generator (``ss.regex(...)``, ``ss.choice(...)``,
...: its capture value), or anything ``ss.json`` takes (a pydantic model, a Python
type such as ``int`` or ``list[str]``, a JSON schema dict), validated into a value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from seqstate.builtin_generators import SpanGenerator, gen, json
from seqstate.errors import IncompatibleOperand
from seqstate.samplers import SamplerSpec
from seqstate.state import SequenceState

ANSWER = "answer"
Message = Mapping[str, str]
Prompt = str | Sequence[Message] | Sequence[str] | Sequence[Sequence[Message]]


def output_generator(
    output: Any, *, max_tokens: int | None = None, sampler: SamplerSpec | None = None
) -> SpanGenerator:
    """The generator that produces ``output``: a generator as given (named ``answer``
    when it has no name; ``max_tokens``/``sampler`` override its own), free text for
    ``str``, else ``ss.json(output)``."""
    if isinstance(output, SpanGenerator):
        changes: dict[str, Any] = {"max_tokens": max_tokens, "sampler": sampler}
        changes = {key: value for key, value in changes.items() if value is not None}
        if output.name is None:
            changes["name"] = ANSWER
        return replace(output, **changes) if changes else output
    if output is str:
        return gen(name=ANSWER, max_tokens=max_tokens, sampler=sampler)
    return json(output, name=ANSWER, max_tokens=max_tokens, sampler=sampler)


def _user(text: str) -> list[Message]:
    return [{"role": "user", "content": text}]


def _entries(prompt: Any) -> tuple[list[list[Message]], bool] | None:
    """One conversation per batch entry and whether the prompt was a batch (None: not a
    prompt)."""
    if isinstance(prompt, str):
        return [_user(prompt)], False
    if not isinstance(prompt, Sequence) or not prompt:
        return None
    if all(isinstance(message, Mapping) for message in prompt):
        return [list(prompt)], False
    if all(isinstance(text, str) for text in prompt):
        return [_user(text) for text in prompt], True
    if all(isinstance(conv, Sequence) and not isinstance(conv, str) for conv in prompt):
        return [list(conv) for conv in prompt], True
    return None


def _conversations(prompt: Prompt, system: str | None) -> tuple[list[list[Message]], bool]:
    """One conversation per batch entry (the system message first), and whether the
    prompt was a batch."""
    found = _entries(prompt)
    if found is None:
        raise IncompatibleOperand(
            "ask() takes a str, a list of chat messages ({'role': ..., 'content': ...}), "
            f"or a list of either for a batch; got {prompt!r:.80}"
        )
    entries, batched = found
    if system is not None:
        entries = [[{"role": "system", "content": system}, *conv] for conv in entries]
    return entries, batched


def _plain_text(conversation: list[Message]) -> str:
    """A conversation without a chat template: its contents, one paragraph each (only
    system and user messages have an obvious plain-text form)."""
    roles = {message.get("role") for message in conversation}
    if not roles <= {"system", "user"}:
        raise IncompatibleOperand(
            "this model has no chat template, so ask() takes only system and user "
            "messages (joined as plain text); build the prompt with model(...) instead"
        )
    return "\n\n".join(message["content"] for message in conversation)


def prompt_state(
    model: Any, prompt: Prompt, *, system: str | None = None, chat: bool | None = None
) -> tuple[SequenceState, bool]:
    """The state a prompt starts from (chat template when ``chat`` is true, or when it is
    None and the tokenizer has one) and whether the prompt was a batch."""
    conversations, batched = _conversations(prompt, system)
    if chat is None:
        chat = getattr(model.tokenizer, "chat_template", None) is not None
    if chat:
        return model.chat(conversations), batched
    return model([_plain_text(conv) for conv in conversations]), batched


def ask_value(
    model: Any,
    prompt: Prompt,
    output: Any = str,
    *,
    system: str | None = None,
    max_tokens: int | None = None,
    sampler: SamplerSpec | None = None,
    chat: bool | None = None,
) -> Any:
    """The parsed value ``output`` names, generated after ``prompt``; a list of values
    for a batch of prompts. With several samples per prompt (``ss.beam(n)``) the first
    (the best beam) is returned."""
    generator = output_generator(output, max_tokens=max_tokens, sampler=sampler)
    state, batched = prompt_state(model, prompt, system=system, chat=chat)
    result = state + generator
    values = result.capture(generator.name or ANSWER)
    if result.shape == (1, 1):
        return values  # the value itself, not nested lists
    firsts = [row[0] for row in values]
    return firsts if batched else firsts[0]
