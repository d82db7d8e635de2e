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

    def box(self, lo: Sequence[float], hi: Sequence[float], rgba: Rgba) -> None:
        """An axis-aligned block from corner ``lo`` to ``hi`` (clipped to the object's box)."""
        lo_c = np.clip(np.asarray(lo, dtype=np.float64), 0.0, [self.sx, self.sy, self.sz])
        hi_c = np.clip(np.asarray(hi, dtype=np.float64), 0.0, [self.sx, self.sy, self.sz])
        if np.any(hi_c - lo_c <= 0.0):
            return  # a part squeezed to nothing by a tiny box: leave it out
        vertices, faces = box_arrays(lo_c, hi_c)
        self._add(vertices, faces, rgba)

    def mat(self, border: float, rgba: Rgba, border_rgba: Rgba) -> None:
        """The whole box as a mat: a top surface (a field inside a ``border``-wide band) with
        edges down to the floor and no bottom face, as real rug assets are, so what stands on
        it meets it only as deep as it is thick (a closed slab's bottom would meet every leg
        along the leg's whole height in a triangle-level contact test)."""
        xs = np.array([0.0, border, self.sx - border, self.sx])
        zs = np.array([0.0, border, self.sz - border, self.sz])
        top = np.array([[x, self.sy, z] for x in xs for z in zs])
        ground = np.array([[x, 0.0, z] for x in (0.0, self.sx) for z in (0.0, self.sz)])
        vertices = np.vstack([top, ground])

        def quad(a: int, b: int, c: int, d: int) -> list[tuple[int, int, int]]:
            return [(a, b, c), (a, c, d)]

        ring: list[tuple[int, int, int]] = []
        for i in range(3):
            for k in range(3):
                cell = quad(4 * i + k, 4 * i + k + 1, 4 * (i + 1) + k + 1, 4 * (i + 1) + k)
                if (i, k) != (1, 1):
                    ring += cell
        g = 16  # ground corners: (0,0) (0,sz) (sx,0) (sx,sz) as g, g+1, g+2, g+3
        ring += quad(0, g, g + 1, 3) + quad(12, 15, g + 3, g + 2)  # -x, +x sides
        ring += quad(0, 12, g + 2, g) + quad(3, g + 1, g + 3, 15)  # -z, +z sides
        self._add(vertices, np.asarray(ring, dtype=np.int64), border_rgba)
        self._add(vertices.copy(), np.asarray(quad(5, 6, 10, 9), dtype=np.int64), rgba)

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

    def disc_z(self, cx: float, cy: float, z0: float, z1: float, radius: float, rgba: Rgba,
               *, segments: int = SEGMENTS) -> None:
        """A round part facing front (its axis along z from ``z0`` to ``z1``): dials, drums,
        speaker cones, a washing machine's door."""
        self.cylinder(cx, cy, z0, z1, radius, rgba, segments=segments)
        # built upright with (x, z, y) and swapped into place; the swap mirrors, so re-wind
        self._vertices[-1] = self._vertices[-1][:, [0, 2, 1]]
        self._faces[-1] = self._faces[-1][:, ::-1]

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
        starts = np.cumsum([0] + [len(v) for v in self._vertices[:-1]])
        faces = np.vstack([f + start for f, start in zip(self._faces, starts, strict=True)])
        colors = np.repeat(np.asarray(self._colors, dtype=np.uint8), self._counts, axis=0)
        lo, hi = vertices.min(axis=0), vertices.max(axis=0)
        span = hi - lo
        scale = np.divide(size, span, out=np.ones(3), where=span > 0)
        local = (vertices - lo) * scale - size / 2.0
        return ObjectMesh(np.ascontiguousarray(local), np.ascontiguousarray(faces), colors, source=source)

    def merge(self, other: Parts) -> None:
        """Take ``other``'s parts as they are (a sub-assembly built in a smaller box sharing
        this one's corner)."""
        for vertices, faces, rgba in zip(other._vertices, other._faces, other._colors, strict=True):
            self._add(vertices, faces, rgba)

    def _add(self, vertices: FloatArray, faces: IntArray, rgba: Rgba) -> None:
        self._vertices.append(vertices)
        self._faces.append(faces)  # part-local indices; build() offsets them
        self._colors.append(rgba)
        self._counts.append(len(faces))
