"""A model whose answers come from a script: for scripted agents and tests, no network."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from .client import ChatModel
from .types import ApiError, ChatRequest, ChatResponse, Usage

ScriptReply = str | ChatResponse
ScriptFn = Callable[[ChatRequest], ScriptReply]

# What one image costs in the estimate (OpenAI's charge for a low-detail image).
IMAGE_TOKENS = 85


def estimate_usage(request: ChatRequest, response: ChatResponse) -> Usage:
    """Deterministic token estimate: four characters a token, a fixed price per image."""
    chars_in = sum(len(m.text) + sum(len(c.raw_arguments) for c in m.tool_calls) for m in request.messages)
    images = sum(len(m.images) for m in request.messages)
    chars_out = len(response.text) + sum(len(c.raw_arguments) for c in response.tool_calls)
    return Usage(chars_in // 4 + IMAGE_TOKENS * images, max(chars_out // 4, 1), 1)


def echo_last_user(request: ChatRequest) -> str:
    """The default script: answer with the text of the last user turn."""
    for m in reversed(request.messages):
        if m.role == "user":
            return m.text
    return ""


class ScriptedChat(ChatModel):
    """Answers from a list (in order) or from a function of the request.

    A reply is text or a full :class:`ChatResponse` (to make tool calls or fake errors).
    Replies without usage get an estimate from :func:`estimate_usage`; every request is kept
    in :attr:`requests` for inspection. A list that runs out answers with an ``api_error``.

    Args:
        replies: The replies, or a function from request to reply. Defaults to echoing the
            last user message.
        model: Name reported in responses and record/replay keys.
    """

    provider = "scripted"

    def __init__(
        self, replies: Sequence[ScriptReply] | ScriptFn = echo_last_user, model: str = "scripted"
    ) -> None:
        self.model = model
        self.requests: list[ChatRequest] = []
        if callable(replies):
            self._fn: ScriptFn | None = replies
            self._queue: list[ScriptReply] = []
        else:
            self._fn = None
            self._queue = list(replies)
        self._served = 0

    def _next(self, request: ChatRequest) -> ScriptReply | None:
        if self._fn is not None:
            return self._fn(request)
        if self._served >= len(self._queue):
            return None
        reply = self._queue[self._served]
        self._served += 1
        return reply

    async def generate(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        reply = self._next(request)
        if reply is None:
            err = ApiError(
                "api_error", f"scripted:{self.model}: script exhausted after {len(self._queue)} replies"
            )
            return ChatResponse.failure(err, self.model)
        if isinstance(reply, str):
            response = ChatResponse(text=reply, finish_reason="stop", model=self.model)
        else:
            response = dataclasses.replace(reply, model=reply.model or self.model)
            if response.finish_reason is None and response.error is None:
                response = dataclasses.replace(
                    response, finish_reason="tool_calls" if response.tool_calls else "stop"
                )
        if response.usage == Usage() and response.error is None:
            response = dataclasses.replace(response, usage=estimate_usage(request, response))
        return response
