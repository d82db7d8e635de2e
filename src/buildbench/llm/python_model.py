"""A model that is a Python function: ``--model python:path/to/file.py:fn`` or ``python:pkg.mod:fn``.

The function is called as ``fn(messages, tools=None, **options)`` with OpenAI-style chat
messages (``{"role", "content"}``; images are ``image_url`` parts holding ``data:`` URLs; tool
results are ``{"role": "tool", "tool_call_id", "content"}``), the tools as OpenAI function
schemas (or None), and the request's settings that are set (``temperature``, ``max_tokens``,
``tool_choice``, ``stop``, ``seed``, ``top_p``). It returns either the reply text, or an
assistant message dict with ``content`` and/or ``tool_calls`` (OpenAI shape, or the short
``{"name", "arguments"}``), optionally with ``usage`` (``prompt_tokens``/``completion_tokens``).

The file is imported into the harness process, like a provider SDK: it runs with the user's
own rights and is not sandboxed (it is the user's model, not an agent's output). An
exception it raises, or a reply of the wrong shape, becomes an ``api_error`` response, so
the episode is recorded as unscored instead of crashing the run or counting as a score.

Synchronous functions run in a worker thread, one call at a time (local pipelines are
rarely thread-safe); ``async def`` functions run on the event loop, as many at once as the
run's ``--concurrency``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .client import ChatModel, LLMConfigError
from .retry import RetryPolicy
from .scripted import estimate_usage
from .types import ApiError, ChatRequest, ChatResponse, ToolCall, Usage

log = logging.getLogger(__name__)


def _import_file(path: Path) -> Any:
    """The module defined by the file ``path``, imported once per resolved path."""
    resolved = path.resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:12]
    # A stable, unique module name: pickling and dataclasses look modules up in sys.modules.
    name = f"buildbench_user_{resolved.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise LLMConfigError(f"{path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise LLMConfigError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from exc
    return module


def load_callable(target: str, *, what: str = "function") -> Callable[..., Any]:
    """The callable named by ``path/to/file.py:name`` or ``package.module:name``.

    ``name`` may be dotted (``Class.method``). Raises LLMConfigError with one line naming the
    target when the file or module is missing, fails to import, or lacks the name.
    """
    source, sep, attr = target.strip().rpartition(":")
    if not sep or not source or not attr:
        raise LLMConfigError(f"{what} {target!r}: expected 'path/to/file.py:name' or 'package.module:name'")
    if source.endswith(".py") or "/" in source or "\\" in source:
        path = Path(source).expanduser()
        if not path.is_file():
            raise LLMConfigError(f"{what} {target!r}: no file {path}")
        module = _import_file(path)
    else:
        try:
            module = importlib.import_module(source)
        except ImportError as exc:
            raise LLMConfigError(f"{what} {target!r}: cannot import module {source!r}: {exc}") from exc
        except Exception as exc:
            raise LLMConfigError(f"{what} {target!r}: importing {source!r} failed: "
                                 f"{type(exc).__name__}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise LLMConfigError(f"{what} {target!r}: {source} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise LLMConfigError(f"{what} {target!r}: {attr} is a {type(obj).__name__}, not callable")
    return obj


class ReplyShapeError(ValueError):
    """The function's reply is neither text nor an assistant message dict."""


