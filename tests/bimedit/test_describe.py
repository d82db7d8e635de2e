"""Indirect descriptions of elements: each must pick out exactly its element."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from buildbench.suites.bimedit.check.model import load_model
from buildbench.suites.bimedit.check.shapes import ShapeCache
from buildbench.suites.bimedit.generate.describe import DescriptionIndex, describe, resolve

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
