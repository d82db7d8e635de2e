"""How relations measure two objects against each other: by their boxes (the default) or
by the placed meshes of a geometry level (:mod:`buildbench.scenes.assets`).

A :class:`Shapes` strategy answers the two questions whose answer depends on an object's
real shape:

* **distance** between two objects, metres: with boxes the floor-plan distance between
  their footprints (two touching sofas are 0 m apart); with meshes the shortest distance
  between the placed surfaces in 3D (FCL), so the free space under a table top, between
  a chair's legs or beside a sofa's arms counts as space;
* **penetration** of two objects, metres: with boxes the boxes' penetration depth
  (separating-axis test); with meshes the deepest contact FCL reports between the placed
  meshes (SceneReVis's collision definition, ``scenerevis.md`` §2.5), 0 when none;
* **a surface under** an object (meshes only): whether an upward face of the other's mesh
  lies under the object's footprint at its bottom, so "on top of" means resting on a table
  top or a chair's seat, not on the top of a box that a chair's back makes tall, nor beside
  a table leg that passes the object's height.

The strategy is chosen per call context with :func:`measured_with` (a context variable, so
concurrent evaluations of different levels do not mix); without one, relations use boxes
and their answers are exactly those they gave before meshes existed. Distances to walls,
doors, windows and rooms, directions and footprint overlaps stay floor-plan geometry at
every level.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely

from buildbench.geometry import sat_separation
from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import SceneIndex

if TYPE_CHECKING:
    from buildbench.scenes.assets import AssetLibrary
    from buildbench.scenes.mesh_physics import SolidMesh

#: Penetration up to this depth, metres, is contact, not overlap (SceneReVis's 1 cm rule and
#: :data:`buildbench.scenes.collision.TOUCH_TOL_M`).
OVERLAP_DEPTH_M = 0.01
#: Depths within this of a threshold count as at it: FCL reports a table's legs standing
#: through a 1 cm rug as 0.010000000000000009 m.
DEPTH_ROUNDING_M = 1e-9


class Shapes:
    """Objects as their boxes (the default strategy; see the module docstring)."""

    level = "box"

    def distance_m(self, scene: Scene, index: SceneIndex, a: str, b: str) -> float:
        """Floor-plan distance between the footprints of objects ``a`` and ``b``."""
        fa, fb = index.footprints[index.object_pos[a]], index.footprints[index.object_pos[b]]
        return float(shapely.distance(fa, fb))

    def penetration_m(self, scene: Scene, index: SceneIndex, a: str, b: str) -> float:
        """Penetration depth of the two boxes (0 when apart or touching)."""
        pa, pb = index.object_pos[a], index.object_pos[b]
        separation = sat_separation(index.boxes.subset(np.array([pa])), index.boxes.subset(np.array([pb])))
        return max(0.0, -float(separation[0]))

    def surface_under(self, scene: Scene, index: SceneIndex, a: str, b: str, gap_m: float) -> bool:
        """Whether b's box top is within ``gap_m`` of a's bottom."""
        return abs(float(index.bottoms[index.object_pos[a]] - index.tops[index.object_pos[b]])) <= gap_m


class MeshShapes(Shapes):
    """Objects as their meshes at ``level`` (``procedural`` or ``mesh``), placed ``R @ v + c``.

    Each distinct mesh's FCL model is built once (:func:`buildbench.scenes.mesh_physics.solid_mesh`)
    and reused at any pose.
    """

    def __init__(self, level: str, library: AssetLibrary | None = None) -> None:
        from buildbench.scenes.assets import AssetLibrary, check_level

        self.level = check_level(level)
        # Read the environment's asset folders once, not at every measurement.
        self.library = library if library is not None or self.level != "mesh" else AssetLibrary.from_env()

    def _placed(self, scene: Scene, index: SceneIndex, object_id: str) -> Any:
        import fcl

        from buildbench.scenes.assets import object_mesh

        obj = scene.objects[index.object_pos[object_id]]
        mesh = _solid(object_mesh(obj, self.level, library=self.library))  # type: ignore[arg-type]
        transform = fcl.Transform(np.asarray(obj.rotation, dtype=np.float64), np.asarray(obj.center, dtype=np.float64))
        return fcl.CollisionObject(mesh.fcl_geometry(), transform), len(mesh.faces) > 0

    def distance_m(self, scene: Scene, index: SceneIndex, a: str, b: str) -> float:
        """Shortest distance between the placed meshes, 0 when they touch or cross."""
        import fcl

        (oa, full_a), (ob, full_b) = self._placed(scene, index, a), self._placed(scene, index, b)
        if not (full_a and full_b):
            return super().distance_m(scene, index, a, b)
        if fcl.collide(oa, ob, fcl.CollisionRequest(), fcl.CollisionResult()):
            return 0.0
        return max(0.0, float(fcl.distance(oa, ob, fcl.DistanceRequest(), fcl.DistanceResult())))

    def penetration_m(self, scene: Scene, index: SceneIndex, a: str, b: str) -> float:
        """The deepest FCL contact between the placed meshes (0 when none)."""
        import fcl

        from buildbench.scenes.mesh_physics import MAX_CONTACTS_PER_PAIR

        (oa, full_a), (ob, full_b) = self._placed(scene, index, a), self._placed(scene, index, b)
        if not (full_a and full_b):
            return 0.0
        request = fcl.CollisionRequest(num_max_contacts=MAX_CONTACTS_PER_PAIR, enable_contact=True)
        result = fcl.CollisionResult()
        if not fcl.collide(oa, ob, request, result) or not result.contacts:
            return 0.0
        return max(0.0, max(float(c.penetration_depth) for c in result.contacts))


    def surface_under(self, scene: Scene, index: SceneIndex, a: str, b: str, gap_m: float) -> bool:
        """Whether an upward face of b's mesh within ``gap_m`` of a's bottom lies under a's
        footprint (more than 1 cm² of it): a surface a can stand on (a table top, a chair's
        seat, a shelf board; not a leg's side,
        :func:`~buildbench.scenes.mesh_physics.surface_contact_m2`)."""
        from buildbench.scenes.assets import object_mesh
        from buildbench.scenes.mesh_physics import CONTACT_MIN_AREA_M2, surface_contact_m2

        other = scene.objects[index.object_pos[b]]
        mesh = _solid(object_mesh(other, self.level, library=self.library))  # type: ignore[arg-type]
        shared = surface_contact_m2(
            mesh, np.asarray(other.rotation, dtype=np.float64), np.asarray(other.center, dtype=np.float64),
            index.element(scene, a).shape, float(index.bottoms[index.object_pos[a]]), gap_m)
        return shared > CONTACT_MIN_AREA_M2


def _solid(mesh: Any) -> SolidMesh:
    from buildbench.scenes.mesh_physics import solid_mesh

    return solid_mesh(mesh.vertices, mesh.faces)


BOXES = Shapes()
_CURRENT: ContextVar[Shapes] = ContextVar("buildbench_relation_shapes", default=BOXES)


def current() -> Shapes:
    """The strategy relations use in this context (boxes unless :func:`measured_with` says)."""
    return _CURRENT.get()


def shapes_for(level: str, library: AssetLibrary | None = None) -> Shapes:
    """The strategy of a geometry level: boxes for ``box``, meshes otherwise.

    Raises:
        buildbench.scenes.assets.AssetError: an unknown level.
    """
    if level == "box":
        return BOXES
    return MeshShapes(level, library)


@contextmanager
def measured_with(level: str | Shapes, library: AssetLibrary | None = None) -> Iterator[Shapes]:
    """Relations in the ``with`` block measure objects at ``level`` (a level name or a strategy)."""
    shapes = level if isinstance(level, Shapes) else shapes_for(level, library)
    token = _CURRENT.set(shapes)
    try:
        yield shapes
    finally:
        _CURRENT.reset(token)


def level_evidence(shapes: Shapes) -> dict[str, str]:
    """The evidence entry naming a mesh level; nothing at the box level (its verdicts are
    unchanged from before levels existed)."""
    return {} if shapes.level == "box" else {"geometry": shapes.level}
