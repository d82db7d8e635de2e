"""Fidelity of one DreamHouse frame (paper §4 Eq. 1–2, spec §6.2): visual S, topological T, joint pass.

Visual fidelity (Eq. 1), per view v over the union alpha mask m_v = α̂_v ∪ α_v:

    MSE_v = Σ_p m_v(p)·‖R̂_v(p) − R_v(p)‖² / Σ_p m_v(p),   S_v = max(0, 1 − λ·MSE_v),   λ = 10

with colours in [0, 1], ‖·‖² the sum over R, G, B (as written), m_v binary at alpha > 0
(the threshold is unstated; [S]) and S = mean of the five S_v. Renders are resized to
512×512 first. Visual pass (§7.1.3): every S_v ≥ τ = 0.6; the main text's variant (mean
S ≥ τ, §4) is reported beside it.

Topological fidelity (Eq. 2): T = 0.3·C + 0.4·M + 0.3·V with

* census C = (1/K)·Σ_k min(n*_k, n̂_k)/max(n*_k, n̂_k) over the member categories k present
  in either structure ([S]: K is unstated; categories are the taxonomy's, names matching
  none count as one "unknown" category; categories absent from both are not counted);
* centroid match M = (1/N)·Σ_i 𝟙[‖c_i − ĉ_σ*(i)‖ ≤ δ], δ = 0.3 m, σ* the minimum-total-
  distance (Hungarian) assignment of target to candidate member centroids, N the target
  member count ([S], as the spec suggests);
* voxel IoU V on a grid of pitch 0.05 m ([S]: the paper says only "fixed grid resolution";
  0.05 m keeps 38 mm members visible).

Geometric tolerance ε = :data:`COINCIDENCE_TOLERANCE_M` (0.1 mm). Members travel as numbers
rounded to 6 decimals (scripts' centres, sizes and Euler angles; the env's stored lists), so
an exact copy of the target reaches the scorer with corners moved by up to ~3.5·10⁻⁵ m. Both V
and S sample geometry at points (voxel centres, pixel centres), and the generator puts many
faces exactly on voxel-centre planes: moved by 10⁻⁶ m, such a face flips whole layers of
voxels (V ≈ 0.98 for a copy perturbed by 10⁻⁶ m) and a few silhouette pixels. So a
candidate member whose box coincides with a target member's within ε (every corner within ε
of the other's corners, both ways; :func:`coincident_members`) is scored at that target
member's geometry, in V and in the S renders alike. A candidate equal to the target within
ε then scores V = 1 and renders as the target; any other candidate moves by at most ε, so
V stays the voxel IoU of what it built at 0.05 m.

S and T are defined on structurally passed structures; :func:`fidelity_metrics` reports NaN
for them otherwise (the harness's mean skips NaN). T is also stored for every structure as
``topological_fidelity_any``, for the paper's passed-vs-failed comparison (§5: Claude 0.164
vs 0.149). Joint pass = structural pass ∧ visual pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching
from scipy.spatial import cKDTree

from buildbench.geometry import DEFAULT_MAX_VOXELS, Boxes, grid_for_bounds, match_min_cost, voxel_iou
from buildbench.harness import Task
from buildbench.harness.errors import ConfigError

from .fidelity_visual import (
    COINCIDENCE_TOLERANCE_M,
    Coincidence,
    VisualFidelity,
    VisualPassMode,
    coincident_members,
    snap_to_target,
    visual_fidelity,
)

# From fidelity_visual, where Eq. 1 moved; each `X as X` is a re-export.
from .fidelity_visual import LAMBDA as LAMBDA
from .fidelity_visual import VISUAL_TAU as VISUAL_TAU
from .model import Structure
from .outcome import DreamHouseOutcome
from .views import VIEW_NAMES, as_submitted, drawable, render_views, target_frame, target_views

#: Hungarian match radius δ in metres (paper Eq. 2).
MATCH_DELTA_M = 0.3
#: Voxel pitch in metres ([S], see the module docstring).
VOXEL_PITCH_M = 0.05
#: Eq. 2 weights (w_C, w_M, w_V).
T_WEIGHTS: tuple[float, float, float] = (0.3, 0.4, 0.3)
#: Largest target × candidate cost matrix solved exactly by the Hungarian method (~130 MB);
#: beyond it M is the maximum number of δ-close pairs (see :func:`centroid_match`).
MAX_HUNGARIAN_CELLS = 16_000_000

_UNKNOWN = "<unknown>"



@dataclass(frozen=True)
class CentroidMatch:
    """Eq. 2's M.

    Attributes:
        fraction: M, matched-within-δ target members over all target members (1 when both
            structures are empty, 0 when only one is).
        matched: Number of target members whose assigned candidate centroid is within δ.
        n_target: N, the number of target members.
        method: ``hungarian`` (exact Eq. 2) or ``within_delta`` (maximum number of δ-close
            pairs, used above :data:`MAX_HUNGARIAN_CELLS`; never below the Hungarian count).
    """

    fraction: float
    matched: int
    n_target: int
    method: str


@dataclass(frozen=True)
class VoxelOverlap:
    """Eq. 2's V.

    Attributes:
        iou: |𝒢 ∩ 𝒢̂| / |𝒢 ∪ 𝒢̂| (1 when neither occupies a voxel).
        pitch_m: The voxel edge used: :data:`VOXEL_PITCH_M`, doubled as often as needed to
            keep the shared grid under ``geometry.DEFAULT_MAX_VOXELS`` (a candidate far
            larger than the target).
        snapped_members: Candidate members scored at a coincident target member's geometry
            (:func:`coincident_members`).
    """

    iou: float
    pitch_m: float
    snapped_members: int


@dataclass(frozen=True)
class TopologicalFidelity:
    """Eq. 2 for one candidate against one target: T = w_C·C + w_M·M + w_V·V."""

    census: float
    match: CentroidMatch
    voxels: VoxelOverlap
    score: float


def census_similarity(candidate: Structure, target: Structure) -> float:
    """C of Eq. 2 over the categories present in either structure (1.0 when both are empty)."""
    counts_c = _category_counts(candidate)
    counts_t = _category_counts(target)
    keys = set(counts_c) | set(counts_t)
    if not keys:
        return 1.0
    ratios = [
        min(counts_c.get(k, 0), counts_t.get(k, 0)) / max(counts_c.get(k, 0), counts_t.get(k, 0))
        for k in keys
    ]
    return float(np.mean(ratios))


def centroid_match(
    candidate_centres_m: np.ndarray, target_centres_m: np.ndarray, *, delta_m: float = MATCH_DELTA_M
) -> CentroidMatch:
    """M of Eq. 2: the Hungarian assignment of target to candidate centroids, counted within δ.

    Args:
        candidate_centres_m: ĉ, shape ``(m, 3)``.
        target_centres_m: c, shape ``(n, 3)``.
        delta_m: δ in metres.

    Raises:
        ConfigError: For a bad shape, non-finite centres or δ ≤ 0.
    """
    cand = _centres(candidate_centres_m, "candidate")
    targ = _centres(target_centres_m, "target")
    if not delta_m > 0:
        raise ConfigError(f"match radius delta_m must be > 0, got {delta_m}")
    n, m = len(targ), len(cand)
    if n == 0:
        return CentroidMatch(1.0 if m == 0 else 0.0, 0, 0, "hungarian")
    if m == 0:
        return CentroidMatch(0.0, 0, n, "hungarian")
    if n * m <= MAX_HUNGARIAN_CELLS:
        cost = np.linalg.norm(targ[:, None, :] - cand[None, :, :], axis=2)
        assignment = match_min_cost(cost)
        matched = int(np.count_nonzero(assignment.values <= delta_m))
        return CentroidMatch(matched / n, matched, n, "hungarian")
    pairs = cKDTree(targ).query_ball_tree(cKDTree(cand), r=delta_m)
    rows = np.repeat(np.arange(n), [len(p) for p in pairs])
    cols = np.fromiter((j for p in pairs for j in p), dtype=np.int64, count=len(rows))
    graph = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, m))
    matched = int(np.count_nonzero(maximum_bipartite_matching(graph, perm_type="column") >= 0))
    return CentroidMatch(matched / n, matched, n, "within_delta")


def voxel_similarity(
    candidate: Structure,
    target: Structure,
    *,
    pitch_m: float = VOXEL_PITCH_M,
    tolerance_m: float = COINCIDENCE_TOLERANCE_M,
) -> VoxelOverlap:
    """V of Eq. 2: voxel IoU of the two frames on one shared grid (drawable members only),
    candidate members that coincide with a target member within ``tolerance_m`` taken at the
    target member's geometry (module docstring).

    Raises:
        ConfigError: For a pitch ≤ 0 or a bad tolerance.
    """
    if not pitch_m > 0:
        raise ConfigError(f"voxel pitch_m must be > 0, got {pitch_m}")
    match = coincident_members(candidate, target, tolerance_m=tolerance_m)
    a, b = _geometry(candidate, target, match), _geometry(target)
    boxes = [x for x in (a, b) if len(x)]
    if boxes:
        lo = np.min([x.aabbs()[0].min(axis=0) for x in boxes], axis=0)
        hi = np.max([x.aabbs()[1].max(axis=0) for x in boxes], axis=0)
        while np.prod(np.ceil(hi / pitch_m) - np.floor(lo / pitch_m) + 1) > DEFAULT_MAX_VOXELS:
            pitch_m *= 2.0
        grid_for_bounds(lo, hi, pitch_m)  # raises with a clear message if it still does not fit
    return VoxelOverlap(voxel_iou(a, b, pitch_m), pitch_m, len(match.candidate_index))


def topological_fidelity(
    candidate: Structure,
    target: Structure,
    *,
    delta_m: float = MATCH_DELTA_M,
    pitch_m: float = VOXEL_PITCH_M,
    tolerance_m: float = COINCIDENCE_TOLERANCE_M,
    weights: tuple[float, float, float] = T_WEIGHTS,
) -> TopologicalFidelity:
    """T = 0.3·C + 0.4·M + 0.3·V (Eq. 2); members with unusable geometry count in C only.
    ``tolerance_m`` is V's coincidence tolerance (:func:`voxel_similarity`)."""
    census = census_similarity(candidate, target)
    match = centroid_match(
        candidate.centers_m[drawable(candidate)], target.centers_m[drawable(target)], delta_m=delta_m
    )
    voxels = voxel_similarity(candidate, target, pitch_m=pitch_m, tolerance_m=tolerance_m)
    w_c, w_m, w_v = weights
    return TopologicalFidelity(census, match, voxels, w_c * census + w_m * match.fraction + w_v * voxels.iou)


