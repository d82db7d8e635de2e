"""A :class:`~buildbench.scenes.model.Scene` as coloured boxes and floor slabs.

Objects are their oriented boxes, with a thin dark band along the top of the front face so
that close-ups and top views show which way an object faces. Every wall record is a slab of
half the wall thickness on its own side of the segment (so the two sides of an interior wall
keep their own materials), cut around the door and window holes that lie on it; doors get a
frame, windows a frame and a pale pane. Floors are the room polygons, tinted by material.

Everything here is in the scene frame (y up); :meth:`SceneGeometry.render_scene` maps it
into the render world through a :class:`~buildbench.scenes.views.frame.Frame`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import shapely
from shapely.geometry import Polygon

from buildbench.geometry import BOX_CORNER_SIGNS, rotation_from_quat_xyzw
from buildbench.render import Boxes, TriangleMesh, build_scene
from buildbench.render import Scene as RenderScene
from buildbench.scenes.model import EXTERIOR, Opening, Scene, Wall
from buildbench.scenes.views import colors
from buildbench.scenes.views.frame import THOR_FRAME, FloatArray, Frame, ViewInputError, yaw_rotation
from buildbench.scenes.views.meshes import MeshSource, mesh_source, to_render
from buildbench.scenes.views.settled import settled_geometry

if TYPE_CHECKING:
    from buildbench.scenes.assets import AssetLibrary

#: Full thickness of a rendered wall (both sides together), metres.
WALL_THICKNESS_M = 0.1
#: Width of door and window frame members, metres.
FRAME_WIDTH_M = 0.05
#: Thickness of a floor slab below the floor level, metres.
FLOOR_THICKNESS_M = 0.05
# Where a point is tested to find a wall's side: this far off the segment's midpoint.
_SIDE_PROBE_M = 0.05
# An opening lies on a wall side when both hole ends are this close to the side's line.
_ON_WALL_TOL_M = 0.02


class ElementBox(NamedTuple):
    """One element's oriented box in the scene frame, with the way it faces."""

    id: str
    kind: str
    center: FloatArray
    rotation: FloatArray
    size: FloatArray
    facing_xz: tuple[float, float]


@dataclass(frozen=True)
class BoxSet:
    """Boxes in the scene frame, each tagged with the element (``owners``) it draws.

    Attributes:
        owners: Element id per box (an object, wall side, door or window id).
        kinds: ``object``, ``mark`` (front band), ``wall``, ``door`` or ``window`` per box.
        centers, rotations, sizes: ``(n, 3)``, ``(n, 3, 3)``, ``(n, 3)`` metres.
        colors: ``(n, 3)`` RGB in [0, 1].
    """

    owners: tuple[str, ...]
    kinds: tuple[str, ...]
    centers: FloatArray
    rotations: FloatArray
    sizes: FloatArray
    colors: FloatArray

    def __len__(self) -> int:
        return len(self.owners)

    def select(self, keep: np.ndarray) -> BoxSet:
        """The boxes where the boolean mask ``keep`` is true."""
        idx = np.flatnonzero(keep)
        return BoxSet(
            tuple(self.owners[i] for i in idx), tuple(self.kinds[i] for i in idx),
            self.centers[idx], self.rotations[idx], self.sizes[idx], self.colors[idx],
        )

    def owned_by(self, ids: Collection[str]) -> np.ndarray:
        """Boolean mask of the boxes drawing one of ``ids``."""
        wanted = set(ids)
        return np.fromiter((o in wanted for o in self.owners), bool, len(self.owners))

    def corners(self) -> FloatArray:
        """``(n, 8, 3)`` corners in the scene frame."""
        local = BOX_CORNER_SIGNS[None, :, :] * (self.sizes[:, None, :] / 2.0)
        return np.einsum("nij,nkj->nki", self.rotations, local) + self.centers[:, None, :]

    def tops(self) -> FloatArray:
        """``(n,)`` highest y of each box."""
        return self.corners()[:, :, 1].max(axis=1) if len(self) else np.zeros(0)

    def fronts_xz(self) -> FloatArray:
        """``(n, 2)`` unit floor direction of each box's local +z (local +y for a box lying
        on its back), as :attr:`SceneObject.front_xz`."""
        f = self.rotations[:, [0, 2], 2]
        flat = np.linalg.norm(f, axis=1) < 1e-9
        f[flat] = self.rotations[flat][:, [0, 2], 1]
        n = np.linalg.norm(f, axis=1, keepdims=True)
        return f / np.where(n == 0, 1.0, n)

    def footprints(self) -> np.ndarray:
        """Shapely polygons of each box's bottom face projected on the floor (exact for
        upright boxes)."""
        ring = self.corners()[:, [0, 1, 5, 4]][:, :, [0, 2]]
        return shapely.polygons(ring)

    def to_render(self, frame: Frame) -> Boxes:
        m = np.tile(np.eye(4), (len(self), 1, 1))
        m[:, :3, :3] = frame.matrix @ self.rotations
        m[:, :3, 3] = frame.points(self.centers)
        return Boxes(m, self.sizes, np.clip(self.colors, 0.0, 1.0))


