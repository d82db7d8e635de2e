"""``buildbench buildarena calibrate``: the fit recovers constants we simulated with.

A recording is made by simulating a reference design under a profile whose constants we
changed (written as the game's Lua log, so it goes through the same reader a real log does);
the fit starts from the unchanged profile. Tolerance: 1 % of each factor (the fit lands within
0.001 % on these smooth cases; the margin is for other BLAS/MuJoCo builds).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from buildbench.cli.main import main
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.calibrate import (
    CalibrationError,
    Pair,
    fit,
    parse_free,
    residuals,
    simulate_pair,
)
from buildbench.suites.buildarena.check import simulation
from buildbench.suites.buildarena.export import history_json
from buildbench.suites.buildarena.physics import PhysicsConfig, Trajectory, mjcf
from buildbench.suites.buildarena.physics.profile import load_profile
from buildbench.suites.buildarena.trajectories import Recording, read_recording

TOLERANCE = 0.01
FLIGHT_S = 4.0


def _recorded_rocket(tmp_path: Path, overrides: dict[str, float | str]) -> tuple[Path, Path]:
    """The Lift Lv.2 reference rocket's history and its Lua log simulated under ``overrides``."""
    machine = designs.build(designs.REFERENCE["lift-2"]())
    config = PhysicsConfig.from_profile(load_profile().with_overrides(overrides))
    traj = simulation(machine, "lift-2", config=config, duration_s=FLIGHT_S).run().trajectory
    history, log = tmp_path / "rocket.json", tmp_path / "rocket.csv"
    history.write_text(history_json(machine))
    log.write_text(traj.to_csv())
    return history, log


