"""LEGO-Eval's wall tools on a Holodeck house whose open boundary Holodeck deleted from
``walls`` (listed under ``open_walls``): the original-compatible mode lists the file's walls
only, the default mode also the rebuilt open walls, flagged empty."""

from __future__ import annotations

from pathlib import Path

from buildbench.scenes.io import load_scene
from buildbench.suites.legoeval.tools.context import ToolContext
from buildbench.suites.legoeval.tools.registry import run_tool

HOUSE = Path(__file__).resolve().parents[1] / "scenes" / "fixtures" / "holodeck_open_kitchen_living.json"


def _wall_ids(out: dict) -> set[str]:
    return {w for ids in out.values() if isinstance(ids, list) for w in ids}


def test_the_compatible_mode_lists_only_the_walls_of_the_file() -> None:
    scene = load_scene(HOUSE)
    rooms = [r.id for r in scene.rooms]
    rebuilt = {w.id for w in scene.walls if w.empty and not w.raw}
    assert rebuilt  # the fixture's open boundary was deleted from `walls`, as Holodeck does
    compatible = ToolContext.for_scene(scene, wall_midpoint_positions=True, render=False)
    default = ToolContext.for_scene(scene, render=False)
    listed_compatible = _wall_ids(run_tool(compatible, "get_wall_list", rooms))
    listed_default = _wall_ids(run_tool(default, "get_wall_list", rooms))
    assert not listed_compatible & rebuilt
    assert rebuilt <= listed_default
    info = run_tool(default, "get_wall_info", sorted(rebuilt))
    assert all(info.get(f"{w}_empty") is True for w in rebuilt), info
