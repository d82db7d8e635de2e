"""The two local HTTP servers check who calls: ``buildbench view`` and ``dreamhouse serve``,
each started through its CLI as a user starts it, then attacked over loopback as a web page
(DNS rebinding, cross-origin posts), a client that hangs up, and hard links out of a run."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from buildbench.harness.episode import Episode, Step
from buildbench.harness.store import Store

SECRET = b"\x89PNG\r\n\x1a\nsecret outside the run"


class Served:
    """A server process started by the CLI; its stderr is read when it stops."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "buildbench", *argv], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 120
        self.port = 0
        while time.monotonic() < deadline and not self.port:
            line = self.proc.stdout.readline()
            if not line:
                break
            found = re.search(r"http://127\.0\.0\.1:(\d+)", line)
            self.port = int(found.group(1)) if found else 0
        assert self.port, f"the server did not start: {self.stop()}"

    def request(self, method: str, path: str, *, body: bytes = b"", headers: dict[str, str] | None = None,
                host: str | None = None, timeout_s: float = 30) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout_s)
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{self.port}")
        for key, value in (headers or {}).items():
            conn.putheader(key, value)
        if body or method == "POST":
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        res = conn.getresponse()
        data = res.read()
        conn.close()
        return res.status, data

    def cpu_s(self) -> float:
        """CPU seconds the server process has used so far (all its threads), from /proc."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime

    def stop(self) -> str:
        """Stop the server (as Ctrl-C does); its stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


