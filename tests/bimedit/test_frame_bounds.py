"""Frame adjacency tessellates only the anchors whose outer box (read from shape parameters) meets
the target's: the same descriptions as testing every anchor's mesh, with fewer meshes.

On the real Tekla frame (web-ifc ISSUE_021_Mini_Project.ifc, 1,949 beams) generation
tessellated every beam to name a slab by the beams it adjoins."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from buildbench.suites.bimedit.check.model import load_model
from buildbench.suites.bimedit.check.shapes import ShapeCache
from buildbench.suites.bimedit.generate.bounds import outer_box
from buildbench.suites.bimedit.generate.describe import frame_adjacency
from buildbench.suites.bimedit.generate.facts import DescriptionIndex

from .test_real_reading import FIXTURE, _frame

SHARED_IFC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "ifc"


def _held(path: Path) -> tuple[int, int]:
    """(elements with a mesh and an outer box, of which the box holds the mesh's)."""
    model = load_model(path)
    shapes = ShapeCache(model)
    bounded = held = 0
    for e in model.file.by_type("IfcElement"):
        box = outer_box(model, e)
        mesh = shapes.mesh(e.GlobalId) if e.GlobalId in model.nodes else None
        if box is None or mesh is None:
            continue
        bounded += 1
        held += bool((box[0] <= mesh.vertices.min(axis=0)).all() and (box[1] >= mesh.vertices.max(axis=0)).all())
    return bounded, held


def test_outer_boxes_hold_the_meshes(tmp_path: Path) -> None:
    frame = _frame(tmp_path / "frame.ifc")
    for path in (frame, FIXTURE):
        bounded, held = _held(path)
        assert bounded > 0 and held == bounded, path.name


@pytest.mark.parametrize("rel", ["ifc2x3/example.ifc", "ifc2x3/Roof-01_BCAD.ifc", "ifc4/AC20-FZK-Haus.ifc"])
def test_outer_boxes_hold_the_meshes_of_real_models(rel: str) -> None:
    if not (SHARED_IFC / rel).is_file():
        pytest.skip(f"shared IFC file {rel} not found under ../shared/data/ifc (the project's reference data)")
    bounded, held = _held(SHARED_IFC / rel)
    assert bounded > 0 and held == bounded


def test_frame_adjacency_is_the_same_with_fewer_meshes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _frame(tmp_path / "frame.ifc")

    model = load_model(path)
    targets = sorted(e.GlobalId for cls in ("IfcColumn", "IfcSlab") for e in model.file.by_type(cls))

    def run() -> tuple[list[list[str]], int]:
        """Each target's descriptions, and the meshes made, each target on a fresh index."""
        texts, meshes = [], 0
        for g in targets:
            index = DescriptionIndex(model, ShapeCache(model))
            texts.append([d.text for d in frame_adjacency(index, g)])
            meshes += len(index.shapes._meshes)
        return texts, meshes

    quick, quick_meshes = run()
    describe_module = importlib.import_module("buildbench.suites.bimedit.generate.describe")
    monkeypatch.setattr(describe_module, "_may_touch", lambda outer, box, tol_m=0.01: True)
    every, every_meshes = run()
    assert quick == every and any(quick)
    assert quick_meshes < every_meshes


def test_an_unreadable_shape_has_no_outer_box(tmp_path: Path) -> None:
    model = load_model(_frame(tmp_path / "frame.ifc"))
    slab = model.file.by_type("IfcSlab")[0]
    solid = next(i for r in slab.Representation.Representations for i in r.Items if i.is_a("IfcExtrudedAreaSolid"))
    box = outer_box(model, slab)
    assert box is not None and np.all(box[1] > box[0])
    profile = solid.SweptArea
    solid.SweptArea = model.file.createIfcCircleProfileDef("AREA", None, None, 100.0)
    assert outer_box(model, slab) is not None  # a circle is read
    solid.SweptArea = model.file.createIfcEllipseProfileDef("AREA", None, None, 100.0, 50.0)
    assert outer_box(model, slab) is None  # an ellipse is not: the slab is tessellated
    solid.SweptArea = profile