def joint_pass(
    structural_pass: bool, visual: VisualFidelity | None, mode: VisualPassMode = "all_views"
) -> bool:
    """J for one structure: structural pass and visual pass (``visual`` is None when not rendered)."""
    return bool(structural_pass) and visual is not None and visual.passed(mode)


def fidelity_metrics(
    structural_pass: bool,
    candidate: Structure,
    target: Structure,
    candidate_views: np.ndarray | None,
    target_views: np.ndarray | None,
) -> dict[str, float]:
    """The flat per-episode metrics the scorer stores (NaN where a metric is undefined).

    Keys: ``visual_fidelity`` (S), ``visual_<view>`` (S_v), ``visual_pass`` (all views ≥ τ),
    ``visual_pass_mean``, ``topological_fidelity`` (T), ``census``, ``centroid_match``,
    ``voxel_iou``, ``joint_pass``, ``joint_pass_mean``, ``topological_fidelity_any``. S and T
    are NaN unless the structure passed (paper §4); the joint passes are then 0.
    ``topological_fidelity_any`` is T whatever the verdict.

    Args:
        structural_pass: The validator's verdict on ``candidate``.
        candidate: The agent's frame.
        target: The ground-truth frame.
        candidate_views: The candidate's five frame renders framed on the target (see
            :func:`~.views.target_frame`); ignored unless the structure passed.
        target_views: The target's five frame renders.
    """
    nan = float("nan")
    out: dict[str, float] = {"visual_fidelity": nan, **{f"visual_{v}": nan for v in VIEW_NAMES}}
    out |= {"visual_pass": 0.0, "visual_pass_mean": 0.0, "topological_fidelity": nan}
    out |= {"census": nan, "centroid_match": nan, "voxel_iou": nan, "joint_pass": 0.0, "joint_pass_mean": 0.0}
    topo = topological_fidelity(candidate, target)
    out["topological_fidelity_any"] = topo.score
    if not structural_pass:
        return out
    if candidate_views is not None and target_views is not None:
        vis = visual_fidelity(candidate_views, target_views)
        out["visual_fidelity"] = vis.mean
        out |= {f"visual_{v}": s for v, s in zip(VIEW_NAMES, vis.per_view, strict=False)}
        out["visual_pass"] = float(vis.passed_all_views)
        out["visual_pass_mean"] = float(vis.passed_mean)
        out["joint_pass"] = float(joint_pass(True, vis, "all_views"))
        out["joint_pass_mean"] = float(joint_pass(True, vis, "mean"))
    out |= {
        "topological_fidelity": topo.score,
        "census": topo.census,
        "centroid_match": topo.match.fraction,
        "voxel_iou": topo.voxels.iou,
    }
    return out


