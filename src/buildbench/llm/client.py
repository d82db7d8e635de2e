"""The model interface and the retry loop shared by the HTTP clients.

``ChatModel.generate`` never raises for anything the server or network does: failures come
back as a :class:`ChatResponse` whose ``error`` is set, so an episode can log them and go on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from abc import ABC, abstractmethod
from typing import Any

from buildbench.limits import limit

from .retry import Backoff, RetryPolicy, parse_retry_after
from .transport import ResponseTooLarge
from .types import ApiError, ChatRequest, ChatResponse, ErrorKind

log = logging.getLogger(__name__)

# Statuses worth another try: request timeout, conflict, rate limit, and every server error.
_RETRY_STATUSES = frozenset({408, 409, 429})
# How servers refuse a request longer than the model's context window (OpenAI and OpenRouter
# "maximum context length", code context_length_exceeded; vLLM "maximum model length"; SGLang
# "the model's context length"; Anthropic "prompt is too long" and 413 request_too_large),
# with the statuses they use for it.
_CONTEXT_STATUSES = frozenset({400, 413, 422})
_CONTEXT_WORDS = re.compile(r"context[ _-]?(length|window)|maximum model length|max_model_len|prompt is too long"
                            r"|request_too_large|too many (input )?tokens", re.IGNORECASE)


class LLMConfigError(ValueError):
    """A model client was configured wrongly (unknown provider, missing key, bad option)."""


class ChatModel(ABC):
    """A chat model: one async ``generate`` that turns a request into a response.

    Attributes:
        provider: Short provider name (``openai``, ``anthropic``, ``scripted``...); part of
            the record/replay key.
        model: The model name sent to the provider.
    """

    provider: str = "unknown"
    model: str = ""

    @abstractmethod
    async def generate(self, request: ChatRequest) -> ChatResponse:
        """Answer ``request``. Failures come back as ``ChatResponse(error=...)``, not raised."""

    def generate_sync(self, request: ChatRequest) -> ChatResponse:
        """Blocking ``generate`` for scripts and notebooks; not usable inside a running loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.generate(request))
        raise RuntimeError(
            "generate_sync called from inside a running event loop; use 'await model.generate(...)'"
        )

    async def aclose(self) -> None:  # noqa: B027 (optional hook, deliberately not abstract)
        """Release network resources; the default has none."""


# Sent when a local server needs no key; the SDKs refuse to start without one.
PLACEHOLDER_KEY = "not-needed"


def resolve_api_key(
    label: str, api_key: str | None, api_key_env: str, base_url: str | None, require_key: bool | None
) -> str:
    """The key to send: ``api_key``, else ``$api_key_env``, else a placeholder when allowed.

    Args:
        label: ``provider:model``, for the error message.
        require_key: Whether a missing key is an error; None means "only when there is no
            ``base_url``" (a hosted API), since local servers usually need none.

    Raises:
        LLMConfigError: No key was found and one is required; names the variable to set.
    """
    key = api_key or os.environ.get(api_key_env)
    if key:
        return key
    needs_key = base_url is None if require_key is None else require_key
    if needs_key:
        raise LLMConfigError(
            f"{label}: no API key; set the environment variable {api_key_env} (from Python, api_key= works too)"
        )
    return PLACEHOLDER_KEY


