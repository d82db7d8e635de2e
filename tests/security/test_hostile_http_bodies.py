"""Hostile request bodies and framing against the HTTP servers we ship (``dreamhouse serve``,
``buildbench view``), each started through its CLI: every one gets one short JSON error answer
(4xx, no traceback) for about the CPU that reading its bytes costs, a client that trickles its
request is dropped at a deadline, and the server answers the next request."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from buildbench.harness.episode import Episode, Step
from buildbench.harness.store import Store

from .test_servers import Served

#: Server CPU seconds one hostile request may cost: reading and parsing a 1-2 MB body takes
#: ~0.05 s; the refusals fixed here took 2-25 s (a 900,000-digit number compiled into a pattern).
CPU_S = 1.0
#: BUILDBENCH_LIMIT_HTTP_REQUEST_SECONDS of the servers here, so that the deadlines show quickly.
REQUEST_S = 3
#: BUILDBENCH_LIMIT_JSON_FILE_BYTES of the DreamHouse server here (bodies twice as large are cheap).
BODY_LIMIT = 1_000_000
ENV = {"BUILDBENCH_LIMIT_HTTP_REQUEST_SECONDS": str(REQUEST_S), "BUILDBENCH_LIMIT_JSON_FILE_BYTES": str(BODY_LIMIT)}


def _exchange(port: int, data: bytes, *, half_close: bool = False, timeout_s: float = 60, until: bytes = b"\0") -> bytes:
    """Send raw bytes; everything the server answers until it closes (or one full answer, or
    ``until`` is in it: an event stream has no length)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        answer = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return answer
            answer += chunk
            head, sep, rest = answer.partition(b"\r\n\r\n")
            length = [line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
            if (sep and length and len(rest) >= int(length[0])) or until in answer:
                return answer


def _status_and_json(answer: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _post(served: Served, path: str, body: bytes, extra: str = "", length: int | None = None) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n{extra}\r\n").encode() + body


# -- dreamhouse serve -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def serve() -> Iterator[Served]:
    served = Served(["dreamhouse", "serve", "--port", "0", "--limit", "1", "-o", "isolation=process"], env=ENV)
    yield served
    err = served.stop()
    assert "Traceback" not in err, err[-3000:]


SUBMIT = "/v1/sessions/no-such-session/submit"  # a body is parsed before its session is looked up
SESSIONS = "/v1/sessions"
HOSTILE = {
    "huge integer": (SUBMIT, b'{"members": ' + b"7" * 900_000 + b"}", 422, "over the 4300-digit limit"),
    "huge exponent": (SUBMIT, b'{"members": 1e999999}', 422, "1e999999 is out of the range"),
    "long float": (SUBMIT, b'{"members": 1' + b"0" * 900_000 + b"e99}", 422, "(a number of 900004 characters)"),
    "NaN": (SESSIONS, b'{"task_id": NaN}', 422, "NaN is not a finite number"),
    "-Infinity": (SESSIONS, b'{"task_id": -Infinity}', 422, "-Infinity is not a finite number"),
    "minus zero": (SUBMIT, b'{"members": -0}', 422, "valid list"),
    "deep nesting": (SUBMIT, b'{"members": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 422, "nested deeper"),
    "long key": (SUBMIT, b'{"' + b"k" * 900_000 + b'": 1}', 400, "members cannot be empty"),
    "long task id": (SESSIONS, b'{"task_id": "' + b"a" * 60_000 + b'"}', 404, "(60000 characters) not found"),
    "many keys": (SUBMIT, b"{" + b",".join(b'"k%d":0' % i for i in range(80_000)) + b"}", 400, "cannot be empty"),
    "a long list": (SUBMIT, b"[" + b"0," * 450_000 + b"0]", 422, "got a JSON list"),
    "not UTF-8": (SESSIONS, b'{"task_id": "\xff\xfe"}', 422, "not UTF-8 text"),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", list(HOSTILE))
def test_serve_refuses_a_hostile_body_with_one_short_json_error(serve: Served, case: str) -> None:
    path, body, status, message = HOSTILE[case]
    cpu = serve.cpu_s()
    answer = _exchange(serve.port, _post(serve, path, body))
    spent = serve.cpu_s() - cpu
    got, detail = _status_and_json(answer)
    assert got == status and message in json.dumps(detail), answer[:500]
    # The answer echoes no megabytes of the body (a long float's digits, a long id were echoed whole).
    assert len(answer) < 2000, answer[:500]
    assert spent < CPU_S, f"{case}: {spent:.2f} CPU s"
    assert serve.request("GET", "/healthz")[0] == 200


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path, size", [(SESSIONS, 8_000_000), (SUBMIT, 2 * BODY_LIMIT), (SUBMIT, 8 * BODY_LIMIT)])
def test_serve_refuses_a_body_over_its_limit_unread_and_the_client_reads_why(serve: Served, path: str,
                                                                            size: int) -> None:
    # A client sends the whole body before it reads: the server must not close with it unread
    # (the client then got "Broken pipe" or "Connection reset", never the 413).
    cpu = serve.cpu_s()
    conn = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=60)
    try:
        conn.request("POST", path, body=b'{"x": "' + b"a" * (size - 9) + b'"}', headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        status, detail = response.status, json.loads(response.read())
    finally:
        conn.close()
    assert status == 413 and "over the limit" in str(detail["detail"]), detail
    assert serve.cpu_s() - cpu < CPU_S


@pytest.mark.timeout(300)
def test_serve_refuses_lying_and_missing_lengths(serve: Served) -> None:
    body = b'{"task_id": "x"}'
    answers = {
        # a chunked body was taken as no body (422), its chunks as the next request
        "chunked": _exchange(serve.port, _post(serve, SESSIONS, b"10\r\n" + body + b"\r\n0\r\n\r\n",
                                               "Transfer-Encoding: chunked\r\n")),
        "two lengths": _exchange(serve.port, _post(serve, SESSIONS, body, f"Content-Length: {len(body) - 4}\r\n")),
        "longer than sent": _exchange(serve.port, _post(serve, SESSIONS, body, length=500), half_close=True),
        "shorter than sent": _exchange(serve.port, _post(serve, SESSIONS, body, length=5)),
        "not a number": _exchange(serve.port, _post(serve, SESSIONS, body, length=-1)),
    }
    expected = {"chunked": (411, "Content-Length"), "two lengths": (400, "more than once"),
                "longer than sent": (400, "ended after 16 of 500 bytes"), "shorter than sent": (422, "json_invalid"),
                "not a number": (400, "is not a byte count")}
    for case, answer in answers.items():
        status, detail = _status_and_json(answer)
        assert (status, expected[case][1] in json.dumps(detail)) == (expected[case][0], True), (case, answer[:400])
    assert serve.request("GET", "/healthz")[0] == 200


@pytest.mark.timeout(300)
def test_serve_answers_408_to_a_body_that_stops_coming(serve: Served) -> None:
    body = b'{"task_id": "x"}'
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", serve.port), timeout=120) as sock:
        sock.sendall(_post(serve, SESSIONS, body[:10], length=len(body)))  # 6 bytes short, then waits
        answer = b""
        while chunk := sock.recv(4096):  # the server closes the connection after its answer
            answer += chunk
    status, detail = _status_and_json(answer)
    assert status == 408 and "did not arrive in time" in str(detail["detail"])
    assert time.monotonic() - start < REQUEST_S + 60  # the deadline, not a minute per read
    assert serve.request("GET", "/healthz")[0] == 200


def _trickled_headers_are_dropped(port: int) -> None:
    """A client sending its headers a byte at a time is disconnected at the request deadline."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        closed = False
        for byte in b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 10_000:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            sock.settimeout(0.5)
            try:
                if sock.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                pass
            except ConnectionResetError:
                closed = True
                break
            if time.monotonic() - start > REQUEST_S + 60:
                break
    assert closed, "a client trickling its headers kept its connection past the deadline"


@pytest.mark.timeout(300)
def test_serve_drops_a_client_that_trickles_its_headers(serve: Served) -> None:
    _trickled_headers_are_dropped(serve.port)
    assert serve.request("GET", "/healthz")[0] == 200


@pytest.mark.timeout(300)
def test_serve_answers_http_server_refusals_as_json(serve: Served) -> None:
    status, detail = _status_and_json(_exchange(serve.port, _post(serve, SESSIONS, b"{}").replace(b"POST", b"PATCH")))
    assert status == 501 and "PATCH" in str(detail["detail"])
    many = b"".join(b"X-%d: a\r\n" % i for i in range(200))
    status, detail = _status_and_json(_exchange(serve.port, b"GET /healthz HTTP/1.1\r\n" + many + b"\r\n"))
    assert status == 431 and "headers" in str(detail["detail"])


# -- buildbench view --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    run_dir = tmp_path_factory.mktemp("view") / "run"
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "example", "agent": "x", "protocol": "one-shot", "split": "demo",
                                         "seed": 0, "samples": 1}, "tasks": 1})
        store.add_episode(Episode(task_id="t1", sample=0, suite="example", agent="x", protocol="one-shot", seed=0,
                                  steps=[Step(index=0)]))
    served = Served(["view", str(run_dir), "--port", "0"], env=ENV)
    yield served
    err = served.stop()
    assert "Traceback" not in err, err[-3000:]


@pytest.mark.timeout(300)
def test_view_refuses_a_posted_body_with_json_the_client_reads(view: Served) -> None:
    # The viewer has no POST: http.server's 501 was an HTML page, sent while 2 MB stayed unread.
    cpu = view.cpu_s()
    conn = http.client.HTTPConnection("127.0.0.1", view.port, timeout=60)
    try:
        conn.request("POST", "/api/runs", body=b"[" + b"0," * 1_000_000 + b"0]", headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        status, detail = response.status, json.loads(response.read())
    finally:
        conn.close()
    assert status == 501 and "POST" in str(detail["error"])
    assert view.cpu_s() - cpu < CPU_S
    assert view.request("GET", "/api/runs")[0] == 200


@pytest.mark.timeout(300)
def test_view_drops_a_client_that_trickles_its_headers(view: Served) -> None:
    _trickled_headers_are_dropped(view.port)
    assert view.request("GET", "/api/runs")[0] == 200



# -- buildbench mcp --transport http ------------------------------------------------------------
@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    run_dir = tmp_path_factory.mktemp("mcp") / "run"
    proc = subprocess.Popen([sys.executable, "-m", "buildbench", "mcp", "example", "--transport", "http", "--port", "0",
                             "--run-dir", str(run_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", **ENV})
    served = Served.__new__(Served)  # its request/cpu/stop helpers; the URL comes on stderr here
    served.proc, served.port = proc, 0
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not served.port:
        line = proc.stderr.readline()
        if not line:
            break
        found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
        served.port = int(found.group(1)) if found else 0
    assert served.port, f"the MCP server did not start: {served.stop()}"
    yield served
    err = served.stop()
    assert "Traceback" not in err and "Error handling POST request" not in err, err[-3000:]


def _mcp_post(served: Served, body: bytes, length: int | None = None) -> bytes:
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body) if length is None else length}"
            "\r\n\r\n").encode() + body


INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}).encode()
MCP_HOSTILE = {
    # each answered 500 ("Error handling POST request", logged as an error) by the SDK's json.loads
    "deep nesting": (b'{"jsonrpc": "2.0", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 400, "nested deeper"),
    "not UTF-8": (b'{"jsonrpc": "2.0", "method": "\xff\xfe"}', 400, "not UTF-8 text"),
    "huge integer": (INITIALIZE[:-2] + b', "n": ' + b"7" * 1_000_000 + b"}}", 400, "over the 4300-digit limit"),
    "NaN": (b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', 400, "NaN is not a finite number"),
    "a long list": (b"[" + b"0," * 1_500_000 + b"0]", 400, "got a JSON list"),
    "many strings": (b'{"x": [' + b'"a",' * 900_000 + b'"a"]}', 400, "without \\\"jsonrpc\\\""),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", list(MCP_HOSTILE))
def test_mcp_refuses_a_hostile_body_with_one_json_rpc_error(mcp: Served, case: str) -> None:
    body, status, message = MCP_HOSTILE[case]
    cpu = mcp.cpu_s()
    answer = _exchange(mcp.port, _mcp_post(mcp, body))
    spent = mcp.cpu_s() - cpu
    got, error = _status_and_json(answer)
    assert got == status and error["id"] == "server-error" and message in json.dumps(error), answer[:500]
    assert len(answer) < 2000 and spent < CPU_S, (case, spent)
    # a real message still goes through to the SDK
    answer = _exchange(mcp.port, _mcp_post(mcp, INITIALIZE), until=b'"serverInfo"')
    assert answer.startswith(b"HTTP/1.1 200") and b'"serverInfo"' in answer, answer[:500]


@pytest.mark.timeout(300)
def test_mcp_refuses_a_body_over_its_limit_and_one_that_stops_coming(mcp: Served) -> None:
    status, error = _status_and_json(_exchange(mcp.port, _mcp_post(mcp, b"[" + b"0," * 4_000_000 + b"0]")))
    assert status == 413 and "over the limit" in json.dumps(error)
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", mcp.port), timeout=120) as sock:
        sock.sendall(_mcp_post(mcp, INITIALIZE[:20], length=len(INITIALIZE)))
        answer = b""
        while b"}}" not in answer and (chunk := sock.recv(4096)):
            answer += chunk
    status, error = _status_and_json(answer)
    assert status == 408 and "did not arrive" in json.dumps(error)
    assert time.monotonic() - start < REQUEST_S + 60


# -- the scripted model server (legoeval demo, tests) ----------------------------------------------
@pytest.mark.timeout(120)
def test_scripted_model_server_refuses_bodies_it_cannot_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    from buildbench.llm import ScriptedServer

    monkeypatch.setenv("BUILDBENCH_LIMIT_HTTP_REQUEST_SECONDS", str(REQUEST_S))
    monkeypatch.setenv("BUILDBENCH_LIMIT_MODEL_REQUEST_BYTES", "1000")
    with ScriptedServer(lambda request: "hello") as server:
        host = f"Host: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
        ok = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()

        def post(extra: str, body: bytes) -> bytes:
            return f"POST /v1/chat/completions HTTP/1.1\r\n{host}{extra}\r\n".encode() + body

        cases = {  # a non-numeric length raised ValueError (a traceback), a chunked body hung a thread
            "not a number": (post("Content-Length: x\r\n", ok), 400, "is not a byte count"),
            "chunked": (post("Transfer-Encoding: chunked\r\n", b"%x\r\n" % len(ok) + ok + b"\r\n0\r\n\r\n"), 400,
                        "Content-Length"),
            "over the limit": (post("Content-Length: 4000\r\n", b"[" + b"0," * 1999 + b"0]"), 413, "over the limit"),
        }
        for case, (data, status, message) in cases.items():
            got, body = _status_and_json(_exchange(server.port, data, timeout_s=REQUEST_S + 30))
            assert got == status and message in json.dumps(body), (case, body)
        start = time.monotonic()
        answer = _exchange(server.port, post(f"Content-Length: {len(ok)}\r\n", ok[:10]), timeout_s=REQUEST_S + 30)
        assert answer == b"" and time.monotonic() - start < REQUEST_S + 20  # dropped at the deadline
        got, body = _status_and_json(_exchange(server.port, post(f"Content-Length: {len(ok)}\r\n", ok)))
        assert got == 200 and body["choices"][0]["message"]["content"] == "hello"  # type: ignore[index]


def test_dreamhouse_error_echoes_only_small_inputs_and_never_serialises_a_large_one() -> None:
    from buildbench.suites.dreamhouse.serve.bodies import field_error, shown

    assert field_error("t", ("x",), "m", {"a": [1, "b"]}).body()["detail"][0]["input"] == {"a": [1, "b"]}
    for large in (["x"] * 300, "y" * 300, {"k" * 300: 1}, [[[["z" * 50] * 2] * 2] * 2]):
        assert "input" not in field_error("t", ("x",), "m", large).body()["detail"][0]
    huge = [list(range(1000))] * 10_000  # 10^7 numbers: found too long at its first items
    start = time.process_time()
    assert "input" not in field_error("t", (), "m", huge).body()["detail"][0]
    assert time.process_time() - start < 0.05
    assert shown("abc") == "'abc'" and shown("a" * 101) == f"{'a' * 100!r}… (101 characters)"


@pytest.mark.timeout(300)
def test_mcp_drops_a_client_that_trickles_its_headers(mcp: Served) -> None:
    _trickled_headers_are_dropped(mcp.port)
    answer = _exchange(mcp.port, _mcp_post(mcp, INITIALIZE), until=b'"serverInfo"')
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
