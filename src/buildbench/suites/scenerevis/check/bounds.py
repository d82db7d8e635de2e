"""How much of each object's surface lies outside the room, computed exactly.

The released metric (SceneReVis ``eval/myeval.py``) samples 500 random points on each
mesh and calls an object out of bounds when more than 1 % of them fall outside the room:
outside the floor polygon buffered by 1 mm, or below the floor − 1 mm / above the
ceiling + 1 mm. Uniform surface samples estimate the *area fraction* of the surface that
lies outside, so we compute that fraction itself, with no sampling: every face of the
box is clipped against the room and the inside area measured.

* A face that is not vertical maps one-to-one onto the floor plane: clip it to the
  floor–ceiling slab, project it to ``(x, z)``, intersect with the buffered polygon and
  divide the area by ``|n_y|`` (the projection's area scale).
* A vertical face is a region of the plane spanned by its horizontal direction ``t`` and
  ``y``, where "inside" is the product of the ``t``-intervals whose floor points lie in
  the polygon and the slab's ``y``-interval; intersect the face with those rectangles.

Accuracy: exact up to floating point and the 1 mm buffer's rounded corners (shapely's 16
segments per quarter circle, an area error below 1e-9 m² per corner). The released 500-
sample estimate has a standard error of ``sqrt(p (1 - p) / 500)``; near the 1 % threshold
(p = 0.01) that is 0.45 %, so objects whose true share is 0.2–2 % can flip either way
there, and never here.

A box with zero surface area (all extents zero, or two of them) is outside (fraction 1)
exactly when its centre is.
"""

from __future__ import annotations

import numpy as np
import shapely
from numpy.typing import NDArray
from shapely.geometry import Polygon
from shapely.geometry import box as rect

from .layout import RoomLayout

FloatArray = NDArray[np.float64]

#: Floor polygon buffer of the released metric, metres.
FLOOR_BUFFER_M = 0.001
#: Tolerance below the floor and above the ceiling, metres.
HEIGHT_TOLERANCE_M = 0.001

# A face whose normal has |y| below this is treated as vertical (its floor projection is a
# segment, not an area).
_VERTICAL = 1e-9


def room_polygon(layout: RoomLayout, buffer_m: float = FLOOR_BUFFER_M) -> Polygon:
    """The floor polygon in ``(x, z)``, repaired if self-intersecting, grown by ``buffer_m``."""
    poly = Polygon(layout.floor_xz)
    if not poly.is_valid:
        poly = shapely.make_valid(poly)
    grown = poly.buffer(buffer_m) if buffer_m > 0 else poly
    shapely.prepare(grown)
    return grown


def outside_fractions(
    layout: RoomLayout, *, buffer_m: float = FLOOR_BUFFER_M, height_tolerance_m: float = HEIGHT_TOLERANCE_M
) -> FloatArray:
    """``(n,)`` share of each box's surface area outside the room, in [0, 1]."""
    n = len(layout)
    out = np.zeros(n)
    if n == 0:
        return out
    poly = room_polygon(layout, buffer_m)
    y0, y1 = layout.floor_y - height_tolerance_m, layout.ceiling_y + height_tolerance_m
    corners = layout.corners()
    hulls = shapely.convex_hull(shapely.multipoints(corners[:, :, [0, 2]]))
    inside = shapely.covers(poly, hulls) & (corners[:, :, 1].min(1) >= y0) & (corners[:, :, 1].max(1) <= y1)
    todo = np.flatnonzero(~inside)
    if todo.size:
        boxes = layout.boxes.subset(todo)
        out[todo] = _outside_fractions(boxes.centers, boxes.half_extents, boxes.rotations, poly, y0, y1)
    return out


def _outside_fractions(
    centers: FloatArray, halves: FloatArray, rots: FloatArray, poly: Polygon, y0: float, y1: float
) -> FloatArray:
    """Outside shares of boxes that are not wholly inside; the shapely work is batched."""
    m = len(centers)
    quads, normals, areas, owner, upright = _faces(centers, halves, rots)
    inside = np.zeros(m)
    vertical = np.abs(normals[:, 1]) <= _VERTICAL
    flat = np.flatnonzero(~vertical & (areas > 0))
    if flat.size:
        geoms, keep = [], []
        for f in flat:
            lo, hi = quads[f, :, 1].min(), quads[f, :, 1].max()
            if hi < y0 or lo > y1:
                continue
            pts = quads[f] if y0 <= lo and hi <= y1 else _clip_slab(quads[f], y0, y1)
            if len(pts) >= 3:
                geoms.append(Polygon(pts[:, [0, 2]]))
                keep.append(f)
        if keep:
            kept = np.array(keep)
            clipped = shapely.area(shapely.intersection(np.array(geoms, dtype=object), poly))
            np.add.at(inside, owner[kept], clipped / np.abs(normals[kept, 1]))
    walls = np.flatnonzero(vertical & (areas > 0))
    if walls.size:
        np.add.at(
            inside,
            owner[walls],
            _vertical_inside_areas(quads[walls], normals[walls], upright[walls], poly, y0, y1),
        )
    total = np.bincount(owner, weights=areas, minlength=m)
    out = np.ones(m)
    solid = total > 0.0
    out[solid] = np.clip(1.0 - inside[solid] / total[solid], 0.0, 1.0)
    for k in np.flatnonzero(~solid):  # no surface: the centre decides
        y = centers[k, 1]
        out[k] = 0.0 if poly.covers(shapely.Point(centers[k, 0], centers[k, 2])) and y0 <= y <= y1 else 1.0
    return out


