"""A scripted model behind a real HTTP endpoint, with fault injection.

``ScriptedServer`` speaks enough of the OpenAI chat-completions API (``/v1/chat/completions``,
``/v1/models``) and of the Anthropic messages API (``/v1/messages``) for the real SDKs to
talk to it, so an agent workflow can be driven end to end over HTTP with no outside network.
A reply function sees each parsed request and says what to answer; queued faults (rate
limits, server errors, hangs, broken bodies) replace the next replies to exercise retries.

Example:
    >>> from buildbench.llm import ChatRequest, Message, OpenAIChat
    >>> with ScriptedServer(lambda req: "hello") as srv:
    ...     model = OpenAIChat("scripted-model", base_url=srv.base_url)
    ...     model.generate_sync(ChatRequest((Message.user("hi"),))).text
    'hello'
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from buildbench.httpbounds import BoundedHandler
from buildbench.jsonio import parse_json
from buildbench.limits import limit

log = logging.getLogger(__name__)

Api = Literal["openai", "anthropic"]
FaultKind = Literal["rate_limit", "server_error", "hang", "truncated", "disconnect", "raw"]
# A fixed creation time keeps served bodies byte-identical from run to run.
_CREATED = 1_700_000_000


@dataclass(frozen=True)
class Fault:
    """A failure served instead of a reply.

    Attributes:
        kind: ``rate_limit`` (429 with Retry-After), ``server_error`` (status 5xx),
            ``hang`` (no answer for ``seconds``), ``truncated`` (a 200 whose JSON body is cut
            short), ``disconnect`` (the connection closes mid-body), ``raw`` (``body`` as it
            is, with ``status``: what no well-formed reply can be).
        status: HTTP status for ``server_error`` and ``raw``.
        retry_after_s: Retry-After header value for ``rate_limit`` (None: no header).
        seconds: How long ``hang`` stalls before answering (stopping the server ends it).
        body: The bytes ``raw`` serves.
    """

    kind: FaultKind
    status: int = 500
    retry_after_s: float | None = None
    seconds: float = 30.0
    body: bytes = b""

    @classmethod
    def rate_limit(cls, retry_after_s: float | None = 0.0) -> Fault:
        return cls("rate_limit", 429, retry_after_s)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls("server_error", status)

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Fault:
        return cls("hang", seconds=seconds)

    @classmethod
    def truncated(cls) -> Fault:
        return cls("truncated")

    @classmethod
    def disconnect(cls) -> Fault:
        return cls("disconnect")

    @classmethod
    def raw(cls, body: bytes | str, status: int = 200) -> Fault:
        return cls("raw", status, body=body.encode() if isinstance(body, str) else body)


@dataclass(frozen=True)
class ServerToolCall:
    """A tool call the scripted model makes.

    Attributes:
        name: Tool name.
        arguments: A dict (sent as JSON) or a raw string sent verbatim, malformed or not.
    """

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)

    @property
    def raw(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True)
class ServerReply:
    """What the scripted model answers.

    Attributes:
        text: Assistant text.
        tool_calls: Tool calls to make.
        finish_reason: OpenAI-style reason; None picks ``tool_calls`` or ``stop``.
        input_tokens: Reported prompt tokens; None estimates len(messages JSON) / 4.
        output_tokens: Reported completion tokens; None estimates from the reply length.
        fault: Serve this failure instead.
    """

    text: str = ""
    tool_calls: tuple[ServerToolCall, ...] = ()
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    fault: Fault | None = None


@dataclass(frozen=True)
class ServerRequest:
    """One chat request as the server received it.

    Attributes:
        api: Which API route it came in on.
        body: The parsed JSON body.
        headers: Request headers, names lower-cased.
        index: 0-based arrival order among chat requests (faulted ones included).
    """

    api: Api
    body: dict[str, Any]
    headers: dict[str, str]
    index: int

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    def last_user_text(self) -> str:
        """Text of the last user turn, in either API's format ("" when there is none)."""
        for m in reversed(self.messages):
            if m.get("role") != "user":
                continue
            content = m.get("content")
            if isinstance(content, str):
                return content
            return "".join(str(p.get("text", "")) for p in content or [] if p.get("type") == "text")
        return ""


