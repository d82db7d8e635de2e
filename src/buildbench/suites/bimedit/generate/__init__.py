"""Seeded IFC scenes for BIM-Edit and the reference edits that make ground truths from them.

* :mod:`.builder` — :class:`IfcBuilder`, lengths in metres over ``ifcopenshell.api``;
* :mod:`.scenes` — simple (~20 elements) and complex (~600 elements) grid buildings,
  metre/millimetre and IFC4/IFC2X3 variants, and loading real models as scenes;
* :mod:`.edits` — edits that follow good IFC practice (move a filling with its opening,
  delete an element with its openings, fillings and boundaries, resize a wall);
* :mod:`.describe` — spatial (viewpoint included) and topological descriptions of an element, each checked to
  pick out that element alone (for instruction generation).
* :mod:`.tasks` — the tasks themselves (the suite's one task-generation room): base edits with oracle
  code, three phrasings each, verified descriptions, the splits, tasks on any user IFC.
"""

from buildbench.suites.bimedit.generate.builder import IfcBuilder, Point2
from buildbench.suites.bimedit.generate.describe import Description, DescriptionIndex, describe, resolve
from buildbench.suites.bimedit.generate.edits import (
    delete_element,
    move_elements,
    move_filling,
    slide_filling,
)
from buildbench.suites.bimedit.generate.scenes import (
    COMPLEX,
    SIMPLE,
    GridLayout,
    SceneInfo,
    build_grid_model,
    load_real_scene,
    scene_info,
    write_scene,
)

__all__ = [
    "COMPLEX",
    "Description",
    "DescriptionIndex",
    "SIMPLE",
    "GridLayout",
    "IfcBuilder",
    "Point2",
    "SceneInfo",
    "build_grid_model",
    "delete_element",
    "describe",
    "load_real_scene",
    "move_elements",
    "move_filling",
    "resolve",
    "scene_info",
    "slide_filling",
    "write_scene",
]
