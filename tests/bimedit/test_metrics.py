"""Golden metric cases: the paper's worked examples and the definitions' corner cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from buildbench.geometry import Boxes, TriangleMesh, box_mesh
from buildbench.suites.bimedit.check.diff import align_nodes
from buildbench.suites.bimedit.check.edit import EditScore, final_score, is_solved
from buildbench.suites.bimedit.check.geometry import (
    POINTS_PER_OBJECT_MAX,
    POINTS_PER_OBJECT_MIN,
    geometry_diagnostics,
    geometry_score,
    sample_edit_set,
    score_from_distance,
)
from buildbench.suites.bimedit.check.model import load_model
from buildbench.suites.bimedit.check.semantics import (
    SemanticPair,
    canonical_class,
    property_value,
    values_match,
)
from buildbench.suites.bimedit.check.shapes import ShapeCache, yaw_box
from buildbench.suites.bimedit.check.topology import combine, f1_score, topology_score
from buildbench.suites.bimedit.generate.scenes import write_scene
from buildbench.suites.bimedit.metrics import summarise


def _box(lo: tuple[float, float, float], hi: tuple[float, float, float]) -> TriangleMesh:
    return box_mesh(Boxes.from_aabbs([lo], [hi]))


def test_paper_final_scores() -> None:
    """Paper App. H: Examples 1–4 (Tables 7–10)."""
    assert final_score(1.0, 1.0, 1.0) == 1.0
    assert round(final_score(1.0, 1.0, 0.4714), 4) == 0.8238
    assert round(final_score(0.3813, 0.7222, 1.0), 4) == 0.7012
    assert final_score(0.0, 0.0, 0.0) == 0.0
    assert is_solved(1.0, 1.0, 1.0) and not is_solved(1.0, 1.0, 0.4714) and not is_solved(0.98, 0.98, 0.979)
    assert is_solved(0.98, 0.98, 0.98)


def test_example2_topology_from_edit_sets() -> None:
    """0.4714 = 0.3·F1(nodes) + 0.7·F1(edges) with node F1 4/7 and edge F1 3/7."""
    ref_nodes = frozenset({("w", "modified"), ("a", "modified"), ("b", "modified"), ("c", "modified")})
    pred_nodes = frozenset({("w", "modified"), ("a", "modified"), ("x", "modified")})  # P 2/3, R 2/4
    ref_edges = frozenset({("+", ("R", "w", str(i), "")) for i in range(7)})
    pred_edges = frozenset({("+", ("R", "w", str(i), "")) for i in range(3)}
                           | {("-", ("R", "w", str(i), "")) for i in range(4)})  # P 3/7, R 3/7
    result = topology_score(ref_nodes, pred_nodes, ref_edges, pred_edges)
    assert result.nodes.f1 == pytest.approx(4 / 7) and result.edges.f1 == pytest.approx(3 / 7)
    assert round(result.score, 4) == 0.4714
    assert round(final_score(1.0, 1.0, result.score), 4) == 0.8238


def test_example3_semantics_and_geometry() -> None:
    """0.7222 = ½(1 + 4/9): one matched pair, right class, 4 of 9 properties; 0.3813 = exp(-5 d/D)."""
    pair = SemanticPair("w", "w", 0.6, True, 4 / 9, ("a", "b", "c", "d", "e"))
    assert round(pair.score, 4) == 0.7222
    d_over_d = -np.log(0.3813) / 5
    assert round(score_from_distance(d_over_d * 10.0, 10.0), 4) == 0.3813


def test_topology_special_case_and_empty_sets() -> None:
    nodes = frozenset({("w", "modified")})
    assert topology_score(nodes, nodes, frozenset(), frozenset()).score == 1.0
    assert topology_score(nodes, frozenset(), frozenset(), frozenset()).score == 1.0  # a no-op update
    spurious = frozenset({("+", ("IfcRelAggregates", "a", "b", ""))})
    assert topology_score(nodes, nodes, frozenset(), spurious).score == 0.0
    assert topology_score(nodes, frozenset(), frozenset(), frozenset(), strict=True).score == 0.0
    assert topology_score(nodes, nodes, frozenset(), frozenset(), strict=True).score == 1.0
    assert f1_score(set(), set()).f1 == 1.0 and f1_score({1}, set()).f1 == 0.0 and f1_score(set(), {1}).f1 == 0.0
    assert combine(1.0, 0.0) == pytest.approx(0.3)


def test_identical_meshes_score_exactly_one() -> None:
    meshes = [_box((0, 0, 0), (5, 0.2, 3)), _box((1, 0, 0), (2, 0.2, 2))]
    ref = sample_edit_set(meshes, seed=0)
    pred = sample_edit_set([_box((0, 0, 0), (5, 0.2, 3)), _box((1, 0, 0), (2, 0.2, 2))], seed=0)
    result = geometry_score(ref, pred)
    assert result.score == 1.0 and result.chamfer_median_m == 0.0
    diag = geometry_diagnostics(result)
    assert diag is not None and diag.voxel_iou == 1.0 and diag.fscore == 1.0 and diag.hausdorff_m == 0.0
    assert diag.voxel_js_divergence == pytest.approx(0.0) and diag.aabb_iou == pytest.approx(1.0)


def test_sampling_budget() -> None:
    big, small = _box((0, 0, 0), (20, 20, 3)), _box((0, 0, 0), (0.1, 0.1, 0.1))
    pts = sample_edit_set([big, small], seed=1)
    assert len(pts) == POINTS_PER_OBJECT_MAX + POINTS_PER_OBJECT_MIN
    many = sample_edit_set([_box((i, 0, 0), (i + 0.5, 0.5, 0.5)) for i in range(8)], seed=1)
    assert len(many) == 8 * 2048  # equal areas share the 16,384 total
    assert np.array_equal(pts, sample_edit_set([big, small], seed=1))
    assert not np.array_equal(pts, sample_edit_set([big, small], seed=2))


def test_geometry_decreases_with_offset_and_handles_empty_sets() -> None:
    ref = sample_edit_set([_box((0, 0, 0), (4, 0.2, 3))], seed=0)
    scores = [geometry_score(ref, sample_edit_set([_box((dx, 0, 0), (4 + dx, 0.2, 3))], seed=0)).score
              for dx in (0.01, 0.1, 0.5, 1.0)]
    assert all(a > b for a, b in zip(scores, scores[1:], strict=False))
    assert geometry_score(np.zeros((0, 3)), np.zeros((0, 3))).score == 1.0
    assert geometry_score(ref, np.zeros((0, 3))).score == 0.0
    assert geometry_score(np.zeros((0, 3)), ref).score == 0.0


def test_property_tolerance_and_classes() -> None:
    assert values_match(1.0, 1.049) and not values_match(1.0, 1.06)
    assert values_match(None, None) and not values_match(None, 0.9) and not values_match("A", "a")
    assert values_match(True, True) and not values_match(True, 1.0)
    assert canonical_class("IfcWallStandardCase") == "IfcWall" and canonical_class("IfcSlab") == "IfcSlab"


def test_yaw_box_of_rotated_wall() -> None:
    c, s = np.cos(0.5), np.sin(0.5)
    local = Boxes(np.zeros((1, 3)), np.array([[2.0, 0.1, 1.5]]), np.array([[[c, -s, 0], [s, c, 0], [0, 0, 1]]]))
    box = yaw_box(local.corners().reshape(-1, 3))
    assert sorted(box.half_extents[0].round(6).tolist()) == [0.1, 1.5, 2.0]


def test_greedy_alignment_prefers_nearest_same_class() -> None:
    new = [("n1", "IfcWall", np.array([0.0, 0, 0])), ("n2", "IfcWall", np.array([5.0, 0, 0])),
           ("n3", "IfcBuildingElementProxy", np.array([9.0, 0, 0]))]
    old = [("o1", "IfcWall", np.array([0.2, 0, 0])), ("o2", "IfcWall", np.array([0.1, 0, 0])),
           ("o3", "IfcColumn", np.array([9.0, 0, 0]))]
    pairs = align_nodes(new, old).pairs
    assert pairs == {"n1": "o2"}  # n2 is too far (> 1 m), n3 has the wrong class


def test_summary_on_a_score_table() -> None:
    """Mean ± std on a 0–100 scale, strict solves at 0.98, per-axis pass rates (paper Tables 1–2)."""
    rows = [(1.0, 1.0, 1.0), (1.0, 1.0, 0.4714), (0.3813, 0.7222, 1.0), (0.0, 0.0, 0.0)]
    scores = [EditScore(g, s, t, final_score(g, s, t), is_solved(g, s, t), "scored") for g, s, t in rows]
    out = summarise(scores)
    finals = np.array([1.0, 0.8238, 0.7012, 0.0]) * 100
    assert out["final_mean"] == pytest.approx(finals.mean(), abs=0.01)
    assert out["final_std"] == pytest.approx(finals.std(), abs=0.01)
    assert out["solve_rate"] == 25.0
    assert (out["geometry_pass_rate"], out["semantics_pass_rate"], out["topology_pass_rate"]) == (50.0, 50.0, 50.0)
    assert summarise([]) == {}


def test_quantities_are_compared_in_si_units(tmp_path: Path) -> None:
    metre = write_scene("simple", 6, tmp_path / "m", unit="m").path
    milli = write_scene("simple", 6, tmp_path / "mm", unit="mm").path
    values = []
    for path in (metre, milli):
        model = load_model(path)
        shapes = ShapeCache(model)
        wall = next(k for k, n in model.nodes.items() if n.ifc_class == "IfcWall")
        values.append([property_value(model, shapes, wall, k) for k in
                       ("Qto_WallBaseQuantities.Length", "Qto_WallBaseQuantities.Width", "Pset_WallCommon.IsExternal",
                        "Geometry.Height", "Material", "PredefinedType")])
    assert values[0][0] > 2.0 and values[0][1] < 0.5  # metres
    for a, b in zip(values[0], values[1], strict=True):
        assert values_match(a, b)
