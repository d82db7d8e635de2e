"""Shared scenes and edited models for the BIM-Edit tests (built once per session)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ifcopenshell
import ifcopenshell.api.root
import ifcopenshell.api.spatial
import ifcopenshell.util.element
import ifcopenshell.util.placement
import pytest

from buildbench.suites.bimedit.generate.builder import Point2
from buildbench.suites.bimedit.generate.edits import (
    builder_for,
    delete_element,
    host_direction,
    move_elements,
    slide_filling,
)
from buildbench.suites.bimedit.generate.scenes import write_scene

SHARED_IFC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "ifc"


@dataclass(frozen=True)
class Case:
    """An input model and named variants of it (ground truths and predictions)."""

    m0: Path
    files: dict[str, Path]
    door: str
    opening: str
    wall: str
    wall_removed: tuple[str, ...]

    def __getitem__(self, name: str) -> Path:
        return self.files[name]


def _variant(m0: Path, out: Path, name: str, edit: Callable[[ifcopenshell.file], object]) -> Path:
    f = ifcopenshell.open(str(m0))
    edit(f)
    path = out / f"{name}.ifc"
    f.write(str(path))
    return path


def add_partition(f: ifcopenshell.file, *, contain: bool = True, connect: bool = True, bound: bool = True,
                  scale: float = 1.0, offset_m: float = 0.0) -> ifcopenshell.entity_instance:
    """A new wall splitting the first room north-south, the way a ground truth would add it."""
    space = sorted(f.by_type("IfcSpace"), key=lambda s: s.Name)[0]
    walls = sorted({b.RelatedBuildingElement for b in space.BoundedBy or ()
                    if b.RelatedBuildingElement.is_a("IfcWall")}, key=lambda w: w.GlobalId)
    storey = ifcopenshell.util.element.get_aggregate(space)
    frames = {w.GlobalId: ifcopenshell.util.placement.get_local_placement(w.ObjectPlacement) for w in walls}
    along_x = [w for w in walls if abs(frames[w.GlobalId][0][0]) > 0.9]
    along_y = [w for w in walls if abs(frames[w.GlobalId][0][0]) < 0.1]
    south = min(along_x, key=lambda w: frames[w.GlobalId][1][3])
    north = max(along_x, key=lambda w: frames[w.GlobalId][1][3])
    x = sum(frames[w.GlobalId][0][3] for w in along_y) / len(along_y) + offset_m
    y0, y1 = frames[south.GlobalId][1][3], frames[north.GlobalId][1][3]
    b = builder_for(f)
    wall = b.wall(storey, 0.0, Point2(x * scale, y0 * scale), Point2(x * scale, y1 * scale), thickness_m=0.1 * scale,
                  height_m=2.5 * scale, name="Partition", external=False)
    if not contain:
        ifcopenshell.api.spatial.unassign_container(f, products=[wall])
    if connect:
        b.connect(south, "ATPATH", wall, "ATSTART")
        b.connect(north, "ATPATH", wall, "ATEND")
    if bound:
        b.bound(space, wall, external=False)
    b.release()
    return wall


def delete_wall_only(f: ifcopenshell.file, wall: ifcopenshell.entity_instance) -> None:
    """A sloppy delete: the wall goes, its openings (detached from it) and their doors stay."""
    for rel in list(wall.HasOpenings or ()):
        f.remove(rel)
    ifcopenshell.api.root.remove_product(f, product=wall)


@pytest.fixture(scope="session")
def simple_case(tmp_path_factory: pytest.TempPathFactory) -> Case:
    """A simple scene with ground truths for an update, a delete and a create, and flawed predictions."""
    out = tmp_path_factory.mktemp("bimedit_simple")
    m0 = write_scene("simple", 7, out).path
    f0 = ifcopenshell.open(str(m0))
    door = f0.by_type("IfcDoor")[0]
    opening = ifcopenshell.util.element.get_filled_void(door)
    wall = sorted(f0.by_type("IfcWall"), key=lambda w: -len(w.HasOpenings or ()))[0]
    removed = tuple([wall.GlobalId] + [r.RelatedOpeningElement.GlobalId for r in wall.HasOpenings]
                    + [r.RelatedBuildingElement.GlobalId for r in wall.HasOpenings
                       for r in r.RelatedOpeningElement.HasFillings])
    dg, wg = door.GlobalId, wall.GlobalId
    files = {
        "gt_update": _variant(m0, out, "gt_update", lambda f: slide_filling(f, f.by_guid(dg), 0.4)),
        "door_only": _variant(m0, out, "door_only", lambda f: move_elements(
            f, [f.by_guid(dg)], host_direction(f.by_guid(dg)) * 0.4)),
        "gt_delete": _variant(m0, out, "gt_delete", lambda f: delete_element(f, f.by_guid(wg))),
        "wall_only": _variant(m0, out, "wall_only", lambda f: delete_wall_only(f, f.by_guid(wg))),
        "gt_create": _variant(m0, out, "gt_create", add_partition),
        "uncontained": _variant(m0, out, "uncontained", lambda f: add_partition(f, contain=False)),
        "create_mm_as_m": _variant(m0, out, "create_mm_as_m", lambda f: add_partition(f, scale=1000.0)),
        "create_offset": _variant(m0, out, "create_offset", lambda f: add_partition(f, offset_m=0.3)),
    }
    return Case(m0, files, dg, opening.GlobalId, wg, removed)
