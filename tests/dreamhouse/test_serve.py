"""``buildbench dreamhouse serve``: the released harness's HTTP API over our tasks and validator,
driven over 127.0.0.1 with ``requests`` (and with the released client's own functions when the
``dreamhouse`` wheel is installed)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import requests
from click.testing import CliRunner

from buildbench.suites.dreamhouse.check import RELEASED_TESTS
from buildbench.suites.dreamhouse.cli import cli
from buildbench.suites.dreamhouse.dhpack import PackTask, write_dhpack
from buildbench.suites.dreamhouse.serve import (
    SERVE_OPTIONS,
    SESSION_TTL,
    ApiError,
    Grader,
    JobBoard,
    ReleasedApiServer,
    ServeOptions,
    SessionRequest,
    SubmitRequest,
    TaskSource,
    load_source,
)
from buildbench.suites.dreamhouse.views_basis import VIEW_NAMES

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / ".." / "shared" / "data" / "dreamhouse"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "serve"
PASSING = ROOT / "examples" / "files" / "house.json"
VIEWS = ("front", "back", "left", "right", "top")
PNG = b"\x89PNG\r\n\x1a\n"


def _members(path: Path) -> list[dict[str, Any]]:
    members: list[dict[str, Any]] = json.loads(path.read_text())["members"]
    return members


def _shared(name: str) -> Any:
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"released walkthrough file {path} is absent (the /work/shared data folder)")
    return json.loads(path.read_text())


def _poll(url: str, timeout_s: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        body: dict[str, Any] = requests.get(url, timeout=10).json()
        if body["status"] in ("complete", "failed"):
            return body
        time.sleep(0.05)
    raise AssertionError(f"job at {url} did not finish in {timeout_s} s")


@pytest.fixture(scope="module")
def server() -> Iterator[ReleasedApiServer]:
    with ReleasedApiServer(load_source(split="demo", limit=2)) as srv:
        yield srv


@pytest.fixture()
def session(server: ReleasedApiServer) -> dict[str, Any]:
    task_id = server.source.ids()[0]
    body: dict[str, Any] = requests.post(f"{server.url}/v1/sessions", json={"task_id": task_id}, timeout=10).json()
    return body


def _submit(server: ReleasedApiServer, session_id: str, body: Any) -> requests.Response:
    return requests.post(f"{server.url}/v1/sessions/{session_id}/submit", json=body, timeout=10)


# -- tasks and views ---------------------------------------------------------------------
def test_health_and_task_list(server: ReleasedApiServer) -> None:
    ids = server.source.ids()
    assert requests.get(f"{server.url}/healthz", timeout=10).json() == {"ok": True, "tasks": 2}
    assert requests.get(f"{server.url}/health", timeout=10).status_code == 200
    assert requests.get(f"{server.url}/v1/tasks", timeout=10).json() == {"task_ids": ids}
    assert ids == sorted(ids)


def test_task_has_the_released_shape(server: ReleasedApiServer) -> None:
    expected = _shared("1_task_response.json")
    task_id = server.source.ids()[0]
    task = requests.get(f"{server.url}/v1/tasks/{task_id}", timeout=10).json()
    assert set(task) == set(expected)
    assert set(task["constraints"]) == set(expected["constraints"])
    assert task["id"] == task_id
    assert task["reference_images"] == [f"/v1/tasks/{task_id}/images/{v}" for v in VIEWS]
    assert task["constraints"]["lot_width"] > task["constraints"]["footprint_x"] > 0


def test_views_are_rendered_pngs_and_unknown_ones_are_404(server: ReleasedApiServer) -> None:
    task_id = server.source.ids()[0]
    bodies = []
    for view in VIEWS:
        r = requests.get(f"{server.url}/v1/tasks/{task_id}/images/{view}", timeout=30)
        assert r.status_code == 200 and r.headers["Content-Type"] == "image/png"
        assert r.content.startswith(PNG)
        bodies.append(r.content)
    assert len(set(bodies)) == 5  # five different views, not one image five times
    for path in (f"/v1/tasks/{task_id}/images/front_right", "/v1/tasks/NO_SUCH/images/front"):
        r = requests.get(server.url + path, timeout=10)
        assert (r.status_code, r.json()) == (404, {"detail": "Image not found"})


def test_a_pack_is_served_as_stored(tmp_path: Path) -> None:
    images = {view: PNG + bytes([k]) * 16 for k, view in enumerate(VIEW_NAMES)}
    constraints = {"footprint_x": 7.32, "footprint_y": 10.97, "stories": 2, "roof_type": "gable",
                   "lot_width": 9.32, "lot_depth": 12.97}
    pack = write_dhpack(tmp_path / "t.dhpack", [PackTask("AF_01_0018", "American Farmhouse", "A house.",
                                                         constraints, images)])
    with ReleasedApiServer(load_source(dhpack=pack)) as srv:
        task = requests.get(f"{srv.url}/v1/tasks/AF_01_0018", timeout=10).json()
        assert task["constraints"]["wings"] == 0  # the released server's default filled in
        assert task["style"] == "American Farmhouse"
        top = requests.get(f"{srv.url}/v1/tasks/AF_01_0018/images/top", timeout=10).content
        assert top == images["front_right"]


# -- sessions, submissions, results ------------------------------------------------------
def test_session_has_the_released_shape_and_ttl(server: ReleasedApiServer, session: dict[str, Any]) -> None:
    assert set(session) == set(_shared("5_session_response.json"))
    assert (session["model_id"], session["protocol"]) == ("local", "stepwise")
    created = datetime.fromisoformat(session["created_at"])
    assert datetime.fromisoformat(session["expires_at"]) - created == SESSION_TTL  # 6 h; the released 48 h
    assert created.tzinfo is not None


def test_released_flow_passing_then_failing(server: ReleasedApiServer, session: dict[str, Any]) -> None:
    sid = session["session_id"]
    first = _submit(server, sid, {"members": _members(PASSING)})
    assert first.status_code == 200
    submitted = first.json()
    assert set(submitted) == set(_shared("6_submit_response.json"))
    assert (submitted["round"], submitted["status"]) == (1, "queued")
    assert submitted["poll_url"] == f"/v1/sessions/{sid}/results/{submitted['job_id']}"
    passed = _poll(server.url + submitted["poll_url"])
    expected = _shared("7_result_pass.json")
    assert set(passed) == set(expected)
    assert set(passed["results"]) == set(expected["results"])
    assert passed["status"] == "complete" and passed["error"] is None
    assert passed["results"]["all_passed"] is True and passed["results"]["pass_rate"] == 1.0
    assert list(passed["results"]["tests"]) == list(RELEASED_TESTS)
    assert passed["results"]["stability_details"]["total_members"] == len(_members(PASSING))

    second = _submit(server, sid, {"members": _members(FIXTURES / "sills_only.json")}).json()
    assert second["round"] == 2
    failed = _poll(server.url + second["poll_url"])
    assert failed["status"] == "complete" and failed["round"] == 2
    results = failed["results"]
    assert results["all_passed"] is False
    assert not results["tests"]["roof_coverage"]
    assert results["pass_rate"] == sum(results["tests"].values()) / 10


def test_released_walkthrough_submission_fails(server: ReleasedApiServer, session: dict[str, Any]) -> None:
    members = _shared("4_submission.json")["members"]
    job = _submit(server, session["session_id"], {"members": members}).json()
    result = _poll(server.url + job["poll_url"])
    assert result["status"] == "complete"
    assert result["results"]["all_passed"] is False
    assert result["results"]["task_id"] == session["task_id"]


def test_unreadable_members_fail_the_job_not_the_server(server: ReleasedApiServer, session: dict[str, Any]) -> None:
    job = _submit(server, session["session_id"], {"members": _members(FIXTURES / "bad_member.json")}).json()
    result = _poll(server.url + job["poll_url"])
    assert result["status"] == "failed" and result["results"] is None
    assert "members" in result["error"] and "Sill_01" in result["error"]
    assert requests.get(f"{server.url}/healthz", timeout=10).json()["ok"] is True


def test_code_submission_runs_in_our_executor(server: ReleasedApiServer, session: dict[str, Any]) -> None:
    module = _load_module("released_example", ROOT / "examples" / "dreamhouse_released_agent.py")
    script = module.generate("Build a house. Footprint: 6.0m x 8.0m.", [], [])
    job = _submit(server, session["session_id"], {"code": script}).json()
    result = _poll(server.url + job["poll_url"])
    assert result["status"] == "complete", result["error"]
    assert result["results"]["stability_details"]["total_members"] > 10
    broken = _submit(server, session["session_id"], {"code": "import bpy\nraise ValueError('no frame')\n"}).json()
    failed = _poll(server.url + broken["poll_url"])
    assert failed["status"] == "failed" and "Blender failed" in failed["error"] and "no frame" in failed["error"]


@pytest.mark.parametrize(("body", "status", "kind", "loc"), [
    (b"", 422, "missing", ["body"]),
    (b"{", 422, "json_invalid", ["body", 1]),
    (b"[1, 2]", 422, "model_attributes_type", ["body"]),
    (b'{"model_id": "m"}', 422, "missing", ["body", "task_id"]),
    (b'{"task_id": 7}', 422, "string_type", ["body", "task_id"]),
    (b'{"task_id": "x", "protocol": "greedy"}', 422, "literal_error", ["body", "protocol"]),
    (b'{"task_id": NaN}', 422, "json_invalid", None),
])
def test_bad_session_bodies(server: ReleasedApiServer, body: bytes, status: int, kind: str,
                            loc: list[Any] | None) -> None:
    r = requests.post(f"{server.url}/v1/sessions", data=body, timeout=10)
    assert r.status_code == status
    detail = r.json()["detail"]
    assert detail[0]["type"] == kind and detail[0]["msg"]
    if loc is not None:
        assert detail[0]["loc"] == loc


@pytest.mark.parametrize(("body", "status", "needle"), [
    ({}, 400, "members cannot be empty"),
    ({"members": []}, 400, "members cannot be empty"),
    ({"members": {"name": "Sill_01"}}, 422, "valid list"),
    ({"members": [{"name": "Sill_01"}, 3]}, 422, "members[1]"),
    ({"members": [{"name": "Sill_01"}], "code": "import bpy"}, 400, "not both"),
    ({"code": 5}, 422, "valid string"),
    ({"code": "   "}, 400, "code cannot be empty"),
])
def test_bad_submit_bodies(server: ReleasedApiServer, session: dict[str, Any], body: Any, status: int,
                           needle: str) -> None:
    r = _submit(server, session["session_id"], body)
    assert r.status_code == status
    detail = r.json()["detail"]
    assert needle in (detail if isinstance(detail, str) else detail[0]["msg"])


def test_unknown_ids_routes_and_methods(server: ReleasedApiServer, session: dict[str, Any]) -> None:
    url, sid = server.url, session["session_id"]
    cases = [
        (requests.get(f"{url}/v1/tasks/NO_SUCH", timeout=10), 404, "Task 'NO_SUCH' not found"),
        (requests.post(f"{url}/v1/sessions", json={"task_id": "NO_SUCH"}, timeout=10), 404,
         "Task 'NO_SUCH' not found"),
        (_submit(server, "nope", {"members": [{"name": "Sill_01"}]}), 404, "Session 'nope' not found"),
        (requests.get(f"{url}/v1/sessions/{sid}/results/nope", timeout=10), 404, "Job not found"),
        (requests.get(f"{url}/v2/anything", timeout=10), 404, "Not Found"),
        (requests.get(f"{url}/v1/sessions/{sid}/submit", timeout=10), 405, "Method Not Allowed"),
        (requests.delete(f"{url}/v1/tasks", timeout=10), 405, "Method Not Allowed"),
    ]
    for response, status, detail in cases:
        assert (response.status_code, response.json()) == (status, {"detail": detail})


def test_a_job_is_only_visible_in_its_session(server: ReleasedApiServer, session: dict[str, Any]) -> None:
    job = _submit(server, session["session_id"], {"members": _members(FIXTURES / "sills_only.json")}).json()
    other = requests.post(f"{server.url}/v1/sessions", json={"task_id": session["task_id"]}, timeout=10).json()
    r = requests.get(f"{server.url}/v1/sessions/{other['session_id']}/results/{job['job_id']}", timeout=10)
    assert r.status_code == 404
    _poll(server.url + job["poll_url"])


def test_oversized_body_is_refused(server: ReleasedApiServer, session: dict[str, Any],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDBENCH_LIMIT_JSON_FILE_BYTES", "1000")
    r = _submit(server, session["session_id"], {"members": _members(PASSING)})
    assert r.status_code == 413 and "BUILDBENCH_LIMIT_JSON_FILE_BYTES" in r.json()["detail"]
    monkeypatch.delenv("BUILDBENCH_LIMIT_JSON_FILE_BYTES")
    assert requests.get(f"{server.url}/healthz", timeout=10).status_code == 200


def test_a_crashing_grader_fails_the_job_and_the_server_keeps_serving() -> None:
    def broken(task_id: str, request: SubmitRequest) -> dict[str, Any]:
        raise RuntimeError("validator exploded")

    with ReleasedApiServer(load_source(split="demo", limit=1), broken) as srv:
        sid = requests.post(f"{srv.url}/v1/sessions", json={"task_id": srv.source.ids()[0]}, timeout=10).json()
        job = requests.post(f"{srv.url}/v1/sessions/{sid['session_id']}/submit",
                            json={"members": [{"name": "Sill_01"}]}, timeout=10).json()
        result = _poll(srv.url + job["poll_url"])
        assert result["status"] == "failed" and "validator exploded" in result["error"]
        assert requests.get(f"{srv.url}/healthz", timeout=10).status_code == 200


def test_expired_sessions_refuse_submissions() -> None:
    clock = [datetime(2026, 3, 16, 12, tzinfo=UTC)]
    board = JobBoard(Grader(), now=lambda: clock[0])
    try:
        session = board.open_session(SessionRequest("AF_01_0018", "m", "stepwise"))
        assert session.to_json()["expires_at"] == "2026-03-16T18:00:00+00:00"  # SESSION_TTL: 6 h
        clock[0] += timedelta(hours=6, seconds=1)
        with pytest.raises(ApiError) as info:
            board.submit(session.session_id, SubmitRequest([{"name": "Sill_01"}]))
        assert (info.value.status, info.value.detail) == (410, "Session expired")
    finally:
        board.close()


def test_task_source_refuses_repeated_ids() -> None:
    tasks = load_source(split="demo", limit=1)
    one = tasks.get(tasks.ids()[0])
    assert one is not None
    with pytest.raises(Exception, match="repeat"):
        TaskSource([one, one])


# -- the command ---------------------------------------------------------------------------
def test_declared_serve_defaults_are_the_server_defaults() -> None:
    declared = {spec.name: spec.default for spec in SERVE_OPTIONS}
    assert declared == ServeOptions().model_dump()
    assert ServeOptions.from_pairs([]) == ServeOptions(profile="released", condition="frame", renderer="raster",
                                                       executor="fast", isolation="auto")


def test_serve_help_lists_every_option_with_its_default() -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0, result.output
    listed = result.output.split("-o KEY=VALUE options:", 1)[1]
    for spec in SERVE_OPTIONS:
        assert f"{spec.name} " in listed
        assert f"(default {spec.shown_default()})" in " ".join(listed.split())


def test_serve_command_serves_and_refuses_bad_options() -> None:
    cmd = [sys.executable, "-m", "buildbench", "dreamhouse", "serve", "--port", "0", "--limit", "1"]
    bad = subprocess.run([*cmd, "-o", "profile=strict"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "profile" in bad.stderr
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = first.rsplit(" at ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:")
        assert requests.get(f"{url}/healthz", timeout=10).json() == {"ok": True, "tasks": 1}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# -- the released client against our server ------------------------------------------------
def _released_file(relative: str) -> Path:
    pytest.importorskip("dreamhouse", reason="the released client (pip install dreamhouse) is not installed")
    from importlib.metadata import distribution

    path = Path(str(distribution("dreamhouse").locate_file(relative)))
    if not path.is_file():
        pytest.skip(f"the installed dreamhouse distribution has no {relative}")
    return path


def _load_module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_released_quickstart_client_functions(server: ReleasedApiServer, tmp_path: Path) -> None:
    quick = _load_module("dreamhouse_quickstart", _released_file("examples/quickstart.py"))
    released_cli = importlib.import_module("dreamhouse.cli")

    released_cli._wait_for_server(server.url, timeout=10)
    task_id = server.source.ids()[0]
    task = quick.fetch_task(server.url, task_id)
    images = quick.download_images(server.url, task, tmp_path / "images")
    assert [p.name for p in images] == [f"{v}.png" for v in VIEWS]
    assert all(p.read_bytes().startswith(PNG) for p in images)
    session_id = quick.create_session(server.url, task_id, model_id="released-client")
    results = quick.submit_and_poll(server.url, session_id, _members(PASSING), timeout=60)
    assert results is not None and results["all_passed"] is True
    assert quick.format_feedback(results) == "[SUCCESS] All 10 structural tests passed."
    failing = quick.submit_and_poll(server.url, session_id, _members(FIXTURES / "sills_only.json"), timeout=60)
    assert failing is not None and "[VALIDATION FAILED]" in quick.format_feedback(failing)


def test_released_pipeline_client(server: ReleasedApiServer) -> None:
    scaffold = _load_module("dreamhouse_scaffold", _released_file("examples/pipeline_scaffold.py"))
    client = scaffold.EvalClient(server.url + "/")
    assert client.health() is True
    task_id = server.source.ids()[1]
    task = client.get_task(task_id)
    assert client.download_image(task["reference_images"][0]).startswith(PNG)
    session_id = client.create_session(task_id, model_id="scaffold")
    job_id = client.submit(session_id, _members(FIXTURES / "sills_only.json"))
    results = client.poll(session_id, job_id, timeout=60)
    assert results is not None and results["all_passed"] is False