class AttemptFailed(Exception):
    """One HTTP attempt failed; the retry loop decides whether to try again."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status_code: int | None = None,
        retry_after_s: float | None = None,
        kind: ErrorKind = "api_error",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status_code = status_code
        self.retry_after_s = retry_after_s
        self.kind = kind


def classify_sdk_error(exc: BaseException, sdk: Any) -> AttemptFailed | None:
    """Map an exception from the ``openai`` or ``anthropic`` SDK (same class names) to a failure.

    Returns None for exceptions that are not about the server or the network (our bugs),
    which the caller must let propagate.
    """
    too_large = next((e for e in (exc, exc.__cause__, exc.__context__) if isinstance(e, ResponseTooLarge)), None)
    if too_large is not None:  # the same endpoint would answer the same way again: not retried
        return AttemptFailed(str(too_large), retryable=False)
    if isinstance(exc, sdk.APITimeoutError | asyncio.TimeoutError | TimeoutError):
        return AttemptFailed("request timed out", retryable=True, kind="timeout")
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        said = _body_snippet(exc.response) or exc.message
        if status in _CONTEXT_STATUSES and _CONTEXT_WORDS.search(said):
            return AttemptFailed(f"HTTP {status}: the request is over the model's context window: {said}",
                                 retryable=False, status_code=status, kind="context_length")
        return AttemptFailed(
            f"HTTP {status}: {said}",
            retryable=status in _RETRY_STATUSES or status >= 500,
            status_code=status,
            retry_after_s=parse_retry_after(exc.response.headers),
        )
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__ or exc
        # a reset connection's exception often has no text: its type is then all there is to say
        return AttemptFailed(f"connection failed: {str(cause) or type(cause).__name__}", retryable=True)
    if isinstance(exc, sdk.APIResponseValidationError | json.JSONDecodeError | UnicodeDecodeError):
        return AttemptFailed(f"malformed response: {exc}", retryable=True)
    if isinstance(exc, RecursionError):  # the SDK's json.loads of a body nested 100,000 deep
        return AttemptFailed("malformed response: nested too deeply to read", retryable=True)
    return None


def _body_snippet(response: Any, limit: int = 300) -> str:
    """The start of an error body for the message, or "" when it cannot be read."""
    try:
        return str(response.text)[:limit].strip()
    except Exception:  # an unread or undecodable body must not hide the status error
        return ""


class RemoteChatModel(ChatModel):
    """A model behind HTTP: subclasses make one attempt, this class retries and times.

    Subclasses implement :meth:`_attempt`, which returns a successful response (``latency_s``
    and ``attempts`` are filled in here) or raises :class:`AttemptFailed`.
    """

    def __init__(self, model: str, timeout_s: float, retry: RetryPolicy | None) -> None:
        if timeout_s <= 0:
            raise LLMConfigError(f"{type(self).__name__}.timeout_s: must be > 0, got {timeout_s}")
        self.model = model
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self._backoff: Backoff = self.retry.backoff()

    @abstractmethod
    async def _attempt(self, request: ChatRequest) -> ChatResponse:
        """Make one HTTP call; raise AttemptFailed on any server or network failure."""

    def _prepare(self) -> None:
        """Local set-up before an attempt (building the SDK client), kept out of its deadline."""

    async def _attempt_with_deadline(self, request: ChatRequest) -> ChatResponse:
        # The SDK timeout limits each socket operation; this bounds the whole attempt (a
        # server that trickles bytes forever), so a call with its retries ends within
        # timeout_s × attempts plus the back-off.
        self._prepare()
        try:
            async with asyncio.timeout(self.timeout_s):
                return await self._attempt(request)
        except TimeoutError as exc:
            raise AttemptFailed("request timed out", retryable=True, kind="timeout") from exc

    async def generate(self, request: ChatRequest) -> ChatResponse:
        size, cap = request.size_bytes(), limit("model_request_bytes")
        if size > cap:  # a model that filled its conversation with 32 MB replies: the harness's memory
            err = ApiError("context_length", f"{self.provider}:{self.model}: the request holds {size} bytes of text "
                           f"and images, over the {cap}-byte limit (BUILDBENCH_LIMIT_MODEL_REQUEST_BYTES), past "
                           "any model's context window; not sent")
            log.warning("%s", err)
            return ChatResponse.failure(err, self.model)
        t0 = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._attempt_with_deadline(request)
            except AttemptFailed as fail:
                if not fail.retryable or attempt >= self.retry.max_attempts:
                    tries = f"after {attempt} attempt{'s' if attempt > 1 else ''}"
                    err = ApiError(
                        fail.kind,
                        f"{self.provider}:{self.model}: {fail.message} ({tries})",
                        fail.status_code,
                        attempt,
                    )
                    log.warning("%s", err)
                    return ChatResponse.failure(err, self.model, time.perf_counter() - t0)
                delay = self._backoff.delay_s(attempt, fail.retry_after_s)
                log.info(
                    "%s:%s attempt %d failed (%s); retrying in %.2fs",
                    self.provider,
                    self.model,
                    attempt,
                    fail.message,
                    delay,
                )
                await asyncio.sleep(delay)
                continue
            return ChatResponse(
                text=response.text,
                tool_calls=response.tool_calls,
                usage=response.usage,
                finish_reason=response.finish_reason,
                model=response.model or self.model,
                latency_s=time.perf_counter() - t0,
                attempts=attempt,
            )


class LoopLocal:
    """Holds one SDK client per event loop.

    The SDKs' async HTTP pools are tied to the loop that created them, and ``generate_sync``
    runs each call in a fresh loop, so a client is rebuilt whenever the loop changes.
    """

    def __init__(self, factory: Any) -> None:
        self._factory = factory
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None

    def get(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self._factory()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None
        self._loop = None
