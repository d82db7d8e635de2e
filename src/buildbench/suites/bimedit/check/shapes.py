"""Tessellate IFC products into world-space triangle meshes (metres), on demand and cached.

Only the few elements of an edit set are ever tessellated: tessellating every product
of three ~600-element files is what made the minimal implementation take ~15 s per
task (spec section 10). Hosts are tessellated with their openings subtracted, as
``ifcopenshell.geom`` does by default (spec section 3.2).
"""

from __future__ import annotations

from typing import Any

import ifcopenshell
import ifcopenshell.geom
import numpy as np
import shapely
from scipy.spatial import ConvexHull, QhullError

from buildbench.geometry import Boxes, TriangleMesh
from buildbench.suites.bimedit.check.model import IfcModel

_SETTINGS = ifcopenshell.geom.settings()
_SETTINGS.set("use-world-coords", True)


class ShapeCache:
    """Meshes of one model's nodes, computed on first use.

    ``ifcopenshell.geom`` returns coordinates in metres whatever the model's unit, so
    everything here is in metres and unit-invariant.
    """

    def __init__(self, model: IfcModel) -> None:
        self.model = model
        self._meshes: dict[str, TriangleMesh | None] = {}
        self.notes: list[str] = []

    def mesh(self, key: str) -> TriangleMesh | None:
        """The node's mesh, or None if it has no body geometry or tessellation failed."""
        if key in self._meshes:
            return self._meshes[key]
        ent = self.model.nodes[key].entity
        mesh: TriangleMesh | None = None
        if getattr(ent, "Representation", None) is not None:
            try:
                shape: Any = ifcopenshell.geom.create_shape(_SETTINGS, ent)
                verts = np.asarray(shape.geometry.verts, dtype=np.float64).reshape(-1, 3)
                faces = np.asarray(shape.geometry.faces, dtype=np.int64).reshape(-1, 3)
                mesh = TriangleMesh(verts, faces) if len(faces) else None
            except Exception as exc:  # the geometry kernel raises RuntimeError and others on bad input
                self.notes.append(f"{ent.is_a()} {key}: geometry could not be tessellated ({exc})")
        self._meshes[key] = mesh
        return mesh

    def centre(self, key: str) -> np.ndarray:
        """Centre of the node's mesh bounding box, or its placement origin without a mesh (metres)."""
        mesh = self.mesh(key)
        if mesh is None:
            return self.model.world_matrix(key)[:3, 3].copy()
        v = mesh.vertices
        return (v.min(axis=0) + v.max(axis=0)) / 2

    def box(self, key: str) -> Boxes | None:
        """The node's oriented bounding box, or None without a mesh; see :func:`yaw_box`."""
        mesh = self.mesh(key)
        return None if mesh is None else yaw_box(mesh.vertices)


def yaw_box(vertices: np.ndarray) -> Boxes:
    """Oriented bounding box of points, rotated about z only.

    Building elements are almost all extrusions along z, so the box is the minimum-area
    rectangle around the plan footprint times the z interval (spec section 3.3, [S]).
    """
    v = np.asarray(vertices, dtype=np.float64)
    z0, z1 = float(v[:, 2].min()), float(v[:, 2].max())
    plan = v[:, :2]
    if len(plan) > 64:  # building a shapely geometry of 16k sampled points is slow; hull them first
        try:
            plan = plan[ConvexHull(plan).vertices]
        except QhullError:  # collinear points: shapely below handles the degenerate case
            pass
    hull = shapely.MultiPoint(plan).convex_hull
    if hull.geom_type != "Polygon":  # all points on a line or one point: a flat box along it
        lo, hi = v[:, :2].min(axis=0), v[:, :2].max(axis=0)
        centre = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (z0 + z1) / 2])
        half = np.array([(hi[0] - lo[0]) / 2, (hi[1] - lo[1]) / 2, (z1 - z0) / 2])
        return Boxes(centre[None], half[None], np.eye(3)[None])
    rect = np.asarray(hull.minimum_rotated_rectangle.exterior.coords)[:4]
    e1, e2 = rect[1] - rect[0], rect[2] - rect[1]
    l1, l2 = float(np.hypot(*e1)), float(np.hypot(*e2))
    x = e1 / l1 if l1 > 0 else np.array([1.0, 0.0])
    rot = np.array([[x[0], -x[1], 0.0], [x[1], x[0], 0.0], [0.0, 0.0, 1.0]])
    c2 = rect.mean(axis=0)
    centre = np.array([c2[0], c2[1], (z0 + z1) / 2])
    half = np.array([l1 / 2, l2 / 2, (z1 - z0) / 2])
    return Boxes(centre[None], half[None], rot[None])
