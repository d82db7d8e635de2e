"""SceneReVis at a mesh geometry level: the level chosen by -o geometry / --geometry, carried
by every report and metric record, and furniture free space seen by the physics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from buildbench.harness.errors import ConfigError
from buildbench.suites.scenerevis.check.cli import metrics
from buildbench.suites.scenerevis.check.layout import parse_layout
from buildbench.suites.scenerevis.check.physics import (
    EVALUATION,
    OPTIMIZER,
    REWARD,
    REWARD_RELEASED,
    check_physics,
)
from buildbench.suites.scenerevis.env import make_env
from buildbench.suites.scenerevis.metrics import aggregate, scene_metrics
from buildbench.suites.scenerevis.tasks import load_tasks

FLOOR = [[-2.0, 0.0, -2.0], [2.0, 0.0, -2.0], [2.0, 0.0, 2.0], [-2.0, 0.0, 2.0]]


def _room(objects: list[dict]) -> dict:
    return {"room_type": "dining room", "bounds_bottom": FLOOR,
            "bounds_top": [[x, 2.6, z] for x, _, z in FLOOR], "objects": objects}


def _obj(desc: str, size: list[float], pos: list[float], yaw_quat: list[float] | None = None) -> dict:
    return {"desc": desc, "size": size, "pos": pos, "rot": yaw_quat or [0.0, 0.0, 0.0, 1.0], "jid": desc}


# A chair tucked 20 cm under a dining table, facing it: the boxes overlap, the furniture does not.
TUCKED = _room([_obj("dining table", [1.6, 0.75, 0.9], [0.0, 0.0, 0.0]),
                _obj("chair", [0.45, 0.9, 0.5], [0.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.0])])


def test_a_chair_under_a_table_collides_only_as_boxes() -> None:
    layout = parse_layout(TUCKED)
    assert check_physics(layout, EVALUATION).colliding == (0, 1)
    procedural = check_physics(layout, EVALUATION, geometry="procedural")
    assert procedural.colliding == () and procedural.geometry == "procedural"
    assert check_physics(layout, REWARD, geometry="procedural").colliding == ()


def test_released_box_rules_keep_boxes_and_say_so() -> None:
    layout = parse_layout(TUCKED)
    report = check_physics(layout, REWARD_RELEASED, geometry="procedural")
    assert report.geometry == "box" and report.colliding == (0, 1)
    # The optimizer's contacts follow the level (its out-of-bounds corner rule stays a box rule).
    report = check_physics(layout, OPTIMIZER, geometry="procedural")
    assert report.geometry == "procedural" and report.colliding == ()
    assert check_physics(layout, OPTIMIZER).colliding == (0, 1)


@pytest.mark.parametrize(("outside", "expect"), [(0.02, [0]), (0.005, [])])
def test_a_rug_partly_through_the_wall(outside: float, expect: list[int]) -> None:
    # A rug is (almost) all top and bottom: its outside share is the share of its length.
    rug = _obj("rug", [1.0, 0.005, 1.0], [2.0 + 0.001 - 0.5 + outside, 0.0, 0.0])
    report = check_physics(parse_layout(_room([rug])), EVALUATION, geometry="procedural")
    assert list(report.out_of_bounds) == expect


def test_metric_records_carry_the_level() -> None:
    row = scene_metrics(TUCKED, geometry="procedural")
    assert row["geometry"] == "procedural" and row["colliding"] == [] and "voxel_loss_m3" in row
    assert scene_metrics(TUCKED)["geometry"] == "box"
    assert aggregate([row, row])["geometry"] == "procedural"


def test_procedural_metrics_are_deterministic() -> None:
    assert scene_metrics(TUCKED, geometry="procedural") == scene_metrics(TUCKED, geometry="procedural")


def test_metrics_command_takes_and_reports_the_level(tmp_path: Path) -> None:
    path = tmp_path / "rooms.jsonl"
    path.write_text(json.dumps(TUCKED) + "\n")
    result = CliRunner().invoke(metrics, [str(path), "--geometry", "procedural", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["geometry"] == "procedural" and data["scenes"][0]["geometry"] == "procedural"
    assert data["scenes"][0]["colliding"] == [] and data["scenes"][0]["n_objects"] == 2
    table = CliRunner().invoke(metrics, [str(path), "--geometry", "box"])
    assert "box geometry" in table.output


@pytest.mark.parametrize("value", ["cube", "", "Procedural"])
def test_metrics_command_refuses_a_bad_level(tmp_path: Path, value: str) -> None:
    path = tmp_path / "rooms.jsonl"
    path.write_text(json.dumps(TUCKED) + "\n")
    result = CliRunner().invoke(metrics, [str(path), "--geometry", value])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --geometry") and "procedural" in lines[0]


def test_mesh_level_without_assets_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("BUILDBENCH_3DFUTURE_DIR", "BUILDBENCH_OBJAVERSE_DIR"):
        monkeypatch.delenv(var, raising=False)
    path = tmp_path / "rooms.jsonl"
    path.write_text(json.dumps(TUCKED) + "\n")
    result = CliRunner().invoke(metrics, [str(path), "--geometry", "mesh"])
    assert result.exit_code == 2 and result.output.count("error:") == 1
    from buildbench.suites.scenerevis.suite import suite

    task = load_tasks("demo", 0)[0]
    with pytest.raises(ConfigError, match="geometry=mesh"):
        make_env(task, suite.parse_options({"geometry": "mesh"}))


def test_env_option_geometry() -> None:
    from buildbench.suites.scenerevis.suite import suite

    task = load_tasks("demo", 0)[0]
    assert make_env(task, suite.parse_options({})).options.geometry == "box"
    assert make_env(task, suite.parse_options({"geometry": "procedural"})).options.geometry == "procedural"

    # The suite's typed options refuse an unknown level before any env is made.
    with pytest.raises(ConfigError, match="geometry"):
        suite.parse_options({"geometry": "voxels"})


def test_the_source_filter_reads_the_level() -> None:
    from buildbench.suites.scenerevis.generate.diagnose import passes_source_filter

    spread = [_obj(desc, [0.4, 0.5, 0.4], [x, 0.0, -1.6]) for desc, x in
              (("nightstand", -1.5), ("floor lamp", -0.5), ("potted plant", 0.5), ("stool", 1.5))]
    room = {**TUCKED, "objects": [dict(o, id=f"obj_{k}") for k, o in enumerate(TUCKED["objects"] + spread)]}
    assert not passes_source_filter(room)  # the chair's box is 20 cm into the table's
    assert passes_source_filter(room, "procedural")  # no collision, more than 5 objects


@pytest.mark.parametrize("value", ["cube", "Box"])
def test_reverse_refuses_a_bad_level(tmp_path: Path, value: str) -> None:
    from buildbench.suites.scenerevis.generate.cli import reverse

    path = tmp_path / "rooms.jsonl"
    path.write_text(json.dumps(TUCKED) + "\n")
    result = CliRunner().invoke(reverse, [str(path), "--out", str(tmp_path / "out"), "--geometry", value])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "error: --geometry" in lines[0].lower()


def test_the_optimizer_repairs_the_level_it_is_given() -> None:
    from buildbench.suites.scenerevis.check.optimize import optimize_scene

    # As boxes the tucked chair is 20 cm into the table: Algorithm 2 moves or deletes it.
    as_boxes = optimize_scene(TUCKED, seed=0)
    assert as_boxes.steps >= 1 and as_boxes.scene["objects"] != TUCKED["objects"]
    # As furniture it stands free under the table top: nothing to repair, nothing moved.
    as_furniture = optimize_scene(TUCKED, seed=0, geometry="procedural")
    assert as_furniture.clean and as_furniture.steps == 0 and as_furniture.removed == []
    assert as_furniture.scene["objects"] == TUCKED["objects"]
    # A real interpenetration is still repaired at the mesh level.
    stacked = _room([_obj("dining table", [1.6, 0.75, 0.9], [0.0, 0.0, 0.0]),
                     _obj("dining table", [1.6, 0.75, 0.9], [0.05, 0.0, 0.0])])
    repaired = optimize_scene(stacked, seed=0, geometry="procedural")
    assert repaired.steps >= 1 and repaired.scene["objects"] != stacked["objects"]


def test_long_files_are_measured_in_worker_processes_with_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from buildbench.suites.scenerevis.check import cli as metrics_cli

    path = tmp_path / "rooms.jsonl"
    lines = [json.dumps(TUCKED)] * 40 + ["{not json"] + [json.dumps(TUCKED)] * 30
    path.write_text("\n".join(lines) + "\n")
    args = [str(path), "--json", "--geometry", "procedural", "--no-voxels"]
    parallel = CliRunner().invoke(metrics, args)
    monkeypatch.setattr(metrics_cli, "PARALLEL_FROM", 10_000)
    serial = CliRunner().invoke(metrics, args)
    assert parallel.exit_code == serial.exit_code == 2
    assert json.loads(parallel.stdout) == json.loads(serial.stdout)
    assert parallel.stderr == serial.stderr and "line 41:" in serial.stderr
