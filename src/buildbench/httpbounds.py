"""Reading a request within bounds, for our standard-library HTTP servers (``buildbench view``,
``dreamhouse serve``).

:mod:`http.server` bounds a request only by one socket timeout per read: a client that sends a
byte every few seconds (slowloris) holds its connection's thread for as long as it likes, and a
body whose ``Content-Length`` promises more than comes holds it until the client hangs up. Its
own error answers (a malformed request line, too many headers) are HTML pages. Here:

- each request gets a deadline: ``http_request_seconds`` (:mod:`buildbench.limits`, 60 s) for its
  request line and headers (counted from when the connection waits for it, so an idle
  keep-alive connection is closed then too), and as long again for its body plus one second per
  :data:`BODY_BYTES_PER_S` bytes; a read past it raises ``TimeoutError`` (the server closes the
  connection, or answers 408);
- an answer that refuses a body unread closes the connection, after reading and dropping what
  the client still sends (at most :data:`DISCARD_BYTES`, :data:`DISCARD_S`): closing a socket with
  unread bytes resets the connection, and a client still sending its body then sees only
  ``Connection reset`` or ``Broken pipe``, never the 413 that says why;
- error answers of :mod:`http.server` itself are a JSON object, and close the connection.

Standard library only (and :mod:`buildbench.limits`).
"""

from __future__ import annotations

import io
import json
import socket
import time
from http.server import BaseHTTPRequestHandler

from buildbench.limits import limit

__all__ = ["BODY_BYTES_PER_S", "DISCARD_BYTES", "DISCARD_S", "BoundedHandler"]

#: Slowest rate a large body may arrive at (a 64 MB body gets 60 s + 256 s).
BODY_BYTES_PER_S = 256 * 1024
#: After an answer refusing a body unread: bytes and seconds spent reading and dropping the rest.
DISCARD_BYTES = 256 * 1024 * 1024
DISCARD_S = 5.0


class _DeadlineReader(io.RawIOBase):
    """The connection's bytes, each read waiting at most until :attr:`deadline` (monotonic)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock
        self._timeout = sock.gettimeout()  # what writes wait for: the handler's timeout
        self.deadline = 0.0  # set per request by the handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self._sock.settimeout(left)
        try:
            return self._sock.recv_into(buffer)
        finally:
            self._sock.settimeout(self._timeout)


class BoundedHandler(BaseHTTPRequestHandler):
    """A request handler whose reads have a deadline and whose own errors are JSON (see the
    module docstring). Subclasses read a body with :meth:`read_body`.

    Attributes:
        error_key: The key of the message in a JSON error answer (``detail`` as FastAPI's).
    """

    error_key = "detail"
    #: Seconds a write to the client may block (one that reads nothing is dropped then).
    timeout = 60
    _reader: _DeadlineReader

    def setup(self) -> None:
        super().setup()
        self._request_s = float(limit("http_request_seconds"))
        # The base class reads through socket.makefile, whose reads know only the socket's one
        # timeout: read through a buffer over our own reader instead.
        self.rfile.close()
        self._reader = _DeadlineReader(self.connection)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self) -> None:
        self._reader.deadline = time.monotonic() + self._request_s
        super().handle_one_request()

    def read_body(self, length: int) -> bytes:
        """The ``length`` bytes of this request's body, or fewer when the client ends the
        connection first.

        Raises:
            TimeoutError: They did not all arrive by the body's deadline.
        """
        self._reader.deadline = time.monotonic() + self._request_s + length / BODY_BYTES_PER_S
        return self.rfile.read(length)

    def discard_unread(self) -> None:
        """End the answer just sent (no more bytes follow on this connection) and read and drop
        what the client still sends, within :data:`DISCARD_BYTES` and :data:`DISCARD_S`."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            return
        self._reader.deadline = time.monotonic() + DISCARD_S
        left = DISCARD_BYTES
        try:
            while left > 0:
                chunk = self.rfile.read1(min(left, 1 << 16))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:  # a timeout, or the client reset the connection: either way it is done
            pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a bad request line, an unknown method, too many headers):
        the message as JSON, and the connection closed (what follows it cannot be trusted)."""
        self.log_error("code %d, message %s", code, message)
        short = self.responses.get(code, ("Error", ""))[0]
        body = json.dumps({self.error_key: message or short}).encode()
        self.send_response(code, short)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if getattr(self, "command", None) != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(body)
        self.discard_unread()
