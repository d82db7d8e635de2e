"""Client for Anthropic's messages API through the ``anthropic`` SDK (its retries off).

Mapping from our provider-neutral messages: system turns become the ``system`` parameter,
tool results become ``tool_result`` blocks in a user turn, and consecutive turns of the same
role are merged because the API wants user and assistant turns to alternate.
"""

from __future__ import annotations

from typing import Any

import anthropic

from .client import (
    AttemptFailed,
    LoopLocal,
    RemoteChatModel,
    classify_sdk_error,
    resolve_api_key,
)
from .retry import RetryPolicy
from .transport import capped_http_client
from .types import (
    ChatRequest,
    ChatResponse,
    ImagePart,
    Message,
    Part,
    TextPart,
    Tool,
    ToolCall,
    Usage,
    token_count,
)

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def _blocks(parts: tuple[Part, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in parts:
        if isinstance(p, TextPart):
            if p.text:  # the API rejects empty text blocks
                out.append({"type": "text", "text": p.text})
        elif isinstance(p, ImagePart):
            out.append(
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": p.base64}}
            )
    return out


def to_anthropic_messages(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """Split ours into the ``system`` text and the alternating ``messages`` list."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            system.append(m.text)
            continue
        if m.role == "tool":
            role = "user"
            blocks: list[dict[str, Any]] = [
                {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": _blocks(m.parts) or ""}
            ]
        elif m.role == "assistant":
            role = "assistant"
            blocks = _blocks(m.parts) + [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls
            ]
        else:
            role = "user"
            blocks = _blocks(m.parts)
        if not blocks:
            continue  # the API rejects a turn with no content (e.g. an empty assistant reply)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return "\n\n".join(system), turns


def to_anthropic_tools(tools: tuple[Tool, ...]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def to_anthropic_tool_choice(choice: str) -> dict[str, Any]:
    if choice == "required":
        return {"type": "any"}
    if choice in ("auto", "none"):
        return {"type": choice}
    return {"type": "tool", "name": choice}


def parse_anthropic_message(message: Any) -> ChatResponse:
    """Our response from an SDK ``Message``; raises AttemptFailed when it is malformed."""
    try:
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(ToolCall.parse(str(block.id), str(block.name), block.input))
        u = message.usage
        input_tokens = sum(
            token_count(getattr(u, name, 0), f"usage.{name}")
            for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        reason = message.stop_reason
        return ChatResponse(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=Usage(input_tokens, token_count(u.output_tokens, "usage.output_tokens"), 1),
            finish_reason=_FINISH.get(reason, reason),
            model=str(message.model or ""),
        )
    except (AttributeError, TypeError, ValueError) as exc:
        raise AttemptFailed(f"malformed response: {type(exc).__name__}: {exc}", retryable=True) from exc


class AnthropicChat(RemoteChatModel):
    """A Claude model through the messages API.

    Args:
        model: Model name (``claude-...``).
        base_url: API root without ``/v1``; None for api.anthropic.com.
        api_key: The key; None reads ``api_key_env``.
        api_key_env: Where to find the key.
        require_key: Fail at construction when no key is found; None means "unless
            ``base_url`` is given" (a local stand-in then gets a placeholder key).
        timeout_s: Limit per HTTP attempt, seconds.
        retry: Retry policy; None for the default.
        default_max_tokens: Sent when a request sets no ``max_tokens`` (the API requires one).

    ``temperature`` is sent in the body as the API reads it; ``seed`` is ignored because the
    API has none.
    """

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        require_key: bool | None = None,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        default_max_tokens: int = 4096,
    ) -> None:
        super().__init__(model, timeout_s, retry)
        self.base_url = base_url
        self.default_max_tokens = default_max_tokens
        key = resolve_api_key(f"anthropic:{model}", api_key, api_key_env, base_url, require_key)
        self._clients = LoopLocal(
            lambda: anthropic.AsyncAnthropic(api_key=key, base_url=base_url, max_retries=0, timeout=timeout_s,
                                             http_client=capped_http_client(anthropic))
        )

    def request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments for ``messages.create``."""
        system, turns = to_anthropic_messages(request.messages)
        kw: dict[str, Any] = {
            "model": self.model,
            "messages": turns,
            "max_tokens": request.max_tokens or self.default_max_tokens,
        }
        if system:
            kw["system"] = system
        if request.tools:
            kw["tools"] = to_anthropic_tools(request.tools)
        if request.tool_choice is not None:
            kw["tool_choice"] = to_anthropic_tool_choice(request.tool_choice)
        if request.stop:
            kw["stop_sequences"] = list(request.stop)
        sampling = {"temperature": request.temperature, "top_p": request.top_p}
        if any(v is not None for v in sampling.values()):
            # This SDK version has no sampling arguments; the API still reads the fields.
            kw["extra_body"] = {k: v for k, v in sampling.items() if v is not None}
        return kw

    def _prepare(self) -> None:
        self._clients.get()

    async def _attempt(self, request: ChatRequest) -> ChatResponse:
        client = self._clients.get()
        try:
            message = await client.messages.create(**self.request_kwargs(request), timeout=self.timeout_s)
        except Exception as exc:
            fail = classify_sdk_error(exc, anthropic)
            if fail is None:
                raise
            raise fail from exc
        return parse_anthropic_message(message)

    async def aclose(self) -> None:
        await self._clients.aclose()
