"""DreamHouse fidelity metrics (paper §4 Eq. 1–2, spec §6.2): visual S, topological T, joint pass.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from PIL import Image
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching
from scipy.spatial import cKDTree

from buildbench.geometry import DEFAULT_MAX_VOXELS, Boxes, grid_for_bounds, match_min_cost, voxel_iou
from buildbench.harness import Task
from buildbench.harness.errors import ConfigError
from buildbench.render import alpha_weighted_mse, fidelity_from_mse, to_float_image

from .model import Structure
from .views import IMAGE_SIZE_PX, VIEW_NAMES, as_submitted, drawable, render_views, target_frame, target_views

#: Eq. 1 λ (paper §4).
LAMBDA = 10.0
#: Visual pass threshold τ (paper §7.1.3).
VISUAL_TAU = 0.6
#: Hungarian match radius δ in metres (paper Eq. 2).
MATCH_DELTA_M = 0.3
#: Voxel pitch in metres ([S], see the module docstring).
VOXEL_PITCH_M = 0.05
#: ε in metres (module docstring): ~3× the worst corner displacement that two 6-decimal
#: round trips cause on a 15 m member (rotation entries off by ≤ 2.5·10⁻⁶, so ≤ 3.5·10⁻⁵ m),
#: and 1/500 of the voxel pitch.
COINCIDENCE_TOLERANCE_M = 1e-4
#: Candidate neighbours (by centre, within ε) tried for each member in :func:`coincident_members`.
_COINCIDENCE_NEIGHBOURS = 4
#: Eq. 2 weights (w_C, w_M, w_V).
T_WEIGHTS: tuple[float, float, float] = (0.3, 0.4, 0.3)
#: Largest target × candidate cost matrix solved exactly by the Hungarian method (~130 MB);
#: beyond it M is the maximum number of δ-close pairs (see :func:`centroid_match`).
MAX_HUNGARIAN_CELLS = 16_000_000

VisualPassMode = Literal["all_views", "mean"]
_UNKNOWN = "<unknown>"
_CORNER_SIGNS = np.array([[sx, sy, sz] for sx in (-1.0, 1.0) for sy in (-1.0, 1.0) for sz in (-1.0, 1.0)])


@dataclass(frozen=True)
class VisualFidelity:
    """Eq. 1 for one candidate against one target.

    Attributes:
        per_view: S_v per view in :data:`~.views.VIEW_NAMES` order.
        mse: MSE_v per view (sum of the three squared channel errors, colours in [0, 1]).
        mean: S, the mean of ``per_view``.
        passed_all_views: Every S_v ≥ τ (paper §7.1.3, the default visual pass).
        passed_mean: S ≥ τ (the main text's variant, §4).
    """

    per_view: tuple[float, ...]
    mse: tuple[float, ...]
    mean: float
    passed_all_views: bool
    passed_mean: bool

    def passed(self, mode: VisualPassMode = "all_views") -> bool:
        """The visual pass under ``mode`` (``all_views`` or ``mean``)."""
        return self.passed_all_views if mode == "all_views" else self.passed_mean


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
class Coincidence:
    """Candidate members that coincide with a target member within a tolerance.

    Attributes:
        candidate_index: Indices into the candidate, ascending, shape ``(k,)``.
        target_index: The target member each coincides with, shape ``(k,)``.
    """

    candidate_index: np.ndarray
    target_index: np.ndarray


@dataclass(frozen=True)
class TopologicalFidelity:
    """Eq. 2 for one candidate against one target: T = w_C·C + w_M·M + w_V·V."""

    census: float
    match: CentroidMatch
    voxels: VoxelOverlap
    score: float


def visual_fidelity(
    candidate_views: np.ndarray | Sequence[np.ndarray],
    target_views: np.ndarray | Sequence[np.ndarray],
    *,
    lam: float = LAMBDA,
    tau: float = VISUAL_TAU,
) -> VisualFidelity:
    """S_v, S and the two visual-pass variants for matching candidate and target renders.

    Args:
        candidate_views: uint8 RGBA renders R̂_v, one per view (any size; resized to 512²).
        target_views: uint8 RGBA renders R_v, the same views in the same order.
        lam: λ of Eq. 1.
        tau: τ of the visual pass.

    Raises:
        ConfigError: When the view counts differ, there are none, or an image is not uint8 RGBA.
    """
    cand, targ = list(candidate_views), list(target_views)
    if len(cand) != len(targ) or not cand:
        raise ConfigError(
            f"visual fidelity needs the same non-zero number of views, got {len(cand)} and {len(targ)}"
        )
    mses = tuple(
        alpha_weighted_mse(_prepared(c, f"candidate view {i}"), _prepared(t, f"target view {i}"))
        for i, (c, t) in enumerate(zip(cand, targ, strict=True))
    )
    per_view = tuple(fidelity_from_mse(m, lam) for m in mses)
    mean = float(np.mean(per_view))
    return VisualFidelity(
        per_view=per_view,
        mse=mses,
        mean=mean,
        passed_all_views=all(s >= tau for s in per_view),
        passed_mean=mean >= tau,
    )


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


def coincident_members(
    candidate: Structure, target: Structure, *, tolerance_m: float = COINCIDENCE_TOLERANCE_M
) -> Coincidence:
    """The drawable candidate members whose boxes coincide with a drawable target member's.

    Two boxes coincide when the Hausdorff distance between their corner sets is at most
    ``tolerance_m``; the boxes themselves are then within that distance of each other (each
    is the hull of its corners). Comparing corner *sets* makes the test independent of how a
    box is described (axes permuted or flipped with the sizes to match). Each candidate
    member takes the first coincident target member among the few nearest by centre.

    Raises:
        ConfigError: For a negative or non-finite tolerance.
    """
    if not (np.isfinite(tolerance_m) and tolerance_m >= 0):
        raise ConfigError(f"coincidence tolerance_m must be a finite length >= 0, got {tolerance_m}")
    ci, ti = np.flatnonzero(drawable(candidate)), np.flatnonzero(drawable(target))
    if not len(ci) or not len(ti):
        return Coincidence(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    k = min(_COINCIDENCE_NEIGHBOURS, len(ti))
    # Coincident boxes with edges longer than 2·tolerance pair their corners one to one, so
    # their centres (the corners' means) are within the tolerance too; a degenerate pair
    # missed here is merely not snapped. The bound is exclusive, hence the next float up.
    dist, near = cKDTree(target.centers_m[ti]).query(
        candidate.centers_m[ci], k=k, distance_upper_bound=np.nextafter(tolerance_m, np.inf)
    )
    dist, near = dist.reshape(len(ci), k), near.reshape(len(ci), k)
    cand_corners, targ_corners = _corners(candidate, ci), _corners(target, ti)
    chosen = np.full(len(ci), -1, dtype=np.int64)
    for j in range(k):
        # Neighbours come sorted by distance; a missing one has distance inf.
        rows = np.flatnonzero(np.isfinite(dist[:, j]) & (chosen < 0))
        if not len(rows):
            break
        gap = _corner_hausdorff(cand_corners[rows], targ_corners[near[rows, j]])
        hit = rows[gap <= tolerance_m]
        chosen[hit] = near[hit, j]
    keep = chosen >= 0
    return Coincidence(ci[keep], ti[chosen[keep]])


def snap_to_target(
    candidate: Structure, target: Structure, *, tolerance_m: float = COINCIDENCE_TOLERANCE_M
) -> Structure:
    """``candidate`` with each member that coincides with a target member within
    ``tolerance_m`` (:func:`coincident_members`) given that member's size and transform; names
    and annotations stay the candidate's. The S renders are made of this structure."""
    match = coincident_members(candidate, target, tolerance_m=tolerance_m)
    if not len(match.candidate_index):
        return candidate
    sizes, mats = candidate.sizes_m.copy(), candidate.matrices.copy()
    sizes[match.candidate_index] = target.sizes_m[match.target_index]
    mats[match.candidate_index] = target.matrices[match.target_index]
    return replace(candidate, sizes_m=sizes, matrices=mats)


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


def fidelity_scores(task: Task, built: Structure, outcome: Mapping[str, Any]) -> dict[str, float]:
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
    passed = validate(built, str(outcome.get("profile", "paper"))).passed
    target = as_submitted(target_structure(task))
    if not passed:
        return fidelity_metrics(False, built, target, None, None)
    renderer = str(outcome.get("renderer", "gl"))
    candidate_views = render_views(snap_to_target(built, target), frame=target_frame(target), renderer=renderer)
    return fidelity_metrics(True, built, target, candidate_views, target_views(task, "frame", renderer))


def _prepared(image: np.ndarray, where: str) -> np.ndarray:
    arr = np.asarray(image)
    if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[2] != 4:
        raise ConfigError(f"{where} must be a uint8 RGBA image (H, W, 4), got {arr.dtype} {arr.shape}")
    if arr.shape[:2] != (IMAGE_SIZE_PX, IMAGE_SIZE_PX):
        # Paper §4: renders are resized to 512×512 before the MSE.
        resized = Image.fromarray(arr, mode="RGBA").resize(
            (IMAGE_SIZE_PX, IMAGE_SIZE_PX), Image.Resampling.BILINEAR
        )
        arr = np.asarray(resized)
    return to_float_image(arr)


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


def _corners(structure: Structure, index: np.ndarray) -> np.ndarray:
    """World corners of the members at ``index``, shape ``(k, 8, 3)`` (any corner order)."""
    half = structure.sizes_m[index] / 2.0
    local = _CORNER_SIGNS[None, :, :] * half[:, None, :]
    rot = structure.matrices[index, :3, :3]
    return np.einsum("kij,kcj->kci", rot, local) + structure.centers_m[index][:, None, :]


def _corner_hausdorff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hausdorff distance between paired corner sets ``a[i]`` and ``b[i]`` (each ``(8, 3)``)."""
    d = np.linalg.norm(a[:, :, None, :] - b[:, None, :, :], axis=-1)
    return np.maximum(d.min(axis=2).max(axis=1), d.min(axis=1).max(axis=1))