def concat_boxes(parts: Iterable[BoxSet]) -> BoxSet:
    items = [p for p in parts if len(p)]
    if not items:
        return _empty_boxes()
    return BoxSet(
        tuple(o for p in items for o in p.owners), tuple(k for p in items for k in p.kinds),
        np.concatenate([p.centers for p in items]), np.concatenate([p.rotations for p in items]),
        np.concatenate([p.sizes for p in items]), np.concatenate([p.colors for p in items]),
    )


def _empty_boxes() -> BoxSet:
    return BoxSet((), (), np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros((0, 3)), np.zeros((0, 3)))


class FloorSlab(NamedTuple):
    room_id: str
    vertices_xz: FloatArray
    floor_y: float
    rgb: tuple[float, float, float]


@dataclass(frozen=True)
class SceneGeometry:
    """Everything drawable of a scene, in the scene frame, tagged by element.

    With ``meshes`` (the ``procedural`` and ``mesh`` levels) every object is drawn as its
    mesh instead of its box; the boxes stay for overlays, framing and line-of-sight tests.
    """

    boxes: BoxSet
    floors: tuple[FloorSlab, ...]
    meshes: MeshSource | None = None

    def restricted(self, *, drop: Collection[str] = (), rooms: Collection[str] | None = None,
                   keep: Callable[[BoxSet], np.ndarray] | None = None) -> SceneGeometry:
        """A copy without the elements in ``drop``, with only the floors of ``rooms`` (all
        when None), and with only the boxes where ``keep(boxes)`` is true (all when None)."""
        mask = ~self.boxes.owned_by(drop)
        if keep is not None:
            mask &= keep(self.boxes)
        floors = self.floors if rooms is None else tuple(f for f in self.floors if f.room_id in set(rooms))
        return SceneGeometry(self.boxes.select(mask), floors, self.meshes)

    def select(self, keep: np.ndarray) -> SceneGeometry:
        """A copy with only the boxes where the boolean mask ``keep`` is true."""
        return SceneGeometry(self.boxes.select(keep), self.floors, self.meshes)

    def objects(self) -> BoxSet:
        """The object bodies alone (no front bands, walls or openings), in scene order."""
        return self.boxes.select(np.array([k == "object" for k in self.boxes.kinds], bool))

    def top_y(self) -> float:
        """Highest point of anything drawn (0 for an empty scene)."""
        return float(self.boxes.corners()[:, :, 1].max()) if len(self.boxes) else 0.0

    def render_scene(self, frame: Frame = THOR_FRAME, *, floor_thickness_m: float = FLOOR_THICKNESS_M,
                     extra_meshes: Iterable[TriangleMesh] = ()) -> RenderScene:
        """One :class:`buildbench.render.Scene` of the boxes (objects as meshes where the
        level has them) and floor slabs."""
        floors = [floor_mesh(f, frame, floor_thickness_m) for f in self.floors]
        boxes, meshes = self.boxes, []
        if self.meshes is not None:
            meshes = to_render(self.meshes.placed(self.objects().owners), frame)
            boxes = boxes.select(np.array([k not in ("object", "mark") for k in boxes.kinds], bool))
        return build_scene(boxes.to_render(frame), [*meshes, *(m for m in floors if m is not None), *extra_meshes])


class SceneBoxes(NamedTuple):
    """A scene ready for :mod:`buildbench.render`: boxes (render world), the element id of
    each box, and the floor slabs as triangle meshes."""

    boxes: Boxes
    owners: tuple[str, ...]
    floors: tuple[TriangleMesh, ...]

    def scene(self) -> RenderScene:
        return build_scene(self.boxes, self.floors)


