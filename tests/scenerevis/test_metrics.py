"""Scene metrics, their aggregation, voxel loss, support and the ``metrics`` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import scenerevis_scenes_physics as H  # registered by conftest.py
from click.testing import CliRunner

from buildbench.suites.scenerevis.check import check_support, parse_layout, voxel_loss
from buildbench.suites.scenerevis.check.cli import metrics
from buildbench.suites.scenerevis.metrics import aggregate, scene_metrics

CLEAN = H.room(
    H.rect(4, 4),
    [H.obj("bed", [1.6, 0.5, 2.0], [0, 0, 0]), H.obj("nightstand", [0.5, 0.5, 0.4], [1.2, 0, 0])],
)
MESSY = H.room(
    H.rect(4, 4),
    [
        H.obj("bed", [1.6, 0.5, 2.0], [0, 0, 0]),
        H.obj("chair", [0.5, 0.8, 0.5], [0.9, 0, 0.5]),  # 0.15 m into the bed
        H.obj("wardrobe", [1.0, 2.0, 0.6], [1.8, 0, -1.0]),  # 0.3 m through the wall
        H.obj("rug", [1.0, 0.01, 1.0], [-1.2, 0, 1.2]),
    ],
)


def test_scene_metrics_of_a_messy_room() -> None:
    row = scene_metrics(MESSY)
    assert row["n_objects"] == 4
    assert row["colliding"] == [0, 1]
    assert row["out_of_bounds"] == [2]
    assert row["pairs"] == [{"a": 0, "b": 1, "depth_m": 0.15}]
    assert row["collision_rate"] == 50.0 and row["oob_rate"] == 25.0
    assert row["collision_free"] == 0.0 and row["valid_placement"] == 0.0
    assert row["voxel_loss_m3"] > 0.1 and row["voxel_valid"] == 0.0
    assert "latency_s" not in row
    assert scene_metrics(MESSY, latency_s=2.5)["latency_s"] == 2.5


def test_obr_and_cnr_average_per_scene_shares() -> None:
    lonely = H.room(H.rect(4, 4), [H.obj("cube", [1, 1, 1], [2.5, 0, 0])])  # 1 of 1 outside
    rows = [scene_metrics(lonely), scene_metrics(MESSY), scene_metrics(CLEAN)]
    summary = aggregate(rows)
    assert summary["OBR"] == pytest.approx((100 + 25 + 0) / 3)  # per-object pooling would give 2/7
    assert summary["CNR"] == pytest.approx((0 + 50 + 0) / 3)
    assert summary["collision_free_rate"] == pytest.approx(200 / 3)
    assert summary["valid_placement_rate"] == pytest.approx(100 / 3)
    assert summary["Phy"] == pytest.approx((summary["OBR"] + summary["CNR"]) / 2)
    assert summary["VBL"] == pytest.approx(1000 * summary["voxel_loss_m3"])


def test_empty_room_scores_zero_rates() -> None:
    row = scene_metrics(H.room(H.rect(4, 4), []))
    assert row["n_objects"] == 0 and row["oob_rate"] == 0.0 and row["collision_rate"] == 0.0


def test_voxel_loss_counts_overlap_and_outside_volume() -> None:
    # two 1 m cubes on the 5 cm grid overlapping by half: 0.5 m3 of shared voxels
    overlap = H.room(
        H.rect(6, 6), [H.obj("a", [1, 1, 1], [0.5, 0, 0.5]), H.obj("b", [1, 1, 1], [1.0, 0, 0.5])]
    )
    loss = voxel_loss(parse_layout(overlap))
    assert loss.collision_m3 == pytest.approx(0.5)
    assert loss.oob_m3 == 0.0 and not loss.valid
    # a cube half through the east wall of a 4 m room: 0.5 m3 outside
    outside = H.room(H.rect(4, 4), [H.obj("a", [1, 1, 1], [2.0, 0, 0.5])])
    loss = voxel_loss(parse_layout(outside))
    assert loss.oob_m3 == pytest.approx(0.5)
    assert loss.collision_m3 == 0.0


def test_support_kinds_and_floating_objects() -> None:
    scene = H.room(
        H.rect(4, 4),
        [
            H.obj("oak dining table", [1.2, 0.75, 0.8], [0, 0, 0]),
            H.obj("table lamp with linen shade", [0.3, 0.5, 0.3], [0.2, 0.75, 0.1]),
            H.obj("modern armchair", [0.7, 0.9, 0.7], [-1.2, 0.4, 1.2]),  # hovering 0.4 m
            H.obj("abstract painting", [0.8, 1.0, 0.03], [0.0, 1.2, 1.98]),  # on the north wall
            H.obj("crystal chandelier", [0.6, 0.6, 0.6], [0.0, 2.0, -0.8]),  # top at the ceiling
            H.obj("bed with a wooden frame", [1.6, 0.5, 2.0], [1.1, 0, -0.9]),
            H.obj("floor lamp", [0.4, 1.6, 0.4], [-1.7, 0, -1.7]),
        ],
    )
    report = check_support(parse_layout(scene))
    assert report.kinds == ("floor", "surface", "floor", "wall", "ceiling", "floor", "surface")
    assert report.unsupported == (2,)
    assert report.floating == (2,)
    assert report.unsupported_pct == pytest.approx(100 / 7)


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "scenes.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_json_reports_every_scene(tmp_path: Path) -> None:
    path = _write(tmp_path, [json.dumps({"scene": MESSY, "latency_s": 3.0}), json.dumps(CLEAN)])
    result = CliRunner().invoke(metrics, [str(path), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [s["n_objects"] for s in doc["scenes"]] == [4, 2]
    assert doc["scenes"][0]["colliding"] == [0, 1] and doc["scenes"][0]["out_of_bounds"] == [2]
    assert doc["scenes"][0]["latency_s"] == 3.0 and "latency_s" not in doc["scenes"][1]
    assert doc["OBR"] == pytest.approx(12.5) and doc["CNR"] == pytest.approx(25.0)
    assert doc["latency_s"] == 3.0 and doc["errors"] == []


def test_cli_table_without_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(metrics, [str(_write(tmp_path, [json.dumps(MESSY)])), "--no-voxels"])
    assert result.exit_code == 0
    assert "OBR: 25.00" in result.stdout and "CNR: 50.00" in result.stdout
    assert "VBL" not in result.stdout


def test_cli_bad_lines_are_reported_and_the_rest_measured(tmp_path: Path) -> None:
    broken = dict(MESSY, objects=[dict(MESSY["objects"][0], size=[1, "x", 1])])
    lines = [
        json.dumps(CLEAN),
        "{not json",
        json.dumps(broken),
        "[1, 2]",
        "",
        json.dumps(MESSY),
        json.dumps({"scene": CLEAN, "latency_s": -1}),
    ]
    path = _write(tmp_path, lines)
    result = CliRunner().invoke(metrics, [str(path), "--json"])
    assert result.exit_code == 2
    errors = result.stderr.splitlines()
    assert [e.split(":")[1].strip() for e in errors] == [f"{path} line {n}" for n in (2, 3, 4, 7)]
    assert all(e.startswith("error: ") for e in errors)
    assert "objects[0].size" in errors[1]
    doc = json.loads(result.stdout)
    assert [s["line"] for s in doc["scenes"]] == [1, 6]
    assert [e["line"] for e in doc["errors"]] == [2, 3, 4, 7]


def test_cli_missing_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(metrics, [str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "nope.jsonl" in result.stderr


def test_cli_on_the_real_rooms() -> None:
    if not H.REAL_ROOMS.exists():
        pytest.skip(f"shared data absent: {H.REAL_ROOMS}")
    result = CliRunner().invoke(metrics, [str(H.REAL_ROOMS), "--json", "--no-voxels"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["n_scenes"] == 500 and len(doc["scenes"]) == 500
    assert sum(s["n_objects"] for s in doc["scenes"]) == 2623


def test_score_recomputes_from_the_final_scene() -> None:
    from buildbench.harness import Task
    from buildbench.suites.scenerevis.outcome import SceneReVisOutcome
    from buildbench.suites.scenerevis.score import score

    task = Task("t1", "scenerevis", inputs={"instruction": "A bedroom", "room_type": "bedroom"})
    out = score(task, SceneReVisOutcome.from_dict({"scene": MESSY, "turns": 5, "physics": {"collision_rate": 0.0}}))
    assert out["collision_rate"] == 50.0 and out["oob_rate"] == 25.0  # not the reported 0
    assert out["turns"] == 5.0 and all(isinstance(v, float) for v in out.values())
    assert out["essentials_present"] == pytest.approx(2 / 3)  # bed and wardrobe, no nightstand
    from buildbench.harness.errors import AgentFailure

    with pytest.raises(AgentFailure, match="t1"):  # the agent's failure, scored as such
        score(task, SceneReVisOutcome.from_dict({"reply": "no scene"}))
    with pytest.raises(AgentFailure, match="objects\\[0\\].size"):
        score(task, SceneReVisOutcome.from_dict({"scene": dict(MESSY, objects=[dict(MESSY["objects"][0], size=[1, -2, 1])])}))