def _faces(
    centers: FloatArray, halves: FloatArray, rots: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, NDArray[np.int64], NDArray[np.bool_]]:
    """The six faces of every box: corners ``(6m, 4, 3)``, normals, areas, owning box, and
    whether the face is an upright rectangle (one edge along world y)."""
    quads, normals, areas, owner, upright = [], [], [], [], []
    box = np.arange(len(centers))
    for axis in range(3):
        b, c = (axis + 1) % 3, (axis + 2) % 3
        u, v = rots[:, :, b] * halves[:, b : b + 1], rots[:, :, c] * halves[:, c : c + 1]
        for sign in (1.0, -1.0):
            mid = centers + sign * halves[:, axis : axis + 1] * rots[:, :, axis]
            quads.append(np.stack([mid + u + v, mid - u + v, mid - u - v, mid + u - v], axis=1))
            normals.append(rots[:, :, axis])
            areas.append(4.0 * halves[:, b] * halves[:, c])
            owner.append(box)
            upright.append((np.abs(rots[:, 1, b]) > 1 - 1e-12) | (np.abs(rots[:, 1, c]) > 1 - 1e-12))
    return (
        np.concatenate(quads),
        np.concatenate(normals),
        np.concatenate(areas),
        np.concatenate(owner),
        np.concatenate(upright),
    )


def _vertical_inside_areas(
    quads: FloatArray, normals: FloatArray, upright: NDArray[np.bool_], poly: Polygon, y0: float, y1: float
) -> FloatArray:
    """Inside area of each vertical face: in coordinates (s along its horizontal direction
    ``t``, y), the inside is the ``s``-intervals over the floor polygon times the slab."""
    t = np.column_stack([-normals[:, 2], np.zeros(len(normals)), normals[:, 0]])
    origin = quads.mean(axis=1)
    s = np.einsum("fkj,fj->fk", quads - origin[:, None, :], t)
    base, direction = origin[:, [0, 2]], t[:, [0, 2]]
    ends = np.stack([base + s.min(1)[:, None] * direction, base + s.max(1)[:, None] * direction], axis=1)
    pieces = shapely.intersection(shapely.linestrings(ends), poly)
    out = np.zeros(len(quads))
    height = np.maximum(0.0, np.minimum(quads[:, :, 1].max(1), y1) - np.maximum(quads[:, :, 1].min(1), y0))
    for f, piece in enumerate(pieces):
        if shapely.is_empty(piece):
            continue
        intervals = _inside_intervals(piece, base[f], direction[f])
        if upright[f]:
            out[f] = height[f] * sum(b - a for a, b in intervals)
        else:
            face = Polygon(np.column_stack([s[f], quads[f, :, 1]]))
            out[f] = sum(face.intersection(rect(a, y0, b, y1)).area for a, b in intervals)
    return out


def _inside_intervals(
    geom: shapely.Geometry, base: FloatArray, direction: FloatArray
) -> list[tuple[float, float]]:
    """The ``s`` intervals of the linear pieces of ``geom`` along ``base + s * direction``."""
    out = []
    for part in shapely.get_parts(geom):
        if part.geom_type not in ("LineString", "LinearRing") or part.length <= 0.0:
            continue
        s = (np.asarray(part.coords) - base) @ direction
        out.append((float(s.min()), float(s.max())))
    return out


def _clip_slab(poly3: FloatArray, y0: float, y1: float) -> FloatArray:
    """A convex planar polygon clipped to ``y0 <= y <= y1`` (Sutherland–Hodgman, two planes)."""
    pts = poly3
    for keep_above, level in ((True, y0), (False, y1)):
        if len(pts) == 0:
            break
        d = pts[:, 1] - level if keep_above else level - pts[:, 1]
        out = []
        for k in range(len(pts)):
            p, q, dp, dq = pts[k], pts[(k + 1) % len(pts)], d[k], d[(k + 1) % len(pts)]
            if dp >= 0:
                out.append(p)
            if (dp >= 0) != (dq >= 0):
                out.append(p + (q - p) * (dp / (dp - dq)))
        pts = np.array(out).reshape(-1, 3)
    return pts
