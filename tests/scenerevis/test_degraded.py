"""The ``degraded`` calibration agent: the oracle's final scene with a growing fraction of its
objects moved, turned or scaled gives monotonically more collisions and out-of-bounds objects,
and lower reward terms R_col and R_oob, through the Runner like any agent.

The sweep plays the first two chain tasks at three fractions (0, 0.5, 1): each metric checked
here already moves by its threshold on them, and more tasks or fractions only cost time."""

from __future__ import annotations

import pytest

from buildbench.harness import RunConfig, Runner, Store
from buildbench.suites.scenerevis.reward import collision_rate_reward, oob_rate_reward

FRACTIONS = (0.0, 0.5, 1.0)
N_TASKS = 2


def _row(tmp_path, fraction: float) -> dict[str, float]:
    out = tmp_path / str(fraction)
    config = RunConfig(suite="scenerevis", agent="degraded", protocol="diagnose-act", split="chains", limit=N_TASKS,
                       seed=0, workers=0, options={"degrade": fraction, "render": False})
    Runner(config, out).run()
    with Store(out) as store:
        episodes = list(store.episodes())
    assert [ep.status for ep in episodes] == ["ok"] * N_TASKS

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    m = [ep.metrics for ep in episodes]
    return {"collision_rate": mean([x["collision_rate"] for x in m]), "oob_rate": mean([x["oob_rate"] for x in m]),
            "valid_placement": mean([x["valid_placement"] for x in m]),
            "voxel_loss_m3": mean([x["voxel_loss_m3"] for x in m]),
            "R_col": mean([collision_rate_reward(x["collision_rate"]) for x in m]),
            "R_oob": mean([oob_rate_reward(x["oob_rate"]) for x in m])}


@pytest.mark.timeout(180)
def test_errors_rise_and_rewards_fall_monotonically_with_the_fraction(tmp_path):
    rows = [_row(tmp_path, f) for f in FRACTIONS]
    assert (rows[0]["collision_rate"], rows[0]["oob_rate"], rows[0]["valid_placement"]) == (0.0, 0.0, 100.0)
    for key, rising, gap in (("collision_rate", True, 30.0), ("oob_rate", True, 20.0), ("voxel_loss_m3", True, 1.0),
                             ("valid_placement", False, 50.0), ("R_col", False, 0.5), ("R_oob", False, 0.5)):
        values = [row[key] if rising else -row[key] for row in rows]
        assert all(b >= a - 1e-9 for a, b in zip(values, values[1:], strict=False)), (key, values)
        assert values[-1] - values[0] >= gap, (key, values)
