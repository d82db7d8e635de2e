"""The viewer serves nothing outside the run folders and its bundle, and binds 127.0.0.1 by default."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from buildbench.web.data import ViewerData
from buildbench.web.runs import open_runs
from buildbench.web.server import DEFAULT_HOST, ViewerServer


def raw_get(base: str, path: str) -> tuple[int, bytes, http.client.HTTPResponse]:
    """GET ``path`` exactly as written (no client-side normalisation of ``..``)."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    conn.putrequest("GET", path, skip_accept_encoding=True)
    conn.endheaders()
    res = conn.getresponse()
    body = res.read()
    conn.close()
    return res.status, body, res


# The session's stored runs (conftest) are built once: every test viewing them shares a worker.
pytestmark = pytest.mark.xdist_group("web-runs")

TRAVERSALS = [
    "/files/{h}/../run.sqlite", "/files/{h}/run.sqlite", "/files/{h}/artifacts/../../outside.png",
    "/files/{h}/..%2f..%2foutside.png", "/files/{h}/%2e%2e/%2e%2e/outside.png", "/files/{h}//etc/passwd",
    "/files/{h}/artifacts/link.png", "/files/{h}/link.png", "/files/{h}/artifacts/page.html", "/files/{h}/%00.png",
    "/files/../../etc/passwd", "/files/-1/x.png", "/static/../runs.py", "/static/%2e%2e/server.py",
    "/static/..%2f__init__.py", "/static//etc/passwd", "/../../../../etc/passwd", "/static/../../harness/store.py",
    "/%2e%2e/%2e%2e/etc/passwd",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_nothing_outside_the_run_folder_or_bundle_is_served(viewer: str, run_ids: dict[str, int], path: str) -> None:
    path = path.replace("{h}", str(run_ids["hostile"]))
    status, body, _ = raw_get(viewer, path)
    assert status == 404, (path, body[:200])
    assert b"secret outside the run" not in body and b"SQLite format" not in body and b"root:" not in body


def test_the_bundle_and_in_run_images_are_served(viewer: str) -> None:
    status, body, res = raw_get(viewer, "/static/app.js")
    assert status == 200 and res.headers["Content-Type"].startswith("text/javascript") and len(body) > 10_000
    status, body, res = raw_get(viewer, "/")
    assert status == 200 and b"static/app.js" in body
    csp = res.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert res.headers["X-Content-Type-Options"] == "nosniff"


def test_hostile_image_paths_get_no_url(viewer: str, run_ids: dict[str, int]) -> None:
    hostile = run_ids["hostile"]
    status, body, _ = raw_get(viewer, f"/api/runs/{hostile}/episodes")
    task = json.loads(body)["rows"][0]["task_id"]
    from urllib.parse import quote

    status, body, _ = raw_get(viewer, f"/api/runs/{hostile}/episode?task={quote(task)}&sample=0")
    assert status == 200
    images = json.loads(body)["steps"][0]["images"]
    assert images and all(img["url"] is None for img in images)


def test_hostile_text_travels_as_json_text(viewer: str, run_ids: dict[str, int]) -> None:
    status, body, res = raw_get(viewer, f"/api/runs/{run_ids['hostile']}/episodes")
    assert status == 200 and res.headers["Content-Type"] == "application/json"
    assert json.loads(body)["rows"][0]["task_id"].startswith("evil<b onmouseover=")


def test_default_bind_is_loopback(stored_runs: dict[str, Path]) -> None:
    assert DEFAULT_HOST == "127.0.0.1"
    server = ViewerServer(ViewerData(open_runs([stored_runs["example"]])))
    try:
        assert server.server_address[0] == "127.0.0.1"
        assert server.socket.family == socket.AF_INET
    finally:
        server.server_close()
    from buildbench.cli.main import view

    host = next(p for p in view.params if p.name == "host")
    assert host.default == "127.0.0.1"
