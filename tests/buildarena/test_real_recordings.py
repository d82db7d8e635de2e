"""Recordings from the real game through `buildbench buildarena analyze`: BuildArena 2.0's Block
Tracker CSV (the form of the public Kaggle entries' ``trajectory.csv``: ``# key,value`` lines, a
header row, one row per sample and tracked block, Unity's y-up frame) is judged as the Lua log
of the same motion is, as `calibrate` already read both. Before, `analyze` read only the Lua log
and refused a tracker CSV at its first line. Files written here, not copied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.export import history_json

GUID = "00000000-0000-4000-8000-000000000001"
COLUMNS = ("sample_index,target_index,target_guid,target_name,elapsed_seconds,unity_time_seconds,input_keys_held,"
           "input_keys_down,input_keys_up,machine_integrity,machine_block_health_sum,machine_block_max_health_sum,"
           "machine_block_count,machine_cluster_count,target_block_health,target_block_max_health,x,y,z,rot_w,rot_x,"
           "rot_y,rot_z")


def _motion() -> list[tuple[float, float, float, float]]:
    """(t, x east, y up, z north): 1.2 m/s east at 0.6 m height for 12 s, sampled at 10 Hz."""
    return [(k / 10, 1.2 * k / 10, 0.6, 0.0) for k in range(121)]


def _tracker() -> str:
    lines = ["# tracker_enabled,true", f"# target_guids,{GUID}", "# sample_rate_hz,10", COLUMNS]
    lines += [f"{k},0,{GUID},StartingBlock,{t},{3600 + t},W,,,1,10,10,9,1,1,1,{x},{y},{z},1,0,0,0"
              for k, (t, x, y, z) in enumerate(_motion())]
    return "\n".join(lines) + "\n"


def _lua() -> str:
    return "".join(f"{t:.2f}, ID_1, {x:.4f}, {y:.4f}, {z:.4f}\n" for t, x, y, z in _motion())


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    path = tmp_path / "car.json"
    path.write_text(history_json(designs.build(designs.REFERENCE["transport-1"]())))
    return path


def _analyze(capsys: pytest.CaptureFixture[str], log: Path, machine: Path) -> tuple[int, str, str]:
    code = main(["buildarena", "analyze", str(log), "--machine", str(machine), "--task", "transport-1"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_block_tracker_csv_is_judged_as_the_lua_log_of_the_same_motion(
        tmp_path: Path, machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tracker, lua = tmp_path / "trajectory.csv", tmp_path / "log.csv"
    tracker.write_text(_tracker())
    lua.write_text(_lua())
    code, out, err = _analyze(capsys, tracker, machine)
    assert code in (0, 1) and not err, err
    from_tracker = json.loads(out)
    code_lua, out_lua, _ = _analyze(capsys, lua, machine)
    from_lua = json.loads(out_lua)
    assert code == code_lua and from_tracker["passed"] == from_lua["passed"]
    assert from_tracker["indicator"] == pytest.approx(from_lua["indicator"], abs=1e-3)
    assert from_tracker["indicator"] == pytest.approx(1.2 * 12.0, abs=1e-3)


def test_a_bad_tracker_row_is_one_error_line_naming_file_and_line(
        tmp_path: Path, machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _tracker().splitlines()
    text[7] = text[7].replace(",0.6,", ",high,")
    tracker = tmp_path / "trajectory.csv"
    tracker.write_text("\n".join(text) + "\n")
    code, out, err = _analyze(capsys, tracker, machine)
    assert code == 2 and not out
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: {tracker} line 8") and "'high'" in line, line
