"""Client for OpenAI-compatible chat completions: OpenAI, vLLM, SGLang, Ollama, OpenRouter...

Uses ``openai.AsyncOpenAI`` with the SDK's own retries switched off, so the retry policy
here is the only one and its attempts are counted.
"""

from __future__ import annotations

from typing import Any

import openai

from .client import (
    AttemptFailed,
    LLMConfigError,
    LoopLocal,
    RemoteChatModel,
    classify_sdk_error,
    resolve_api_key,
)
from .retry import RetryPolicy
from .transport import capped_http_client
from .types import ChatRequest, ChatResponse, ImagePart, Message, TextPart, Tool, ToolCall, Usage, token_count


def _openai_parts(message: Message) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    out: list[dict[str, Any]] = []
    for p in message.content:
        if isinstance(p, TextPart):
            out.append({"type": "text", "text": p.text})
        else:
            out.append({"type": "image_url", "image_url": {"url": p.data_url}})
    return out


def _image_parts(images: tuple[ImagePart, ...]) -> list[dict[str, Any]]:
    return [{"type": "image_url", "image_url": {"url": i.data_url}} for i in images]


def to_openai_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Our messages in chat-completions form.

    Tool results may only hold text there, so images a tool returned are moved into a user
    message placed after the run of tool results (which must directly follow the call).
    """
    out: list[dict[str, Any]] = []
    deferred: list[dict[str, Any]] = []
    for m in messages:
        if m.role != "tool" and deferred:
            out.extend(deferred)
            deferred = []
        if m.role == "system":
            out.append({"role": "system", "content": m.text})
        elif m.role == "user":
            out.append({"role": "user", "content": _openai_parts(m)})
        elif m.role == "assistant":
            # null content is only allowed beside tool calls
            msg: dict[str, Any] = {"role": "assistant", "content": m.text or (None if m.tool_calls else "")}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.raw_arguments},
                    }
                    for c in m.tool_calls
                ]
            out.append(msg)
        else:
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.text})
            if m.images:
                note = {"type": "text", "text": f"Images returned by tool call {m.tool_call_id}:"}
                deferred.append({"role": "user", "content": [note, *_image_parts(m.images)]})
    out.extend(deferred)
    return out


def to_openai_tools(tools: tuple[Tool, ...]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def to_openai_tool_choice(choice: str) -> str | dict[str, Any]:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _reply_text(msg: Any, finish_reason: Any) -> tuple[str, str | None]:
    """The assistant message's text and finish reason: its content (a string, or text parts as
    some servers send), else its refusal, with the reason ``refusal`` (a model's "I can't help
    with that" comes there with no content; it is what the model said, and the episode's record
    must show it)."""
    content = msg.content
    if isinstance(content, list):
        content = "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if content is not None and not isinstance(content, str):
        raise TypeError(f"message.content: expected text, got {type(content).__name__}")
    refusal = getattr(msg, "refusal", None)
    if not content and isinstance(refusal, str) and refusal:
        return refusal, "refusal"
    return content or "", None if finish_reason is None else str(finish_reason)


def parse_openai_completion(completion: Any) -> ChatResponse:
    """Our response from an SDK ``ChatCompletion``; raises AttemptFailed when it is malformed."""
    try:
        choices = completion.choices
        if not choices:
            raise AttemptFailed("malformed response: no choices", retryable=True)
        choice = choices[0]
        msg = choice.message
        calls = tuple(
            ToolCall.parse(str(c.id), str(c.function.name), c.function.arguments)
            for c in (msg.tool_calls or [])
        )
        usage = completion.usage
        text, finish_reason = _reply_text(msg, choice.finish_reason)
        return ChatResponse(
            text=text,
            tool_calls=calls,
            usage=Usage(
                token_count(getattr(usage, "prompt_tokens", 0), "usage.prompt_tokens"),
                token_count(getattr(usage, "completion_tokens", 0), "usage.completion_tokens"),
                1,
            ),
            finish_reason=finish_reason,
            model=str(completion.model or ""),
        )
    except (AttributeError, TypeError, ValueError, IndexError) as exc:
        raise AttemptFailed(f"malformed response: {type(exc).__name__}: {exc}", retryable=True) from exc


def _official(base_url: str | None) -> bool:
    return base_url is None or "api.openai.com" in base_url


class OpenAIChat(RemoteChatModel):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        model: Model name as the server knows it.
        base_url: Endpoint root (``http://host:8000/v1``); None for api.openai.com (the SDK
            then also honours ``OPENAI_BASE_URL``).
        api_key: The key; None reads the environment variable ``api_key_env``.
        api_key_env: Where to find the key.
        require_key: Fail at construction when no key is found. None means "only for
            api.openai.com" (no ``base_url``): local servers get a placeholder key.
        timeout_s: Limit per HTTP attempt, seconds.
        retry: Retry policy; None for the default.
        provider: Name used in logs and in record/replay keys.
        max_tokens_field: ``max_completion_tokens`` (OpenAI's current name, which its
            reasoning models require) or ``max_tokens`` (what most local servers read).
            None picks the first for api.openai.com and the second elsewhere.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        require_key: bool | None = None,
        timeout_s: float = 120.0,
        retry: RetryPolicy | None = None,
        provider: str = "openai",
        max_tokens_field: str | None = None,
    ) -> None:
        super().__init__(model, timeout_s, retry)
        self.provider = provider
        self.base_url = base_url
        key = resolve_api_key(f"{provider}:{model}", api_key, api_key_env, base_url, require_key)
        if max_tokens_field not in (None, "max_tokens", "max_completion_tokens"):
            raise LLMConfigError(
                f"max_tokens_field: expected 'max_tokens' or 'max_completion_tokens', got {max_tokens_field!r}"
            )
        self.max_tokens_field = max_tokens_field or (
            "max_completion_tokens" if _official(base_url) else "max_tokens"
        )
        self._clients = LoopLocal(
            lambda: openai.AsyncOpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=timeout_s,
                                       http_client=capped_http_client(openai))
        )

    def request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (no defaults sent)."""
        kw: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(request.messages)}
        if request.tools:
            kw["tools"] = to_openai_tools(request.tools)
        if request.tool_choice is not None:
            kw["tool_choice"] = to_openai_tool_choice(request.tool_choice)
        if request.temperature is not None:
            kw["temperature"] = request.temperature
        if request.top_p is not None:
            kw["top_p"] = request.top_p
        if request.max_tokens is not None:
            kw[self.max_tokens_field] = request.max_tokens
        if request.stop:
            kw["stop"] = list(request.stop)
        if request.seed is not None:
            kw["seed"] = request.seed
        return kw

    def _prepare(self) -> None:
        self._clients.get()

    async def _attempt(self, request: ChatRequest) -> ChatResponse:
        client = self._clients.get()
        try:
            completion = await client.chat.completions.create(
                **self.request_kwargs(request), timeout=self.timeout_s
            )
        except Exception as exc:
            fail = classify_sdk_error(exc, openai)
            if fail is None:
                raise
            raise fail from exc
        return parse_openai_completion(completion)

    async def aclose(self) -> None:
        await self._clients.aclose()
