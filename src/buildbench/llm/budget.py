"""Per-episode spending limits and accounting for model calls."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TypedDict

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

    A limit of None is no limit, so ``Budget()`` is a plain usage meter. Input tokens are
    only known once a call returns, so the input limit can be overshot by the call that
    crosses it; requests and output tokens are held exactly (see :class:`BudgetedChat`).

    Attributes:
        max_requests: Model calls allowed (retries of one call count once).
        max_input_tokens: Prompt tokens allowed.
        max_output_tokens: Generated tokens allowed.
        used: What calls that have returned spent.
    """

    max_requests: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    used: Usage = field(default_factory=Usage)
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
        return None

    def reserve(self) -> ApiError | None:
        """Claim one request slot (so concurrent calls cannot overrun ``max_requests``)."""
        refusal = self.refusal()
        if refusal is None:
            self._in_flight += 1
        return refusal

    def settle(self, usage: Usage) -> None:
        """Release a reserved slot and add what the call really spent."""
        self._in_flight -= 1
        self.used = self.used + usage


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
            self.budget.settle(response.usage if response is not None else Usage())
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()
