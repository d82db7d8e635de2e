"""Geometry benchmarks: broad-phase contacts, Chamfer on 16k points, exact OBB IoU.

Each figure is timed beside a baseline in the same run:

* contact pairs for 1,500 boxes (a two-storey timber-frame grid of touching members plus
  random rotated boxes) against (a) a vectorised n x n bounds test followed by the same
  SAT, and (b) a pure-Python loop over all pairs (bounds check, then SAT per pair);
* Chamfer between two 16,384-point clouds against blockwise brute-force distances;
* OBB IoU per pair against a textbook exact method (a Chebyshev-centre LP, then
  ``scipy.spatial.HalfspaceIntersection`` and a convex hull, pair by pair).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np
from _common import Figure, median_time
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, HalfspaceIntersection
from scipy.spatial.transform import Rotation

from buildbench.geometry import Boxes, contact_pairs, obb_iou, pair_overlaps, point_set_distances

TOL_M = 1e-3


def frame_layout(seed: int = 0, total: int = 1500) -> Boxes:
    """Plates, studs and joists of a 3-storey 16 x 12 m frame, topped up with random boxes.

    Members meet face to face (studs stand on plates, joists rest on top plates), so
    most frame pairs touch exactly; the rest of the budget is arbitrarily rotated boxes.
    """
    stud, depth, storey, spacing, joist = 0.038, 0.089, 2.4, 0.4, 0.235
    length, width = 16.0, 12.0
    mins: list[list[float]] = []
    maxs: list[list[float]] = []
    for level in range(3):
        z0 = level * (storey + 2 * stud + joist)
        top = z0 + 2 * stud + storey
        for y in (0.0, 4.0, 8.0, width - depth):
            mins += [[0, y, z0], [0, y, top - stud]]
            maxs += [[length, y + depth, z0 + stud], [length, y + depth, top]]
            for x in np.arange(0.0, length - stud, spacing):
                mins.append([x, y, z0 + stud])
                maxs.append([x + stud, y + depth, top - stud])
        for x in (0.0, 4.0, 8.0, 12.0, length - depth):
            for y in np.arange(depth, width - depth - stud, spacing):
                mins.append([x, y, z0 + stud])
                maxs.append([x + depth, y + stud, top - stud])
        for x in np.arange(0.0, length - stud, spacing):
            mins.append([x, 0, top])
            maxs.append([x + stud, width, top + joist])
    frame = Boxes.from_aabbs(np.array(mins), np.array(maxs))
    rng = np.random.default_rng(seed)
    extra = max(total - len(frame), 0)
    loose = Boxes(
        rng.uniform([0, 0, 0], [length, width, 8.0], (extra, 3)),
        rng.uniform(0.05, 0.4, (extra, 3)),
        Rotation.random(extra, random_state=seed).as_matrix().reshape(extra, 3, 3),
    )
    return Boxes.concatenate([frame, loose]).subset(np.arange(total))


def all_pairs_vectorised(boxes: Boxes, tol: float) -> np.ndarray:
    grown = boxes.inflated(tol / 2)
    lo, hi = grown.aabbs()
    hit = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
    pairs = np.argwhere(np.triu(hit, k=1))
    return pairs[pair_overlaps(grown, pairs)]


def all_pairs_python(boxes: Boxes, tol: float) -> np.ndarray:
    grown = boxes.inflated(tol / 2)
    lo, hi = (b.tolist() for b in grown.aabbs())
    found = []
    for i, j in combinations(range(len(boxes)), 2):
        a_lo, a_hi, b_lo, b_hi = lo[i], hi[i], lo[j], hi[j]
        if (
            a_lo[0] <= b_hi[0]
            and b_lo[0] <= a_hi[0]
            and a_lo[1] <= b_hi[1]
            and b_lo[1] <= a_hi[1]
            and a_lo[2] <= b_hi[2]
            and b_lo[2] <= a_hi[2]
            and pair_overlaps(grown, [[i, j]])[0]
        ):
            found.append((i, j))
    return np.array(found, dtype=np.int64).reshape(-1, 2)


def brute_chamfer(a: np.ndarray, b: np.ndarray, block: int = 2048) -> float:
    """Mean bidirectional Chamfer from blockwise squared distances (no tree)."""
    a_to_b = np.full(len(a), np.inf)
    b_to_a = np.full(len(b), np.inf)
    b_sq = np.einsum("ij,ij->i", b, b)
    for start in range(0, len(a), block):
        chunk = a[start : start + block]
        sq = np.einsum("ij,ij->i", chunk, chunk)[:, None] - 2 * chunk @ b.T + b_sq[None, :]
        a_to_b[start : start + block] = sq.min(axis=1)
        b_to_a = np.minimum(b_to_a, sq.min(axis=0))
    return float((np.sqrt(np.maximum(a_to_b, 0)).mean() + np.sqrt(np.maximum(b_to_a, 0)).mean()) / 2)


def halfspace_iou(a: Boxes, b: Boxes) -> np.ndarray:
    """Textbook exact IoU: 12 half-spaces, an interior point by LP, Qhull intersection."""
    out = np.zeros(len(a))
    for k in range(len(a)):
        planes = []
        for box in (a, b):
            for axis in range(3):
                for sign in (1.0, -1.0):
                    normal = sign * box.rotations[k][:, axis]
                    planes.append([*normal, -(box.half_extents[k][axis] + normal @ box.centers[k])])
        h = np.array(planes)
        norms = np.linalg.norm(h[:, :3], axis=1, keepdims=True)
        lp = linprog(
            [0, 0, 0, -1], A_ub=np.hstack([h[:, :3], norms]), b_ub=-h[:, 3], bounds=[(None, None)] * 4
        )
        if lp.status != 0 or lp.x[3] <= 1e-9:
            continue
        inter = ConvexHull(HalfspaceIntersection(h, lp.x[:3]).intersections).volume
        out[k] = inter / (a.volumes()[k] + b.volumes()[k] - inter)
    return out


def median_cpu(fn: Callable[[], Any], repeat: int) -> float:
    """Median process CPU seconds of ``fn()``: on a shared machine this shows the cost of
    the code itself, while wall time (the figure) also carries waiting for a core."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def run() -> list[Figure]:
    figures: list[Figure] = []

    boxes = frame_layout()
    ours = contact_pairs(boxes, TOL_M)
    vectorised = all_pairs_vectorised(boxes, TOL_M)
    assert np.array_equal(ours, vectorised), "sweep and all-pairs baselines disagree"
    t_ours = median_time(lambda: contact_pairs(boxes, TOL_M), repeat=15, warmup=2)
    t_vec = median_time(lambda: all_pairs_vectorised(boxes, TOL_M), repeat=5, warmup=1)
    t_py = median_time(lambda: all_pairs_python(boxes, TOL_M), repeat=1, warmup=0)
    info = {
        "ours_cpu_s": median_cpu(lambda: contact_pairs(boxes, TOL_M), repeat=15),
        "boxes": len(boxes),
        "frame_members": int(np.all(boxes.rotations == np.eye(3), axis=(1, 2)).sum()),
        "pairs": len(ours),
        "tol_m": TOL_M,
    }
    figures.append(Figure("contact_pairs 1500 boxes", t_ours, "n x n AABB + SAT (numpy)", t_vec, 0.010, info))
    figures.append(
        Figure("contact_pairs 1500 boxes", t_ours, "all-pairs Python loop + SAT", t_py, 0.010, info)
    )

    rng = np.random.default_rng(1)
    a = rng.normal(size=(16_384, 3))
    b = a + rng.normal(scale=0.01, size=a.shape)
    fast = point_set_distances(a, b).chamfer()
    slow = brute_chamfer(a, b)
    assert abs(fast - slow) < 1e-9, "KD-tree and brute-force Chamfer disagree"
    t_kd = median_time(lambda: point_set_distances(a, b).chamfer(), repeat=5, warmup=1)
    t_brute = median_time(lambda: brute_chamfer(a, b), repeat=1, warmup=0)
    figures.append(
        Figure("chamfer 16k x 16k points", t_kd, "blockwise brute force", t_brute, None, {"chamfer_m": fast})
    )

    n_pairs = 300
    first = Boxes(
        rng.uniform(0, 0.5, (n_pairs, 3)),
        rng.uniform(0.2, 1, (n_pairs, 3)),
        Rotation.random(n_pairs, random_state=2).as_matrix(),
    )
    second = Boxes(
        rng.uniform(0, 0.5, (n_pairs, 3)),
        rng.uniform(0.2, 1, (n_pairs, 3)),
        Rotation.random(n_pairs, random_state=3).as_matrix(),
    )
    exact = obb_iou(first, second)
    textbook = halfspace_iou(first, second)
    t_iou = median_time(lambda: obb_iou(first, second), repeat=5, warmup=1) / n_pairs
    t_text = median_time(lambda: halfspace_iou(first, second), repeat=1, warmup=0) / n_pairs
    figures.append(
        Figure(
            "obb_iou per rotated pair",
            t_iou,
            "LP + HalfspaceIntersection per pair",
            t_text,
            None,
            {"pairs": n_pairs, "max_abs_diff": float(np.abs(exact - textbook).max())},
        )
    )
    return figures
