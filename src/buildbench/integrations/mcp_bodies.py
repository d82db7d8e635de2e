"""The body of a POST to the MCP endpoint, read within bounds and checked with our JSON limits
before the MCP SDK sees it.

The SDK (1.30) bounds a body's size (4 MiB) but not the time it may take to arrive, and parses it
with ``json.loads``: 100,000 nested brackets or bytes that are not UTF-8 answered 500 ("Error
handling POST request", logged as an error), a 1,000,000-digit integer a bare ``ValueError``; a
4 MB list or an object of a million strings went through pydantic's validation of every JSON-RPC
message type before its refusal (0.6-0.7 CPU s per request). Here a body is read by a deadline
(408), parsed with :func:`buildbench.jsonio.parse_json` (400 with a JSON-RPC parse error naming
what and where), and must be one JSON-RPC 2.0 object (400 otherwise); what passes is handed to
the SDK unchanged. Refusals answer as the SDK does: ``{"jsonrpc": "2.0", "id": "server-error",
"error": {"code", "message"}}``.

uvicorn bounds the wait between requests (keep-alive, 5 s) but not a request's line and headers
once their first byte came: :func:`header_deadline_protocol` closes a connection whose headers
are not all in by ``http_request_seconds``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from buildbench.httpbounds import BODY_BYTES_PER_S
from buildbench.jsonio import parse_json
from buildbench.limits import limit

__all__ = ["checked_body", "header_deadline_protocol"]

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: JSON-RPC error codes (the SDK's ``PARSE_ERROR`` and ``INVALID_REQUEST``).
_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600


async def checked_body(headers: dict[str, str], receive: Receive, send: Send, *, max_bytes: int) -> Receive | None:
    """A ``receive`` that hands the app the request's checked body, or None when the request was
    answered here (refused) or the client left.

    Args:
        headers: The request's headers, names in lower case.
        max_bytes: The largest body read (the SDK's limit, so both refuse the same sizes).
    """
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        await _refuse(send, 413, _INVALID_REQUEST, f"request body of {declared} bytes is over the limit of {max_bytes}")
        return None
    chunks: list[bytes] = []
    size = 0
    expected = int(declared) if declared.isdigit() else max_bytes  # a chunked body declares nothing
    seconds = limit("http_request_seconds") + expected / BODY_BYTES_PER_S
    with anyio.move_on_after(seconds) as waited:
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > max_bytes:
                await _refuse(send, 413, _INVALID_REQUEST, f"request body is over the limit of {max_bytes} bytes")
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    if waited.cancelled_caught:
        await _refuse(send, 408, _INVALID_REQUEST, f"the request body did not arrive within {seconds:.0f} s")
        return None
    body = b"".join(chunks)
    try:
        value = parse_json(body)
    except json.JSONDecodeError as exc:
        await _refuse(send, 400, _PARSE_ERROR, f"Parse error: {exc}")
        return None
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        shape = f"a JSON {type(value).__name__}" if not isinstance(value, dict) else "an object without \"jsonrpc\": \"2.0\""
        await _refuse(send, 400, _INVALID_REQUEST, f"Invalid Request: one JSON-RPC 2.0 message object is expected, got {shape}")
        return None
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _refuse(send: Send, status: int, code: int, message: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": "server-error", "error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def header_deadline_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol (its default here: httptools is not a dependency), closing a
    connection whose request line and headers are not all in ``seconds`` after it opened or
    after its last answer: a client trickling its headers kept its connection for as long as it
    liked. A request being read or answered (a body, an event stream) is left alone."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadlineProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            self._header_timer = self.loop.call_later(seconds, self._expire)

        def _expire(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadlineProtocol
