"""``buildbench buildarena sensitivity``: verdict flips and rank correlations under perturbed physics.

Two short runs on Support Lv.1 (the reference bridge, which passes, and the short-deck negative
control, which fails) are re-simulated under the baseline profile, welds at 5 % of their
strength (the bridge breaks under its load) and doubled drag (nothing changes on a bridge).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness import RunConfig, Runner
from buildbench.suites.buildarena.physics import mjcf
from buildbench.suites.buildarena.physics.profile import load_profile
from buildbench.suites.buildarena.sensitivity import (
    SensitivityError,
    format_report,
    parse_vary,
    sensitivity_report,
)

# The module-scoped fixtures (the calibration runs) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("buildarena-sensitivity")

SIM_S = 4.0


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = []
    for agent in ("reference", "negative"):
        run_dir = tmp_path_factory.mktemp("runs") / agent
        Runner(RunConfig(suite="buildarena", agent=agent, protocol="workflow", split="support-1", workers=0,
                         options={"sim_duration_s": SIM_S}), run_dir).run()
        out.append(run_dir)
    return out


def test_flips_and_kendall_tau(runs: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["buildarena", "sensitivity", *map(str, runs), "--vary", "weld_strength=0.05x",
                 "--vary", "drag=2x", "--workers", "2", "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["configurations"] == ["reference", "negative"] and report["simulations"] == 6
    block = report["tasks"]["support-1"]
    base, weak, drag = (block["settings"][k] for k in ("baseline", "weld_strength=0.05x", "drag=2x"))
    assert base["by_configuration"]["reference"]["success_rate"] == 1.0
    assert base["by_configuration"]["negative"]["success_rate"] == 0.0
    # Weak welds: the bridge fails too, so the two configurations tie (τ undefined).
    assert (weak["flips"], weak["to_fail"], weak["to_pass"]) == (1, 1, 0)
    assert weak["success_rate"] == 0.0 and weak["tau_configurations_success"] is None
    assert weak["mean_indicator"] < base["mean_indicator"]
    # Drag does not move a bridge: same verdicts, same ranking.
    assert drag["flips"] == 0 and drag["tau_configurations_success"] == pytest.approx(1.0)
    assert drag["tau_configurations_indicator"] == pytest.approx(1.0)
    assert drag["tau_machines"] == pytest.approx(1.0) and drag["diverged"] == 0
    assert report["overall"]["settings"]["weld_strength=0.05x"]["flips"] == 1
    assert block["baseline_differs_from_stored"] == 0


def test_text_table(runs: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["buildarena", "sensitivity", str(runs[0]), "--vary", "weld_strength=0.05x", "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "physics: besiege-1 (" in text and "1 configuration(s) (reference)" in text
    row = next(line for line in text.splitlines() if line.startswith("support-1") and "weld_strength=0.05x" in line)
    assert row.split()[2:7] == ["0%", "0.0", "1", "1", "0"]
    assert "weld_strength=0.05x: 1 of 1 verdicts flip (support-1 (1))" in text


def test_text_report_fits_100_columns_in_a_log(runs: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    # stdout is no terminal here: every line (table, conclusions, legend) stays within 100 columns
    assert main(["buildarena", "sensitivity", *map(str, runs), "--vary", "weld_strength=0.05x,2x",
                 "--vary", "drag=0,2x", "--workers", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert any(line.startswith("support-1 ") and "drag=2x" in line for line in lines)


@pytest.mark.parametrize(("vary", "expected"), [
    ("weld_strength=nan", "'nan' is not finite"),
    ("weld_strength=infx", "'infx' is not a factor"),
    ("weld_strength=-1x", "'-1x' is not a factor"),
    ("weld_strength=fast", "'fast' is not a number (write factors such as 0.5x,2x"),
    ("weld_strength=", "an empty value"),
    ("weld_strength", "expected NAME=VALUES"),
    ("bogus=2x", "unknown field 'bogus'"),
    ("timestep_s=0.3", "--vary timestep_s=0.3: physics profile"),
])
def test_bad_vary_is_one_error_line(runs: list[Path], capsys: pytest.CaptureFixture[str], vary: str,
                                    expected: str) -> None:
    code = main(["buildarena", "sensitivity", str(runs[0]), "--vary", vary])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err


def test_vary_settings_are_one_change_each() -> None:
    settings = parse_vary(["weld_strength=0.5x,2x", "drag=0,2x", "weld_strength=2x"], load_profile())
    assert [s.label for s in settings] == ["weld_strength=0.5x", "weld_strength=2x", "drag=0", "drag=2x"]
    assert settings[2].overrides == {"drag": "0x"}  # zero in any unit: a group of mixed units takes it
    with pytest.raises(SensitivityError, match="at least one"):
        parse_vary([], load_profile())


def test_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["buildarena", "sensitivity", str(tmp_path), "--vary", "drag=2x"]) == 2
    assert "is not a buildbench run" in capsys.readouterr().err


@pytest.mark.parametrize(("arena", "scored"), [
    (100 << 10, True),  # the bridge's contacts fill the arena: a limit, the machine's failure
    (-5, False),  # MJCF MuJoCo rejects: another MuJoCo error, unscored
])
def test_runs_mujoco_stopped_are_counted_apart_from_divergences(
        runs: list[Path], monkeypatch: pytest.MonkeyPatch, arena: int, scored: bool) -> None:
    # every model gets this arena, whatever its blocks; workers=1 re-simulates in this process
    monkeypatch.setattr(mjcf, "ARENA_BASE_BYTES", arena)
    monkeypatch.setattr(mjcf, "ARENA_BYTES_PER_BODY", 0)
    report = sensitivity_report(runs[:1], ["drag=2x"], workers=1)
    for label in ("baseline", "drag=2x"):
        s = report["tasks"]["support-1"]["settings"][label]
        assert (s["sim_limits"], s["diverged"], s["unscored"], s["success_rate"]) == (1, 0, 0 if scored else 1, 0.0)
    text = format_report(report)
    row = next(line for line in text.splitlines() if line.startswith("support-1") and "baseline" in line)
    assert row.split()[5:9] == ["0", "0", "0", "1"]  # →fail →pass div lim
    assert "lim: runs MuJoCo's limits or errors stopped" in " ".join(text.split())  # wrapped prose
    assert max(len(line) for line in text.splitlines()) <= 100
