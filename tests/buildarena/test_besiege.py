"""Besiege interop: the embedded Lua script and reading a game trajectory log back into the verifier."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.besiege import TrajectoryCsvError, read_trajectory_csv
from buildbench.suites.buildarena.check import check_support
from buildbench.suites.buildarena.cli import cli
from buildbench.suites.buildarena.export import history_json, to_bsg
from buildbench.suites.buildarena.model import ControlEntry
from buildbench.suites.buildarena.physics import Trajectory


def _lua(xml: str) -> str:
    root = ET.fromstring(xml.split("\n", 1)[1])
    node = root.find("Data/StringArray[@key='lua_data']")
    assert node is not None and node.text is not None
    return node.text


def test_bsg_embeds_controls_cargo_ramp_and_logging() -> None:
    machine = designs.build(designs.REFERENCE["transport-1"]())
    machine.control_sequence = [ControlEntry(1.0, "Alpha1", 2.5)]
    lua = _lua(to_bsg(machine, "car"))
    assert "machine.new_key_emulator('Alpha1')" in lua
    assert "if current_time >= 1.0 then key_alpha1.start() end" in lua
    assert "if current_time >= 3.5 then key_alpha1.stop() end" in lua
    assert lua.count("print(string.format(") == machine.num_blocks  # no connectors in this design
    assert 'info.get_block_info(0)' in lua and "set_slider" not in lua
    assert "<Data />" in to_bsg(machine, "car", lua=False)


def test_ballast_gets_the_mass_ramp() -> None:
    from buildbench.suites.buildarena.library import Workbench
    from buildbench.suites.buildarena.model import Rules

    bench = Workbench(rules=Rules.released())
    bench.call("start")
    bench.call("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Ballast"})
    lua = _lua(to_bsg(bench.machine, cargo_mass=(1500.0, 15.0)))
    assert "local mass_max = 1500.0" in lua and "local ramp_duration = 15.0" in lua
    assert 'cargo_control.set_slider("mass", mass_value)' in lua and '"ID_Ballast"' in lua


def _support_log() -> str:
    t = np.arange(0, 6.04, 0.04)
    z = np.where(t < 3.0, 7.0, 1.0)
    mass = 5 + 1495 * np.clip((t - 0.5) / 15, 0.005, 1)
    path = np.column_stack([np.zeros_like(t), np.zeros_like(t), z])
    traj = Trajectory(t, ["1", "Ballast"], ["Starting Block", "Ballast"], np.stack([path, path], axis=1),
                      [], np.zeros((t.size, 0), bool), mass)
    return traj.to_csv()


def test_log_reads_back_into_the_same_verdict() -> None:
    text = _support_log()
    lines = text.splitlines()
    shuffled = "\n".join(lines[::-1] + lines[:5])  # any order, with duplicates
    traj = read_trajectory_csv(shuffled)
    assert traj.ids == ["1", "Ballast"] and traj.position.shape[2] == 3
    verdict = check_support(traj)
    assert verdict.passed and verdict.indicator == pytest.approx(5 + 1495 * (3.0 - 0.5) / 15, abs=0.01)


@pytest.mark.parametrize(("line", "problem"), [
    ("0.00, ID_1, 1, 2", "line 1"), ("x, ID_1, 1, 2, 3", "not a number"), ("0.0, ID_1, 1, nan, 3", "finite"),
    ("0.0, block, 1, 2, 3", "line 1"),
])
def test_malformed_logs_name_the_line(line: str, problem: str) -> None:
    with pytest.raises(TrajectoryCsvError, match=problem):
        read_trajectory_csv(line)


def test_a_long_bad_line_is_quoted_as_a_short_excerpt() -> None:
    # e.g. `simulate --json` output given to calibrate: the error must stay one readable line
    line = '{"task": "lift-1", "passed": false, ' + '"x": 1, ' * 200 + "}"
    with pytest.raises(TrajectoryCsvError, match=r"line 1: expected .*, got '\{\"task\"") as caught:
        read_trajectory_csv(line)
    assert len(str(caught.value)) < 140 and str(caught.value).endswith("...'")


def test_analyze_command_judges_a_game_log(tmp_path: Path) -> None:
    machine = designs.build(designs.REFERENCE["support-1"]())
    (tmp_path / "bridge.json").write_text(history_json(machine), encoding="utf-8")
    (tmp_path / "log.csv").write_text(_support_log(), encoding="utf-8")
    args = ["analyze", str(tmp_path / "log.csv"), "--machine", str(tmp_path / "bridge.json"), "--task", "support-1"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert '"passed": true' in result.output
    (tmp_path / "bad.csv").write_text("0.0, ID_1\n", encoding="utf-8")
    bad = CliRunner().invoke(cli, [*args[:1], str(tmp_path / "bad.csv"), *args[2:]])
    assert bad.exit_code != 0 and "line 1" in bad.output
