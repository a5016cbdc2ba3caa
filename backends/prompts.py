"""``PromptStates``: the states an engine builds from prompts (plain text or chat).

Both engines (`backends.model.Model` and `backends.vllm.engine.VllmModel`) start
programs the same way, so they share these methods; all they need is a ``tokenizer``
(for the chat template) and to be the state's engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from seqstate.state import SequenceState

Message = Mapping[str, str]


class PromptStates:
    """Mixin: ``engine(text)`` and ``engine.chat(messages)`` give states on ``self``."""

    tokenizer: Any

    def __call__(self, prompts: str | Sequence[str]) -> SequenceState:
        """A state from text: one row for a string, a ``(len, 1)`` batch for a list.
        Nothing runs yet: the text is tokenized and computed at the first generation.

        Args:
            prompts: a string, or a list of strings (one row each).

        Example::

            s = model("The capital of France is") + ss.gen(max_tokens=5)
            batch = model(["Hello", "Bonjour"]) + ss.gen(max_tokens=5)  # shape (2, 1)
        """
        texts = [prompts] if isinstance(prompts, str) else list(prompts)
        return SequenceState.from_text(self, texts)

    def chat(
        self,
        messages: Sequence[Message] | Sequence[Sequence[Message]],
        *,
        add_generation_prompt: bool = True,
    ) -> SequenceState:
        """A state from one conversation (or a list of them), via the chat template.

        Args:
            messages: ``[{"role": ..., "content": ...}, ...]``, or a list of such
                conversations (a batch, one row each).
            add_generation_prompt: end with the assistant's turn opening (default), so
                what is generated next is the answer.

        Example::

            s = model.chat([{"role": "user", "content": "Name a colour."}])
            s = s + ss.gen(max_tokens=10, name="colour")
        """
        conversations = [messages] if messages and isinstance(messages[0], Mapping) else messages
        texts = [
            self.tokenizer.apply_chat_template(
                list(conv), tokenize=False, add_generation_prompt=add_generation_prompt
            )
            for conv in conversations
        ]
        return SequenceState.from_text(self, texts)
