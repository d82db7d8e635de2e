"""The physics profile: every constant sourced, loading and overriding, the ``physics`` option, and what
``buildarena simulate`` shows of it (with its exit statuses)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from buildbench.harness import ConfigError, get_suite
from buildbench.harness.suite import RunChoice
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.cli import cli
from buildbench.suites.buildarena.export import history_json
from buildbench.suites.buildarena.physics import DEFAULT_CONFIG, PhysicsConfig
from buildbench.suites.buildarena.physics.config import config_for
from buildbench.suites.buildarena.physics.profile import SOURCES, ProfileError, load_profile, profile_names
from buildbench.suites.buildarena.suite import check_run

PROFILE = Path(__file__).resolve().parents[2] / "src/buildbench/suites/buildarena/physics/profiles/besiege-1.toml"


def check_options(options: dict[str, str]) -> None:
    """What the runner does with the run's options before the run: parse them, then ``check_run``."""
    suite = get_suite("buildarena")
    check_run(RunChoice("reference", "workflow", "default", suite.parse_options(options)))


def test_every_setting_comes_from_the_profile_with_unit_and_source() -> None:
    profile = load_profile()
    assert profile.name == "besiege-1" and profile.version == 1 and profile_names() == ["besiege-1"]
    fields = {f.name for f in dataclasses.fields(PhysicsConfig)} - {"profile_name"}
    assert set(profile.entries) == fields
    for name, entry in profile.entries.items():
        assert entry.unit and entry.source in SOURCES, name
        if entry.source == "assumed":
            assert len(entry.note) > 20, name  # an assumption says why
    assert DEFAULT_CONFIG.values() == profile.values
    assert DEFAULT_CONFIG.sha256 == profile.sha256 and len(profile.sha256) == 64
    assert DEFAULT_CONFIG.profile_name == "besiege-1"


def test_overrides_set_or_scale_values_and_groups_with_a_new_name_and_hash() -> None:
    profile = load_profile()
    stronger = profile.with_overrides({"weld_strength": "2x"})
    assert stronger.name == "besiege-1+weld_strength=2x" and stronger.sha256 != profile.sha256
    assert stronger.values["weld_break_torque_nm"] == 2 * profile.values["weld_break_torque_nm"]
    assert stronger.values["brace_break_force_n"] == 2 * profile.values["brace_break_force_n"]
    still = profile.with_overrides({"drag": 0.0})
    assert still.values["quadratic_drag_per_m"] == 0.0 and still.values["angular_drag_per_s"] == 0.0
    assert PhysicsConfig.from_profile(still).quadratic_drag_per_m == 0.0
    assert profile.with_overrides({"iterations": "2x"}).values["iterations"] == 100
    for bad, message in (({"nope": 1.0}, "unknown field 'nope'"), ({"drag": "twice"}, "not a factor"),
                         ({"weld_strength": 5.0}, "different units"), ({"integrator": "2x"}, "not a number"),
                         ({"friction": float("nan")}, "not a finite number")):
        with pytest.raises(ProfileError, match=message):
            profile.with_overrides(bad)


def test_a_recorded_config_rebuilds_exactly_and_a_tampered_one_is_refused() -> None:
    record = json.loads(json.dumps(DEFAULT_CONFIG.record()))
    assert PhysicsConfig.from_record(record) == DEFAULT_CONFIG
    record["values"]["friction"] = 0.5
    with pytest.raises(ProfileError, match="do not match the recorded hash"):
        PhysicsConfig.from_record(record)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace('value = 0.01\n', 'value = "fast"\n', 1), "field 'values.timestep_s' must be float"),
    (lambda t: t.replace('source = "spec"', 'source = "folklore"', 1), "source must be one of"),
    (lambda t: t + '\n[values.warp_factor]\nvalue = 9\nunit = "-"\nsource = "paper"\n',
     "field 'values.warp_factor' is not a setting"),
    (lambda t: t.replace("[values.friction]", "[values.unused]", 1), "field 'values.friction' is missing"),
    (lambda t: t.replace("value = 0.02\nunit = \"s\"\nsource = \"assumed\"\nnote = \"Contact",
                         "value = 0.001\nunit = \"s\"\nsource = \"assumed\"\nnote = \"Contact", 1),
     "contact_timeconst_s"),
    (lambda t: t + "\n[values", "not valid TOML"),
])
def test_bad_profile_files_name_the_file_and_the_field(tmp_path: Path, edit, message) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(edit(PROFILE.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(ProfileError, match=message) as info:
        config_for(str(path))
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ConfigError, match=message):
        check_options({"physics": str(path)})  # the run refuses it before any episode


def test_the_physics_option_takes_a_name_or_a_file(tmp_path: Path) -> None:
    assert config_for(None) is DEFAULT_CONFIG and config_for("besiege-1") is DEFAULT_CONFIG
    text = PROFILE.read_text(encoding="utf-8").replace('name = "besiege-1"', 'name = "slippery"', 1)
    path = tmp_path / "slippery.toml"
    path.write_text(text.replace("value = 1.0\nunit = \"-\"\nsource = \"assumed\"\nnote = \"Sliding",
                                 "value = 0.3\nunit = \"-\"\nsource = \"assumed\"\nnote = \"Sliding", 1),
                    encoding="utf-8")
    config = config_for(str(path))
    assert config.profile_name == "slippery" and config.friction == 0.3 and config.sha256 != DEFAULT_CONFIG.sha256
    check_options({"physics": str(path)})
    with pytest.raises(ConfigError, match="no such profile"):
        check_options({"physics": "besiege-9"})


@pytest.fixture(scope="module")
def machines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("machines")
    out = {}
    for name, design in (("engine", designs.REFERENCE["lift-1"]()), ("cold", designs.NEGATIVE["unheated cannon"][1]())):
        out[name] = folder / f"{name}.json"
        out[name].write_text(history_json(designs.build(design)), encoding="utf-8")
    return out


def test_simulate_exits_0_on_pass_1_on_fail_2_on_bad_input_and_shows_the_profile(machines) -> None:
    runner = CliRunner()
    passed = runner.invoke(cli, ["simulate", str(machines["engine"]), "--task", "lift-1", "--duration", "0.2"])
    assert passed.exit_code == 0, passed.output
    assert f"physics: besiege-1 (sha256 {DEFAULT_CONFIG.sha256[:16]}" in passed.output
    failed = runner.invoke(cli, ["simulate", str(machines["cold"]), "--task", "lift-1", "--duration", "0.2", "--json"])
    assert failed.exit_code == 1, failed.output
    report = json.loads(failed.output)
    assert report["passed"] is False and report["status"] == "ok"
    assert report["physics"] == {"name": "besiege-1", "sha256": DEFAULT_CONFIG.sha256}
    assert report["metrics"]["physics_sha256"] == DEFAULT_CONFIG.sha256
    text = runner.invoke(cli, ["simulate", str(machines["cold"]), "--task", "lift-1", "--duration", "0.2"])
    assert text.exit_code == 1 and text.output.startswith("task lift-1: FAIL")
    bad = runner.invoke(cli, ["simulate", str(machines["cold"]), "--task", "lift-1", "--physics", "besiege-9"])
    assert bad.exit_code == 2 and "no such profile" in bad.output and isinstance(bad.exception, SystemExit)
