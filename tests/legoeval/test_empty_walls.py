"""LEGO-Eval's own constraint checking and data generation on an open floor plan: empty
(invisible) walls are openings, not surfaces, so wall-material facts, generated
constraints, misaligned twins, reference plans and the judge's views read visible walls only.

The house: a kitchen (4 x 4 m, blue paint) open to a living room (5 x 8 m, white drywall)
east of it, and a bedroom north of the kitchen, behind doors, which also closes the upper
half of the living room's west side. Both sides of the open boundary record red brick, as a
THOR file may: a material no one can see. ``solid=True`` makes the same boundary a real
wall, the control in which that red brick does count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from buildbench.scenes import views
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.io import write_thor
from buildbench.scenes.model import Scene
from buildbench.suites.legoeval.check import check, deterministic
from buildbench.suites.legoeval.check.select import material_matches, rooms_matching, visible_walls
from buildbench.suites.legoeval.constraints import Material, parse
from buildbench.suites.legoeval.generate.facts import propose_material, true_facts
from buildbench.suites.legoeval.generate.house import build_house
from buildbench.suites.legoeval.generate.twins import perturb
from buildbench.suites.legoeval.pipeline.arguments import reference_arguments
from buildbench.suites.legoeval.pipeline.baselines import judge_views
from buildbench.suites.legoeval.plans import reference_plan
from buildbench.suites.legoeval.task_build import make_task
from buildbench.suites.legoeval.task_records import spec_for
from buildbench.suites.legoeval.tools import ToolContext

KITCHEN_OPEN = "wall|kitchen|east|2"
LIVING_OPEN = "wall|living|west|0"
LIVING_WEST_SOLID = "wall|living|west|1"
HIDDEN = "RedBrick"


def open_plan(*, solid: bool = False) -> Scene:
    b = HouseBuilder()
    b.room("kitchen", (0, 0, 4, 4), room_type="Kitchen", wall_material="BluePaint")
    b.room("living", (4, 0, 9, 8), room_type="LivingRoom", wall_material="Drywall")
    b.room("bedroom", (0, 4, 4, 8), room_type="Bedroom", wall_material="Drywall")
    b.open_wall("kitchen", "living")
    b.door("living", "exterior", direction="south")
    b.door("kitchen", "bedroom")
    b.door("living", "bedroom")
    b.place("sofa", "living", center_xz=(6.5, 1.0))
    scene = b.build()
    for wid in (KITCHEN_OPEN, LIVING_OPEN):
        wall = scene.wall(wid)
        wall.material = HIDDEN
        wall.empty = not solid
    return scene


# (sentence, holds on the open plan, holds when the boundary is a solid wall)
MATERIAL_CASES = [
    ("The walls of the kitchen are blue.", True, False),
    ("A wall of the kitchen is red.", False, True),
    ("A wall of the kitchen is brick.", False, True),
    ("The east wall of the kitchen is red.", False, True),
    ("The east wall of the kitchen is blue.", False, False),
    ("The west wall of the living room is white.", True, False),
    ("The walls of the living room are white.", True, False),
    ("The floor of the kitchen is brick.", False, False),
]


def _task(scene: Scene) -> Any:
    specs = [spec_for(f"c{i}", text, parse(text)) for i, (text, _, _) in enumerate(MATERIAL_CASES)]
    return make_task("open-plan", instruction=" ".join(s.text for s in specs), scene=write_thor(scene),
                     constraints=specs, labels=[True] * len(specs), pair="open-plan", aligned=True)


# --- the deterministic evaluator -------------------------------------------------------------
@pytest.mark.parametrize("solid", [False, True])
def test_deterministic_evaluator_reads_wall_materials_off_visible_walls(solid: bool) -> None:
    # The task carries THOR JSON, so the empty flag also survives the write and the read.
    out = deterministic(_task(open_plan(solid=solid)))
    got = [v["holds"] for v in out["verdicts"]]
    want = [case[2] if solid else case[1] for case in MATERIAL_CASES]
    assert got == want, [(c[0], v["explanation"]) for c, v in zip(MATERIAL_CASES, out["verdicts"], strict=True)]


def test_a_wholly_open_side_is_named_as_such() -> None:
    result = check(open_plan(), parse("The east wall of the kitchen is red."))
    assert not result.holds
    assert "kitchen has no visible east wall" in result.explanation and KITCHEN_OPEN in result.explanation


def test_a_passing_wall_fact_names_the_empty_walls_it_left_out() -> None:
    result = check(open_plan(), parse("The walls of the kitchen are blue."))
    assert result.holds and KITCHEN_OPEN not in result.evidence["walls"]
    assert result.evidence["empty_walls"] == [KITCHEN_OPEN] and "not counted" in result.explanation
    closed = check(open_plan(solid=True), parse("A wall of the kitchen is blue."))
    assert closed.holds and "empty_walls" not in closed.evidence and "not counted" not in closed.explanation


# --- the generator ---------------------------------------------------------------------------
def _wall_proposals(scene: Scene, seed: int, n: int) -> list[Material]:
    proposals = propose_material(scene, np.random.default_rng([seed, 7]))
    drawn = [next(proposals) for _ in range(n)]
    return [p for p in drawn if isinstance(p, Material) and p.surface == "wall"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wall_material_proposals_never_come_from_an_empty_wall(seed: int) -> None:
    walls = _wall_proposals(open_plan(), seed, 120)
    assert len(walls) > 30
    for p in walls:
        assert not material_matches(HIDDEN, p.value), p
        (room,) = rooms_matching(open_plan(), p.room)
        assert any(material_matches(w.material, p.value) for w in visible_walls(open_plan(), room, p.direction)), p
    # The control: with the boundary solid, its brick is a fact the proposer draws.
    assert any(material_matches(HIDDEN, p.value) for p in _wall_proposals(open_plan(solid=True), seed, 120))


def test_generated_material_facts_hold_and_never_ask_about_an_empty_wall() -> None:
    scene = open_plan()
    for seed in range(4):
        facts = true_facts(scene, "MS", 6, np.random.default_rng([seed, 3]), seen=set())
        assert facts
        for p in facts:
            assert check(scene, p).holds
            assert not (isinstance(p, Material) and p.surface == "wall" and material_matches(HIDDEN, p.value)), p


@pytest.mark.parametrize("program", [Material("kitchen", "wall", "blue"),
                                     Material("living room", "wall", "white", "west"),
                                     Material("kitchen", "wall", "blue", None, "exists")])
def test_a_twin_repaints_visible_walls_and_breaks_the_fact(program: Material) -> None:
    scene = open_plan()
    assert check(scene, program).holds
    for seed in range(12):
        twin = perturb(scene, program, np.random.default_rng([seed]))
        assert twin is not None
        assert not check(twin, program).holds, seed
        assert twin.wall(KITCHEN_OPEN).material == HIDDEN and twin.wall(LIVING_OPEN).material == HIDDEN


def test_generated_houses_join_rooms_by_doors_only() -> None:
    # The furnishing rules stand wall pieces against every side, so no side may be open.
    for seed in range(3):
        scene = build_house(np.random.default_rng([seed, 11]), 4)
        assert scene.doors and not [w.id for w in scene.walls if w.empty]


# --- reference plans, reference arguments and the judge's views -------------------------------
def test_reference_plan_reads_every_wall_but_images_only_visible_materials() -> None:
    plan = reference_plan(open_plan(), parse("The walls of the kitchen are blue."))
    args = {n["tool"]: n["args"] for n in plan["nodes"]}
    assert KITCHEN_OPEN in args["get_wall_info"]
    assert args["get_material_image"] == ["BluePaint"]
    side = reference_plan(open_plan(), parse("The west wall of the living room is white."))
    assert {n["tool"]: n["args"] for n in side["nodes"]}["get_material_image"] == ["Drywall"]
    solid = reference_plan(open_plan(solid=True), parse("The walls of the kitchen are blue."))
    assert {n["tool"]: n["args"] for n in solid["nodes"]}["get_material_image"] == ["BluePaint", HIDDEN]


def test_reference_arguments_skip_an_empty_walls_material() -> None:
    text = "The walls of the kitchen are blue."
    assert reference_arguments(ToolContext.for_scene(open_plan(), render=False), "get_material_image", text) == [
        "BluePaint"]
    solid = ToolContext.for_scene(open_plan(solid=True), render=False)
    assert reference_arguments(solid, "get_material_image", text) == ["BluePaint", HIDDEN]


def test_judge_views_face_solid_walls_before_empty_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = views.wall_view

    def spy(scene: Scene, wall_id: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(wall_id)
        return real(scene, wall_id, *args, **kwargs)

    monkeypatch.setattr(views, "wall_view", spy)
    images = judge_views(open_plan(), px=64)
    # The living room is the largest; it has five inside wall sides, one of them open.
    assert len(images) == 5 and len(seen) == 4
    assert LIVING_OPEN not in seen and LIVING_WEST_SOLID in seen
    seen.clear()
    judge_views(open_plan(solid=True), px=64)
    assert LIVING_OPEN in seen
