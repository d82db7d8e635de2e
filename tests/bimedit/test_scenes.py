"""Generated scenes: valid IFC, reopenable, deterministic by seed, shaped like the paper's scenes."""

from __future__ import annotations

from pathlib import Path

import ifcopenshell
import ifcopenshell.util.element
import ifcopenshell.validate
import pytest

from buildbench.suites.bimedit.check.edit import EditTask, score_edit
from buildbench.suites.bimedit.generate.edits import delete_element, slide_filling
from buildbench.suites.bimedit.generate.scenes import load_real_scene, scene_info, write_scene

from .conftest import SHARED_IFC

# The module-scoped fixtures (the complex scene) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("bimedit-scenes")


def _schema_errors(path: Path) -> list[dict]:
    logger = ifcopenshell.validate.json_logger()
    ifcopenshell.validate.validate(str(path), logger)
    return logger.statements


@pytest.fixture(scope="module")
def complex_scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_scene("complex", 11, tmp_path_factory.mktemp("bimedit_complex")).path


@pytest.mark.parametrize(("unit", "schema", "scale"), [("m", "IFC4", 1.0), ("mm", "IFC4", 0.001),
                                                       ("m", "IFC2X3", 1.0)])
def test_simple_scene_validates_and_reopens(tmp_path: Path, unit: str, schema: str, scale: float) -> None:
    info = write_scene("simple", 5, tmp_path, unit=unit, schema=schema)
    assert _schema_errors(info.path) == []
    assert info.schema == schema and info.unit_scale_m == pytest.approx(scale)
    assert 18 <= info.n_elements <= 30  # the paper's simple scenes average 21 elements
    f = ifcopenshell.open(str(info.path))
    assert {e.is_a() for e in f.by_type("IfcElement")} >= {"IfcWall", "IfcSlab", "IfcDoor", "IfcWindow",
                                                              "IfcColumn", "IfcOpeningElement"}
    assert len(f.by_type("IfcSpace")) == 2


@pytest.mark.parametrize("schema", ["IFC4", "IFC2X3"])
def test_same_seed_same_bytes_other_seed_other_model(tmp_path: Path, schema: str) -> None:
    a = write_scene("simple", 9, tmp_path / "a", schema=schema).path.read_bytes()
    b = write_scene("simple", 9, tmp_path / "b", schema=schema).path.read_bytes()
    c = write_scene("simple", 10, tmp_path / "c", schema=schema).path.read_bytes()
    assert a == b and a != c


def test_units_do_not_change_world_geometry(tmp_path: Path) -> None:
    """The mm and m variants of a seed are the same building; a matching edit scores 1 across them."""
    metre = write_scene("simple", 4, tmp_path / "m", unit="m").path
    milli = write_scene("simple", 4, tmp_path / "mm", unit="mm").path
    outs = []
    for src in (metre, milli):
        f = ifcopenshell.open(str(src))
        slide_filling(f, f.by_type("IfcWindow")[0], -0.25)
        out = src.with_name(src.stem + "-gt.ifc")
        f.write(str(out))
        outs.append(out)
    # Same GlobalIds in both variants, so the mm prediction can be scored against the m task.
    fm = ifcopenshell.open(str(metre))
    window = fm.by_type("IfcWindow")[0]
    task = EditTask("update", (window.GlobalId, ifcopenshell.util.element.get_filled_void(window).GlobalId))
    s = score_edit(metre, outs[0], outs[1], task)
    assert (s.geometry, s.semantics) == (1.0, 1.0)
    assert any("length unit" in n for n in s.notes)


