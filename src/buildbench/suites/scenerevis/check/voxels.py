"""Voxel physical loss (VBL), after ReSpace's ``eval_scene`` as SceneReVis uses it (§2.5).

Every object box and the room (the floor polygon extruded from floor to ceiling) are
filled at a pitch of 0.05 m on one world-aligned grid; a voxel belongs to a solid when its
centre lies inside it (boundary included).

* out-of-bounds volume: object voxels whose centre is not in the room, summed over objects;
* collision volume: for every pair of objects, the voxels both fill, summed over pairs
  (a voxel filled by ``k`` objects counts ``k (k - 1) / 2`` times);
* loss (PBL) = out-of-bounds + collision volume, m³; a scene is valid when PBL ≤ 0.1 m³.

The paper's VBL figures are the mean loss × 10³ (:data:`VBL_SCALE`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from .layout import RoomLayout

#: Voxel edge, metres.
VOXEL_PITCH_M = 0.05
#: A scene is valid when its loss is at most this, m³.
VALID_LOSS_M3 = 0.1
#: Reported VBL = mean loss (m³) × this.
VBL_SCALE = 1000.0
#: Refuse grids larger than this many voxels (a corrupt scene, not a room).
MAX_VOXELS = 20_000_000


@dataclass(frozen=True)
class VoxelLoss:
    """Voxel loss of one room, m³."""

    oob_m3: float
    collision_m3: float

    @property
    def loss_m3(self) -> float:
        return self.oob_m3 + self.collision_m3

    @property
    def valid(self) -> bool:
        return self.loss_m3 <= VALID_LOSS_M3


def voxel_loss(layout: RoomLayout, pitch_m: float = VOXEL_PITCH_M) -> VoxelLoss:
    """Out-of-bounds and collision volume of ``layout`` at ``pitch_m``."""
    if len(layout) == 0:
        return VoxelLoss(0.0, 0.0)
    boxes = layout.boxes
    lo, hi = boxes.aabbs()
    room_lo = np.array([layout.floor_xz[:, 0].min(), layout.floor_y, layout.floor_xz[:, 1].min()])
    room_hi = np.array([layout.floor_xz[:, 0].max(), layout.ceiling_y, layout.floor_xz[:, 1].max()])
    start = np.floor(np.minimum(lo.min(0), room_lo) / pitch_m)
    stop = np.ceil(np.maximum(hi.max(0), room_hi) / pitch_m) + 1
    shape = (stop - start).astype(np.int64)
    if float(np.prod(shape)) > MAX_VOXELS:
        raise ValueError(
            f"voxel grid {shape.tolist()} at {pitch_m} m exceeds {MAX_VOXELS:,} voxels; "
            "the scene spans an implausible volume"
        )
    origin = start * pitch_m
    axes = [origin[k] + pitch_m * (np.arange(shape[k]) + 0.5) for k in range(3)]
    in_room = _room_mask(layout, axes)
    count = np.zeros(tuple(shape), dtype=np.int16)
    oob_voxels = 0
    first = np.clip(np.floor((lo - origin) / pitch_m - 0.5), 0, shape - 1).astype(np.int64)
    last = np.clip(np.ceil((hi - origin) / pitch_m - 0.5), 0, shape - 1).astype(np.int64)
    for i in range(len(layout)):
        sl = tuple(slice(first[i, k], last[i, k] + 1) for k in range(3))
        inside = _box_block(
            boxes.centers[i], boxes.half_extents[i], boxes.rotations[i], [axes[k][sl[k]] for k in range(3)]
        )
        count[sl] += inside
        oob_voxels += int(np.count_nonzero(inside & ~in_room[sl]))
    k = count[count > 1].astype(np.int64)
    pair_voxels = int((k * (k - 1) // 2).sum())
    cell = pitch_m**3
    return VoxelLoss(oob_voxels * cell, pair_voxels * cell)


def _room_mask(layout: RoomLayout, axes: list[np.ndarray]) -> np.ndarray:
    """Voxels whose centre is over the floor polygon and between floor and ceiling."""
    poly = shapely.Polygon(layout.floor_xz)
    if not poly.is_valid:
        poly = shapely.make_valid(poly)
    gx, gz = np.meshgrid(axes[0], axes[2], indexing="ij")
    floor = shapely.intersects_xy(poly, gx, gz)  # boundary counts, as for boxes
    height = (axes[1] >= layout.floor_y) & (axes[1] <= layout.ceiling_y)
    return floor[:, None, :] & height[None, :, None]


def _box_block(center: np.ndarray, half: np.ndarray, rot: np.ndarray, axes: list[np.ndarray]) -> np.ndarray:
    """Which voxel centres of the block spanned by ``axes`` lie in the box (separable test)."""
    rel = [axes[k] - center[k] for k in range(3)]
    inside = np.ones((len(rel[0]), len(rel[1]), len(rel[2])), dtype=bool)
    for c in range(3):
        local = (
            rot[0, c] * rel[0][:, None, None]
            + rot[1, c] * rel[1][None, :, None]
            + rot[2, c] * rel[2][None, None, :]
        )
        inside &= np.abs(local) <= half[c] + 1e-12
    return inside
