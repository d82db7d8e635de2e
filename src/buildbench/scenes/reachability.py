"""Can a person walk from a room's doors to every piece of furniture in it?

The floor is rasterised into an occupancy grid of ``cell_m`` squares. A walker is a disc of
radius ``clearance_m``, so a cell is free when its centre is at least ``clearance_m`` from
every wall and every obstacle's footprint (configuration space). Door holes are cut
through the walls: the free space continues ``2 * clearance_m`` past each door, so a door
narrower than ``2 * clearance_m`` lets nobody through. Free cells are grouped into
4-connected components (:func:`scipy.ndimage.label`).

* **Obstacles**: objects standing on the floor (no ``parent_id``, bottom within
  :data:`OBSTACLE_MAX_BOTTOM_M` of the floor) taller than a rug
  (:data:`FLOOR_COVERING_MAX_M`). Wall-mounted and ceiling objects are passed under.
* **Main region**: the free component holding the most cells of the room's own floor.
* **Open walls**: an empty (invisible) wall, the boundary to the next room of an open
  floor plan, is an entrance like a door spanning the whole wall: the free space continues
  ``2 * clearance_m`` past it, and floor obstacles of the neighbouring room standing in
  that strip count too (a sofa backed onto the open boundary closes it).
* A door or open wall is reachable when its free cells beyond the wall belong to the
  main region.
* An object is reachable when some free cell of the main region lies within
  :data:`ACCESS_REACH_M` of its footprint's edge, and the room has no entrance (a
  single-room SceneReVis scene) or at least one reachable door or open wall;
  :attr:`Reachability.sides` lists which of its sides (front, back, left, right, in the
  object's own frame) can be stood at.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import shapely
from numpy.typing import NDArray
from scipy import ndimage
from shapely.geometry import Polygon

from buildbench.scenes.collision import FLOOR_COVERING_MAX_M
from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import SceneIndex, index_of

#: Radius of the walker, metres: half a shoulder width plus a little.
CLEARANCE_M = 0.25
#: Grid cell edge, metres.
CELL_M = 0.05
#: How far beyond the walker's clearance an object can be reached from, metres.
ACCESS_REACH_M = 0.15
#: Objects whose bottom is higher than this above the floor, metres, are walked under.
OBSTACLE_MAX_BOTTOM_M = 0.5
# The largest grid allowed (cells), so a malformed huge room fails with a message.
_MAX_CELLS = 4_000_000


@dataclass(frozen=True)
class Reachability:
    """The walkable floor of one room and what can be reached on it.

    Attributes:
        room_id: The room.
        doors: Its doors (all of them, reachable or not).
        unreachable_doors: Doors whose far side does not join the main region
            (blocked, or narrower than two clearances).
        open_walls, unreachable_open_walls: The room's empty walls (entrances from the
            rest of its open floor plan), all of them and those whose far side does not
            join the main region.
        reachable_objects, unreachable_objects: Floor obstacles of the room, by id.
        sides: For each reachable object, the sides a walker can stand at.
        explanation: One line per problem, naming full ids, or a line saying all is well.
        free_share: Share of the room's floor cells the walker's centre can occupy.
        free_mask: ``(rows, cols)`` booleans, row = z, column = x; cell ``(r, c)`` has
            centre ``origin_xz + ((c + 0.5) * cell_m, (r + 0.5) * cell_m)``.
        origin_xz: Lower-left corner of the grid, metres.
        entrance_free_share: For each door and open wall, the share of the room's free
            floor cells (those the walker's centre can occupy) joined to its far side.
        connected_share: Share of the room's free floor cells joined to the far side of at
            least one entrance; for a room without entrances, the share in its main region.
    """

    room_id: str
    doors: tuple[str, ...]
    unreachable_doors: tuple[str, ...]
    reachable_objects: tuple[str, ...]
    unreachable_objects: tuple[str, ...]
    sides: dict[str, tuple[str, ...]]
    explanation: str
    free_share: float
    cell_m: float
    clearance_m: float
    free_mask: NDArray[np.bool_] = field(repr=False)
    origin_xz: tuple[float, float] = (0.0, 0.0)
    open_walls: tuple[str, ...] = ()
    unreachable_open_walls: tuple[str, ...] = ()
    entrance_free_share: dict[str, float] = field(default_factory=dict)
    connected_share: float = 0.0

    @property
    def ok(self) -> bool:
        """Every door, open wall and floor object can be reached."""
        return not self.unreachable_doors and not self.unreachable_open_walls and not self.unreachable_objects


def reachable(scene: Scene, room_id: str, *, clearance_m: float = CLEARANCE_M, cell_m: float = CELL_M,
              reach_m: float = ACCESS_REACH_M) -> Reachability:
    """Reachability of ``room_id``'s doors and floor objects (see the module docstring)."""
    for name, value in (("clearance_m", clearance_m), ("cell_m", cell_m), ("reach_m", reach_m)):
        if not math.isfinite(value) or value < 0 or (name == "cell_m" and value <= 0):
            raise ValueError(f"reachable: {name} must be a finite {'positive' if name == 'cell_m' else 'non-negative'}"
                             f" number of metres, got {value!r}")
    index = index_of(scene)
    scene.room(room_id)  # raises naming the known rooms
    room = index.rooms[room_id]
    doors = [d.id for d in scene.doors if room_id in (d.room0, d.room1)]
    open_walls = [w.id for w in scene.walls_of(room_id) if w.empty]
    entrances = doors + open_walls
    zones = {e: _passage(index, scene, e, clearance_m) for e in entrances}
    walkable = shapely.union_all([room.polygon, *[z for z in zones.values() if z is not None]])
    lo_x, lo_z, hi_x, hi_z = walkable.bounds
    cols, rows = math.ceil((hi_x - lo_x) / cell_m), math.ceil((hi_z - lo_z) / cell_m)
    if rows * cols > _MAX_CELLS:
        raise ValueError(f"reachable: room {room_id!r} needs {rows * cols} cells at {cell_m} m; use a larger cell_m")
    xs = lo_x + (np.arange(cols) + 0.5) * cell_m
    zs = lo_z + (np.arange(rows) + 0.5) * cell_m
    gx, gz = np.meshgrid(xs, zs)
    shell = walkable.buffer(-clearance_m) if clearance_m > 0 else walkable
    shapely.prepare(shell)
    free = shapely.contains_xy(shell, gx, gz)
    obstacles = _obstacles(index, room_id, room.floor_y)
    blockers = obstacles + _neighbours_in(index, [zones[w] for w in open_walls], room_id, room.floor_y)
    # Each obstacle only matters within clearance + reach of its footprint: measure there.
    margin = clearance_m + reach_m + 2 * cell_m
    windows = {k: _window(index, k, margin, (lo_x, lo_z), cell_m, free.shape) for k in blockers}
    gaps = {k: _box_floor_distance(index, k, gx[w], gz[w]) for k, w in windows.items()}
    for k, w in windows.items():
        free[w] &= gaps[k] >= clearance_m
    labels, _ = ndimage.label(free)
    floor = shapely.Polygon(room.polygon)  # a private copy to prepare (the index's is shared)
    shapely.prepare(floor)
    in_room = shapely.contains_xy(floor, gx, gz)
    region = _main_region(labels, in_room)
    found = {e: _labels_in(labels, gx, gz, zones[e], room.polygon) for e in entrances}
    closed = [e for e in entrances if not region or region not in found[e]]
    unreachable_doors = tuple(d for d in doors if d in closed)
    unreachable_open = tuple(w for w in open_walls if w in closed)
    entered = region and (not entrances or len(closed) < len(entrances))
    reach = (labels == region) if entered else np.zeros_like(free)
    reachable_ids, unreachable_ids, sides = [], [], {}
    for k in obstacles:
        w, gap = windows[k], gaps[k]
        ring = reach[w] & (gap >= clearance_m) & (gap <= clearance_m + reach_m + cell_m)
        if ring.any():
            reachable_ids.append(index.object_ids[k])
            sides[index.object_ids[k]] = _sides(index, k, gx[w][ring], gz[w][ring])
        else:
            unreachable_ids.append(index.object_ids[k])
    free_share = float((free & in_room).sum() / max(int(in_room.sum()), 1))
    room_labels = labels[free & in_room]
    n_free = max(room_labels.size, 1)
    entrance_share = {e: float(np.isin(room_labels, list(found[e] - {0})).sum() / n_free) for e in entrances}
    joined = set().union(*found.values()) - {0} if entrances else {region} - {0}
    connected = float(np.isin(room_labels, list(joined)).sum() / n_free) if room_labels.size else 0.0
    explanation = _explain(room_id, entrances, closed, open_walls, unreachable_ids, clearance_m, region)
    return Reachability(
        room_id, tuple(doors), unreachable_doors, tuple(reachable_ids), tuple(unreachable_ids),
        sides, explanation, free_share, cell_m, clearance_m, free, (lo_x, lo_z), tuple(open_walls), unreachable_open,
        entrance_share, connected,
    )


def _passage(index: SceneIndex, scene: Scene, entrance_id: str, clearance_m: float) -> Polygon | None:
    """A door's hole, or a whole open wall, swept ``2 * clearance_m`` (plus a cell's worth)
    through the wall, both ways."""
    element = index.element(scene, entrance_id)
    if element.front_xz is None:
        return None
    (x0, z0), (x1, z1) = element.shape.coords
    depth = 2.0 * clearance_m + 0.1
    nx, nz = element.front_xz[0] * depth, element.front_xz[1] * depth
    return Polygon([(x0 - nx, z0 - nz), (x1 - nx, z1 - nz), (x1 + nx, z1 + nz), (x0 + nx, z0 + nz)])


def _obstacles(index: SceneIndex, room_id: str, floor_y: float) -> list[int]:
    return [k for k in range(len(index.object_ids)) if index.object_rooms[k] == room_id and _blocks(index, k, floor_y)]


def _blocks(index: SceneIndex, k: int, floor_y: float) -> bool:
    """Object ``k`` stands on the floor (see the module docstring's obstacles)."""
    return bool(
        index.parents[k] is None
        and index.bottoms[k] - floor_y <= OBSTACLE_MAX_BOTTOM_M
        and index.tops[k] - index.bottoms[k] > FLOOR_COVERING_MAX_M
    )


def _neighbours_in(index: SceneIndex, zones: list[Polygon | None], room_id: str, floor_y: float) -> list[int]:
    """Floor obstacles of other rooms standing in the strips beyond the open walls."""
    strips = [z for z in zones if z is not None]
    if not strips:
        return []
    strip = shapely.union_all(strips)
    return [
        k for k in range(len(index.object_ids))
        if index.object_rooms[k] != room_id and _blocks(index, k, floor_y) and strip.intersects(index.footprints[k])
    ]


def _window(index: SceneIndex, k: int, margin: float, origin: tuple[float, float], cell_m: float,
            shape: tuple[int, ...]) -> tuple[slice, slice]:
    """Rows and columns of the grid within ``margin`` metres of object ``k``'s footprint bounds."""
    x0, z0, x1, z1 = index.footprints[k].bounds
    c0 = max(int((x0 - margin - origin[0]) / cell_m), 0)
    c1 = min(int(math.ceil((x1 + margin - origin[0]) / cell_m)), shape[1])
    r0 = max(int((z0 - margin - origin[1]) / cell_m), 0)
    r1 = min(int(math.ceil((z1 + margin - origin[1]) / cell_m)), shape[0])
    return slice(r0, max(r1, r0)), slice(c0, max(c1, c0))


def _box_floor_distance(index: SceneIndex, k: int, gx: np.ndarray, gz: np.ndarray) -> np.ndarray:
    """Distance, metres, from every grid point to object ``k``'s footprint (0 inside)."""
    footprint = index.footprints[k]
    rot = index.boxes.rotations[k]
    if abs(abs(rot[1, 1]) - 1.0) < 1e-9:  # upright: closed form in the box's own frame
        cx, cz = index.centers_xz[k]
        ax = rot[[0, 2], 0]
        az = rot[[0, 2], 2]
        hx, hz = index.boxes.half_extents[k, 0], index.boxes.half_extents[k, 2]
        dx, dz = gx - cx, gz - cz
        u = np.abs(dx * ax[0] + dz * ax[1]) - hx
        v = np.abs(dx * az[0] + dz * az[1]) - hz
        return np.hypot(np.maximum(u, 0.0), np.maximum(v, 0.0))
    return shapely.distance(footprint, shapely.points(gx, gz))


def _labels_in(labels: np.ndarray, gx: np.ndarray, gz: np.ndarray, zone: Polygon | None,
               room: Polygon) -> set[int]:
    """Component labels of free cells in the door's passage outside the room."""
    if zone is None:
        return set()
    beyond = shapely.difference(zone, room)
    if beyond.is_empty:
        return set()
    x0, z0, x1, z1 = beyond.bounds
    box = (gx >= x0) & (gx <= x1) & (gz >= z0) & (gz <= z1) & (labels > 0)
    inside = shapely.contains_xy(beyond, gx[box], gz[box])
    return set(np.unique(labels[box][inside]).tolist())


def _main_region(labels: np.ndarray, in_room: np.ndarray) -> int:
    """Label of the component with the most free cells on the room's floor (0: none)."""
    counts = np.bincount(labels[in_room], minlength=1)
    counts[0] = 0
    return int(np.argmax(counts)) if counts.max() > 0 else 0


def _sides(index: SceneIndex, k: int, xs: np.ndarray, zs: np.ndarray) -> tuple[str, ...]:
    fx, fz = index.fronts_xz[k]
    cx, cz = index.centers_xz[k]
    dx, dz = xs - cx, zs - cz
    forward, right = dx * fx + dz * fz, dx * fz - dz * fx
    hx, hz = index.boxes.half_extents[k, 0], index.boxes.half_extents[k, 2]
    # Which face a cell looks at: the larger of the two normalised offsets.
    along = np.abs(forward) / max(hz, 1e-6) >= np.abs(right) / max(hx, 1e-6)
    seen = {
        "front": bool((along & (forward > 0)).any()), "back": bool((along & (forward <= 0)).any()),
        "left": bool((~along & (right <= 0)).any()), "right": bool((~along & (right > 0)).any()),
    }
    return tuple(side for side, found in seen.items() if found)


def _explain(room_id: str, entrances: list[str], closed: list[str], open_walls: list[str], bad_objects: list[str],
             clearance_m: float, region: int) -> str:
    """One line per problem; ``entrances`` are the doors and open walls, ``closed`` those
    that do not join the main free area."""
    door_words = "door or open wall" if open_walls else "door"
    lines = []
    if not entrances:
        lines.append(f"{room_id} has no door; reachability is judged from its largest free area")
    elif len(closed) == len(entrances) and bad_objects:
        lines.append(f"no {door_words} opens onto the main free area of {room_id}")
    if not region:
        lines.append(f"{room_id} has no floor a walker of radius {clearance_m:.2f} m can stand on")
    for e in closed:
        what = f"{e} (an empty wall, open to the next room)" if e in open_walls else e
        lines.append(f"{what} cannot be walked through into the main free area of {room_id} "
                     f"(blocked, or narrower than {2 * clearance_m:.2f} m)")
    for o in bad_objects:
        lines.append(f"{o} cannot be reached from {f'the {door_words}s of ' if entrances else ''}{room_id} "
                     f"with {clearance_m:.2f} m clearance")
    if not closed and not bad_objects and region:
        lines.append(f"every {door_words} and floor object of {room_id} is reachable with {clearance_m:.2f} m clearance")
    return "; ".join(lines)
