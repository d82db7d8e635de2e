"""The viewer's JSON API on stored runs of every suite: pages, sorting, filters, episodes, artefacts."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main

# The session's stored runs (conftest) are built once: every test viewing them shares a worker.
pytestmark = pytest.mark.xdist_group("web-runs")

BIG = 7  # the synthetic 1,200-episode run's id (conftest: the six suite runs, hostile, big)


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=120) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_runs_lists_every_run_with_its_suite(viewer: str, run_ids: dict[str, int], suite_of: dict[str, str]) -> None:
    assert run_ids["big"] == BIG
    status, body = get(viewer + "api/runs")
    assert status == 200
    assert [r["suite"] for r in body["runs"]][: len(suite_of)] == list(suite_of.values())
    assert body["runs"][BIG]["episodes"] == 1200
    assert body["runs"][BIG]["status"] == {"ok": 1080, "error": 120}


def test_pages_cover_the_run_once_in_order(viewer: str) -> None:
    seen = []
    for offset in range(0, 1200, 500):
        status, page = get(viewer + f"api/runs/{BIG}/episodes?offset={offset}&limit=500")
        assert status == 200 and page["total"] == 1200
        seen += [r["task_id"] for r in page["rows"]]
    assert seen == [f"tower_{i:05d}" for i in range(1200)]


def test_sort_on_a_metric_puts_missing_and_nan_last(viewer: str) -> None:
    _, page = get(viewer + f"api/runs/{BIG}/episodes?sort=metric:height_ratio&order=desc&limit=500&offset=1000")
    _, first = get(viewer + f"api/runs/{BIG}/episodes?sort=metric:height_ratio&order=desc&limit=5")
    values = [r["metrics"]["height_ratio"] for r in first["rows"]]
    assert values == sorted(values, reverse=True) and values[0] == 0.999
    tail = page["rows"][-121:]  # 120 errors without metrics and the NaN episode
    assert all(r["status"] == "error" or not math.isfinite(float(r["metrics"]["height_ratio"])) for r in tail)
    assert any(r["metrics"].get("height_ratio") == "nan" for r in tail)


def test_filters_by_text_status_and_metric_range(viewer: str) -> None:
    _, page = get(viewer + f"api/runs/{BIG}/episodes?q=TOWER_001&limit=500")
    assert page["total"] == 100 and all(r["task_id"].startswith("tower_001") for r in page["rows"])
    _, page = get(viewer + f"api/runs/{BIG}/episodes?status=error&limit=5")
    assert page["total"] == 120 and page["rows"][0]["error"] == "boom" and not page["rows"][0]["scored"]
    _, page = get(viewer + f"api/runs/{BIG}/episodes?metric=height_ratio&min=0.5&max=0.6&limit=500")
    assert page["total"] > 0
    assert all(0.5 <= r["metrics"]["height_ratio"] <= 0.6 for r in page["rows"])


@pytest.mark.parametrize("query", ["offset=-1", "limit=0", "limit=100000", "sort=task_id;drop", "min=abc&metric=x",
                                   "min=nan&metric=x", "offset=1.5"])
def test_bad_page_queries_are_refused_with_one_line(viewer: str, query: str) -> None:
    status, body = get(viewer + f"api/runs/{BIG}/episodes?{query}")
    assert status == 400 and "\n" not in body["error"] and "query parameter" in body["error"]


def test_unknown_run_episode_and_endpoint(viewer: str) -> None:
    assert get(viewer + "api/runs/99/episodes")[0] == 400
    status, body = get(viewer + f"api/runs/{BIG}/episode?task=nope&sample=0")
    assert status == 400 and "no episode 'nope'" in body["error"]
    assert get(viewer + "api/runs/0/everything")[0] == 400
    assert get(viewer + "api/nothing")[0] == 400
    assert get(viewer + "nothing")[0] == 404


def test_metric_keys_cover_the_run(viewer: str) -> None:
    _, body = get(viewer + f"api/runs/{BIG}/metrics")
    assert body["metrics"] == ["height_ratio", "passed"]


def _first(viewer: str, run: int) -> dict[str, Any]:
    _, page = get(viewer + f"api/runs/{run}/episodes?limit=1")
    return page["rows"][0]


def test_episode_has_every_turn_and_the_task_prompt(viewer: str, run_ids: dict[str, int]) -> None:
    run = run_ids["scenerevis"]
    row = _first(viewer, run)
    status, ep = get(viewer + f"api/runs/{run}/episode?task={row['task_id']}&sample=0")
    assert status == 200 and ep["steps"] and ep["task"]["inputs"]["instruction"]
    images = [img for step in ep["steps"] for img in step["images"]]
    assert images and all(img["url"] and img["url"].startswith(f"files/{run}/") for img in images)
    with urllib.request.urlopen(viewer + images[0]["url"]) as res:
        assert res.headers["Content-Type"] == "image/png" and res.read(8) == b"\x89PNG\r\n\x1a\n"


def _artefact(viewer: str, run: int) -> dict[str, Any]:
    row = _first(viewer, run)
    status, art = get(viewer + f"api/runs/{run}/artefact?task={row['task_id']}&sample={row['sample']}")
    assert status == 200, art
    return art


def _statuses(art: dict[str, Any]) -> set[str]:
    return {item["status"] for key in ("boxes", "meshes", "polygons") for item in art[key]}


def test_timber_frame_names_failing_members(viewer: str, run_ids: dict[str, int]) -> None:
    art = _artefact(viewer, run_ids["dreamhouse"])
    failing = [b for b in art["boxes"] if b["status"] == "fail"]
    assert art["up"] == "z" and len(art["boxes"]) > 100 and failing
    named = {m for f in art["findings"] for m in f["ids"]}
    assert {b["id"] for b in failing} <= named
    assert all("failed)" in b["label"] for b in failing)


def test_machine_is_simulated_and_played_back(viewer: str, run_ids: dict[str, int]) -> None:
    art = _artefact(viewer, run_ids["buildarena"])
    anim = art["animation"]
    assert anim and len(anim["times"]) > 10
    moving = next(iter(anim["tracks"].values()))
    assert len(moving) == 3 * len(anim["times"])
    assert {"block"} <= _statuses(art) and art["findings"][0]["title"].startswith("simulation")


def test_ifc_edit_highlights_the_changed_element(viewer: str, run_ids: dict[str, int]) -> None:
    art = _artefact(viewer, run_ids["bimedit"])
    added = [m for m in art["meshes"] if m["status"] == "added"]
    assert len(added) == 1 and len(added[0]["positions"]) >= 24 and len(added[0]["indices"]) >= 36
    assert "context" in _statuses(art) and "1 added" in art["summary"]


def test_room_marks_collisions_and_out_of_bounds(viewer: str, run_ids: dict[str, int]) -> None:
    art = _artefact(viewer, run_ids["scenerevis"])
    assert _statuses(art) & {"collision", "both"} and _statuses(art) & {"out_of_bounds", "both"}
    assert {f["status"] for f in art["findings"]} >= {"collision", "out_of_bounds"}
    assert art["polygons"][0]["status"] == "floor"


def test_house_shows_rooms_objects_and_verdicts(viewer: str, run_ids: dict[str, int]) -> None:
    art = _artefact(viewer, run_ids["legoeval"])
    assert len(art["polygons"]) == 2 and "opening" in _statuses(art)
    assert {f["status"] for f in art["findings"]} & {"holds", "violates"}


def test_compare_has_one_view_per_suite(viewer: str, suite_of: dict[str, str]) -> None:
    # More in test_compare.py.
    _, body = get(viewer + "api/compare")
    assert set(body["suites"]) == set(suite_of.values())
    example = body["suites"]["example"]
    assert len(example["columns"]) == 3 and "passed" in example["headline"]


def test_static_export_writes_every_episode_and_image(stored_runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert main(["view", str(stored_runs["scenerevis"]), str(stored_runs["example"]), "--static", str(out)]) == 0
    assert (out / "index.html").read_text().count('content="static"') == 1
    assert (out / "static" / "app.js").is_file()
    data = out / "data"
    rows = (data / "run-0" / "rows.js").read_text()
    assert rows.startswith('window.__bbData("run-0/rows",') and rows.count('"task_id"') == 2
    assert (data / "run-0" / "ep-1.js").is_file() and (data / "run-1" / "art-0.js").is_file()
    assert list((out / "files" / "0").rglob("*.png"))
    assert main(["view", str(stored_runs["example"]), "--static", str(out)]) == 2  # not empty: refused


def test_static_export_has_the_first_observation_images_the_sft_export_has(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # DreamHouse shows its five target views only at reset, so no step of the run stores them.
    from buildbench.harness.sft import export_sft
    from buildbench.web.data import ViewerData
    from buildbench.web.runs import open_runs

    run = tmp_path / "run"
    assert main(["run", "dreamhouse", "--agent", "oracle", "--split", "demo", "--limit", "1", "--run-dir", str(run),
                 "--workers", "0", "--quiet"]) == 0
    sft = export_sft(run, tmp_path / "sft")
    assert sft.images == 5
    capsys.readouterr()
    out = tmp_path / "site"
    assert main(["view", str(run), "--static", str(out)]) == 0
    assert "1 episode(s), 5 image(s)" in capsys.readouterr().out
    episode = (out / "data" / "run-0" / "ep-0.js").read_text()
    assert "data:image" not in episode  # written as files, not inlined
    written = sorted((out / "first" / "0" / "ep-0").glob("*.png"))
    assert [p.name for p in written] == [f"reset_view{i}.png" for i in range(5)]
    for path in written:
        assert f'"url":"first/0/ep-0/{path.name}"' in episode
        assert path.read_bytes() == next((tmp_path / "sft" / "images").rglob(path.name)).read_bytes()
    live = ViewerData(open_runs([run]))
    task_id = json.loads(episode[episode.index(",") + 1:-3])["task_id"]
    shown = live.episode(0, task_id, 0)
    assert shown["first_images_problem"] is None
    assert [e["url"].startswith("data:image/png;base64,") for e in shown["first_images"]] == [True] * 5


def test_view_refuses_a_folder_without_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["view", str(tmp_path / "empty"), "--static", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "is not a buildbench run" in err and "\n" not in err


def test_view_command_serves_on_loopback_until_interrupted(stored_runs: dict[str, Path]) -> None:
    import signal
    import subprocess
    import sys

    # A child inherits an ignored SIGINT (what a library in this long test process may have left):
    # start it with Python's own handling, as a shell's foreground command is. -X faulthandler: a
    # viewer that does not stop is made to print every thread's stack (SIGABRT).
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-X", "faulthandler", "-m", "buildbench", "view",
                                 str(stored_runs["example"]), "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, inherited)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("buildbench view: 1 run(s) at http://127.0.0.1:"), line
        url = line.split(" at ")[1].split()[0]
        status, body = get(url + "api/runs")
        assert status == 200 and body["runs"][0]["suite"] == "example"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            _, err = proc.communicate(timeout=30)
            pytest.fail(f"buildbench view did not stop within 30 s of SIGINT (this process's SIGINT was "
                        f"{inherited!r}); its threads:\n{err[-6000:]}")
    assert proc.returncode == 0, err
