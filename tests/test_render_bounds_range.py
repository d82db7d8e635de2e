"""A scene too large for a view is one input error naming its extent: never a numpy warning,
never a camera of infinite numbers."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from buildbench.render import Bounds, RenderInputError
from buildbench.render.camera import MAX_COORDINATE_M
from buildbench.render.scene import Boxes, box_world_geometry


def test_bounds_beyond_the_view_range_are_refused_naming_the_axis_and_end() -> None:
    with pytest.raises(RenderInputError, match=r"the scene reaches y = -1e\+35 m, beyond the ±1e\+30 m a view"):
        Bounds(np.array([0.0, -1e35, 0.0]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(RenderInputError, match=r"reaches x = 1\.5e\+308 m"):
        Bounds(np.array([1.5e308, 0.0, 0.0]), np.array([1.5e308, 2.0, 0.0]))
    edge = Bounds(np.array([-MAX_COORDINATE_M, 0.0, 0.0]), np.array([MAX_COORDINATE_M, 1.0, 1.0]))
    assert np.isfinite(edge.diagonal_m) and np.isfinite(edge.centre_m).all()


@pytest.mark.parametrize("member, where", [
    ({"dimensions": [1e308, 0.089, 2.4], "location": [1, 0, 1.2]}, "x = 5e+307 m"),
    ({"dimensions": [1, 0.089, 2.4], "location": [1e308, 0, 1.2]}, "x = 1e+308 m"),
])
def test_render_of_an_absurd_house_is_one_error_line(tmp_path: Path, member: dict[str, object], where: str) -> None:
    house = tmp_path / "house.json"
    members = [{"name": "Stud_1", "dimensions": [0.038, 0.089, 2.4], "location": [0, 0, 1.2]}, {"name": "Stud_2", **member}]
    house.write_text(json.dumps({"members": members}))
    out = subprocess.run([sys.executable, "-m", "buildbench", "dreamhouse", "render", str(house), "--out",
                          str(tmp_path / "views")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: the scene reaches " + where) and out.stderr.count("\n") == 1, out.stderr
    assert not (tmp_path / "views").exists()


def test_a_box_whose_corners_overflow_is_refused_without_a_warning() -> None:
    matrices = np.tile(np.eye(4), (2, 1, 1))
    matrices[1, 0, 3] = 1.5e308
    boxes = Boxes(matrices, np.array([[1.0, 1.0, 1.0], [1.7e308, 1.0, 1.0]]), np.ones((2, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RenderInputError, match="box 1: its corners lie beyond"):
            box_world_geometry(boxes)