def _tool_call(raw: Any, index: int) -> ToolCall:
    if not isinstance(raw, dict):
        raise ReplyShapeError(f"tool_calls[{index}]: expected an object, got {type(raw).__name__}")
    fn = raw.get("function", raw)
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
        raise ReplyShapeError(f"tool_calls[{index}]: needs a 'name' (or 'function': {{'name': ...}})")
    call_id = raw.get("id") or f"call_{index}"
    return ToolCall.parse(str(call_id), fn["name"], fn.get("arguments", {}))


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    counts: list[int] = []
    for names in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        value = next((raw[n] for n in names if n in raw), 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ReplyShapeError(f"usage.{names[0]}: expected a non-negative integer, got {value!r}")
        counts.append(value)
    return Usage(counts[0], counts[1], 1)


def parse_reply(reply: Any, model: str) -> ChatResponse:
    """Our response from what the function returned; ReplyShapeError names what is wrong."""
    if isinstance(reply, ChatResponse):
        return reply
    if isinstance(reply, str):
        return ChatResponse(text=reply, finish_reason="stop", model=model)
    if not isinstance(reply, dict):
        raise ReplyShapeError(f"returned a {type(reply).__name__}; expected a string or a message dict")
    if "content" not in reply and "tool_calls" not in reply:
        raise ReplyShapeError("the message dict has neither 'content' nor 'tool_calls'")
    content = reply.get("content") or ""
    if not isinstance(content, str):
        raise ReplyShapeError(f"content: expected a string, got {type(content).__name__}")
    raw_calls = reply.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ReplyShapeError(f"tool_calls: expected a list, got {type(raw_calls).__name__}")
    calls = tuple(_tool_call(c, i) for i, c in enumerate(raw_calls))
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    return ChatResponse(text=content, tool_calls=calls, usage=_usage(reply.get("usage")) or Usage(),
                        finish_reason=str(finish), model=model)


def request_options(request: ChatRequest) -> dict[str, Any]:
    """The request's settings that are set, as keyword arguments of the function."""
    out: dict[str, Any] = {}
    for key in ("temperature", "max_tokens", "tool_choice", "seed", "top_p"):
        value = getattr(request, key)
        if value is not None:
            out[key] = value
    if request.stop:
        out["stop"] = list(request.stop)
    return out


class PythonChat(ChatModel):
    """A chat model backed by a user's Python function (see the module docstring).

    Args:
        target: ``path/to/file.py:fn`` or ``package.module:fn``; also the model name in
            record/replay keys.
        timeout_s: Limit per call, seconds (a synchronous call past it is reported as a
            timeout; its thread finishes on its own).
        retry: Attempts on an exception (default: one attempt, no retry).
        fn: The function itself, instead of loading ``target`` (for embedding in scripts).
    """

    provider = "python"

    def __init__(self, target: str, *, timeout_s: float = 600.0, retry: RetryPolicy | None = None,
                 fn: Callable[..., Any] | None = None) -> None:
        if timeout_s <= 0:
            raise LLMConfigError(f"PythonChat.timeout_s: must be > 0, got {timeout_s}")
        self.model = target
        self.timeout_s = float(timeout_s)
        self.max_attempts = retry.max_attempts if retry is not None else 1
        self._fn = fn if fn is not None else load_callable(target, what="python model")
        self._lock = threading.Lock()

    def _call_sync(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                   options: dict[str, Any]) -> Any:
        with self._lock:
            return self._fn(messages, tools=tools, **options)

    async def _call(self, request: ChatRequest) -> Any:
        from .openai_client import to_openai_messages, to_openai_tools

        messages = to_openai_messages(request.messages)
        tools = to_openai_tools(request.tools) if request.tools else None
        options = request_options(request)
        async with asyncio.timeout(self.timeout_s):
            if inspect.iscoroutinefunction(self._fn):
                return await self._fn(messages, tools=tools, **options)
            out = await asyncio.to_thread(self._call_sync, messages, tools, options)
            return await out if inspect.isawaitable(out) else out

    async def generate(self, request: ChatRequest) -> ChatResponse:
        t0 = time.perf_counter()
        failure = ""
        for attempt in range(1, self.max_attempts + 1):
            try:
                reply = await self._call(request)
                response = parse_reply(reply, self.model)
            except TimeoutError:
                err = ApiError("timeout", f"python:{self.model}: no reply within {self.timeout_s:g} s", None, attempt)
                return ChatResponse.failure(err, self.model, time.perf_counter() - t0)
            except ReplyShapeError as exc:
                failure = f"malformed reply: {exc}"
                break  # the same request gives the same wrong shape again
            except Exception as exc:  # the user's model failing is an API-style error, never a crash
                log.debug("python model %s raised", self.model, exc_info=True)
                failure = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
                continue
            if response.usage == Usage():
                response = dataclasses.replace(response, usage=estimate_usage(request, response))
            return dataclasses.replace(response, latency_s=time.perf_counter() - t0, attempts=attempt,
                                       model=response.model or self.model)
        err = ApiError("api_error", f"python:{self.model}: {failure}", None, attempt)
        log.warning("%s", err)
        return ChatResponse.failure(err, self.model, time.perf_counter() - t0)
