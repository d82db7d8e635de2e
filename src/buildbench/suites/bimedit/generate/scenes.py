"""Seeded procedural IFC scenes: small substructures and multi-storey house-like buildings.

Both scene kinds come from one grid layout: per storey, a rectangle split into
``nx × ny`` rooms by axis-aligned wall segments (one ``IfcWall`` per grid edge),
walls path-connected where they meet, one space per room bounded by its four walls
and its floor slab, doors along a seeded spanning tree of the rooms (plus one
entrance), windows in exterior walls, columns at grid nodes; every element has a
material, a common property set and base quantities. The paper's synthetic scenes
average 21 elements / 99 relations and its realistic ones 615 / 2,089 (paper section
3, "Scene complexity"); the presets land near them: SIMPLE has 25 elements (openings
included) and ~84 relationship entities, COMPLEX (3 storeys of 6 × 4 rooms) ~590
elements and ~1,830 relationships.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import ifcopenshell
import ifcopenshell.util.unit
import numpy as np

from buildbench.suites.bimedit.generate.builder import IfcBuilder, Point2, frame_matrix


@dataclass(frozen=True)
class GridLayout:
    """Parameters of a grid building (metres).

    Attributes:
        nx: rooms along x per storey.
        ny: rooms along y per storey.
        storeys: number of storeys.
        column_every: put a column on every n-th grid node (1 = all nodes, 0 = corners only).
        windows_per_long_wall: windows in an exterior wall segment longer than 4 m.
    """

    nx: int
    ny: int
    storeys: int
    column_every: int
    windows_per_long_wall: int


SIMPLE = GridLayout(nx=2, ny=1, storeys=1, column_every=0, windows_per_long_wall=1)
COMPLEX = GridLayout(nx=6, ny=4, storeys=3, column_every=1, windows_per_long_wall=2)


@dataclass(frozen=True)
class SceneInfo:
    """What a scene file contains.

    Attributes:
        path: where the IFC file is.
        kind: "simple", "complex" or "real".
        schema: the IFC schema identifier.
        unit_scale_m: metres per model length unit.
        n_elements: number of ``IfcElement`` instances (openings included).
        n_relations: number of ``IfcRelationship`` instances.
        seed: the generator seed (None for loaded real models).
    """

    path: Path
    kind: str
    schema: str
    unit_scale_m: float
    n_elements: int
    n_relations: int
    seed: int | None


@dataclass(frozen=True)
class _Wall:
    entity: ifcopenshell.entity_instance
    frame: np.ndarray
    length_m: float
    thickness_m: float
    external: bool


def _cuts(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    """Cumulative grid coordinates for ``n`` bays whose widths are drawn in [lo, hi] (0.05 m steps)."""
    widths = np.round(rng.uniform(lo, hi, size=n) / 0.05) * 0.05
    return np.concatenate([[0.0], np.cumsum(widths)])


def _room_tree(rng: np.random.Generator, nx: int, ny: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """A seeded random spanning tree over the room grid (randomised Prim), as room pairs."""
    start = (int(rng.integers(nx)), int(rng.integers(ny)))
    seen = {start}
    frontier = [(start, nb) for nb in _neighbours(start, nx, ny)]
    edges = []
    while frontier:
        a, b = frontier.pop(int(rng.integers(len(frontier))))
        if b in seen:
            continue
        seen.add(b)
        edges.append((a, b))
        frontier.extend((b, nb) for nb in _neighbours(b, nx, ny) if nb not in seen)
    return edges


def _neighbours(room: tuple[int, int], nx: int, ny: int) -> list[tuple[int, int]]:
    i, j = room
    cand = [(i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)]
    return [(a, b) for a, b in cand if 0 <= a < nx and 0 <= b < ny]


def build_grid_model(layout: GridLayout, seed: int, *, unit: str = "m", schema: str = "IFC4") -> ifcopenshell.file:
    """Build a grid building for ``layout``; the same arguments give the same bytes.

    Args:
        layout: grid size and element densities.
        seed: drives bay sizes, wall thickness, storey height, door and window positions.
        unit: "m" or "mm" model length unit.
        schema: "IFC4" or "IFC2X3".
    """
    rng = np.random.default_rng(seed)
    b = IfcBuilder(schema=schema, unit=unit)
    xs = _cuts(rng, layout.nx, 3.0, 5.5)
    ys = _cuts(rng, layout.ny, 3.0, 5.0)
    height = float(np.round(rng.uniform(2.6, 3.2), 2))
    slab_depth = 0.2
    t_ext = float(rng.choice([0.24, 0.3, 0.365]))
    t_int = float(rng.choice([0.1, 0.115, 0.175]))
    tree = _room_tree(rng, layout.nx, layout.ny)
    entrance_room = (int(rng.integers(layout.nx)), 0)
    outline = [Point2(xs[0], ys[0]), Point2(xs[-1], ys[0]), Point2(xs[-1], ys[-1]), Point2(xs[0], ys[-1])]
    for s in range(layout.storeys):
        z = s * (height + slab_depth)
        storey = b.storey("Ground floor" if s == 0 else f"Level {s}", z)
        floor = b.slab(storey, z, outline, depth_m=slab_depth, name=f"Floor {s}")
        walls = _grid_walls(b, storey, z, xs, ys, height, t_ext, t_int, s)
        _connect_grid(b, walls, layout)
        _grid_spaces(b, storey, z, xs, ys, height, walls, floor, s)
        _grid_doors(b, rng, storey, walls, tree, entrance_room if s == 0 else None, height, s)
        _grid_windows(b, rng, storey, walls, layout, s)
        _grid_columns(b, storey, z, xs, ys, layout, height, t_ext, s)
    top = layout.storeys * (height + slab_depth)
    roof_storey = b.file.by_type("IfcBuildingStorey")[-1]
    b.slab(roof_storey, top, outline, depth_m=slab_depth, name="Roof", roof=True)
    return b.finish(seed)


def _grid_walls(b: IfcBuilder, storey: ifcopenshell.entity_instance, z: float, xs: np.ndarray, ys: np.ndarray,
                height: float, t_ext: float, t_int: float, s: int) -> dict[tuple, _Wall]:
    """One wall per grid edge, keyed ("h", i, j) for x-running and ("v", i, j) for y-running walls."""
    walls: dict[tuple, _Wall] = {}
    nx, ny = len(xs) - 1, len(ys) - 1
    for j in range(ny + 1):
        for i in range(nx):
            ext = j in (0, ny)
            p1, p2 = Point2(xs[i], ys[j]), Point2(xs[i + 1], ys[j])
            walls[("h", i, j)] = _make_wall(b, storey, z, p1, p2, height, t_ext if ext else t_int, ext,
                                            f"Wall S{s} H{i}.{j}")
    for i in range(nx + 1):
        for j in range(ny):
            ext = i in (0, nx)
            p1, p2 = Point2(xs[i], ys[j]), Point2(xs[i], ys[j + 1])
            walls[("v", i, j)] = _make_wall(b, storey, z, p1, p2, height, t_ext if ext else t_int, ext,
                                            f"Wall S{s} V{i}.{j}")
    return walls


def _make_wall(b: IfcBuilder, storey: ifcopenshell.entity_instance, z: float, p1: Point2, p2: Point2,
               height: float, thickness: float, external: bool, name: str) -> _Wall:
    ent = b.wall(storey, z, p1, p2, thickness_m=thickness, height_m=height, name=name, external=external)
    frame = frame_matrix((p1.x, p1.y, z), (p2.x - p1.x, p2.y - p1.y))
    return _Wall(ent, frame, float(np.hypot(p2.x - p1.x, p2.y - p1.y)), thickness, external)


def _connect_grid(b: IfcBuilder, walls: dict[tuple, _Wall], layout: GridLayout) -> None:
    """Path-connect the walls meeting at each grid node.

    ``geometry.connect_path`` keeps one connection per wall end, so: collinear walls join
    end to start; a wall ending on a straight run (a T) joins that run ATPATH; two
    lone ends (a corner) join each other. At a crossing only the two runs are joined.
    """
    for i in range(layout.nx + 1):
        for j in range(layout.ny + 1):
            west, east = walls.get(("h", i - 1, j)), walls.get(("h", i, j))
            south, north = walls.get(("v", i, j - 1)), walls.get(("v", i, j))
            if west and east:
                b.connect(west.entity, "ATEND", east.entity, "ATSTART")
            if south and north:
                b.connect(south.entity, "ATEND", north.entity, "ATSTART")
            lone_h = _lone_end(west, east)
            lone_v = _lone_end(south, north)
            if west and east and lone_v:
                b.connect(west.entity, "ATPATH", *lone_v)
            elif south and north and lone_h:
                b.connect(south.entity, "ATPATH", *lone_h)
            elif lone_h and lone_v:
                b.connect(*lone_h, *lone_v)


def _lone_end(before: _Wall | None, after: _Wall | None) -> tuple[ifcopenshell.entity_instance, str] | None:
    """The single wall end at a node on one axis (the wall ending there or the one starting there)."""
    if before and not after:
        return before.entity, "ATEND"
    if after and not before:
        return after.entity, "ATSTART"
    return None


def _room_walls(i: int, j: int) -> list[tuple]:
    return [("h", i, j), ("v", i + 1, j), ("h", i, j + 1), ("v", i, j)]


def _grid_spaces(b: IfcBuilder, storey: ifcopenshell.entity_instance, z: float, xs: np.ndarray,
                 ys: np.ndarray, height: float, walls: dict[tuple, _Wall],
                 floor: ifcopenshell.entity_instance, s: int) -> None:
    """One space per room, inset to the wall faces, bounded by its four walls and the floor slab."""
    for j in range(len(ys) - 1):
        for i in range(len(xs) - 1):
            keys = _room_walls(i, j)
            south, east, north, west = (walls[k].thickness_m / 2 for k in keys)
            outline = [Point2(xs[i] + west, ys[j] + south), Point2(xs[i + 1] - east, ys[j] + south),
                       Point2(xs[i + 1] - east, ys[j + 1] - north), Point2(xs[i] + west, ys[j + 1] - north)]
            sp = b.space(storey, z, outline, height_m=height, name=f"S{s}.{i}.{j}",
                         long_name=f"Room {s}.{i}.{j}")
            for k in keys:
                b.bound(sp, walls[k].entity, external=walls[k].external)
            b.bound(sp, floor, external=s == 0)


def _shared_wall(a: tuple[int, int], c: tuple[int, int]) -> tuple:
    (i1, j1), (i2, j2) = a, c
    if j1 == j2:
        return ("v", max(i1, i2), j1)
    return ("h", i1, max(j1, j2))


def _grid_doors(b: IfcBuilder, rng: np.random.Generator, storey: ifcopenshell.entity_instance,
                walls: dict[tuple, _Wall], tree: Sequence[tuple[tuple[int, int], tuple[int, int]]],
                entrance: tuple[int, int] | None, height: float, s: int) -> None:
    """A door in the wall between each pair of tree-adjacent rooms, plus the entrance door."""
    keys = [_shared_wall(a, c) for a, c in tree]
    if entrance is not None:
        keys.append(("h", entrance[0], 0))
    for n, key in enumerate(keys):
        w = walls[key]
        width = float(rng.choice([0.8, 0.9, 1.0]))
        along = float(np.round(rng.uniform(0.4, w.length_m - width - 0.4), 2))
        b.filling(storey, w.entity, hostframe_matrix=w.frame, host_thickness_m=w.thickness_m, kind="door",
                  along_m=along, sill_m=0.0, width_m=width, height_m=min(2.1, height - 0.3),
                  name=f"Door S{s}.{n}", external=w.external)


def _grid_windows(b: IfcBuilder, rng: np.random.Generator, storey: ifcopenshell.entity_instance,
                  walls: dict[tuple, _Wall], layout: GridLayout, s: int) -> None:
    """Windows in exterior walls that have no door: one each, more in long walls."""
    n = 0
    for w in walls.values():
        if not w.external or w.entity.HasOpenings:
            continue
        count = layout.windows_per_long_wall if w.length_m > 4.0 else 1
        width = float(rng.choice([0.8, 1.0, 1.2]))
        gap = (w.length_m - count * width) / (count + 1)
        if gap < 0.3:
            continue
        for k in range(count):
            along = gap + k * (width + gap)
            b.filling(storey, w.entity, hostframe_matrix=w.frame, host_thickness_m=w.thickness_m, kind="window",
                      along_m=float(np.round(along, 3)), sill_m=0.9, width_m=width, height_m=1.2,
                      name=f"Window S{s}.{n}", external=True)
            n += 1


def _grid_columns(b: IfcBuilder, storey: ifcopenshell.entity_instance, z: float, xs: np.ndarray,
                  ys: np.ndarray, layout: GridLayout, height: float, t_ext: float, s: int) -> None:
    """Columns at grid nodes: the two south corners (column_every=0) or every n-th node."""
    nodes = [(i, j) for i in range(len(xs)) for j in range(len(ys))]
    if layout.column_every == 0:
        chosen = [(0, 0), (len(xs) - 1, 0)]
    else:
        chosen = nodes[:: layout.column_every]
    size = round(t_ext + 0.06, 3)
    for i, j in chosen:
        b.column(storey, z, Point2(xs[i], ys[j]), size_m=size, height_m=height, name=f"Column S{s}.{i}.{j}")


def scene_info(path: str | Path, *, kind: str, seed: int | None = None) -> SceneInfo:
    """Open an IFC file and count what it holds.

    Raises:
        ValueError: if the file cannot be read as IFC.
    """
    p = Path(path)
    try:
        f = ifcopenshell.open(str(p))
    except Exception as exc:  # ifcopenshell raises several types for unreadable files
        raise ValueError(f"cannot read IFC file {p}: {exc}") from exc
    return SceneInfo(path=p, kind=kind, schema=f.schema, unit_scale_m=ifcopenshell.util.unit.calculate_unit_scale(f),
                     n_elements=len(f.by_type("IfcElement")), n_relations=len(f.by_type("IfcRelationship")),
                     seed=seed)


def write_scene(kind: str, seed: int, out_dir: str | Path, *, unit: str = "m", schema: str = "IFC4") -> SceneInfo:
    """Generate a "simple" or "complex" scene and write it to ``out_dir``.

    The file name encodes all arguments, e.g. ``simple-s3-m-IFC4.ifc``.
    """
    layouts = {"simple": SIMPLE, "complex": COMPLEX}
    if kind not in layouts:
        raise ValueError(f"scene kind must be 'simple' or 'complex', got {kind!r}")
    model = build_grid_model(layouts[kind], seed, unit=unit, schema=schema)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{kind}-s{seed}-{unit}-{schema}.ifc"
    model.write(str(path))
    return scene_info(path, kind=kind, seed=seed)


def load_real_scene(path: str | Path) -> SceneInfo:
    """Describe a real building model (e.g. one of the shared IFC files) as a complex scene."""
    return scene_info(path, kind="real")
