"""Indirect descriptions of elements: each must pick out exactly its element."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import ifcopenshell
import numpy as np
import pytest

from buildbench.suites.bimedit.check.model import load_model
from buildbench.suites.bimedit.check.shapes import ShapeCache
from buildbench.suites.bimedit.generate.builder import IfcBuilder, Point2, frame_matrix
from buildbench.suites.bimedit.generate.describe import DescriptionIndex, describe, observer, resolve

from .conftest import Case


def _index(path: Path) -> DescriptionIndex:
    model = load_model(path)
    return DescriptionIndex(model, ShapeCache(model))


def test_every_description_resolves_to_its_element_alone(simple_case: Case) -> None:
    index = _index(simple_case.m0)
    fresh = _index(simple_case.m0)  # facts must survive JSON and a reload
    covered: dict[str, set[str]] = {}
    for cls in ("IfcWall", "IfcDoor", "IfcWindow", "IfcSlab", "IfcColumn", "IfcSpace"):
        for el in index.model.file.by_type(cls):
            for d in describe(index, el.GlobalId):
                facts = json.loads(json.dumps(d.facts))
                assert resolve(fresh, facts) == [el.GlobalId], d.text
                covered.setdefault(cls, set()).add(d.kind)
    for cls in ("IfcWall", "IfcDoor", "IfcSpace"):
        assert covered[cls] == {"topological", "spatial"}, cls
    for cls in ("IfcWindow", "IfcColumn", "IfcSlab"):
        assert "spatial" in covered[cls], cls


def test_ambiguous_queries_are_not_offered(simple_case: Case) -> None:
    index = _index(simple_case.m0)
    walls = resolve(index, {"class": "IfcWall"})
    assert len(walls) == 7
    columns = index.facts("IfcColumn")
    midpoint = (columns[0].centre + columns[1].centre) / 2
    assert sorted(resolve(index, {"class": "IfcColumn", "nearest_to": midpoint.tolist()})) == sorted(
        c.guid for c in columns)
    # The two rooms share the partition wall: naming just that wall does not identify a room.
    door = next(d for d in index.facts("IfcDoor") if d.host_rooms is not None and len(d.host_rooms) == 2)
    partition = index.model.file.by_guid(door.guid).FillsVoids[0].RelatingOpeningElement.VoidsElements[0]
    assert len(resolve(index, {"class": "IfcSpace", "bounded_by": [partition.RelatingBuildingElement.GlobalId]})) == 2
    texts = [d.text for d in describe(index, door.guid)]
    assert any("between room" in t for t in texts)


def test_nearest_point_needs_a_clear_margin(simple_case: Case) -> None:
    index = _index(simple_case.m0)
    a, b = index.facts("IfcColumn")
    mid = (a.centre + b.centre) / 2
    toward_a = (a.centre - b.centre) / np.linalg.norm(a.centre - b.centre)
    for lead_m, expected in ((0.3, 2), (1.0, 1)):  # how much closer the point is to column a
        point = mid + toward_a * lead_m / 2
        found = resolve(index, {"class": "IfcColumn", "nearest_to": point.tolist()})
        assert len(found) == expected and a.guid in found


@dataclass(frozen=True)
class Room:
    """A hand-made 6 m (x) by 4 m (y) room: walls by compass side, its door and windows."""

    index: DescriptionIndex
    room: str
    walls: dict[str, str]
    door: str
    east_windows: tuple[str, str]
    north_window: str


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Room:
    b = IfcBuilder()
    storey = b.storey("Ground floor", 0.0)
    corners = [Point2(0, 0), Point2(6, 0), Point2(6, 4), Point2(0, 4)]
    sp = b.space(storey, 0.0, corners, height_m=2.8, name="R", long_name="Room")
    walls, frames = {}, {}
    for side, p1, p2 in zip("SENW", corners, corners[1:] + corners[:1], strict=True):
        walls[side] = b.wall(storey, 0.0, p1, p2, thickness_m=0.2, height_m=2.8, name=side, external=True)
        frames[side] = frame_matrix((p1.x, p1.y, 0.0), (p2.x - p1.x, p2.y - p1.y))
        b.bound(sp, walls[side], external=True)

    def fill(side: str, kind: str, along_m: float) -> ifcopenshell.entity_instance:
        _, el = b.filling(storey, walls[side], hostframe_matrix=frames[side], host_thickness_m=0.2, kind=kind,
                          along_m=along_m, sill_m=0.0 if kind == "door" else 0.9, width_m=0.9,
                          height_m=2.1 if kind == "door" else 1.2, name=f"{kind} {side}", external=True)
        return el

    # the door's centre is at (1.45, 0); the east windows at y = 1.05 and 3.05, the north one at x = 2.45
    door, east = fill("S", "door", 1.0), (fill("E", "window", 0.6), fill("E", "window", 2.6))
    north = fill("N", "window", 3.1)
    path = tmp_path_factory.mktemp("viewpoint") / "room.ifc"
    b.finish(0).write(str(path))  # GlobalIds are redrawn here, so they are read afterwards
    guid = {side: str(w.GlobalId) for side, w in walls.items()}
    return Room(_index(path), str(sp.GlobalId), guid, str(door.GlobalId), (str(east[0].GlobalId),
                str(east[1].GlobalId)), str(north.GlobalId))


def _side(r: Room, cls: str, side: str, **view: str) -> list[str]:
    of = {"of_room": r.room}
    return sorted(resolve(r.index, {"class": cls, **of, "viewpoint": {"room": r.room, **view, "side": side}}))


def test_viewpoint_sides_in_a_known_room(room: Room) -> None:
    at_door = observer(room.index, {"room": room.room, "through_door": room.door})
    assert np.allclose(at_door.position_m, [1.45, 0.0], atol=0.1)  # the door leaf sits off the axis
    assert np.allclose(at_door.facing, [0.0, 1.0], atol=1e-6)  # square to the south wall, into the room
    w = room.walls
    # from the middle facing +y: north ahead, west on the left (cross > 0), east on the right
    for side, wall in (("ahead", "N"), ("left", "W"), ("right", "E"), ("behind", "S")):
        assert _side(room, "IfcWall", side, facing="+y") == [w[wall]], side
    # walking in through the door: the south wall is where you stand, so nothing is behind
    for side, wall in (("ahead", "N"), ("left", "W"), ("right", "E")):
        assert _side(room, "IfcWall", side, through_door=room.door) == [w[wall]], side
    assert _side(room, "IfcWall", "behind", through_door=room.door) == []
    # facing +x, the east wall's two windows are both ahead (about 18 degrees either side)
    assert _side(room, "IfcWindow", "ahead", facing="+x") == sorted(room.east_windows)
    assert _side(room, "IfcWindow", "left", facing="+x") == [room.north_window]
    assert _side(room, "IfcWindow", "right", facing="-x") == [room.north_window]
    # looking at the door from the middle puts it dead ahead, and the door frame faces +y into the room
    assert _side(room, "IfcDoor", "ahead", facing_door=room.door) == [room.door]
    assert _side(room, "IfcDoor", "behind", facing="+y") == [room.door]


def test_viewpoint_descriptions_are_unique_and_name_their_side(room: Room) -> None:
    texts = {}
    for cls in ("IfcWall", "IfcWindow", "IfcDoor"):
        for el in room.index.model.file.by_type(cls):
            for d in describe(room.index, el.GlobalId):
                if "viewpoint" in d.facts:
                    assert resolve(room.index, json.loads(json.dumps(d.facts))) == [el.GlobalId], d.text
                    texts[d.text] = d.facts
    north = [t for t, f in texts.items() if f["viewpoint"].get("facing") == "+y" and f["class"] == "IfcWall"]
    assert any(t.startswith(f"the wall of room ({room.room}) straight ahead") for t in north)
    entering = [t for t, f in texts.items() if "through_door" in f["viewpoint"]]
    assert any("on your left when you walk into it through the door" in t for t in entering)
    # the east windows share every side of every viewpoint in this room, so none is offered for them
    assert not any(room.east_windows[0] in str(f) or room.east_windows[1] in str(f) for f in texts.values())
    with pytest.raises(ValueError, match="names neither"):
        observer(room.index, {"room": room.room})