ReplyFn = Callable[[ServerRequest], ServerReply | str]


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def openai_body(reply: ServerReply, model: str, request: ServerRequest) -> dict[str, Any]:
    """A chat-completions response body for ``reply``."""
    calls = [
        {
            "id": f"call_{request.index}_{j}",
            "type": "function",
            "function": {"name": c.name, "arguments": c.raw},
        }
        for j, c in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if calls:
        message["tool_calls"] = calls
    prompt = (
        reply.input_tokens
        if reply.input_tokens is not None
        else _estimate_tokens(json.dumps(request.messages))
    )
    completion = reply.output_tokens
    if completion is None:
        completion = _estimate_tokens(reply.text + "".join(c.raw for c in reply.tool_calls))
    return {
        "id": f"chatcmpl-{request.index}",
        "object": "chat.completion",
        "created": _CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": reply.finish_reason or ("tool_calls" if calls else "stop"),
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


_ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def anthropic_body(reply: ServerReply, model: str, request: ServerRequest) -> dict[str, Any]:
    """A messages-API response body for ``reply``; a non-JSON argument string is sent as-is."""
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for j, c in enumerate(reply.tool_calls):
        try:
            args: Any = json.loads(c.raw)
        except json.JSONDecodeError:
            args = c.raw
        content.append(
            {"type": "tool_use", "id": f"toolu_{request.index}_{j}", "name": c.name, "input": args}
        )
    reason = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    prompt = (
        reply.input_tokens
        if reply.input_tokens is not None
        else _estimate_tokens(json.dumps(request.messages))
    )
    completion = reply.output_tokens
    if completion is None:
        completion = _estimate_tokens(reply.text + "".join(c.raw for c in reply.tool_calls))
    return {
        "id": f"msg_{request.index}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _ANTHROPIC_STOP.get(reason, reason),
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


def _error_body(api: Api, status: int, message: str) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 400: "invalid_request_error", 404: "not_found_error"}.get(
        status, "api_error"
    )
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": status}}


class ScriptedServer:
    """An OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1 whose model is a script.

    Args:
        reply: A function of the :class:`ServerRequest` returning a :class:`ServerReply` or
            plain text, or a sequence of replies served in order.
        model: The model name the server reports.
        host: Interface to bind.
        port: Port to bind; 0 picks a free one (see :attr:`port`).

    Use as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        reply: ReplyFn | Sequence[ServerReply | str],
        model: str = "scripted-model",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if callable(reply):
            self._reply_fn: ReplyFn = reply
        else:
            self._reply_fn = self._from_sequence(list(reply))
        self.model = model
        self.requests: list[ServerRequest] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        # Idle keep-alive connections must not block stop().
        self._httpd.block_on_close = False
        self._thread: threading.Thread | None = None

    @staticmethod
    def _from_sequence(replies: list[ServerReply | str]) -> ReplyFn:
        queue = deque(replies)
        lock = threading.Lock()

        def next_reply(request: ServerRequest) -> ServerReply | str:
            with lock:
                if not queue:
                    raise LookupError(f"scripted server: no reply left for request #{request.index}")
                return queue.popleft()

        return next_reply

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """Root for OpenAI-compatible clients (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Root for the Anthropic SDK, which appends ``/v1/messages`` itself."""
        return f"http://127.0.0.1:{self.port}"

    def inject(self, *faults: Fault) -> None:
        """Serve these faults, in order, to the next chat requests (before any reply)."""
        with self._lock:
            self._faults.extend(faults)

    def start(self) -> ScriptedServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, name="scripted-llm-server", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging requests are released. Safe to call twice."""
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _admit(
        self, api: Api, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[ServerRequest, Fault | None]:
        with self._lock:
            request = ServerRequest(api, body, headers, len(self.requests))
            self.requests.append(request)
            fault = self._faults.popleft() if self._faults else None
        return request, fault

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BoundedHandler):  # deadlines for a request, JSON errors (buildbench.httpbounds)
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("scripted server: " + format, *args)

            def _send(
                self,
                status: int,
                payload: bytes,
                headers: dict[str, str] | None = None,
                length: int | None = None,
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload) if length is None else length))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()

            def _send_json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
                self._send(status, json.dumps(value).encode(), headers)

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                if self.path.rstrip("/").endswith("/models"):
                    data = [
                        {"id": owner.model, "object": "model", "created": _CREATED, "owned_by": "buildbench"}
                    ]
                    self._send_json(200, {"object": "list", "data": data})
                else:
                    self._send_json(404, _error_body("openai", 404, f"no route GET {self.path}"))

            def _body(self, api: Api) -> bytes | None:
                """The request's body; None when it was refused (answered, connection closed)."""
                raw_length = self.headers.get("Content-Length") or "0"
                # Base64 images make a request's JSON up to 4/3 of what it carries.
                most = 2 * limit("model_request_bytes")
                status, problem = 400, ""
                if self.headers.get("Transfer-Encoding") is not None:
                    problem = "send the body with a Content-Length (a chunked body is not read)"
                elif not raw_length.isdigit() or len(raw_length) > 20:
                    problem = f"Content-Length {raw_length[:40]!r} is not a byte count"
                elif int(raw_length) > most:
                    status, problem = 413, f"request body of {raw_length} bytes is over the limit of {most}"
                if not problem:
                    try:
                        return self.read_body(int(raw_length))
                    except TimeoutError:
                        self.close_connection = True
                        return None
                self.close_connection = True
                self._send_json(status, _error_body(api, status, problem), {"Connection": "close"})
                self.discard_unread()
                return None

            def do_POST(self) -> None:  # noqa: N802
                path = self.path.split("?")[0].rstrip("/")
                api: Api | None = "openai" if path.endswith("/chat/completions") else None
                api = "anthropic" if path.endswith("/messages") else api
                raw = self._body(api or "openai")
                if raw is None:
                    return
                if api is None:
                    self._send_json(404, _error_body("openai", 404, f"no route POST {self.path}"))
                    return
                try:
                    # the client may be agent code: 100,000 brackets raised RecursionError here
                    body = parse_json(raw)
                    if not isinstance(body, dict):
                        raise ValueError("body is not a JSON object")
                except ValueError as exc:
                    self._send_json(400, _error_body(api, 400, f"request body is not valid JSON: {exc}"))
                    return
                request, fault = owner._admit(api, body, {k.lower(): v for k, v in self.headers.items()})
                try:
                    self._answer(request, fault)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (e.g. after a hang); nothing left to tell it

            def _answer(self, request: ServerRequest, fault: Fault | None) -> None:
                api = request.api
                if fault is None:
                    try:
                        out = owner._reply_fn(request)
                    except Exception as exc:  # the script's bug is reported to the client, not fatal here
                        log.warning("scripted server: reply function failed: %r", exc)
                        self._send_json(400, _error_body(api, 400, f"reply function failed: {exc!r}"))
                        return
                    if not isinstance(out, str | ServerReply):
                        msg = f"reply function returned {type(out).__name__}, expected str or ServerReply"
                        self._send_json(400, _error_body(api, 400, msg))
                        return
                    reply = ServerReply(text=out) if isinstance(out, str) else out
                    fault = reply.fault
                else:
                    reply = ServerReply()
                if fault is not None and fault.kind == "rate_limit":
                    headers = (
                        {} if fault.retry_after_s is None else {"Retry-After": f"{fault.retry_after_s:g}"}
                    )
                    self._send_json(429, _error_body(api, 429, "rate limited (injected)"), headers)
                    return
                if fault is not None and fault.kind == "server_error":
                    self._send_json(fault.status, _error_body(api, fault.status, "server error (injected)"))
                    return
                if fault is not None and fault.kind == "raw":
                    self._send(fault.status, fault.body)
                    return
                if fault is not None and fault.kind == "hang":
                    owner._stopping.wait(fault.seconds)
                make = openai_body if api == "openai" else anthropic_body
                payload = json.dumps(make(reply, owner.model, request)).encode()
                if fault is not None and fault.kind == "truncated":
                    self._send(200, payload[: len(payload) // 2])
                elif fault is not None and fault.kind == "disconnect":
                    self.close_connection = True
                    self._send(200, payload[: len(payload) // 2], length=len(payload))
                else:
                    self._send(200, payload)

        return Handler
