"""DreamHouse metrics against hand-computed values: S (Eq. 1), C, M, V and T (Eq. 2), joint pass."""

from __future__ import annotations

import math

import numpy as np
import pytest

from buildbench.harness.errors import ConfigError
from buildbench.suites.dreamhouse import fidelity
from buildbench.suites.dreamhouse.fidelity import (
    VisualFidelity,
    census_similarity,
    centroid_match,
    fidelity_metrics,
    joint_pass,
    topological_fidelity,
    visual_fidelity,
    voxel_similarity,
)
from buildbench.suites.dreamhouse.model import Member, Structure
from buildbench.suites.dreamhouse.views import render_views, target_frame

N = 512


def _blank() -> np.ndarray:
    return np.zeros((N, N, 4), np.uint8)


def _views() -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Five candidate/target pairs with hand-computable MSEs (colours /255)."""
    cand, targ = [_blank() for _ in range(5)], [_blank() for _ in range(5)]
    # View 0: 100 rows red in both (error 0) + 100 rows only in the candidate, colour (51,0,0):
    # error (51/255)² = 0.04 there; the union mask is 200 rows -> MSE 0.02, S = 0.8.
    for img in (cand[0], targ[0]):
        img[:100] = (255, 0, 0, 255)
    cand[0][100:200] = (51, 0, 0, 255)
    # View 1: identical -> S = 1. View 2: both empty -> MSE defined 0, S = 1.
    cand[1][:, :50] = targ[1][:, :50] = (10, 200, 30, 255)
    # View 3: white candidate over a transparent target: error 3 per pixel -> S = 0.
    cand[3][:] = (255, 255, 255, 255)
    # View 4: same silhouette, G differs by 51 on half of it: MSE 0.02 -> S = 0.8.
    cand[4][:, :100] = targ[4][:, :100] = (0, 0, 0, 255)
    cand[4][:, :50] = (0, 51, 0, 255)
    return cand, targ


def test_visual_fidelity_matches_hand_computed_values() -> None:
    cand, targ = _views()
    vis = visual_fidelity(cand, targ)
    assert vis.mse == pytest.approx((0.02, 0.0, 0.0, 3.0, 0.02))
    assert vis.per_view == pytest.approx((0.8, 1.0, 1.0, 0.0, 0.8))
    assert vis.mean == pytest.approx(0.72)
    assert not vis.passed_all_views  # view 3 is below 0.6
    assert vis.passed_mean  # 0.72 >= 0.6
    assert vis.passed("mean") and not vis.passed("all_views")


def test_visual_fidelity_lambda_and_resize() -> None:
    cand, targ = _views()
    assert visual_fidelity(cand, targ, lam=40).per_view[0] == pytest.approx(0.2)  # 1 - 40·0.02
    small = np.zeros((64, 64, 4), np.uint8)
    small[10:30, 10:30] = (200, 100, 50, 255)
    same = visual_fidelity([small] * 5, [small.copy()] * 5)
    assert same.per_view == (1.0,) * 5
    with pytest.raises(ConfigError, match="same non-zero number"):
        visual_fidelity(cand[:4], targ)
    with pytest.raises(ConfigError, match="uint8 RGBA"):
        visual_fidelity([np.zeros((N, N, 3), np.uint8)] * 5, targ)


def test_renders_against_themselves_and_shifted() -> None:
    target = Structure.from_members(
        [Member.from_aabb(f"Stud_{i}", (0.4 * i, 0, 0), (0.4 * i + 0.04, 0.09, 2.4)) for i in range(10)]
        + [Member.from_aabb("SolePlate_1", (0, 0, 0), (4, 0.09, 0.04))]
    )
    views = render_views(target)
    same = visual_fidelity(render_views(target, frame=target_frame(target)), views)
    assert same.per_view == (1.0,) * 5 and same.passed_all_views
    mats = target.matrices.copy()
    mats[:, 0, 3] += 0.2  # half a stud bay to the right
    shifted = Structure(target.names, target.sizes_m, mats)
    moved = visual_fidelity(render_views(shifted, frame=target_frame(target)), views)
    assert all(s < 1.0 for s in moved.per_view) and moved.mean < 0.6
    empty = visual_fidelity(render_views(Structure.from_members([]), frame=target_frame(target)), views)
    # Every masked pixel compares the frame's colour with transparent black: S = 0.
    assert empty.per_view == (0.0,) * 5


def _named(counts: dict[str, int]) -> Structure:
    members = []
    for prefix, n in counts.items():
        members += [Member.from_aabb(f"{prefix}_{k}", (k, 0, 0), (k + 0.1, 0.1, 0.1)) for k in range(n)]
    return Structure.from_members(members)


def test_census_hand_computed() -> None:
    target = _named({"Stud": 4, "Joist": 2})
    cand = _named({"Stud": 2, "Joist": 2, "Rafter": 1})
    # Stud 2/4, Joist 2/2, Rafter 0/1 -> (0.5 + 1 + 0) / 3
    assert census_similarity(cand, target) == pytest.approx(0.5)
    assert census_similarity(target, target) == 1.0
    assert census_similarity(_named({}), _named({})) == 1.0
    # Names that match no category count as one "unknown" category.
    assert census_similarity(_named({"beam": 2}), _named({"beam": 1, "Stud": 1})) == pytest.approx(0.25)


def test_centroid_match_is_the_hungarian_assignment_counted_within_delta() -> None:
    target = np.array([[0.0, 0, 0], [1.0, 0, 0]])
    cand = np.array([[0.1, 0, 0], [5.0, 0, 0]])
    m = centroid_match(cand, target)
    assert (m.matched, m.n_target, m.fraction, m.method) == (1, 2, 0.5, "hungarian")
    # The least-total-distance assignment (a-q 0.5 + b-p 0.7 = 1.2 < a-p 0.3 + b-q 1.5 = 1.8)
    # leaves no pair within δ = 0.35, though a-p alone would be: M counts σ*, per Eq. 2.
    target = np.array([[0.0, 0, 0], [1.0, 0, 0]])
    cand = np.array([[0.3, 0, 0], [-0.5, 0, 0]])
    assert centroid_match(cand, target, delta_m=0.35).fraction == 0.0
    assert centroid_match(target, target).fraction == 1.0
    assert centroid_match(np.zeros((0, 3)), np.zeros((0, 3))).fraction == 1.0
    assert centroid_match(np.zeros((0, 3)), target).fraction == 0.0
    assert centroid_match(target, np.zeros((0, 3))).fraction == 0.0
    with pytest.raises(ConfigError, match="finite"):
        centroid_match(np.array([[np.nan, 0, 0]]), target)


def test_centroid_match_fallback_above_the_size_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fidelity, "MAX_HUNGARIAN_CELLS", 0)
    target = np.array([[0.0, 0, 0], [1.0, 0, 0]])
    cand = np.array([[0.3, 0, 0], [-0.5, 0, 0]])
    m = centroid_match(cand, target, delta_m=0.35)
    assert (m.matched, m.method) == (1, "within_delta")


def test_voxel_iou_hand_computed() -> None:
    full = Structure.from_members([Member.from_aabb("Post_1", (0, 0, 0), (1, 1, 1))])
    half = Structure.from_members([Member.from_aabb("Post_1", (0, 0, 0), (1, 1, 0.5))])
    # At 0.1 m, voxel centres 0.05…0.95: 1000 in the cube, 500 in the lower half -> 0.5.
    v = voxel_similarity(half, full, pitch_m=0.1)
    assert v.iou == pytest.approx(0.5) and v.pitch_m == 0.1
    assert voxel_similarity(full, full).iou == 1.0
    far = Structure.from_members([Member.from_aabb("Post_1", (2000, 2000, 0), (2001, 2001, 1))])
    coarse = voxel_similarity(far, full)
    assert coarse.iou == 0.0 and coarse.pitch_m > fidelity.VOXEL_PITCH_M


def test_topological_fidelity_combines_with_eq2_weights() -> None:
    target = _named({"Stud": 4, "Joist": 2})
    cand = _named({"Stud": 2, "Joist": 2, "Rafter": 1})
    t = topological_fidelity(cand, target)
    expected = 0.3 * t.census + 0.4 * t.match.fraction + 0.3 * t.voxels.iou
    assert t.score == pytest.approx(expected)
    assert t.census == pytest.approx(0.5)
    # Studs 0,1 and joists 0,1 sit on identical centres; the rafter matches nothing within δ.
    assert t.match.matched >= 2
    same = topological_fidelity(target, target)
    assert (same.census, same.match.fraction, same.voxels.iou, same.score) == (1.0, 1.0, 1.0, 1.0)


def test_joint_pass_and_flat_metrics() -> None:
    good = VisualFidelity((1.0,) * 5, (0.0,) * 5, 1.0, True, True)
    mean_only = VisualFidelity((1.0, 1.0, 1.0, 1.0, 0.5), (0.0,) * 5, 0.9, False, True)
    assert joint_pass(True, good) and not joint_pass(False, good) and not joint_pass(True, None)
    assert not joint_pass(True, mean_only) and joint_pass(True, mean_only, "mean")
    target = _named({"Stud": 3})
    failed = fidelity_metrics(False, target, target, None, None)
    assert math.isnan(failed["visual_fidelity"]) and math.isnan(failed["topological_fidelity"])
    assert failed["joint_pass"] == 0.0 and failed["visual_pass"] == 0.0
    cand, targ = _views()
    passed = fidelity_metrics(True, target, target, np.stack(cand), np.stack(targ))
    assert passed["visual_fidelity"] == pytest.approx(0.72)
    assert passed["visual_left"] == pytest.approx(1.0) and passed["visual_right"] == 0.0
    assert (passed["visual_pass"], passed["visual_pass_mean"]) == (0.0, 1.0)
    assert (passed["joint_pass"], passed["joint_pass_mean"]) == (0.0, 1.0)
    assert passed["topological_fidelity"] == 1.0


def test_fidelity_scores_of_the_ground_truth_are_perfect() -> None:
    from buildbench.suites.dreamhouse.env import compact_structure, structure_from_compact
    from buildbench.suites.dreamhouse.fidelity import fidelity_scores
    from buildbench.suites.dreamhouse.outcome import DreamHouseOutcome
    from buildbench.suites.dreamhouse.tasks import make_task, target_structure

    task = make_task("SB_01_0002")
    truth = target_structure(task)
    # What the env stores for an exact copy (6 decimals) scores exactly 1, as the oracle must.
    stored = structure_from_compact(compact_structure(truth))
    scores = fidelity_scores(task, stored, DreamHouseOutcome(profile="paper"))
    assert scores["visual_fidelity"] == 1.0 and scores["topological_fidelity"] == 1.0
    assert scores["joint_pass"] == 1.0 and scores["visual_pass"] == 1.0
    broken = truth.subset(np.arange(len(truth) // 2))  # half a house fails the validator
    half = fidelity_scores(task, broken, DreamHouseOutcome(profile="paper"))
    assert half["joint_pass"] == 0.0 and math.isnan(half["visual_fidelity"])
