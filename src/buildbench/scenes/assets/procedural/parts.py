"""A small mesh builder: furniture as a union of boxes, prisms and lathed solids.

Families place parts in *corner coordinates*: metres from the box's minimum corner, so
``x`` in ``[0, sx]`` (left to right), ``y`` in ``[0, sy]`` (floor to top) and ``z`` in
``[0, sz]`` (back to front; the front faces +z). :meth:`Parts.build` shifts them to the
centred local frame and stretches the result so it spans the object's box exactly (parts
may overlap one another; each part is a closed, outward-wound solid).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from buildbench.scenes.assets.colors import Rgba
from buildbench.scenes.assets.mesh import FloatArray, IntArray, ObjectMesh, box_arrays

#: Segments around a lathed or round part: enough to read as round, few enough for FCL.
SEGMENTS = 12


class Parts:
    """Parts of one object of box extents ``size`` (see the module docstring)."""

    def __init__(self, size: Sequence[float]) -> None:
        self.sx, self.sy, self.sz = (float(v) for v in size)
        self._vertices: list[FloatArray] = []
        self._faces: list[IntArray] = []
        self._colors: list[Rgba] = []
        self._counts: list[int] = []
        self._n = 0

    def box(self, lo: Sequence[float], hi: Sequence[float], rgba: Rgba) -> None:
        """An axis-aligned block from corner ``lo`` to ``hi`` (clipped to the object's box)."""
        lo_c = np.clip(np.asarray(lo, dtype=np.float64), 0.0, [self.sx, self.sy, self.sz])
        hi_c = np.clip(np.asarray(hi, dtype=np.float64), 0.0, [self.sx, self.sy, self.sz])
        if np.any(hi_c - lo_c <= 0.0):
            return  # a part squeezed to nothing by a tiny box: leave it out
        vertices, faces = box_arrays(lo_c, hi_c)
        self._add(vertices, faces, rgba)

    def lathe(self, cx: float, cz: float, profile: Sequence[tuple[float, float]], rgba: Rgba,
              *, scale_z: float = 1.0, segments: int = SEGMENTS) -> None:
        """A solid of revolution about the vertical line through ``(cx, cz)``.

        ``profile``: ``(y, radius)`` from bottom to top, radius along x (``scale_z`` times it
        along z, for oval parts); the ends are capped flat."""
        rings = [(float(y), max(float(r), 1e-4)) for y, r in profile]
        angles = np.arange(segments) * (2.0 * math.pi / segments)
        cos, sin = np.cos(angles), np.sin(angles)
        verts = [np.column_stack([cx + r * cos, np.full(segments, y), cz + r * scale_z * sin]) for y, r in rings]
        n_ring = len(rings)
        bottom, top = n_ring * segments, n_ring * segments + 1
        centres = np.array([[cx, rings[0][0], cz], [cx, rings[-1][0], cz]])
        faces: list[tuple[int, int, int]] = []
        for i in range(n_ring - 1):
            for k in range(segments):
                a, b = i * segments + k, i * segments + (k + 1) % segments
                c, d = a + segments, b + segments
                # angle grows from +x toward +z, which turns clockwise seen from above
                faces += [(a, c, b), (b, c, d)]
        for k in range(segments):
            k1 = (k + 1) % segments
            faces.append((bottom, k, k1))
            last = (n_ring - 1) * segments
            faces.append((top, last + k1, last + k))
        self._add(np.vstack([*verts, centres]), np.asarray(faces, dtype=np.int64), rgba)

    def cylinder(self, cx: float, cz: float, y0: float, y1: float, radius: float, rgba: Rgba,
                 *, scale_z: float = 1.0, segments: int = SEGMENTS) -> None:
        """An upright round (or oval) post from ``y0`` to ``y1``."""
        self.lathe(cx, cz, [(y0, radius), (y1, radius)], rgba, scale_z=scale_z, segments=segments)

    def ellipsoid(self, centre: Sequence[float], radii: Sequence[float], rgba: Rgba, *, rings: int = 6) -> None:
        """An ellipsoid (foliage, cushions, fruit) as a lathed stack of rings."""
        cx, cy, cz = (float(v) for v in centre)
        rx, ry, rz = (max(float(v), 1e-4) for v in radii)
        profile = []
        for i in range(rings + 1):
            t = math.pi * i / rings  # from the bottom pole to the top
            profile.append((cy - ry * math.cos(t), rx * math.sin(t)))
        self.lathe(cx, cz, profile, rgba, scale_z=rz / rx)

    def legs(self, inset: float, thick: float, y0: float, y1: float, rgba: Rgba, *, round_legs: bool = False,
             x0: float = 0.0, x1: float | None = None, z0: float = 0.0, z1: float | None = None) -> None:
        """Four legs at the corners of ``[x0, x1] × [z0, z1]`` (default: the whole footprint),
        ``inset`` from its edges, ``thick`` across, from ``y0`` up to ``y1``."""
        x1 = self.sx if x1 is None else x1
        z1 = self.sz if z1 is None else z1
        for x in (x0 + inset, x1 - inset - thick):
            for z in (z0 + inset, z1 - inset - thick):
                if round_legs:
                    self.cylinder(x + thick / 2, z + thick / 2, y0, y1, thick / 2, rgba, segments=8)
                else:
                    self.box((x, y0, z), (x + thick, y1, z + thick), rgba)

    def build(self, source: str) -> ObjectMesh:
        """The parts as one mesh in the centred local frame, stretched to span the box."""
        size = np.array([self.sx, self.sy, self.sz])
        if not self._vertices:  # every part squeezed out (a box with a zero extent): the box
            vertices, faces = box_arrays(-size / 2, size / 2)
            return ObjectMesh(vertices, faces, np.full((len(faces), 4), (128, 128, 128, 255), np.uint8), source=source)
        vertices = np.vstack(self._vertices)
        faces = np.vstack(self._faces)
        colors = np.repeat(np.asarray(self._colors, dtype=np.uint8), self._counts, axis=0)
        lo, hi = vertices.min(axis=0), vertices.max(axis=0)
        span = hi - lo
        scale = np.divide(size, span, out=np.ones(3), where=span > 0)
        local = (vertices - lo) * scale - size / 2.0
        return ObjectMesh(np.ascontiguousarray(local), np.ascontiguousarray(faces), colors, source=source)

    def _add(self, vertices: FloatArray, faces: IntArray, rgba: Rgba) -> None:
        self._vertices.append(vertices)
        self._faces.append(faces + self._n)
        self._colors.append(rgba)
        self._counts.append(len(faces))
        self._n += len(vertices)
