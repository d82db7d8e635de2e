"""Navigability of SceneReVis rooms beside OBR/CNR: scene_metrics, the metrics command, episode scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import scenerevis_scenes_physics as H  # registered by conftest.py
from click.testing import CliRunner

from buildbench.harness import Task
from buildbench.suites.scenerevis.check.cli import metrics
from buildbench.suites.scenerevis.metrics import aggregate, scene_metrics
from buildbench.suites.scenerevis.outcome import SceneReVisOutcome
from buildbench.suites.scenerevis.score import score

ROOM = H.rect(4.0, 5.0)  # x in [-2, 2], z in [-2.5, 2.5]
BED = H.obj("Queen bed", [1.6, 0.5, 1.6], [0.0, 0.0, 1.5])
DESK = H.obj("Oak desk", [1.2, 0.75, 0.6], [0.0, 0.0, -2.2])
# A sofa spanning the whole width at z = 0.3: the bed behind it is cut off from the desk's side.
SPLIT = H.room(ROOM, [DESK, H.obj("Sofa", [4.0, 0.8, 0.9], [0.0, 0.0, 0.3]), BED])
OPEN = H.room(ROOM, [DESK, H.obj("Sofa", [2.6, 0.8, 0.9], [-0.7, 0.0, 0.3]), BED])


def test_a_sofa_cutting_the_room_in_two() -> None:
    split, open_ = scene_metrics(SPLIT), scene_metrics(OPEN)
    assert 40.0 < split["free_connected_pct"] < 80.0 and split["free_connected_pct"] < open_["free_connected_pct"]
    # The larger free area is the desk's side: the bed (object 2) cannot be reached.
    assert split["unreachable"] == [2] and split["reachable_pct"] == pytest.approx(200 / 3)
    assert open_["unreachable"] == [] and open_["reachable_pct"] == 100.0
    # Existing keys are untouched, and the aggregate averages the new ones.
    assert {"colliding", "out_of_bounds", "n_objects", "oob_rate", "collision_rate"} <= set(split)
    both = aggregate([split, open_])
    assert both["reachable_rate"] == pytest.approx((200 / 3 + 100) / 2)
    assert both["free_connected_rate"] == pytest.approx((split["free_connected_pct"] + open_["free_connected_pct"]) / 2)
    assert "free_connected_pct" not in scene_metrics(SPLIT, navigation=False)


def test_an_empty_room_has_nothing_to_reach() -> None:
    row = scene_metrics(H.room(ROOM, []))
    assert row["free_connected_pct"] == 100.0 and "reachable_pct" not in row and row["unreachable"] == []
    assert "reachable_rate" not in aggregate([row])


def test_the_metrics_command_reports_navigability(tmp_path: Path) -> None:
    path = tmp_path / "rooms.jsonl"
    path.write_text(json.dumps(SPLIT) + "\n" + json.dumps(OPEN) + "\n")
    data = json.loads(CliRunner().invoke(metrics, [str(path), "--json", "--no-voxels"]).output)
    assert data["scenes"][0]["unreachable"] == [2] and "reachable_rate" in data and "free_connected_rate" in data
    table = CliRunner().invoke(metrics, [str(path), "--no-voxels"])
    assert table.exit_code == 0 and "reachable_rate" in table.output and "free_connected_rate" in table.output
    bare = json.loads(CliRunner().invoke(metrics, [str(path), "--json", "--no-navigation"]).output)
    assert "reachable_rate" not in bare and "unreachable" not in bare["scenes"][0]


def test_episode_scores_carry_the_shares() -> None:
    out = score(Task("bedroom_1", "scenerevis", inputs={"instruction": "a bedroom"}), SceneReVisOutcome.from_dict({"scene": SPLIT}))
    assert out["reachable_pct"] == pytest.approx(200 / 3) and out["free_connected_pct"] < 80.0


def test_the_episode_table_shows_navigability() -> None:
    from buildbench.harness import Episode
    from buildbench.suites.scenerevis.report import episode_table

    eps = [Episode(task_id=f"t{i}", sample=0, suite="scenerevis", agent="diagnose", protocol="diagnose-act", seed=0,
                   metrics={"free_connected_pct": v, "reachable_pct": r}) for i, (v, r) in
           enumerate([(100.0, 100.0), (60.0, 50.0)])]
    row = episode_table(eps, eps)[0]
    assert row["free floor connected %"] == 80.0 and row["reachable %"] == 75.0