def test_complex_scene_is_house_like_and_valid(complex_scene: Path) -> None:
    info = scene_info(complex_scene, kind="complex")
    assert 550 <= info.n_elements <= 700  # the paper's realistic scenes average 615 elements
    assert info.n_relations >= 1000
    assert _schema_errors(complex_scene) == []
    f = ifcopenshell.open(str(complex_scene))
    assert len(f.by_type("IfcBuildingStorey")) == 3
    for door in f.by_type("IfcDoor") + f.by_type("IfcWindow"):
        opening = ifcopenshell.util.element.get_filled_void(door)
        assert opening is not None and ifcopenshell.util.element.get_voided_element(opening).is_a("IfcWall")
        assert ifcopenshell.util.element.get_container(door) is not None
    for wall in f.by_type("IfcWall"):
        assert ifcopenshell.util.element.get_container(wall) is not None
        assert wall.ConnectedTo or wall.ConnectedFrom
    for space in f.by_type("IfcSpace"):
        assert len(space.BoundedBy) == 5  # four walls and the floor slab
        assert ifcopenshell.util.element.get_aggregate(space).is_a("IfcBuildingStorey")


def test_complex_scene_ground_truth_and_noop(complex_scene: Path, tmp_path: Path) -> None:
    f = ifcopenshell.open(str(complex_scene))
    door = f.by_type("IfcDoor")[5]
    task = EditTask("update", (door.GlobalId, ifcopenshell.util.element.get_filled_void(door).GlobalId))
    slide_filling(f, door, 0.2)
    gt = tmp_path / "gt.ifc"
    f.write(str(gt))
    s = score_edit(complex_scene, gt, gt, task)
    assert (s.geometry, s.semantics, s.topology) == (1.0, 1.0, 1.0)
    assert s.edit_sets is not None and s.edit_sets.reference_changes.modified == frozenset(task.target_guids)
    noop = score_edit(complex_scene, gt, complex_scene, task)
    assert noop.geometry < 1.0 and not noop.solved


@pytest.mark.parametrize("name", ["ifc4/AC20-FZK-Haus.ifc", "ifc2x3/duplex.ifc", "ifc4x3/wall_door_columnt_rgb4x3.ifc"])
def test_real_models_load_as_complex_scenes(name: str) -> None:
    path = SHARED_IFC / name
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    info = load_real_scene(path)
    assert info.kind == "real" and info.n_elements > 0 and info.n_relations > 0
    # An unchanged real model against itself: nothing to score, nothing wrong.
    s = score_edit(path, path, path, EditTask("update"))
    assert (s.geometry, s.semantics, s.topology) == (1.0, 1.0, 1.0)
    assert s.reason == "prediction made no change to the input model"


def test_unreadable_scene_raises_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ifc"
    bad.write_text("garbage")
    with pytest.raises(ValueError, match="cannot read IFC file"):
        scene_info(bad, kind="real")
    with pytest.raises(ValueError, match="scene kind"):
        write_scene("huge", 1, tmp_path)


@pytest.mark.parametrize(("name", "operation"), [("ifc2x3/duplex.ifc", "delete"), ("ifc4/AC20-FZK-Haus.ifc", "update")])
def test_reference_edits_on_real_models_score_one(name: str, operation: str, tmp_path: Path) -> None:
    """Files rewritten by IfcOpenShell differ from the exporter's in float formatting; that is no edit."""
    src = SHARED_IFC / name
    if not src.exists():
        pytest.skip(f"shared data not present: {src}")
    f = ifcopenshell.open(str(src))
    if operation == "delete":
        wall = next(w for w in f.by_type("IfcWall") if w.HasOpenings)
        task = EditTask("delete", (wall.GlobalId,))
        removed = delete_element(f, wall)
    else:
        door = next(d for d in f.by_type("IfcDoor") if d.FillsVoids)
        task = EditTask("update", (door.GlobalId, ifcopenshell.util.element.get_filled_void(door).GlobalId))
        slide_filling(f, door, 0.3)
    gt = tmp_path / "gt.ifc"
    f.write(str(gt))
    s = score_edit(src, gt, gt, task)
    assert (s.geometry, s.semantics, s.topology) == (1.0, 1.0, 1.0) and s.notes == ()
    assert s.edit_sets is not None
    if operation == "delete":
        assert set(s.edit_sets.reference) == set(removed)
    else:
        assert s.edit_sets.reference_changes.modified == frozenset(task.target_guids)
