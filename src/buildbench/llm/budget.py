"""Per-episode spending limits and accounting for model calls."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TypedDict

from buildbench.limits import limit

from .client import ChatModel
from .types import ApiError, ChatRequest, ChatResponse, Usage


class BudgetLimits(TypedDict, total=False):
    """A :class:`Budget`'s limits as plain data, e.g. ``{"max_requests": 5}``; a key left
    out is no limit."""

    max_requests: int | None
    max_input_tokens: int | None
    max_output_tokens: int | None


@dataclass
class Budget:
    """Limits on what one episode may spend, and what it has spent so far.

    A limit of None is no limit, so ``Budget()`` is a plain usage meter, but for one bound that
    always holds: the bytes of model replies an episode keeps (``BUILDBENCH_LIMIT_EPISODE_REPLY_BYTES``).
    Every reply is stored with its step and kept in the agent's conversation, so with a history
    window (which keeps the request under the context window) a model sending huge replies would
    otherwise grow the run store and the agent's memory without end. Input tokens and reply bytes
    are only known once a call returns, so those limits can be overshot by the call that crosses
    them; requests and output tokens are held exactly (see :class:`BudgetedChat`).

    Attributes:
        max_requests: Model calls allowed (retries of one call count once).
        max_input_tokens: Prompt tokens allowed.
        max_output_tokens: Generated tokens allowed.
        used: What calls that have returned spent.
        reply_bytes: UTF-8 bytes of the text and tool calls the model has replied so far.
    """

    max_requests: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    used: Usage = field(default_factory=Usage)
    reply_bytes: int = 0
    _in_flight: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("max_requests", "max_input_tokens", "max_output_tokens"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"Budget.{name}: must be >= 0 or None, got {value}")

    @property
    def remaining_output_tokens(self) -> int | None:
        if self.max_output_tokens is None:
            return None
        return max(self.max_output_tokens - self.used.output_tokens, 0)

    def refusal(self) -> ApiError | None:
        """The budget error a new call would get now, or None when it may go ahead."""
        u = self.used
        if self.max_requests is not None and u.requests + self._in_flight >= self.max_requests:
            return ApiError(
                "budget", f"request budget spent: {u.requests} of {self.max_requests} requests used"
            )
        if self.max_input_tokens is not None and u.input_tokens >= self.max_input_tokens:
            return ApiError(
                "budget", f"input-token budget spent: {u.input_tokens} of {self.max_input_tokens} tokens used"
            )
        if self.max_output_tokens is not None and u.output_tokens >= self.max_output_tokens:
            return ApiError(
                "budget",
                f"output-token budget spent: {u.output_tokens} of {self.max_output_tokens} tokens used",
            )
        cap = limit("episode_reply_bytes")
        if self.reply_bytes >= cap:
            return ApiError(
                "budget", f"reply budget spent: the model's replies hold {self.reply_bytes} bytes, "
                f"BUILDBENCH_LIMIT_EPISODE_REPLY_BYTES is {cap}",
            )
        return None

    def reserve(self) -> ApiError | None:
        """Claim one request slot (so concurrent calls cannot overrun ``max_requests``)."""
        refusal = self.refusal()
        if refusal is None:
            self._in_flight += 1
        return refusal

    def settle(self, usage: Usage, reply_bytes: int = 0) -> None:
        """Release a reserved slot and add what the call really spent."""
        self._in_flight -= 1
        self.used = self.used + usage
        self.reply_bytes += reply_bytes


class BudgetedChat(ChatModel):
    """Wraps a model so its calls are counted against a :class:`Budget`.

    A call the budget refuses returns ``ChatResponse(error=ApiError(kind="budget"))`` without
    touching the wrapped model. When an output limit is set, ``max_tokens`` of each request
    is lowered to what is left, so generation cannot overshoot it. Put this outside a
    :class:`~buildbench.llm.cache.RecordReplay` so a replayed run is budgeted the same way.
    """

    def __init__(self, inner: ChatModel, budget: Budget) -> None:
        self.inner = inner
        self.budget = budget
        self.provider = inner.provider
        self.model = inner.model

    async def generate(self, request: ChatRequest) -> ChatResponse:
        refusal = self.budget.reserve()
        if refusal is not None:
            return ChatResponse.failure(refusal, self.model)
        left = self.budget.remaining_output_tokens
        if left is not None and (request.max_tokens is None or request.max_tokens > left):
            request = dataclasses.replace(request, max_tokens=left)
        response: ChatResponse | None = None
        try:
            response = await self.inner.generate(request)
        finally:
            if response is None:
                self.budget.settle(Usage())
            else:
                self.budget.settle(response.usage, _reply_bytes(response))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def _reply_bytes(response: ChatResponse) -> int:
    """What the store and the conversation keep of a reply: its text and tool calls, UTF-8."""
    size = len(response.text.encode("utf-8", "replace"))
    for call in response.tool_calls:
        size += len(call.name.encode("utf-8", "replace")) + len(call.raw_arguments.encode("utf-8", "replace"))
    return size