def test_cli_recovers_drag_and_writes_a_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history, log = _recorded_rocket(tmp_path, {"drag": "2x"})
    out = tmp_path / "fitted.toml"
    code = main(["buildarena", "calibrate", str(log), "--machine", str(history), "--task", "lift-2",
                 "--free", "drag", "--out", str(out), "--workers", "1", "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["fitted"]["drag"]["factor"] == pytest.approx(2.0, rel=TOLERANCE)
    row = report["residuals"][0]
    assert row["format"] == "lua-log" and row["fit"]["position"] < 0.01 < row["start"]["position"]
    base, fitted = load_profile(), load_profile(out)
    assert fitted.name == "besiege-1-calibrated" and report["profile"]["sha256"] == fitted.sha256
    for member in base.groups["drag"]:
        assert float(fitted.entries[member].value) == pytest.approx(2.0 * float(base.entries[member].value),
                                                                    rel=TOLERANCE)
        assert fitted.entries[member].source == "besiege" and "rocket.csv" in fitted.entries[member].note
    assert fitted.entries["gravity_mps2"] == base.entries["gravity_mps2"]
    PhysicsConfig.from_profile(fitted)  # a run can use it (-o physics=FILE)


def test_two_constants_are_recovered_together(tmp_path: Path) -> None:
    """Drag and steam thrust trade against each other (a valley), yet both come back."""
    history, log = _recorded_rocket(tmp_path, {"drag": "2x", "steam_factor": "0.8x"})
    machine = designs.build(designs.REFERENCE["lift-2"]())
    recording = read_recording(log, {b.id: b.type for b in machine.blocks.values()})
    base = load_profile()
    result = fit([Pair(recording, machine, "lift-2")], base, parse_free(["drag,steam_factor=0.5:2"], base),
                 max_evals=40)
    assert result.factors == pytest.approx([2.0, 0.8], rel=TOLERANCE)
    assert result.best[0].quantities["position"] < 1e-2 < result.start[0].quantities["position"]


def test_free_constants_are_checked() -> None:
    base = load_profile()
    with pytest.raises(CalibrationError, match="not a constant or group of profile besiege-1"):
        parse_free(["bogus"], base)
    with pytest.raises(CalibrationError, match="bounds must be factors"):
        parse_free(["drag=2:1"], base)
    with pytest.raises(CalibrationError, match="bounds must be factors"):
        parse_free(["drag=nan:2"], base)
    with pytest.raises(CalibrationError, match="needs non-zero numbers"):  # a factor cannot move a zero
        parse_free(["friction"], base.with_overrides({"friction": 0.0}))
    with pytest.raises(CalibrationError, match="given twice"):
        parse_free(["drag", "drag"], base)
    (drag,) = parse_free(["drag"], base)
    # The default bounds shrink to what the simulation accepts (the quadratic drag has a stability cap).
    assert drag.low == pytest.approx(0.1) and 1.0 < drag.high <= 10.0
    PhysicsConfig.from_profile(base.with_overrides({"drag": f"{drag.high!r}x"}))


def test_integrity_enters_the_residuals() -> None:
    time = np.array([0.0, 0.1, 0.2])
    position = np.zeros((3, 1, 3))
    traj = Trajectory(time, ["1"], ["Starting Block"], position, [], np.zeros((3, 0), dtype=bool), np.zeros(0))
    recording = Recording("rec.csv", "block-tracker", traj, integrity=np.array([1.0, 1.0, 0.5]))
    moved = Trajectory(time, ["1"], ["Starting Block"], position + np.array([0.0, 0.0, 3.0]) * time[:, None, None],
                       [], np.zeros((3, 0), dtype=bool), np.zeros(0))
    result = residuals(recording, moved, np.array([1.0, 1.0, 1.0]))
    assert result.quantities["height"] == pytest.approx(math.sqrt((0.3**2 + 0.6**2) / 3))
    assert result.quantities["horizontal"] == 0.0
    assert result.quantities["integrity"] == pytest.approx(math.sqrt(0.25 / 3))
    assert float(np.linalg.norm(result.vector)) == pytest.approx(
        math.hypot(result.quantities["position"], 10.0 * result.quantities["integrity"]))
    with pytest.raises(CalibrationError, match="no block id in common"):
        residuals(Recording("rec.csv", "block-tracker", Trajectory(
            time, ["guid:x"], ["unknown"], position, [], np.zeros((3, 0), dtype=bool), np.zeros(0))), moved)


def test_cli_usage_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history, log = _recorded_rocket(tmp_path, {})
    for extra, expected in ((["--free", "weld_strength=0:1"], "bounds must be factors"),
                            (["--machine", str(history)], "give one --machine for all recordings or one per"),
                            (["--physics", "nope"], "no such profile")):
        code = main(["buildarena", "calibrate", str(log), "--machine", str(history), "--task", "lift-2", *extra])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err


def test_tracker_keys_drive_the_replay(tmp_path: Path) -> None:
    """A Block Tracker recording (the game writes 10 Hz; 25 Hz here) replays the keys it shows held: a
    transport run recorded under our own constants is matched exactly, so the fit keeps them."""
    machine = designs.build(designs.REFERENCE["transport-1"]())
    traj = simulation(machine, "transport-1", duration_s=3.0).run().trajectory
    rows = ["# sample_rate_hz,25", "sample_index,target_index,target_guid,target_name,elapsed_seconds,"
            "input_keys_held,machine_integrity,x,y,z"]
    for k, t in enumerate(traj.time):
        x, y, z = traj.series("1")[k]
        held = ";".join(c.key for c in machine.control_sequence if c.time <= t + 1e-9 < c.time + c.hold_for)
        rows.append(f"{k},0,guid-1,StartingBlock,{t:.3f},{held},1,{x},{z},{y}")
    path = tmp_path / "car.csv"
    path.write_text("\n".join(rows) + "\n")
    recording = read_recording(path)
    base = load_profile()
    result = fit([Pair(recording, machine, "transport-1")], base, parse_free(["wheel_torque"], base), max_evals=3)
    assert result.factors == [1.0]
    assert result.best[0].quantities["position"] < 1e-6 and result.best[0].quantities["integrity"] == 0.0


def test_a_model_mujoco_cannot_build_is_a_calibration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _history, log = _recorded_rocket(tmp_path, {})
    machine = designs.build(designs.REFERENCE["lift-2"]())
    recording = read_recording(log, {b.id: b.type for b in machine.blocks.values()})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(mjcf, "ARENA_BASE_BYTES", 6_000)  # too small to compile the rocket's model
    monkeypatch.setattr(mjcf, "ARENA_BYTES_PER_BODY", 0)
    with pytest.raises(CalibrationError, match=r"rocket.csv: cannot simulate the machine on lift-2: MuJoCo could "
                                               r"not build its model \(memory: MuJoCo: .*out of memory"):
        simulate_pair(Pair(recording, machine, "lift-2"), PhysicsConfig.from_profile(load_profile()))
