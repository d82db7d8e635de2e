"""Besiege recordings in: the Lua log, BuildArena 2.0's Block Tracker CSV and its machine records.

The fixtures are our own, written in the formats the public Construction Challenge entries
use (AragornDaoZhen/BuildArena-Kaggle-Final-Entries states no licence, so its files are not
copied here). ``BUILDBENCH_KAGGLE_ENTRIES`` set to a checkout of that repository runs the
test on the real files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from buildbench.cli.main import main
from buildbench.suites.buildarena import designs, trajectories
from buildbench.suites.buildarena.export import history_json
from buildbench.suites.buildarena.model import ControlEntry
from buildbench.suites.buildarena.physics import Trajectory
from buildbench.suites.buildarena.trajectories import (
    RecordingError,
    controls_from_keys,
    read_recording,
    split_keys,
)
from buildbench.suites.buildarena.trajectories.records import machine_of, read_record, valid_entries

HEADER = ("sample_index,target_index,target_guid,target_name,elapsed_seconds,unity_time_seconds,input_keys_held,"
          "input_keys_down,input_keys_up,machine_integrity,machine_block_health_sum,machine_block_max_health_sum,"
          "machine_block_count,machine_cluster_count,target_block_health,target_block_max_health,x,y,z,"
          "rot_w,rot_x,rot_y,rot_z")
GUID_START = "0b5e6a30-0000-4000-8000-000000000001"
GUID_OTHER = "0b5e6a30-0000-4000-8000-000000000002"


def _row(sample: int, target: int, t: float, keys: str, integrity: float, xyz: tuple[float, float, float]) -> str:
    guid, name = (GUID_START, "StartingBlock") if target == 0 else (GUID_OTHER, "Booster")
    x, y, z = xyz
    return (f"{sample},{target},{guid},{name},{t},{1000 + t},{keys},,,{integrity},9,10,2,1,1,1,"
            f"{x},{y},{z},1,0,0,0")


def _tracker_text() -> str:
    rows = ["# tracker_enabled,true", f"# target_guids,{GUID_START};{GUID_OTHER}", "# sample_rate_hz,10", HEADER]
    for k in range(5):
        keys = "Space" if k in (1, 2) else ("Q;Space" if k == 3 else "")
        rows.append(_row(k, 0, 0.1 * k, keys, 1.0 - 0.1 * (k == 4), (0.5 * k, 5.0 + k, 2.0 * k)))
        rows.append(_row(k, 1, 0.1 * k, keys, 1.0 - 0.1 * (k == 4), (1.0, 6.0, -k)))
    return "\n".join(rows) + "\n"


def test_block_tracker_csv_is_read_into_our_frame(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.csv"
    path.write_text(_tracker_text())
    rec = read_recording(path)
    assert rec.format == "block-tracker" and rec.header["sample_rate_hz"] == "10"
    traj = rec.trajectory
    assert traj.ids == ["1", f"guid:{GUID_OTHER}"]
    np.testing.assert_allclose(traj.time, [0.0, 0.1, 0.2, 0.3, 0.4])
    # Unity (x, y up, z) becomes [east, north, up] = [x, z, y].
    np.testing.assert_allclose(traj.series("1")[3], [1.5, 6.0, 8.0])
    assert rec.rotation is not None and rec.rotation.shape == (5, 2, 4)
    assert rec.integrity is not None and rec.integrity[-1] == pytest.approx(0.9)
    assert rec.keys_held is not None and rec.keys_held[3] == frozenset({"Q", "Space"})
    assert controls_from_keys(rec) == [ControlEntry(0.1, "Space", 0.3), ControlEntry(0.3, "Q", 0.1)]


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda t: t.replace("rot_z", "rot_q").replace(",x,y,z,", ",x,y,zz,"), "line 4: not a Block Tracker header"),
    (lambda t: t.replace(",0.0,5.0,0.0,", ",nan,5.0,0.0,", 1), "line 5: x 'nan' is not finite"),
    (lambda t: t.replace(",0.0,5.0,0.0,", ",abc,5.0,0.0,", 1), "line 5: x 'abc' is not a number"),
    (lambda t: t + _row(4, 1, 0.4, "", 1.0, (0, 0, 0)) + "\n", "line 15: sample 4 of guid:"),
    (lambda t: t.replace("\n3,0,", "\n3,0,x,", 1), "line 11: 24 fields, the header has 23"),
    (lambda t: "\n".join(t.splitlines()[:4]) + "\n", "no sample at which every tracked block has a row"),
])
def test_bad_tracker_lines_are_named(tmp_path: Path, edit, expected: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(edit(_tracker_text()))
    with pytest.raises(RecordingError, match=expected.replace("(", r"\(")) as info:
        read_recording(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_tracker_time_going_back_is_refused(tmp_path: Path) -> None:
    text = _tracker_text().replace("\n4,0,", "\n9,0,").replace("\n4,1,", "\n9,1,")
    text = text.replace(",0.4,1000.4,", ",0.05,1000.05,")
    path = tmp_path / "back.csv"
    path.write_text(text)
    with pytest.raises(RecordingError, match="line 13: elapsed_seconds 0.05 goes back in time"):
        read_recording(path)


def test_lua_log_is_read_with_the_file_named(tmp_path: Path) -> None:
    traj = Trajectory(np.array([0.0, 0.04]), ["1", "2"], ["Starting Block", "Small Wooden Block"],
                      np.arange(12, dtype=float).reshape(2, 2, 3), [], np.zeros((2, 0), dtype=bool), np.zeros(0))
    path = tmp_path / "log.csv"
    path.write_text(traj.to_csv())
    rec = read_recording(path)
    assert rec.format == "lua-log" and rec.trajectory.ids == ["1", "2"] and rec.integrity is None
    np.testing.assert_allclose(rec.trajectory.position, traj.position, atol=1e-4)
    path.write_text(traj.to_csv() + "0.08, ID_1, 1, 2\n")
    with pytest.raises(RecordingError, match=f"^{path} line 5: expected"):
        read_recording(path)


def test_readers_take_regular_files_within_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RecordingError, match="folder"):
        read_recording(tmp_path)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(RecordingError, match="FIFO"):
        read_recording(fifo)
    with pytest.raises(RecordingError, match="FIFO"):
        read_record(fifo)
    big = tmp_path / "big.csv"
    big.write_text(_tracker_text())
    monkeypatch.setattr(trajectories, "MAX_RECORDING_BYTES", 100)
    with pytest.raises(RecordingError, match="limit"):
        read_recording(big)


def test_key_columns_split_on_any_joiner() -> None:
    assert split_keys("LeftShift;Space|Q + W") == frozenset({"LeftShift", "Space", "Q", "W"})
    assert split_keys("") == frozenset()


def _added(block_id: int, name: str) -> str:
    return f"You have successfully added <ID {block_id}: {name}>.\nExisting Blocks: {block_id}"


RECORD_2_0 = [
    {"op": "start", "params": {"init_shift": [0, 0, 0], "init_rotation": [0, 0, 0], "note": "core"},
     "result": _added(1, "Starting Block")},
    {"op": "attach_block_to", "params": {"base_block": 1, "face": "f0", "new_block": "Steering Thruster"},
     "result": _added(2, "Steering Thruster")},
    {"op": "attach_block_to", "params": {"base_block": 1, "face": "f2", "new_block": "Booster"},
     "result": _added(3, "Booster")},
    {"op": "remove_block", "params": {"block_id": 3}, "result": "You have successfully removed <ID 3: Booster>."},
    {"op": "attach_block_to", "params": {"base_block": 1, "face": "f1", "new_block": "Single Wooden Block"},
     "result": _added(4, "Single Wooden Block")},
]


def test_a_2_0_record_is_refused_naming_its_blocks(tmp_path: Path) -> None:
    path = tmp_path / "build_history.json"
    path.write_text(json.dumps({"operation_history": RECORD_2_0}))
    record = read_record(path)
    assert record.kind == "valid" and record.blocks == {"1": "Starting Block", "2": "Steering Thruster",
                                                         "4": "Single Wooden Block"}
    with pytest.raises(RecordingError, match=r"Single Wooden Block ×1, Steering Thruster ×1 \(Small Wooden Block "
                                             r"in 1.0, but 2.0's geometry and face labels differ\)"):
        machine_of(record)


def test_full_history_drops_queries_and_failed_calls(tmp_path: Path) -> None:
    full = [
        {"op": "list_block_categories", "params": {}, "result": "Available block categories (8)"},
        RECORD_2_0[0],
        {"op": "failed", "params": {"func_name": "attach_block_to", "message": "Face f9 not found"}},
        {"op": "attach_block_to", "params": {"base_block": 1, "face": "f9", "new_block": "Booster"},
         "result": "Face f9 not found"},
        {"op": "get_block_details", "params": {"block_id": 1}, "result": "(The starting block) <ID 1: Starting Block>"},
        RECORD_2_0[1],
    ]
    path = tmp_path / "build_history_full.json"
    path.write_text(json.dumps(full))
    record = read_record(path)
    assert record.kind == "full" and record.failed == [{"func_name": "attach_block_to", "message": "Face f9 not found"}]
    assert valid_entries(full) == [RECORD_2_0[0], RECORD_2_0[1]]
    assert record.summary() == {"kind": "full", "calls": 5, "failed": 1, "queries": 2,
                                "blocks": {"Starting Block": 1, "Steering Thruster": 1}}


def test_a_1_0_history_rebuilds_our_machine(tmp_path: Path) -> None:
    machine = designs.build(designs.REFERENCE["lift-1"]())
    path = tmp_path / "engine.json"
    path.write_text(history_json(machine))
    rebuilt = machine_of(read_record(path))
    assert [b.type for b in rebuilt.blocks.values()] == [b.type for b in machine.blocks.values()]


@pytest.mark.parametrize(("content", "expected"), [
    ("[1, 2]", "entry 0 is not an object with a non-empty string op"),
    ('[{"op": "start", "params": []}]', r"entry 0 \(start\): params is not an object"),
    ('{"machine": []}', "expected a list"),
    ('[{"op": "start",\n "params": {}', "line 2: not valid JSON"),
])
def test_bad_records_are_named(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "record.json"
    path.write_text(content)
    with pytest.raises(RecordingError, match=expected):
        read_record(path)


def test_calibrate_refuses_a_2_0_machine_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record, traj = tmp_path / "build_history.json", tmp_path / "trajectory.csv"
    record.write_text(json.dumps(RECORD_2_0))
    traj.write_text(_tracker_text())
    code = main(["buildarena", "calibrate", str(traj), "--machine", str(record), "--task", "lift-2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and "Steering Thruster ×1" in err[0]


KAGGLE = os.environ.get("BUILDBENCH_KAGGLE_ENTRIES")


@pytest.mark.skipif(not KAGGLE, reason="BUILDBENCH_KAGGLE_ENTRIES (a checkout of "
                    "AragornDaoZhen/BuildArena-Kaggle-Final-Entries) is not set")
@pytest.mark.parametrize("entry", ["ENTRY_3P", "ENTRY_5P"])
def test_real_construction_challenge_entries(entry: str) -> None:
    folder = Path(str(KAGGLE)) / entry
    rec = read_recording(folder / "trajectory.csv")
    assert rec.format == "block-tracker" and rec.trajectory.ids == ["1"]
    assert float(np.median(np.diff(rec.trajectory.time))) == pytest.approx(0.1, abs=0.01)
    assert rec.integrity is not None and np.all((rec.integrity >= 0) & (rec.integrity <= 1))
    assert controls_from_keys(rec)  # the pilot pressed keys
    valid, full = read_record(folder / "build_history.json"), read_record(folder / "build_history_full.json")
    assert valid.kind == "valid" and full.kind == "full"
    assert valid.blocks == full.blocks and "Steering Thruster" in valid.blocks.values()
    with pytest.raises(RecordingError, match="Steering Thruster"):
        machine_of(valid)