def scene_boxes(scene: Scene, *, frame: Frame = THOR_FRAME, wall_thickness_m: float = WALL_THICKNESS_M,
                front_marks: bool = True) -> SceneBoxes:
    """The scene as coloured :mod:`buildbench.render` boxes: objects (coloured by their
    ``color`` attribute, else the catalogue, else a category palette), walls as slabs split
    around door/window holes (empty walls, the invisible boundaries of an open floor plan,
    are left out, as AI2-THOR renders none), door/window frames, and floors tinted by material.

    Args:
        scene: The scene.
        frame: Scene-to-render map (:data:`THOR_FRAME`: east right, north up from above).
        wall_thickness_m: Full wall thickness.
        front_marks: Draw the dark band marking each object's front.
    """
    geo = scene_geometry(scene, wall_thickness_m=wall_thickness_m, front_marks=front_marks)
    floors = tuple(m for f in geo.floors if (m := floor_mesh(f, frame, FLOOR_THICKNESS_M)) is not None)
    return SceneBoxes(geo.boxes.to_render(frame), geo.boxes.owners, floors)


def scene_geometry(scene: Scene, *, wall_thickness_m: float = WALL_THICKNESS_M, front_marks: bool = True,
                   geometry: str = "box", library: AssetLibrary | None = None) -> SceneGeometry:
    """Boxes and floors of the whole scene, in the scene frame (see the module docstring),
    and at the ``procedural`` and ``mesh`` levels the objects' meshes (without front
    bands: the shapes show their fronts). Inside
    :func:`~buildbench.scenes.views.settled.settled_scene` for this scene, built once per
    set of arguments."""
    if library is not None:  # a caller's own library: not kept (its identity says nothing of its content)
        return _build_geometry(scene, wall_thickness_m, front_marks, geometry, library)
    return settled_geometry(scene, (wall_thickness_m, front_marks, geometry),
                            lambda: _build_geometry(scene, wall_thickness_m, front_marks, geometry, None))


def _build_geometry(scene: Scene, wall_thickness_m: float, front_marks: bool, geometry: str,
                    library: AssetLibrary | None) -> SceneGeometry:
    if not (np.isfinite(wall_thickness_m) and 0.0 < wall_thickness_m < 2.0):
        raise ViewInputError(f"wall_thickness_m must be in (0, 2) metres, got {wall_thickness_m}")
    meshes = mesh_source(scene, geometry, library)
    _check_finite(scene)
    sides = WallSides(scene)
    holes = [world_hole(scene, op) for op in scene.openings()]
    parts = [object_boxes(scene, front_marks=front_marks and meshes is None)]
    parts += [wall_boxes(w, holes, sides, wall_thickness_m) for w in scene.walls if not w.empty]
    parts += [opening_boxes(scene, op, sides, wall_thickness_m) for op in scene.openings()]
    floors = tuple(
        FloorSlab(r.id, np.asarray(r.vertices, dtype=float), r.floor_y, colors.floor_rgb(r))
        for r in scene.rooms if len(r.vertices) >= 3
    )
    return SceneGeometry(concat_boxes(parts), floors, meshes)


def _check_finite(scene: Scene) -> None:
    """Refuse NaN or infinite room, wall and opening coordinates, naming the element."""
    for room in scene.rooms:
        if not np.all(np.isfinite(np.asarray(room.vertices, float))) or not np.isfinite(room.floor_y):
            raise ViewInputError(f"room {room.id!r}: vertices or floor_y are not finite")
    for wall in scene.walls:
        if not np.all(np.isfinite([*wall.start, *wall.end, wall.height_m, wall.bottom_y])):
            raise ViewInputError(f"wall {wall.id!r}: start, end, height or bottom is not finite")
    for op in scene.openings():
        if not np.all(np.isfinite([*op.hole_min, *op.hole_max])):
            raise ViewInputError(f"{op.kind} {op.id!r}: hole polygon is not finite")


