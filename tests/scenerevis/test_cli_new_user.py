"""Regressions from a new user's pass over ``buildbench scenerevis``, run as subprocesses of
the real entry point: bad input gives one ``error:`` line naming what and where, exit status
2, and no traceback; batch commands report each malformed item and carry on; a reverse chain
of a room with a millimetre-thin object still replays."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from buildbench.suites.scenerevis.generate.flat import canonical_objects, check_scene, prepare_source
from buildbench.suites.scenerevis.generate.replay import replay

BUILDBENCH = [sys.executable, "-m", "buildbench", "scenerevis"]

ROOM = {"room_type": "bedroom", "room_id": "B-1",
        "bounds_bottom": [[-2, 0, 2], [2, 0, 2], [2, 0, -2], [-2, 0, -2]],
        "bounds_top": [[-2, 2.6, 2], [2, 2.6, 2], [2, 2.6, -2], [-2, 2.6, -2]],
        "objects": [{"id": "obj_1", "desc": "Queen bed", "size": [1.6, 0.5, 2.0], "pos": [0, 0, 0.5],
                     "rot": [0, 0, 0, 1], "jid": "bed"}]}
#: 5 mm is the thinnest extent the environment accepts; scaling it down in a reverse step used
#: to give an earlier size of 4 mm that ``add_object`` refused.
THIN_ROOM = {**ROOM, "objects": [*ROOM["objects"], {"id": "obj_2", "desc": "Thin rug", "size": [2.0, 0.005, 1.4],
                                                     "pos": [0, 0, -1], "rot": [0, 0, 0, 1], "jid": "rug"}]}


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BUILDBENCH, *map(str, args)], capture_output=True, text=True, timeout=300)


def _errors(out: subprocess.CompletedProcess[str]) -> list[str]:
    """The stderr lines of a run that ended with status 2, each an ``error:`` line."""
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), out.stderr
    return lines


def _one_error(out: subprocess.CompletedProcess[str]) -> str:
    lines = _errors(out)
    assert len(lines) == 1, out.stderr
    return lines[0]


def _jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_rooms_refuses_a_huge_n_naming_the_flag(tmp_path: Path) -> None:
    line = _one_error(_cli("rooms", "--n", "99999999999", "--out", tmp_path / "r.jsonl"))
    assert "'--n'" in line and "100000" in line


def test_reverse_refuses_a_huge_candidates_naming_the_flag(tmp_path: Path) -> None:
    rooms = _jsonl(tmp_path / "rooms.jsonl", [json.dumps(ROOM)])
    line = _one_error(_cli("reverse", rooms, "--candidates", "99999999999", "--out", tmp_path / "o"))
    assert "'--candidates'" in line and "1000" in line


def test_reverse_of_a_room_with_a_thin_object_replays_to_it(tmp_path: Path) -> None:
    rooms = _jsonl(tmp_path / "rooms.jsonl", [json.dumps(THIN_ROOM)])
    out = _cli("reverse", rooms, "--candidates", "200", "--keep", "3", "--mode", "single", "--no-images",
               "--no-filter", "--workers", "1", "--out", tmp_path / "o")
    assert out.returncode == 0, out.stderr
    source = prepare_source(check_scene(THIN_ROOM, "thin"))[0]
    records = [json.loads(line) for line in (tmp_path / "o" / "chains.jsonl").read_text().splitlines()]
    assert len(records) == 3
    for record in records:
        assert canonical_objects(replay(record)) == canonical_objects(source)


@pytest.mark.parametrize("command", [["metrics"], ["reverse", "--out", "o"], ["goals", "--out", "g.jsonl"]])
def test_an_empty_file_is_an_error_naming_it(tmp_path: Path, command: list[str]) -> None:
    empty = _jsonl(tmp_path / "empty.jsonl", [])
    out = _cli(command[0], empty, *[str(tmp_path / a) if a in ("o", "g.jsonl") else a for a in command[1:]])
    assert _one_error(out) == f"error: {empty}: no scenes (the file is empty)"
    assert out.stdout == ""


def test_metrics_prints_no_table_when_nothing_could_be_read(tmp_path: Path) -> None:
    bad = _jsonl(tmp_path / "bad.jsonl", ["garbage"])
    out = _cli("metrics", bad)
    assert _one_error(out).startswith(f"error: {bad} line 1: ")
    assert out.stdout == ""


def test_metrics_measures_the_good_lines_and_reports_each_bad_one(tmp_path: Path) -> None:
    mixed = _jsonl(tmp_path / "mixed.jsonl", [json.dumps(ROOM), "{broken", json.dumps(ROOM), '{"x": 1}'])
    out = _cli("metrics", mixed, "--json", "--no-voxels")
    lines = _errors(out)
    assert [line.split(":")[1].strip() for line in lines] == [f"{mixed} line 2", f"{mixed} line 4"]
    assert [row["line"] for row in json.loads(out.stdout)["scenes"]] == [1, 3]


def test_goals_reports_each_bad_line_and_writes_the_rest(tmp_path: Path) -> None:
    room = {**ROOM, "objects": [{**ROOM["objects"][0], "id": f"obj_{k}", "pos": [-1.2 + 0.8 * k, 0, -1]}
                                for k in range(4)]}
    mixed = _jsonl(tmp_path / "mixed.jsonl", [json.dumps(room), "{broken", json.dumps({"x": 1}), json.dumps(room)])
    out = _cli("goals", mixed, "--condition", "missing", "--out", tmp_path / "g.jsonl")
    lines = _errors(out)
    assert len(lines) == 2 and "mixed.jsonl:2" in lines[0] and "mixed.jsonl:3" in lines[1]
    assert len((tmp_path / "g.jsonl").read_text().splitlines()) == 2


def test_reverse_reports_each_bad_line_and_writes_the_rest(tmp_path: Path) -> None:
    mixed = _jsonl(tmp_path / "mixed.jsonl", ["[1, 2", json.dumps(ROOM)])
    out = _cli("reverse", mixed, "--no-images", "--no-filter", "--workers", "1", "--out", tmp_path / "o")
    assert _one_error(out).startswith(f"error: {mixed}:1: invalid JSON")
    assert len((tmp_path / "o" / "chains.jsonl").read_text().splitlines()) == 3


def test_export_hf_draws_no_progress_bars(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    rooms = _jsonl(tmp_path / "rooms.jsonl", [json.dumps(ROOM)])
    made = _cli("reverse", rooms, "--no-images", "--no-filter", "--workers", "1", "--out", tmp_path / "o")
    assert made.returncode == 0, made.stderr
    out = _cli("export", tmp_path / "o" / "chains.jsonl", "--format", "hf", "--out", tmp_path / "x")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert (tmp_path / "x" / "hf").is_dir()


def test_every_option_has_help() -> None:
    from buildbench.suites.scenerevis.cli import cli

    missing = [f"{name} {param.opts[0]}" for name, command in cli.commands.items() for param in command.params
               if isinstance(param, click.Option) and not param.help]
    assert missing == []


@pytest.mark.parametrize("command", [["reverse", "--out", "o"], ["goals", "--out", "g.jsonl"]])
def test_a_file_of_only_bad_lines_writes_nothing(tmp_path: Path, command: list[str]) -> None:
    bad = _jsonl(tmp_path / "bad.jsonl", ["garbage"])
    out = _cli(command[0], bad, command[1], tmp_path / command[2])
    assert _one_error(out).startswith(f"error: {bad}:1: ")
    assert not (tmp_path / command[2]).exists() and out.stdout == ""


def test_reverse_refuses_a_huge_workers_naming_the_flag(tmp_path: Path) -> None:
    rooms = _jsonl(tmp_path / "rooms.jsonl", [json.dumps(ROOM)])
    line = _one_error(_cli("reverse", rooms, "--workers", "100000", "--out", tmp_path / "o"))
    assert "'--workers'" in line and "1024" in line
    assert not (tmp_path / "o").exists()
