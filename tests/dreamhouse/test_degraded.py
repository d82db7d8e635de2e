"""The ``degraded`` calibration agent: its metrics respond monotonically to ``-o degrade``, from
the oracle's at fraction 0 to clearly worse at 1, through the Runner like any agent.

Each mode plays the first demo task at three fractions: 0 (the oracle), one between (0.5 for
members; 0.25 for shift, where S already lies strictly between its ends) and 1. A house's
members-mode response is monotone episode by episode (both demo houses were checked at five
fractions), so one house shows it. Both sweeps start from one oracle episode (`oracle`)."""

from __future__ import annotations

import math

import pytest

from buildbench.harness import RunConfig, Runner, Store

pytestmark = pytest.mark.xdist_group("dreamhouse-degraded")  # one worker plays the shared oracle episode


def _metrics(tmp_path, fraction: float, mode: str) -> dict[str, float]:
    out = tmp_path / f"{mode}-{fraction}"
    config = RunConfig(suite="dreamhouse", agent="degraded", protocol="planner-atomic", split="demo", limit=1,
                       seed=0, workers=0, options={"degrade": fraction, "degrade_mode": mode})
    Runner(config, out).run()
    with Store(out) as store:
        episodes = list(store.episodes())
    assert [ep.status for ep in episodes] == ["ok"]
    return episodes[0].metrics


@pytest.fixture(scope="module")
def oracle(tmp_path_factory) -> dict[str, float]:
    """Fraction 0 in either mode is the oracle's frame (nothing dropped, moved or shifted), so one
    episode starts both sweeps."""
    return _metrics(tmp_path_factory.mktemp("oracle"), 0.0, "members")


def _assert_monotone(rows: list[dict[str, float]], key: str, *, gap: float) -> None:
    values = [row[key] for row in rows]
    assert all(not math.isnan(v) for v in values), (key, values)
    assert all(b <= a + 1e-9 for a, b in zip(values, values[1:], strict=False)), (key, values)
    assert values[0] - values[-1] >= gap, (key, values)


@pytest.mark.timeout(240)
def test_members_mode_fails_the_frame_more_as_the_fraction_grows(tmp_path, oracle):
    keys = ("structural_pass", "topological_fidelity_any", "members")
    rows = [oracle, *(_metrics(tmp_path, f, "members") for f in (0.5, 1.0))]
    assert rows[0]["structural_pass"] == 1.0 and rows[0]["topological_fidelity_any"] == 1.0
    for key in keys:
        _assert_monotone(rows, key, gap=0.3 if key != "members" else 10)


@pytest.mark.timeout(240)
def test_shift_mode_keeps_the_frame_passing_while_s_and_t_fall(tmp_path, oracle):
    rows = [oracle, *(_metrics(tmp_path, f, "shift") for f in (0.25, 1.0))]
    assert [row["structural_pass"] for row in rows] == [1.0] * 3
    assert (rows[0]["visual_fidelity"], rows[0]["topological_fidelity"], rows[0]["joint_pass"]) == (1.0, 1.0, 1.0)
    for key in ("visual_fidelity", "topological_fidelity", "voxel_iou"):
        _assert_monotone(rows, key, gap=0.5)
    assert 0.0 < rows[1]["visual_fidelity"] < 1.0  # S takes values between its ends, not only 0 or 1