# -- buildbench view ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_with_links(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run with an ordinary image, a hard link and a symbolic link to a file outside it, and
    a 4 MB image (big enough that a client hanging up leaves the server writing)."""
    root = tmp_path_factory.mktemp("view")
    outside = root / "outside.png"
    outside.write_bytes(SECRET)
    run_dir = root / "run"
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "example", "agent": "x", "protocol": "one-shot", "split": "demo",
                                         "seed": 0, "samples": 1}, "tasks": 1})
        store.add_episode(Episode(task_id="t1", sample=0, suite="example", agent="x", protocol="one-shot", seed=0,
                                  steps=[Step(index=0, image_paths=["in.png", "hard.png", "soft.png", "big.png"])]))
    artifacts = run_dir / "artifacts"
    artifacts.mkdir()
    (artifacts / "in.png").write_bytes(b"\x89PNG\r\n\x1a\nour own image")
    (artifacts / "big.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(4 << 20))
    os.link(outside, artifacts / "hard.png")
    (artifacts / "soft.png").symlink_to(outside)
    return run_dir


@pytest.fixture(scope="module")
def view(run_with_links: Path) -> Iterator[Served]:
    served = Served(["view", str(run_with_links), "--port", "0"])
    yield served
    served.stop()


@pytest.mark.timeout(180)
def test_view_answers_only_its_own_host(view: Served) -> None:
    assert view.request("GET", "/api/runs")[0] == 200
    assert view.request("GET", "/api/runs", host=f"localhost:{view.port}")[0] == 200
    for host in (f"rebind.attacker.example:{view.port}", "rebind.attacker.example", f"127.0.0.1:{view.port + 1}", ""):
        status, body = view.request("GET", "/api/runs", host=host)
        assert status == 403 and b"\"suite\"" not in body, (host, status, body[:200])
    status, _ = view.request("GET", "/api/runs", headers={"Origin": "http://attacker.example"})
    assert status == 403


@pytest.mark.timeout(180)
def test_view_refuses_hard_and_symbolic_links_out_of_the_run(view: Served) -> None:
    assert view.request("GET", "/files/0/artifacts/in.png") == (200, b"\x89PNG\r\n\x1a\nour own image")
    for name in ("hard.png", "soft.png"):
        status, body = view.request("GET", f"/files/0/artifacts/{name}")
        assert status == 404 and b"secret" not in body, (name, status)


@pytest.mark.timeout(180)
def test_view_logs_no_traceback_when_clients_hang_up(run_with_links: Path) -> None:
    served = Served(["view", str(run_with_links), "--port", "0"])
    try:
        for _ in range(20):
            with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                sock.sendall(f"GET /files/0/artifacts/big.png HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n"
                             .encode())
                sock.recv(10)  # the answer started; closing now resets the connection mid-body
        with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
            sock.sendall(b"GET /api/runs HTTP/1.1\r\n")  # and one that leaves mid-request
        assert served.request("GET", "/api/runs")[0] == 200
    finally:
        err = served.stop()
    assert "Traceback" not in err and "BrokenPipe" not in err and "ConnectionReset" not in err, err[-2000:]


# -- dreamhouse serve -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def serve() -> Iterator[Served]:
    served = Served(["dreamhouse", "serve", "--port", "0", "--limit", "1", "-o", "isolation=process"])
    yield served
    served.stop()


def _task(served: Served) -> str:
    status, body = served.request("GET", "/v1/tasks")
    assert status == 200
    return str(json.loads(body)["task_ids"][0])


JSON = {"Content-Type": "application/json"}


@pytest.mark.timeout(300)
def test_serve_refuses_other_hosts_origins_and_form_posts(serve: Served) -> None:
    body = json.dumps({"task_id": _task(serve)}).encode()
    assert serve.request("GET", "/healthz", host=f"rebind.attacker.example:{serve.port}")[0] == 403
    assert serve.request("GET", "/v1/tasks", host="rebind.attacker.example")[0] == 403
    # What a page on another origin can send without asking: a text/plain form post.
    status, answer = serve.request("POST", "/v1/sessions", body=body, headers={"Content-Type": "text/plain"})
    assert status == 415, answer
    status, _ = serve.request("POST", "/v1/sessions", body=body,
                              headers={**JSON, "Origin": "http://attacker.example"})
    assert status == 403
    status, answer = serve.request("POST", "/v1/sessions", body=body, headers=JSON)
    assert status == 200 and json.loads(answer)["session_id"]


@pytest.mark.timeout(300)
def test_serve_bounds_sessions_per_client_with_a_clear_429(serve: Served) -> None:
    from buildbench.suites.dreamhouse.serve.jobs import MAX_SESSIONS_PER_CLIENT, SESSION_TTL

    assert SESSION_TTL.total_seconds() <= 24 * 3600
    body = json.dumps({"task_id": _task(serve)}).encode()
    statuses = [serve.request("POST", "/v1/sessions", body=body, headers=JSON) for _ in range(MAX_SESSIONS_PER_CLIENT + 1)]
    codes = [s for s, _ in statuses]
    assert codes.count(429) >= 1 and codes[-1] == 429 and set(codes) <= {200, 429}, codes
    assert b"sessions" in statuses[-1][1]


@pytest.mark.timeout(300)
def test_serve_answers_a_huge_integer_with_422(serve: Served) -> None:
    # To the submit route, whose bodies may be large (a session's is refused over 64 KiB, unread):
    # the body is parsed before the session is looked up.
    body = b'{"members": ' + b"7" * 5_000_000 + b"}"
    cpu = serve.cpu_s()
    # The server's CPU seconds, not the wall time, which load stretches: reading 5 MB and refusing
    # the number takes ~0.05 s; placing it in the message by a pattern built from its digits took
    # 1-25 s, converting them minutes. The long socket timeout is only a hang check.
    status, answer = serve.request("POST", "/v1/sessions/no-such-session/submit", body=body, headers=JSON,
                                   timeout_s=240)
    assert status == 422 and b"digit" in answer and len(answer) < 2000, (status, answer[:300])
    assert serve.cpu_s() - cpu < 1.5


@pytest.mark.timeout(300)
def test_serve_beyond_loopback_needs_a_token() -> None:
    out = subprocess.run([sys.executable, "-m", "buildbench", "dreamhouse", "serve", "--host", "0.0.0.0",
                          "--port", "0", "--limit", "1"], capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if k != "DREAMHOUSE_SERVE_TOKEN"})
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "token" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.timeout(300)
def test_serve_with_a_token_refuses_requests_without_it() -> None:
    served = Served(["dreamhouse", "serve", "--port", "0", "--limit", "1"], env={"DREAMHOUSE_SERVE_TOKEN": "s3cret"})
    try:
        assert served.request("GET", "/v1/tasks")[0] == 401
        assert served.request("GET", "/v1/tasks", headers={"Authorization": "Bearer wrong"})[0] == 401
        assert served.request("GET", "/v1/tasks", headers={"Authorization": "Bearer s3cret"})[0] == 200
    finally:
        err = served.stop()
    assert "Traceback" not in err
