"""Type-driven models (Revit, ArchiCAD and BlenderBIM exports give most elements a type with
property sets): what an element inherits from its type is part of the element, so editing the
type's attributes or properties modifies every element of that type, and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast

import ifcopenshell
import ifcopenshell.api.pset
import ifcopenshell.api.type
import ifcopenshell.util.element
import pytest

from buildbench.cli.main import main
from buildbench.suites.bimedit.check.diff import node_changes
from buildbench.suites.bimedit.check.model import load_model

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"


@pytest.fixture(scope="module")
def typed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str]]:
    """The fixture with two of its walls typed by one wall type carrying a fire rating."""
    f = ifcopenshell.open(str(FIXTURE))
    walls = cast("list[ifcopenshell.entity_instance]", sorted(f.by_type("IfcWall"), key=lambda w: w.GlobalId)[:2])
    wall_type = f.createIfcWallType(ifcopenshell.guid.new(), None, "Exterior 200", None, None, None, None,
                                    None, None, "STANDARD")
    ifcopenshell.api.type.assign_type(f, related_objects=walls, relating_type=wall_type)
    pset = ifcopenshell.api.pset.add_pset(f, product=wall_type, name="Pset_WallCommon")
    ifcopenshell.api.pset.edit_pset(f, pset=pset, properties={"FireRating": "REI60"})
    path = tmp_path_factory.mktemp("typed") / "typed.ifc"
    f.write(str(path))
    return path, {w.GlobalId for w in walls}


def _edited(m0: Path, tmp_path: Path, edit: Callable[[ifcopenshell.file], object]) -> Path:
    f = ifcopenshell.open(str(m0))
    edit(f)
    out = tmp_path / "edited.ifc"
    f.write(str(out))
    return out


def _fire_rating(f: ifcopenshell.file, value: str) -> None:
    (wall_type,) = f.by_type("IfcWallType")
    pset = ifcopenshell.util.element.get_pset(wall_type, "Pset_WallCommon")
    ifcopenshell.api.pset.edit_pset(f, pset=f.by_id(pset["id"]), properties={"FireRating": value})


def _rename(f: ifcopenshell.file) -> None:
    f.by_type("IfcWallType")[0].Name = "Exterior 250"


@pytest.mark.parametrize("edit", [lambda f: _fire_rating(f, "REI90"), _rename], ids=["type property", "type name"])
def test_type_edit_modifies_exactly_its_elements(typed: tuple[Path, set[str]], tmp_path: Path,
                                                 edit: Callable[[ifcopenshell.file], object]) -> None:
    m0, walls = typed
    changes = node_changes(load_model(m0), load_model(_edited(m0, tmp_path, edit)))
    assert changes.modified == walls and not changes.added and not changes.removed


def test_type_unchanged_is_no_change(typed: tuple[Path, set[str]], tmp_path: Path,
                                     capsys: pytest.CaptureFixture) -> None:
    m0, _ = typed
    same = _edited(m0, tmp_path, lambda f: _fire_rating(f, "REI60"))  # rewritten, same value
    assert node_changes(load_model(m0), load_model(same)).empty
    assert main(["bimedit", "diff", str(m0), str(same)]) == 0
    assert "modified (0)" in capsys.readouterr().out