def object_boxes(scene: Scene, *, front_marks: bool = True) -> BoxSet:
    """One box per object, plus its front band when ``front_marks``."""
    objs = scene.objects
    if not objs:
        return _empty_boxes()
    quats = np.array([o.rotation_xyzw for o in objs], dtype=float)
    centers = np.array([o.center for o in objs], dtype=float)
    sizes = np.array([o.size for o in objs], dtype=float)
    for name, values in (("rotation", quats), ("center", centers), ("size", sizes)):
        bad = np.flatnonzero(~np.all(np.isfinite(values), axis=1))
        if bad.size:
            raise ViewInputError(f"object {objs[bad[0]].id!r}: {name} is not finite")
    bad = np.flatnonzero(np.any(sizes < 0, axis=1) | (np.linalg.norm(quats, axis=1) == 0))
    if bad.size:
        raise ViewInputError(f"object {objs[bad[0]].id!r}: negative size or zero rotation quaternion")
    rotations = rotation_from_quat_xyzw(quats).reshape(-1, 3, 3)
    rgb = np.array([colors.object_rgb(o) for o in objs])
    ids = tuple(o.id for o in objs)
    body = BoxSet(ids, ("object",) * len(objs), centers, rotations, sizes, rgb)
    if not front_marks:
        return body
    return concat_boxes([body, _front_marks(body)])


def _front_marks(body: BoxSet) -> BoxSet:
    """A dark band over the top 15 % of each front face, standing 1 mm proud of the front
    and the top so that it shows from the front and, as a line, from above."""
    sx, sy, sz = body.sizes.T
    depth = np.minimum(0.04, 0.1 * sz)
    band_h = 0.15 * sy
    local = np.c_[np.zeros_like(sx), (sy - band_h) / 2.0 + 0.001, (sz - depth) / 2.0 + 0.001]
    centers = body.centers + np.einsum("nij,nj->ni", body.rotations, local)
    sizes = np.c_[sx, band_h, depth]
    return BoxSet(body.owners, ("mark",) * len(body), centers, body.rotations, sizes, body.colors * 0.45)


class WallSides:
    """Which side of its segment each wall record covers, from the room polygons."""

    def __init__(self, scene: Scene):
        self._rooms = {r.id: Polygon(r.vertices) for r in scene.rooms if len(r.vertices) >= 3}
        for poly in self._rooms.values():
            shapely.prepare(poly)

    def normal(self, wall: Wall) -> tuple[float, float]:
        """Unit ``(x, z)`` normal pointing to the side this record covers: into its room,
        or away from every room for an exterior side."""
        dx, dz = wall.direction_xz
        n = (-dz, dx)
        mx, mz = (wall.start[0] + wall.end[0]) / 2.0, (wall.start[1] + wall.end[1]) / 2.0
        x, z = mx + _SIDE_PROBE_M * n[0], mz + _SIDE_PROBE_M * n[1]
        room = self._rooms.get(wall.room_id)
        if room is not None and not wall.exterior and wall.room_id != EXTERIOR:
            return n if shapely.contains_xy(room, x, z) else (-n[0], -n[1])
        inside_any = any(shapely.contains_xy(p, x, z) for p in self._rooms.values())
        return (-n[0], -n[1]) if inside_any else n

    def room_polygon(self, room_id: str) -> Polygon | None:
        return self._rooms.get(room_id)


class WorldHole(NamedTuple):
    """A door or window hole: its two ends on the floor plan and its heights above the
    floor of the wall that hosts it (metres)."""

    start_xz: tuple[float, float]
    end_xz: tuple[float, float]
    up0: float
    up1: float
    base_y: float


def world_hole(scene: Scene, op: Opening) -> WorldHole:
    try:
        host = scene.wall(op.wall0)
    except KeyError:
        raise ViewInputError(f"{op.kind} {op.id!r}: wall0 {op.wall0!r} is not a wall of the scene") from None
    a0, a1 = sorted((op.hole_min[0], op.hole_max[0]))
    up0, up1 = sorted((op.hole_min[1], op.hole_max[1]))
    return WorldHole(host.point_at(a0), host.point_at(a1), up0, up1, host.bottom_y)


