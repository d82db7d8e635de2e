"""The HTTP server: the released DreamHouse API over our tasks, validator and renderer.

Routes (the released ``server/app.py``; bodies and status codes as it answers them):

* ``GET /healthz`` -> ``{"ok": true, "tasks": N}`` (also ``/health``, which the released
  ``pipeline_scaffold.py`` probes although the released server lacks it).
* ``GET /v1/tasks`` -> ``{"task_ids": [...]}``; ``GET /v1/tasks/{id}`` -> ``{id, style,
  description, constraints, reference_images}``; ``GET /v1/tasks/{id}/images/{view}`` -> PNG.
* ``POST /v1/sessions`` ``{task_id, model_id?, protocol?}`` -> the session.
* ``POST /v1/sessions/{sid}/submit`` ``{members}`` (or ``{code}``, our extension) ->
  ``{job_id, round, status: "queued", poll_url}``.
* ``GET /v1/sessions/{sid}/results/{job_id}`` -> ``{session_id, job_id, round, status,
  results, error}``.

Errors answer ``{"detail": ...}`` (see :mod:`.bodies`); an unknown route is 404 ``Not
Found``, a known route with another method 405 ``Method Not Allowed``. Standard library only.

Who may call (before any body is read): the ``Host`` header must name this server and a
browser's ``Origin`` must be its own (:mod:`buildbench.httpguard`; else 403), so a web page
can neither rebind a name to it nor post to it; a POST body of a type other than JSON is
refused with 415 (a ``text/plain`` form needs no browser permission); with a
token (``--token``, required when binding beyond loopback), every request must carry
``Authorization: Bearer <token>`` (else 401). Sessions are bounded per client (429).

What a body may cost: it is read only with one ``Content-Length`` (a chunked body: 411), up to
the limit (413 before a byte of it is read: :data:`SESSION_BODY_BYTES` for a session, the JSON
file limit otherwise), and by a deadline (408; :mod:`buildbench.httpbounds`, which also bounds
the wait for the headers); every refusal closes the connection. JSON is parsed with
:func:`buildbench.jsonio.parse_json` (huge numbers, deep nesting, non-UTF-8: one 422), and no
error answer echoes more than a few hundred characters of what was sent.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import sys
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from buildbench.harness.errors import ConfigError
from buildbench.httpbounds import BoundedHandler
from buildbench.httpguard import host_allowed, is_loopback, origin_allowed
from buildbench.limits import limit

from .bodies import ApiError, SessionRequest, SubmitRequest, shown
from .grade import Grader
from .jobs import JobBoard
from .tasks import TaskSource, ViewsUnavailable

DEFAULT_HOST = "127.0.0.1"
#: The released CLI's default port.
DEFAULT_PORT = 8000
#: Largest body of ``POST /v1/sessions`` (three short strings): a larger one is refused unread.
SESSION_BODY_BYTES = 64 * 1024

log = logging.getLogger(__name__)

_SEGMENT = r"([^/]+)"
#: (method, pattern) -> handler name; a path matching a pattern under another method is a 405.
_ROUTES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (method, re.compile(pattern), name)
    for method, pattern, name in (
        ("GET", r"/healthz|/health", "health"),
        ("GET", r"/v1/tasks", "list_tasks"),
        ("GET", rf"/v1/tasks/{_SEGMENT}", "get_task"),
        ("GET", rf"/v1/tasks/{_SEGMENT}/images/{_SEGMENT}", "get_image"),
        ("POST", r"/v1/sessions", "create_session"),
        ("POST", rf"/v1/sessions/{_SEGMENT}/submit", "submit"),
        ("GET", rf"/v1/sessions/{_SEGMENT}/results/{_SEGMENT}", "get_results"),
    )
)

Answer = tuple[int, bytes, str]


def _json(value: Any, status: int = 200) -> Answer:
    return status, json.dumps(value).encode(), "application/json"


class ReleasedApiServer(ThreadingHTTPServer):
    """Serves the released DreamHouse API (see the module docstring).

    Args:
        source: The tasks.
        grader: ``grader(task_id, submission) -> released result dict`` (default :class:`Grader`).
        host: Interface to bind (loopback by default).
        port: Port; 0 picks a free one (see :attr:`url`).
        workers: Validation threads.
        token: Bearer token every request must carry; required when ``host`` is not loopback.

    Raises:
        ConfigError: A non-loopback ``host`` without a token.

    Use as a context manager (serving in a background thread), or call :meth:`serve_forever`.
    """

    daemon_threads = True

    def __init__(self, source: TaskSource, grader: Callable[[str, SubmitRequest], dict[str, Any]] | None = None,
                 *, host: str = DEFAULT_HOST, port: int = 0, workers: int = 2, token: str | None = None) -> None:
        if not is_loopback(host) and not token:
            raise ConfigError(f"serving on {host} reaches other machines: give a token (--token or "
                              "DREAMHOUSE_SERVE_TOKEN) that every client must send")
        self.source = source
        self.bind_host = host
        self.token = token or None
        self.board = JobBoard(grader or Grader(), workers=workers)
        self._thread: threading.Thread | None = None
        super().__init__((host, port), _Handler)
        # Idle keep-alive connections must not block shutdown.
        self.block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The base class prints a traceback to stderr (a client that hangs up mid-request): one line.
        exc = sys.exc_info()[1]
        level = logging.DEBUG if isinstance(exc, ConnectionError) else logging.WARNING
        log.log(level, "dreamhouse serve: request from %s failed: %s: %s", client_address[0], type(exc).__name__, exc)

    @property
    def url(self) -> str:
        """The root URL, without a trailing slash (what ``DREAMHOUSE_SERVER`` holds)."""
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{name}:{port}"

    def start(self) -> ReleasedApiServer:
        """Serve in a background thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, name="dreamhouse-serve", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port; safe to call twice."""
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
            self._thread = None
        self.board.close()
        self.server_close()

    def __enter__(self) -> ReleasedApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- routing ------------------------------------------------------------------------
    def answer(self, method: str, path: str, body: bytes, client: str = "") -> Answer:
        """Status, body and content type for one request from ``client`` (its address); never raises."""
        try:
            return self._route(method, path, body, client)
        except ApiError as exc:
            return _json(exc.body(), exc.status)
        except Exception as exc:  # noqa: BLE001 - one broken request must not stop the server
            log.warning("dreamhouse serve: %s %s failed: %s: %s", method, path[:200], type(exc).__name__, exc)
            return _json({"detail": f"internal error: {type(exc).__name__}: {exc}"}, 500)

    def refusal(self, method: str, headers: Any) -> Answer | None:
        """The answer refusing a caller that is not allowed (see the module docstring), else None."""
        host = headers.get("Host")
        if not host_allowed(host, self.bind_host, self.server_port):
            return _json({"detail": f"Host {str(host)[:100]!r} is not this server"}, 403)
        if not origin_allowed(headers.get("Origin"), host):
            return _json({"detail": "cross-origin requests are refused"}, 403)
        if self.token is not None:
            given = headers.get("Authorization") or ""
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                return _json({"detail": "missing or wrong bearer token (Authorization: Bearer <token>)"}, 401)
        # As FastAPI: a body without a type is read as JSON, one of another type is not; a
        # browser form always names its type, and a cross-site fetch carries an Origin.
        ctype = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if method != "GET" and ctype and ctype != "application/json" and not ctype.endswith("+json"):
            return _json({"detail": f"Content-Type must be application/json, got {ctype!r}"}, 415)
        return None

    def _route(self, method: str, path: str, body: bytes, client: str) -> Answer:
        known_path = False
        for route_method, pattern, name in _ROUTES:
            match = pattern.fullmatch(path)
            if match is None:
                continue
            known_path = True
            if route_method == method:
                args = [unquote(g) for g in match.groups()]
                handler = getattr(self, f"_{name}")
                if name == "create_session":
                    return self._create_session(body, client)
                return handler(*args, body) if method == "POST" else handler(*args)
        if known_path:
            raise ApiError(405, "Method Not Allowed")
        raise ApiError(404, "Not Found")

    def _health(self) -> Answer:
        return _json({"ok": True, "tasks": len(self.source.ids())})

    def _list_tasks(self) -> Answer:
        return _json({"task_ids": self.source.ids()})

    def _get_task(self, task_id: str) -> Answer:
        task = self.source.get(task_id)
        if task is None:
            raise ApiError(404, f"Task {shown(task_id)} not found")
        return _json(task.to_json())

    def _get_image(self, task_id: str, view: str) -> Answer:
        try:
            content = self.source.image(task_id, view)
        except ViewsUnavailable as exc:
            raise ApiError(503, str(exc)) from None
        if content is None:
            raise ApiError(404, "Image not found")
        return 200, content, "image/png"

    def _create_session(self, body: bytes, client: str) -> Answer:
        request = SessionRequest.parse(body)
        if self.source.get(request.task_id) is None:
            raise ApiError(404, f"Task {shown(request.task_id)} not found")
        return _json(self.board.open_session(request, client).to_json())

    def _submit(self, session_id: str, body: bytes) -> Answer:
        request = SubmitRequest.parse(body)
        job = self.board.submit(session_id, request)
        return _json({"job_id": job.job_id, "round": job.round, "status": "queued",
                      "poll_url": f"/v1/sessions/{session_id}/results/{job.job_id}"})

    def _get_results(self, session_id: str, job_id: str) -> Answer:
        return _json(self.board.result(session_id, job_id))


class _Handler(BoundedHandler):
    server: ReleasedApiServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._serve("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        path = urlsplit(self.path).path
        refused = self.server.refusal(method, self.headers)
        body = b""
        if refused is None:
            body, refused = self._body(path)
        status, payload, ctype = refused or self.server.answer(method, path, body, str(self.client_address[0]))
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            if refused:
                self.send_header("Connection", "close")  # the unread body would be taken for the next request
                self.close_connection = True
            self.end_headers()
            self.wfile.write(payload)
        except ConnectionError:  # the client went away; nothing left to tell it
            self.close_connection = True
            return
        if refused and status != 408:
            self.discard_unread()  # so that a client still sending its body reads why

    def _body(self, path: str) -> tuple[bytes, Answer | None]:
        """The request's body, or the answer refusing it before it is read (or when it does not
        all come). Whatever is refused, the connection is closed after the answer."""
        if self.headers.get("Transfer-Encoding") is not None:
            # http.server does not decode chunks: the body would be read as the next request.
            return b"", _json({"detail": "send the body with a Content-Length (a chunked body is not read)"}, 411)
        lengths = self.headers.get_all("Content-Length") or ["0"]
        raw_length = lengths[0]
        if not raw_length.isdigit() or len(raw_length) > 20:
            return b"", _json({"detail": f"Content-Length {raw_length[:40]!r} is not a byte count"}, 400)
        if len(set(lengths)) > 1:
            return b"", _json({"detail": "Content-Length is given more than once, with different values"}, 400)
        length = int(raw_length)
        most, name = ((SESSION_BODY_BYTES, "for a session") if path == "/v1/sessions"
                      else (limit("json_file_bytes"), "(BUILDBENCH_LIMIT_JSON_FILE_BYTES)"))
        if length > most:
            return b"", _json({"detail": f"request body of {length} bytes is over the limit of {most} {name}"}, 413)
        try:
            body = self.read_body(length)
        except TimeoutError:
            return b"", _json({"detail": f"the request body ({length} bytes) did not arrive in time"}, 408)
        if len(body) < length:
            return b"", _json({"detail": f"the request body ended after {len(body)} of {length} bytes"}, 400)
        return body, None

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("dreamhouse serve: " + format, *args)
