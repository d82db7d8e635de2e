"""A final scene without objects scores as a failure with n/a shares (issue 23), not as a room
with 0 % collisions and 0 % out of bounds and so a valid placement."""

from __future__ import annotations

import math

import scenerevis_scenes_physics as H  # registered by conftest.py

from buildbench.harness import Episode, Task
from buildbench.harness.suite import mean_metrics
from buildbench.suites.scenerevis import report
from buildbench.suites.scenerevis.metrics import scene_metrics
from buildbench.suites.scenerevis.outcome import SceneReVisOutcome
from buildbench.suites.scenerevis.score import EMPTY_SCENE, score

EMPTY = H.room(H.rect(4, 4), [])
ONE_BED = H.room(H.rect(4, 4), [H.obj("bed", [1.6, 0.5, 2.0], [0, 0, 0])])


def _task(room_type: str) -> Task:
    return Task("t", "scenerevis", inputs={"instruction": f"A {room_type}", "room_type": room_type})


def _episode(task: str, metrics: dict[str, float]) -> Episode:
    return Episode(task_id=task, sample=0, suite="scenerevis", agent="a", protocol="p", seed=0, status="ok",
                   metrics=metrics, metadata={"room": "bedroom"})


def test_an_empty_room_fails_every_pass_flag_and_rates_nothing() -> None:
    # The released evaluation's convention stays in scene_metrics (0 %, valid): only our score changes.
    assert scene_metrics(EMPTY)["valid_placement"] == 100.0 and scene_metrics(EMPTY)["oob_rate"] == 0.0
    out = score(_task("bedroom"), SceneReVisOutcome.from_dict({"scene": {**EMPTY, "room_type": "bedroom"}}))
    assert out["n_objects"] == 0.0
    assert out["valid_placement"] == out["collision_free"] == out["voxel_valid"] == 0.0
    for key in ("collision_rate", "oob_rate", "unsupported_rate", "mean_penetration_m", "voxel_loss_m3"):
        assert math.isnan(out[key]), key
    assert out["essentials_present"] == 0.0
    assert set(EMPTY_SCENE) <= set(out)


def test_a_room_type_without_essentials_has_no_essentials_score() -> None:
    out = score(_task("greenhouse"), SceneReVisOutcome.from_dict({"scene": {**ONE_BED, "room_type": "greenhouse"}}))
    assert math.isnan(out["essentials_present"])
    assert out["valid_placement"] == 100.0 and out["oob_rate"] == 0.0  # a non-empty room scores as before


def test_empty_rooms_stay_out_of_the_rates_but_count_as_invalid() -> None:
    empty = score(_task("bedroom"), SceneReVisOutcome.from_dict({"scene": {**EMPTY, "room_type": "bedroom"}}))
    full = score(_task("bedroom"), SceneReVisOutcome.from_dict({"scene": {**ONE_BED, "room_type": "bedroom"}}))
    episodes = [_episode("a", empty), _episode("b", full)]
    means = mean_metrics(episodes)["metrics"]
    assert means["valid_placement"] == 50.0 and means["oob_rate"] == full["oob_rate"]
    row = report.summarize(episodes)["tables"]
    table = next(v for k, v in row.items() if k.startswith("episodes"))[0]
    assert table["valid placement %"] == 50.0 and not math.isnan(table["mean penetration (m)"])