def wall_boxes(wall: Wall, holes: Iterable[WorldHole], sides: WallSides, thickness_m: float) -> BoxSet:
    """The wall record as half-thickness slab pieces around the holes that lie on it.

    Each end is stretched by half the thickness so that corners close.
    """
    length = wall.width_m
    if length <= 1e-6 or wall.height_m <= 0:
        return _empty_boxes()
    half_t = thickness_m / 2.0
    on_wall = [h for hole in holes if (h := hole_on_wall(hole, wall)) is not None]
    pieces = subtract_rects((-half_t, length + half_t, 0.0, wall.height_m), on_wall)
    if not pieces:
        return _empty_boxes()
    n = sides.normal(wall)
    u = wall.direction_xz
    rot = yaw_rotation(n)
    p = np.array(pieces)
    mid_along, mid_up = (p[:, 0] + p[:, 1]) / 2.0, (p[:, 2] + p[:, 3]) / 2.0
    x = wall.start[0] + u[0] * mid_along + n[0] * half_t / 2.0
    z = wall.start[1] + u[1] * mid_along + n[1] * half_t / 2.0
    centers = np.c_[x, wall.bottom_y + mid_up, z]
    sizes = np.c_[p[:, 1] - p[:, 0], p[:, 3] - p[:, 2], np.full(len(p), half_t)]
    k = len(p)
    return BoxSet((wall.id,) * k, ("wall",) * k, centers, np.repeat(rot[None], k, 0), sizes,
                  np.repeat([colors.wall_rgb(wall)], k, 0))


def hole_on_wall(hole: WorldHole, wall: Wall) -> tuple[float, float, float, float] | None:
    """The hole as ``(along0, along1, up0, up1)`` on ``wall`` if it lies on that wall's
    segment (whichever record of the wall the opening names), else None."""
    (sx, sz), (ux, uz) = wall.start, wall.direction_xz
    along, off = [], []
    for px, pz in (hole.start_xz, hole.end_xz):
        rx, rz = px - sx, pz - sz
        along.append(rx * ux + rz * uz)
        off.append(abs(rz * ux - rx * uz))
    if max(off) > _ON_WALL_TOL_M or max(along) < 0 or min(along) > wall.width_m:
        return None
    shift = hole.base_y - wall.bottom_y
    return (min(along), max(along), hole.up0 + shift, hole.up1 + shift)