def undefined_fidelity() -> dict[str, float]:
    """Every key of :func:`fidelity_metrics` as NaN: a task without a target frame (a released pack)."""
    keys = ["visual_fidelity", *(f"visual_{v}" for v in VIEW_NAMES), "visual_pass", "visual_pass_mean",
            "topological_fidelity", "census", "centroid_match", "voxel_iou", "joint_pass", "joint_pass_mean",
            "topological_fidelity_any"]
    return dict.fromkeys(keys, float("nan"))


def fidelity_scores(task: Task, built: Structure, outcome: DreamHouseOutcome) -> dict[str, float]:
    """:func:`fidelity_metrics` as a ``score.METRICS`` group: validates ``built`` under the
    outcome's profile, and only for a passing frame renders it and the target.

    S compares *frame* renders under both conditions (paper Eq. 1 defines it on timber
    frames; the Facade condition changes only what the agent is shown). Candidate renders
    are framed on the target's bounds (:func:`~.views.target_frame`) and drawn with members
    that coincide with a target member within ε at its geometry (:func:`snap_to_target`, as
    V does); the target is taken at the precision the episode stored the candidate
    (:func:`~.views.as_submitted`).
    """
    from .check import validate
    from .tasks import has_ground_truth, target_structure

    if not has_ground_truth(task):
        return undefined_fidelity()
    passed = validate(built, outcome.profile).passed
    target = as_submitted(target_structure(task))
    if not passed:
        return fidelity_metrics(False, built, target, None, None)
    renderer = outcome.renderer
    candidate_views = render_views(snap_to_target(built, target), frame=target_frame(target), renderer=renderer)
    return fidelity_metrics(True, built, target, candidate_views, target_views(task, "frame", renderer))


def _category_counts(structure: Structure) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in structure.categories:
        key = c or _UNKNOWN
        counts[key] = counts.get(key, 0) + 1
    return counts


def _centres(centres: np.ndarray, what: str) -> np.ndarray:
    arr = np.asarray(centres, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ConfigError(f"{what} centres must have shape (n, 3), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ConfigError(f"{what} centres must be finite")
    return arr


def _geometry(
    structure: Structure, target: Structure | None = None, match: Coincidence | None = None
) -> Boxes:
    """The drawable members as boxes; with ``match``, the matched ones take the target's
    arrays as they are (bit for bit, so a snapped member voxelizes exactly as its target)."""
    centres, half = structure.centers_m.copy(), structure.sizes_m / 2.0
    rot = structure.matrices[:, :3, :3].copy()
    if target is not None and match is not None:
        c, t = match.candidate_index, match.target_index
        centres[c], half[c], rot[c] = target.centers_m[t], target.sizes_m[t] / 2.0, target.matrices[t, :3, :3]
    keep = drawable(structure)
    return Boxes(centres[keep], half[keep], rot[keep])
