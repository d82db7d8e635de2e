"""One model call of the pipeline, with the original's retry-with-warmer-temperature loop.

Each step asks for a reply in a fixed shape; a reply that does not parse is asked again at a
slightly higher temperature (the original's +0.1 / +0.01 per retry), and after the last try
the step reports :class:`StepFailed` instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from buildbench.llm import ChatModel, ChatRequest, Message, Usage

T = TypeVar("T")


class StepFailed(RuntimeError):
    """A pipeline step got no usable answer; the message names the step and why."""


class ModelUnavailable(RuntimeError):
    """The model endpoint failed (after its retries): the evaluation has no result at all, so
    the episode ends as an API error instead of judging constraints without the model."""

    def __init__(self, error: object, *, after_reply: bool = False) -> None:
        super().__init__(str(error))
        self.error = error
        #: An earlier call of the episode was answered (later prompts are built from the answers).
        self.after_reply = after_reply


class Asker:
    """Sends prompts to one model and keeps the usage they cost.

    Args:
        model: Any chat model.
        max_tokens: Cap per reply.
        seed: Passed to servers that honour one (same seed, same replies).
    """

    def __init__(self, model: ChatModel, *, max_tokens: int = 1200, seed: int | None = None) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.seed = seed
        self.usage = Usage()

    async def text(self, prompt: str, *, images: Sequence[bytes] = (), temperature: float = 0.0) -> str:
        request = ChatRequest((Message.user(prompt, list(images)),), temperature=temperature,
                              max_tokens=self.max_tokens, seed=self.seed)
        answered = self.usage.requests > 0
        response = await self.model.generate(request)
        self.usage = self.usage + response.usage
        if response.error is not None:
            raise ModelUnavailable(response.error, after_reply=answered)
        return response.text

    async def parsed(self, step: str, prompt: str, parse: Callable[[str], T], *, images: Sequence[bytes] = (),
                     retries: int = 3, temperature: float = 0.0, warm_by: float = 0.1) -> T:
        """``parse(reply)``, asking again (warmer) while ``parse`` raises ValueError."""
        last = ""
        for attempt in range(retries + 1):
            reply = await self.text(prompt, images=images, temperature=temperature + warm_by * attempt)
            try:
                return parse(reply)
            except ValueError as exc:
                last = f"{exc} (reply began {reply[:80]!r})"
        raise StepFailed(f"{step}: no usable reply after {retries + 1} tries: {last}")
