"""Writing scenes' placed meshes to files anyone can open (``buildbench scenes export``).

One folder per scene, ``<4-digit input position>_<scene id>`` so folders sort in input
order; in it one file per object, ``<zero-padded index in the scene's object list>_<object
id>.<obj|glb>``, in world coordinates (metres, y up), and the room as ``room_floor`` and
``room_walls`` files (names that start with a letter, so object files are exactly those
starting with a digit). OBJ files carry per-vertex colours (a texture is baked to colours);
GLB files keep textures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from buildbench.jsonio import parse_json
from buildbench.scenes import scene_warnings
from buildbench.scenes.assets import AssetLibrary, GeometryLevel, object_mesh
from buildbench.scenes.io import converter_format, detect_format, load_scene, scene_lines
from buildbench.scenes.model import Scene, SceneFormatError
from buildbench.scenes.revis import is_revis

ExportFormat = Literal["obj", "glb"]


@dataclass(frozen=True)
class Exported:
    """One scene written: its folder and, per object, ``{file, id, category, source}`` (the
    mesh's source names any fallback and its reason)."""

    folder: Path
    objects: list[dict[str, str]]

    @property
    def fallbacks(self) -> list[dict[str, str]]:
        return [o for o in self.objects if "(fallback:" in o["source"]]


def safe_name(text: str, limit: int = 80) -> str:
    """``text`` as a file-name part: letters, digits, ``._-``; others become ``_``."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:limit]
    return name or "unnamed"


def scene_documents(path: Path, text: str) -> Iterator[tuple[str, str, Scene | SceneFormatError]]:
    """``(where, scene id, scene or error)`` for each scene in a file's text, in order: each
    line of a JSONL file or the whole document; a ReSpace record's room under ``scene``; each
    house of a list."""
    for number, line in scene_lines(text):
        where = f"{path} line {number}"
        try:
            data = parse_json(line, unique_keys=True)
        except json.JSONDecodeError as exc:
            yield where, "", SceneFormatError(f"{where}: invalid JSON at column {exc.colno}: {exc.msg}")
            continue
        if converter_format(data):  # another generator's file: one line naming the converter
            try:
                detect_format(data)
            except SceneFormatError as exc:
                yield where, "", SceneFormatError(f"{where}: {exc}")
            continue
        items = data if isinstance(data, list) and data and all(isinstance(i, dict) for i in data) else [data]
        for k, item in enumerate(items):
            at = f"{where} item {k}" if len(items) > 1 else where
            # a ReSpace record's room under "scene" (as load_scene finds it); another format's
            # "scene" key (SceneEval's) stays in its document, whose error then names it
            inner = isinstance(item, dict) and isinstance(item.get("scene"), dict) and is_revis(item["scene"])
            record = item["scene"] if inner else item
            # errors and warnings name the record's keys; the file's are its item's and its scene's
            prefix = f"{f'[{k}].' if len(items) > 1 else ''}{'scene.' if inner else ''}"
            in_file = scene_warnings.in_document(str(path), number, line, prefix)
            try:
                with scene_warnings.named(in_file):
                    scene = load_scene(record)
            except SceneFormatError as exc:
                detail = str(exc)
                # "not a scene: ..." is about the whole record, not a key path under it
                named = f"{in_file('')}: {detail}" if detail.startswith("not ") and prefix else in_file(detail)
                yield at, "", SceneFormatError(named)
                continue
            yield at, _scene_id(item, record), scene


def _scene_id(item: Any, record: Any) -> str:
    for source in (record, item):
        if isinstance(source, dict):
            for key in ("room_id", "id", "pth_orig_file", "scene_id", "house_id"):
                value = source.get(key)
                if isinstance(value, str | int) and str(value).strip():
                    return str(value).removesuffix(".json")
    return "scene"


def export_scene(scene: Scene, folder: Path, fmt: ExportFormat, level: GeometryLevel,
                 library: AssetLibrary | None = None) -> Exported:
    """Write ``scene``'s objects and room into ``folder`` (created); see the module docstring."""
    folder.mkdir(parents=True, exist_ok=False)
    width = max(3, len(str(max(len(scene.objects) - 1, 0))))
    written: list[dict[str, str]] = []
    for index, obj in enumerate(scene.objects):
        mesh = object_mesh(obj, level, library=library)
        name = f"{index:0{width}d}_{safe_name(obj.id)}.{fmt}"
        _write(mesh.placed(obj), folder / name, fmt)
        written.append({"file": name, "id": obj.id, "category": obj.category, "source": mesh.source})
    floor, walls = _room_meshes(scene)
    if floor is not None:
        _write(floor, folder / f"room_floor.{fmt}", fmt)
    if walls is not None:
        _write(walls, folder / f"room_walls.{fmt}", fmt)
    return Exported(folder, written)


def _write(mesh: Any, path: Path, fmt: ExportFormat) -> None:
    from trimesh.visual import TextureVisuals

    if fmt == "obj":
        if isinstance(mesh.visual, TextureVisuals):
            mesh = mesh.copy()
            mesh.visual = mesh.visual.to_color()
        data = mesh.export(file_type="obj", include_normals=False, include_color=True, include_texture=False)
        path.write_text(data if isinstance(data, str) else data.decode("utf-8"), encoding="utf-8")
    else:
        path.write_bytes(bytes(mesh.export(file_type="glb")))


def _room_meshes(scene: Scene) -> tuple[Any, Any]:
    """The floors (triangulated polygons at floor height) and the walls (a quad per wall side
    that is a surface: not exterior twins, not the empty walls of open plans)."""
    import shapely
    import trimesh
    from shapely.geometry import Polygon

    floor_parts = []
    for room in scene.rooms:
        polygon = Polygon(room.vertices)
        if not polygon.is_valid or polygon.area <= 0:
            continue
        tris = shapely.constrained_delaunay_triangles(polygon)
        verts: list[list[float]] = []
        faces: list[list[int]] = []
        for tri in getattr(tris, "geoms", []):
            (ax, az), (bx, bz), (cx, cz) = list(tri.exterior.coords)[:3]
            # wind counter-clockwise seen from above (+y): in (x, z) that is clockwise
            if (bx - ax) * (cz - az) - (bz - az) * (cx - ax) > 0:
                (bx, bz), (cx, cz) = (cx, cz), (bx, bz)
            base = len(verts)
            verts += [[ax, room.floor_y, az], [bx, room.floor_y, bz], [cx, room.floor_y, cz]]
            faces.append([base, base + 1, base + 2])
        if faces:
            floor_parts.append(trimesh.Trimesh(np.asarray(verts), np.asarray(faces), process=False,
                                               face_colors=[180, 170, 150, 255]))
    wall_verts: list[list[float]] = []
    wall_faces: list[list[int]] = []
    segments = [(w.start, w.end, w.bottom_y, w.bottom_y + w.height_m) for w in scene.walls
                if not w.exterior and not w.empty]
    if not scene.walls:  # SceneReVis rooms: walls along the floor polygon up to the ceiling
        for room in scene.rooms:
            if room.ceiling_y is not None:
                ring = list(room.vertices)
                segments += [(a, b, room.floor_y, room.ceiling_y) for a, b in zip(ring, ring[1:] + ring[:1], strict=True)]
    for (x0, z0), (x1, z1), y0, y1 in segments:
        base = len(wall_verts)
        wall_verts += [[x0, y0, z0], [x1, y0, z1], [x1, y1, z1], [x0, y1, z0]]
        wall_faces += [[base, base + 1, base + 2], [base, base + 2, base + 3]]
    floor = trimesh.util.concatenate(floor_parts) if floor_parts else None
    walls = (trimesh.Trimesh(np.asarray(wall_verts), np.asarray(wall_faces), process=False,
                             face_colors=[225, 225, 220, 255]) if wall_faces else None)
    return floor, walls
