"""The local HTTP server of ``buildbench view`` (standard library only).

Routes (``R`` = the run's position on the command line):

* ``/`` and ``/static/<file>``: the page and its bundle (``buildbench/web/static``).
* ``/api/runs``: the runs; ``/api/compare``: per suite, run identities with metric intervals, cost
  and the per-task verdict grid (:mod:`buildbench.web.compare`).
* ``/api/runs/R/episodes?offset&limit&sort&order&q&status&metric&min&max``: one page of rows.
* ``/api/runs/R/metrics``: every metric name in the run.
* ``/api/runs/R/episode?task=T&sample=N`` and ``…/artefact?task=T&sample=N``.
* ``/files/R/<path>``: an image inside run R's folder (nothing else, nothing outside it).

Only requests whose ``Host`` names this server (and whose ``Origin``, if any, is its own) are
answered (:mod:`buildbench.httpguard`): others get 403, so a web page that rebinds a DNS name
to 127.0.0.1 cannot read runs. A client that hangs up mid-answer is logged at debug level,
never as a traceback. A request must arrive within a minute (:mod:`buildbench.httpbounds`: a
client that trickles its headers does not hold a thread), and http.server's own refusals (another
method, a malformed request) are JSON too. Everything else is 404. Answers carry a Content-Security-Policy that allows only this
origin's own script, so a model reply that contains HTML cannot run even if it were
ever inserted as markup (the page inserts text only).
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from buildbench.harness.errors import BuildbenchError
from buildbench.httpbounds import BoundedHandler
from buildbench.httpguard import host_allowed, origin_allowed
from buildbench.inputs import read_bytes

from .data import ViewerData, safe_static_file, to_json_bytes
from .runs import IMAGE_TYPES, PageQuery, ViewerInputError

STATIC_ROOT = Path(__file__).resolve().parent / "static"
DEFAULT_HOST = "127.0.0.1"
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".json": "application/json", ".map": "application/json",
                 ".txt": "text/plain; charset=utf-8", **IMAGE_TYPES}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; "
                               "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

log = logging.getLogger(__name__)


def bundle_ready(root: Path = STATIC_ROOT) -> bool:
    """Whether the front-end bundle was built into ``root``."""
    return (root / "index.html").is_file() and (root / "app.js").is_file()


class _Handler(BoundedHandler):
    server: ViewerServer
    protocol_version = "HTTP/1.1"
    error_key = "error"  # as the API's own errors

    def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
        self._answer(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(send_body=False)

    def _answer(self, *, send_body: bool) -> None:
        parts = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        path = unquote(parts.path)
        host = self.headers.get("Host")
        try:
            if not host_allowed(host, self.server.bind_host, self.server.server_port):
                status, body, ctype = _refused(f"Host {str(host)[:100]!r} is not this server")
            elif not origin_allowed(self.headers.get("Origin"), host):
                status, body, ctype = _refused("cross-origin requests are refused")
            else:
                status, body, ctype = self.server.route(path, params)
        except ViewerInputError as exc:
            status, body, ctype = HTTPStatus.BAD_REQUEST, to_json_bytes({"error": str(exc)}), CONTENT_TYPES[".json"]
        except BuildbenchError as exc:
            status, body, ctype = HTTPStatus.BAD_REQUEST, to_json_bytes({"error": str(exc)}), CONTENT_TYPES[".json"]
        except Exception as exc:  # one broken request must not stop the server; the page shows the message
            log.warning("viewer: %s failed: %s: %s", path[:200], type(exc).__name__, exc)
            status = HTTPStatus.INTERNAL_SERVER_ERROR
            body, ctype = to_json_bytes({"error": f"{type(exc).__name__}: {exc}"}), CONTENT_TYPES[".json"]
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for key, value in SECURITY_HEADERS.items():
                self.send_header(key, value)
            self.end_headers()
            if send_body:
                self.wfile.write(body)
        except ConnectionError:  # the client went away (a closed tab, a cancelled image)
            self.close_connection = True
            log.debug("viewer: client left before %s was answered", path[:200])

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("viewer: " + format, *args)


Route = tuple[HTTPStatus, bytes, str]


class ViewerServer(ThreadingHTTPServer):
    """Serves the page, the JSON API and the run folders' images (see the module docstring)."""

    daemon_threads = True

    def __init__(self, data: ViewerData, host: str = DEFAULT_HOST, port: int = 0,
                 static_root: Path = STATIC_ROOT) -> None:
        self.data = data
        self.static_root = static_root
        self.bind_host = host
        super().__init__((host, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The base class prints a traceback to stderr for whatever a handler raised outside
        # _answer (a client that hangs up while its request is read): one log line instead.
        exc = sys.exc_info()[1]
        level = logging.DEBUG if isinstance(exc, ConnectionError) else logging.WARNING
        log.log(level, "viewer: request from %s failed: %s: %s", client_address[0], type(exc).__name__, exc)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{name}:{port}/"

    def route(self, path: str, params: dict[str, str]) -> Route:
        """The status, body and content type answering ``path``."""
        if path in ("/", "/index.html"):
            return self._static("index.html")
        if path.startswith("/static/"):
            return self._static(path[len("/static/"):])
        if path.startswith("/files/"):
            return self._file(path[len("/files/"):])
        if path.startswith("/api/"):
            return HTTPStatus.OK, to_json_bytes(self._api(path[len("/api/"):], params)), CONTENT_TYPES[".json"]
        return _not_found(path)

    def _api(self, path: str, params: dict[str, str]) -> Any:
        data = self.data
        if path == "runs":
            return data.runs_info()
        if path == "compare":
            return data.compare()
        parts = path.split("/")
        if len(parts) != 3 or parts[0] != "runs":
            raise ViewerInputError(f"no API endpoint /api/{path[:80]}")
        index = _int(parts[1], "run")
        endpoints: dict[str, Callable[[], Any]] = {
            "episodes": lambda: data.run(index).page(PageQuery.from_params(params)),
            "metrics": lambda: data.metric_keys(index),
            "episode": lambda: data.episode(index, _task(params), _int(params.get("sample", "0"), "sample")),
            "artefact": lambda: data.artefact(index, _task(params), _int(params.get("sample", "0"), "sample")),
        }
        if parts[2] not in endpoints:
            raise ViewerInputError(f"no API endpoint /api/{path[:80]}")
        return endpoints[parts[2]]()

    def _static(self, name: str) -> Route:
        found = safe_static_file(self.static_root, name)
        if found is None or found.suffix not in CONTENT_TYPES:
            return _not_found(name)
        return HTTPStatus.OK, read_bytes(found), CONTENT_TYPES[found.suffix]

    def _file(self, rest: str) -> Route:
        run_id, _, relative = rest.partition("/")
        try:
            run = self.data.run(_int(run_id, "run"))
        except ViewerInputError:
            return _not_found(rest)
        found = run.resolve_file(relative)
        if found is None:
            return _not_found(rest)
        return HTTPStatus.OK, read_bytes(found, follow_symlinks=False), IMAGE_TYPES[found.suffix.lower()]


def _refused(why: str) -> Route:
    return HTTPStatus.FORBIDDEN, to_json_bytes({"error": why}), CONTENT_TYPES[".json"]


def _not_found(what: str) -> Route:
    return HTTPStatus.NOT_FOUND, to_json_bytes({"error": f"not found: {what[:200]}"}), CONTENT_TYPES[".json"]


def _int(raw: str, name: str) -> int:
    if not raw.isdigit() or len(raw) > 9:
        raise ViewerInputError(f"{name} {raw[:40]!r} is not a whole number >= 0")
    return int(raw)


def _task(params: dict[str, str]) -> str:
    task = params.get("task", "")
    if not task:
        raise ViewerInputError("query parameter task is missing")
    return task


def start_server(data: ViewerData, host: str = DEFAULT_HOST, port: int = 0) -> tuple[ViewerServer, threading.Thread]:
    """Start serving in a background thread (port 0 picks a free one); for tests and benchmarks."""
    server = ViewerServer(data, host, port)
    thread = threading.Thread(target=server.serve_forever, name="buildbench-view", daemon=True)
    thread.start()
    return server, thread