def subtract_rects(outer: tuple[float, float, float, float],
                   holes: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """Cover ``outer`` minus the ``holes`` (all ``(x0, x1, y0, y1)``) with disjoint rectangles:
    vertical strips between hole edges, each cut where holes cross it."""
    x0, x1, y0, y1 = outer
    xs = sorted({x0, x1, *(min(max(v, x0), x1) for h in holes for v in h[:2])})
    out = []
    for a, b in zip(xs, xs[1:], strict=False):
        if b - a <= 1e-9:
            continue
        cuts = sorted((h[2], h[3]) for h in holes if h[0] <= a + 1e-9 and h[1] >= b - 1e-9)
        y = y0
        for c0, c1 in cuts:
            if c0 > y + 1e-9:
                out.append((a, b, y, min(c0, y1)))
            y = max(y, c1)
        if y < y1 - 1e-9:
            out.append((a, b, y, y1))
    return [r for r in out if r[3] - r[2] > 1e-9]


def opening_boxes(scene: Scene, op: Opening, sides: WallSides, thickness_m: float) -> BoxSet:
    """A door's frame (two jambs and a head) or a window's frame and pane, in its hole."""
    host = scene.wall(op.wall0)
    a0, a1 = sorted((op.hole_min[0], op.hole_max[0]))
    h0, h1 = sorted((op.hole_min[1], op.hole_max[1]))
    fw = min(FRAME_WIDTH_M, (a1 - a0) / 4.0, (h1 - h0) / 4.0)
    if fw <= 0:
        return _empty_boxes()
    depth = thickness_m + 0.02
    # (along centre, up centre, along size, up size, depth) of each member
    members = [(a0 + fw / 2, (h0 + h1) / 2, fw, h1 - h0, depth), (a1 - fw / 2, (h0 + h1) / 2, fw, h1 - h0, depth),
               ((a0 + a1) / 2, h1 - fw / 2, a1 - a0, fw, depth)]
    rgb = [colors.DOOR_FRAME_RGB] * 3
    if op.kind == "window":
        members += [((a0 + a1) / 2, h0 + fw / 2, a1 - a0, fw, depth),
                    ((a0 + a1) / 2, (h0 + h1) / 2, a1 - a0 - 2 * fw, h1 - h0 - 2 * fw, 0.01)]
        rgb = [colors.WINDOW_FRAME_RGB] * 4 + [colors.WINDOW_PANE_RGB]
    m = np.array(members)
    u = host.direction_xz
    x = host.start[0] + u[0] * m[:, 0]
    z = host.start[1] + u[1] * m[:, 0]
    centers = np.c_[x, host.bottom_y + m[:, 1], z]
    rot = yaw_rotation(sides.normal(host))
    k = len(m)
    return BoxSet((op.id,) * k, (op.kind,) * k, centers, np.repeat(rot[None], k, 0), m[:, 2:5],
                  np.array(rgb, dtype=float))


def floor_mesh(floor: FloorSlab, frame: Frame, thickness_m: float) -> TriangleMesh | None:
    """The floor polygon as a slab ``thickness_m`` deep below the floor level (two-sided)."""
    poly = Polygon(floor.vertices_xz)
    if not poly.is_valid or poly.area <= 0:
        return None
    tris = [np.asarray(t.exterior.coords)[:3] for t in shapely.constrained_delaunay_triangles(poly).geoms]
    if not tris:
        return None
    top = np.array(tris)  # (k, 3, 2)
    ring = np.asarray(poly.exterior.coords)
    y_top, y_bot = floor.floor_y, floor.floor_y - thickness_m
    faces_xyz = [np.dstack([top[..., 0], np.full(top.shape[:2], y), top[..., 1]]) for y in (y_top, y_bot)]
    a, b = ring[:-1], ring[1:]
    quad = np.stack([np.c_[a[:, 0], np.full(len(a), y_top), a[:, 1]], np.c_[b[:, 0], np.full(len(a), y_top), b[:, 1]],
                     np.c_[b[:, 0], np.full(len(a), y_bot), b[:, 1]], np.c_[a[:, 0], np.full(len(a), y_bot), a[:, 1]]], 1)
    sides = np.concatenate([quad[:, [0, 1, 2]], quad[:, [0, 2, 3]]])
    tri_xyz = np.concatenate([*faces_xyz, sides])
    vertices = frame.points(tri_xyz.reshape(-1, 3))
    faces = np.arange(len(vertices)).reshape(-1, 3)
    return TriangleMesh(vertices, faces, np.asarray(floor.rgb))


def element_box(scene: Scene, element_id: str, *, wall_thickness_m: float = 0.2, where: str = "view") -> ElementBox:
    """The oriented box of an object, door, window or wall side, and the way it faces:
    an object its front; a wall, door or window into its room. Walls are slabs
    ``wall_thickness_m`` thick centred on the segment."""
    kind = scene.kind_of(element_id)
    if kind == "object":
        obj = scene.object(element_id)
        return ElementBox(obj.id, kind, np.asarray(obj.center, float), obj.rotation,
                          np.asarray(obj.size, float), obj.front_xz)
    sides = WallSides(scene)
    if kind == "wall":
        wall = scene.wall(element_id)
        n = sides.normal(wall)
        mid = wall.point_at(wall.width_m / 2.0)
        center = np.array([mid[0], wall.bottom_y + wall.height_m / 2.0, mid[1]])
        return ElementBox(wall.id, kind, center, yaw_rotation(n),
                          np.array([wall.width_m, wall.height_m, wall_thickness_m]), n)
    if kind in ("door", "window"):
        op = scene.door(element_id) if kind == "door" else scene.window(element_id)
        n = opening_facing(scene, op, sides)
        depth = WALL_THICKNESS_M + 0.02
        return ElementBox(op.id, kind, np.asarray(scene.opening_center(op), float), yaw_rotation(n),
                          np.array([op.width_m, op.height_m, depth]), n)
    known = "a room" if kind == "room" else "not an object, door, window or wall of the scene"
    raise ViewInputError(f"{where}: id {element_id!r} is {known}")


def opening_facing(scene: Scene, op: Opening, sides: WallSides) -> tuple[float, float]:
    """Into the room a door or window belongs to: the side of its first wall record that
    faces a room (room0's side for a door between two rooms)."""
    for wall_id in (op.wall0, op.wall1):
        if wall_id is None:
            continue
        try:
            wall = scene.wall(wall_id)
        except KeyError:
            continue
        if not wall.exterior and wall.room_id != EXTERIOR:
            return sides.normal(wall)
    wall0 = scene.wall(op.wall0)
    nx, nz = sides.normal(wall0)
    return (-nx, -nz)
