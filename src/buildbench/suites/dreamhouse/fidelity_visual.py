"""Eq. 1 visual fidelity S and the ε-coincidence of members (see :mod:`.fidelity` for the
definitions): the pieces that both :mod:`.views` (the in-episode visual scorer) and
:mod:`.fidelity` (the final scores) use, so they sit below both; ``fidelity`` re-exports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from PIL import Image
from scipy.spatial import cKDTree

from buildbench.harness.errors import ConfigError
from buildbench.render import alpha_weighted_mse, fidelity_from_mse, to_float_image

from .model import Structure
from .views_basis import IMAGE_SIZE_PX, drawable

#: Eq. 1 λ (paper §4).
LAMBDA = 10.0
#: Visual pass threshold τ (paper §7.1.3).
VISUAL_TAU = 0.6
#: ε in metres (the :mod:`.fidelity` docstring): ~3× the worst corner displacement that two 6-decimal
#: round trips cause on a 15 m member (rotation entries off by ≤ 2.5·10⁻⁶, so ≤ 3.5·10⁻⁵ m),
#: and 1/500 of the voxel pitch.
COINCIDENCE_TOLERANCE_M = 1e-4
#: Candidate neighbours (by centre, within ε) tried for each member in :func:`coincident_members`.
_COINCIDENCE_NEIGHBOURS = 4

VisualPassMode = Literal["all_views", "mean"]
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
class Coincidence:
    """Candidate members that coincide with a target member within a tolerance.

    Attributes:
        candidate_index: Indices into the candidate, ascending, shape ``(k,)``.
        target_index: The target member each coincides with, shape ``(k,)``.
    """

    candidate_index: np.ndarray
    target_index: np.ndarray


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
