"""Reference tool plans (plans.py) and the plan metrics (tool F1, argument F1, exact GED):
hand-checked plans for each constraint kind, every generated plan on its menu with real
ids, hand-computed scores of a perfect and a broken plan, and the skip counts."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pytest

from buildbench.harness import Task
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.model import Scene
from buildbench.suites.legoeval.constraints import parse_program
from buildbench.suites.legoeval.outcome import LegoEvalOutcome
from buildbench.suites.legoeval.pipeline.plan import given_plan
from buildbench.suites.legoeval.plans import reference_plan, reference_plans, task_plans
from buildbench.suites.legoeval.score import plan_ged, plan_graph, plan_metrics, score, score_plan
from buildbench.suites.legoeval.tasks import ConstraintSpec, OutcomeError, generated_tasks, make_task
from buildbench.suites.legoeval.tools import MENUS, TOOLS, tool_menu

LR, BR = "living room", "bedroom"
SOFA, BED = "sofa-0 (living room)", "bed-0 (bedroom)"
ARM0, ARM1 = "armchair-0 (living room)", "armchair-1 (living room)"
DOOR, WINDOW = "door|0|living room|bedroom", "window|wall|bedroom|north|1|0"
BR_WALLS = [f"wall|bedroom|{d}|{i}" for i, d in enumerate(("west", "north", "east", "south"))]
BRICK = "BrickSmallNew0073_4_S"


@pytest.fixture(scope="module")
def scene() -> Scene:
    b = HouseBuilder()
    b.room(LR, (0, 0, 6, 4), room_type=LR, floor_material="BedroomCarpet")
    b.room(BR, (6, 0, 10, 4), room_type=BR, floor_material="DarkWoodFloors")
    b.door(LR, BR, along=0.2)
    b.window(BR, "north")
    b.place("bed", BR, center_xz=(8, 2), yaw_deg=0)
    b.place("sofa", LR, center_xz=(3, 1.0), yaw_deg=0, color="red")
    b.place("armchair", LR, center_xz=(4.5, 1.0), yaw_deg=270)
    b.place("armchair", LR, center_xz=(1.5, 1.0), yaw_deg=90)
    s = b.build()
    s.wall("wall|bedroom|north|1").material = BRICK
    return s


def plan_of(scene: Scene, program: dict[str, Any]) -> tuple[dict[str, list[Any]], set[tuple[str, str]]]:
    plan = reference_plan(scene, parse_program(program))
    return {n["tool"]: n["args"] for n in plan["nodes"]}, {(e["from"], e["to"]) for e in plan["edges"]}


ROOT = {("START", "get_room_list")}


def test_layout_plans(scene: Scene) -> None:
    nodes, edges = plan_of(scene, {"op": "layout", "kind": "room_exists", "room": "bedroom"})
    assert nodes == {"get_room_list": [], "get_room_info": [BR], "get_topdown_scene": []}
    assert edges == ROOT | {("get_room_list", "get_room_info"), ("START", "get_topdown_scene")}
    # a plain room count needs the list and a look; a typed one also every room's type
    nodes, _ = plan_of(scene, {"op": "layout", "kind": "room_count", "cmp": "eq", "n": 2})
    assert nodes == {"get_room_list": [], "get_topdown_scene": []}
    nodes, _ = plan_of(scene, {"op": "layout", "kind": "room_count", "room_type": "bedroom", "n": 1})
    assert nodes["get_room_info"] == [LR, BR]
    nodes, edges = plan_of(scene, {"op": "layout", "kind": "room_area", "room": "living room", "min_m2": 20})
    assert nodes == {"get_room_list": [], "get_room_info": [LR], "get_topdown_room": [LR]}
    assert ("get_room_list", "get_topdown_room") in edges
    nodes, edges = plan_of(scene, {"op": "layout", "kind": "door_between", "rooms": ["bedroom", "exterior"]})
    assert nodes == {"get_room_list": [], "get_door_list": [BR], "get_door_info": [DOOR], "get_topdown_scene": []}
    assert edges == ROOT | {("get_room_list", "get_door_list"), ("get_door_list", "get_door_info"),
                            ("START", "get_topdown_scene")}
    nodes, edges = plan_of(scene, {"op": "layout", "kind": "window_count", "room": "bedroom", "direction": "north",
                                   "cmp": "ge", "n": 1})
    assert nodes == {"get_room_list": [], "get_window_list": [BR], "get_window_info": [WINDOW],
                     "get_topdown_room": [BR], "get_wall_list": [BR], "get_wall_info": BR_WALLS}
    assert ("get_window_list", "get_window_info") in edges and ("get_wall_list", "get_wall_info") in edges
    nodes, _ = plan_of(scene, {"op": "relation", "rel": "adjacent_rooms", "a": {"room": "bedroom"},
                               "b": {"room": "living room"}})
    assert nodes == {"get_room_list": [], "get_room_info": [BR, LR], "get_topdown_scene": []}


def test_material_plans(scene: Scene) -> None:
    nodes, edges = plan_of(scene, {"op": "material", "room": "bedroom", "surface": "floor", "value": "wood"})
    assert nodes == {"get_room_list": [], "get_room_info": [BR], "get_material_image": ["DarkWoodFloors"],
                     "get_property_description": []}
    assert edges == ROOT | {("get_room_list", "get_room_info"), ("get_room_info", "get_material_image"),
                            ("get_material_image", "get_property_description")}
    # the north wall alone is brick: the image covers that side's material, the info every wall
    nodes, edges = plan_of(scene, {"op": "material", "room": "bedroom", "surface": "wall", "value": "brick",
                                   "direction": "north"})
    assert nodes["get_wall_list"] == [BR] and nodes["get_wall_info"] == BR_WALLS
    assert nodes["get_material_image"] == [BRICK]
    assert ("get_wall_info", "get_material_image") in edges
    nodes, _ = plan_of(scene, {"op": "material", "room": "bedroom", "surface": "wall", "value": "white"})
    assert nodes["get_material_image"] == ["Drywall", BRICK]


def test_object_plans(scene: Scene) -> None:
    # attributes never narrow the candidates: both armchairs are looked at
    nodes, edges = plan_of(scene, {"op": "attribute", "of": {"category": "armchair", "room": "living room",
                                                             "color": "red"}, "attrs": {"material": "leather"}})
    assert nodes == {"get_room_list": [], "get_object_list": [LR], "get_object_info": [ARM0, ARM1],
                     "get_multiview_rendered_object": [ARM0, ARM1], "get_property_verification": []}
    assert edges == ROOT | {("get_room_list", "get_object_list"), ("get_object_list", "get_object_info"),
                            ("get_object_list", "get_multiview_rendered_object"),
                            ("get_multiview_rendered_object", "get_property_verification")}
    nodes, _ = plan_of(scene, {"op": "attribute", "of": {"category": "door", "room": "bedroom"},
                               "attrs": {"material": "wood"}})
    assert nodes["get_door_list"] == [BR] and nodes["get_door_info"] == [DOOR]
    assert nodes["get_multiview_rendered_object"] == [DOOR] and "get_object_list" not in nodes
    nodes, edges = plan_of(scene, {"op": "count", "of": {"category": "bed", "room": "bedroom"}, "cmp": "ge", "n": 1})
    assert nodes == {"get_room_list": [], "get_object_list": [BR], "get_object_info": [BED], "get_topdown_room": [BR]}
    assert ("get_room_list", "get_topdown_room") in edges
    # an absence keeps its shape; there is nothing to describe
    nodes, _ = plan_of(scene, {"op": "count", "of": {"category": "tv", "room": "bedroom"}, "cmp": "eq", "n": 0})
    assert nodes["get_object_info"] == [] and nodes["get_object_list"] == [BR]
    nodes, _ = plan_of(scene, {"op": "count", "of": {"category": "sofa", "color": "red"}, "cmp": "ge", "n": 1})
    assert nodes["get_object_list"] == [LR, BR] and nodes["get_multiview_rendered_object"] == [SOFA]


def test_relation_plans(scene: Scene) -> None:
    nodes, edges = plan_of(scene, {"op": "relation", "rel": "right_of", "a": {"category": "armchair",
                                                                            "room": "living room"},
                                   "b": {"category": "sofa"}})
    assert nodes == {"get_room_list": [], "get_object_list": [LR, BR], "get_object_info": [ARM0, ARM1, SOFA],
                     "get_spatial_relation": [[SOFA, ARM0, ARM1]]}
    assert ("get_object_list", "get_spatial_relation") in edges
    nodes, _ = plan_of(scene, {"op": "relation", "rel": "between", "a": {"category": "sofa", "room": "living room"},
                               "b": {"category": "armchair"}, "c": {"category": "armchair"}})
    assert nodes["get_spatial_relation"] == [[ARM0, SOFA, ARM1], [ARM1, SOFA, ARM0]]
    nodes, edges = plan_of(scene, {"op": "relation", "rel": "against_wall", "a": {"category": "bed",
                                                                                "room": "bedroom"}})
    assert nodes["get_spatial_relation"] == [[BED]] and nodes["get_room_info"] == [BR]
    assert ("get_room_list", "get_room_info") in edges
    # a door anchor brings the door chain beside the object chain
    nodes, edges = plan_of(scene, {"op": "relation", "rel": "near", "a": {"category": "bed", "room": "bedroom"},
                                   "b": {"category": "door", "room": "bedroom"}})
    assert nodes["get_door_info"] == [DOOR] and nodes["get_spatial_relation"] == [[DOOR, BED]]
    assert {("get_object_list", "get_spatial_relation"), ("get_door_list", "get_spatial_relation")} <= edges


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return generated_tasks(8, seed=3)


def _known_ids(scene: Scene) -> set[str]:
    ids = {r.id for r in scene.rooms} | {w.id for w in scene.walls} | {d.id for d in scene.doors}
    ids |= {w.id for w in scene.windows} | {o.id for o in scene.objects}
    return ids | {r.floor_material or "" for r in scene.rooms} | {w.material or "" for w in scene.walls}


def test_every_generated_plan_is_a_menu_dag_over_real_ids(tasks: list[Task]) -> None:
    from buildbench.scenes.io import load_scene

    seen_tools: set[str] = set()
    for task in tasks:
        scene = load_scene(task.inputs["scene"])
        known = _known_ids(scene)
        plans = task.target["plans"]
        assert len(plans) == len(task.inputs["constraints"])
        for c, plan in zip(task.inputs["constraints"], plans, strict=True):
            tools = [n["tool"] for n in plan["nodes"]]
            assert set(tools) <= set(MENUS[c["type"]]), (c["text"], tools)
            g = plan_graph(plan["edges"])
            assert nx.is_directed_acyclic_graph(g) and set(g.nodes) == {"START", *tools}
            assert all(nx.has_path(g, "START", t) for t in tools)
            for n in plan["nodes"]:
                flat = [x for a in n["args"] for x in (a if isinstance(a, list) else [a])]
                assert set(flat) <= known, (task.id, n)
                assert flat or TOOLS[n["tool"]].family == 0 or n["tool"].endswith("_info") \
                    or n["tool"] in ("get_spatial_relation", "get_multiview_rendered_object")
            seen_tools |= set(tools)
    assert len(seen_tools) >= 14  # the generated mix exercises most of the tools


def test_plans_are_deterministic_and_follow_the_scene(tasks: list[Task]) -> None:
    again = generated_tasks(8, seed=3)
    assert [t.target["plans"] for t in tasks] == [t.target["plans"] for t in again]
    # the twin's plans have the aligned plans' shape; arguments may follow its edits
    aligned, twin = tasks[0], tasks[1]
    for a, b in zip(aligned.target["plans"], twin.target["plans"], strict=True):
        assert a["edges"] == b["edges"]
    assert task_plans(aligned) == aligned.target["plans"]


def test_tasks_without_programs_have_no_plans_and_are_counted(scene: Scene) -> None:
    from buildbench.scenes.io import write_thor

    specs = [ConstraintSpec("c0", "There is a bed in the bedroom.", "OP", None)]
    task = make_task("x", instruction="x", scene=write_thor(scene), constraints=specs, labels=[True], pair="x",
                     aligned=True)
    assert task.target["plans"] == [None] and task_plans(task) == [None]
    outcome = LegoEvalOutcome(verdicts=[{"id": "c0", "holds": True}], valid=True,
                              trace=[{"id": "c0", "plan": [{"from": "START", "to": "get_room_list"}], "calls": []}])
    m = score(task, outcome)
    assert m["plan_constraints"] == 0 and m["plan_skipped"] == 1 and "tool_f1" not in m
    assert "plan_constraints" not in score(task, LegoEvalOutcome())  # no trace, no plan metrics


def _edges(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"from": a, "to": b} for a, b in pairs]


REFERENCE: dict[str, Any] = {
    "nodes": [{"tool": "get_room_list", "args": []}, {"tool": "get_object_list", "args": [LR]},
              {"tool": "get_object_info", "args": [SOFA, ARM0]},
              {"tool": "get_spatial_relation", "args": [[SOFA, ARM0, ARM1]]}],
    "edges": _edges(("START", "get_room_list"), ("get_room_list", "get_object_list"),
                    ("get_object_list", "get_object_info"), ("get_object_list", "get_spatial_relation")),
}


def _calls(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"tool": n["tool"], "args": n["args"]} for n in plan["nodes"]]


def test_a_perfect_plan_scores_one_one_zero() -> None:
    s = score_plan(REFERENCE["edges"], _calls(REFERENCE), REFERENCE)
    assert s.tool_f1 == 1.0 and s.ged == 0.0 and s.argument_f1 == (1.0, 1.0, 1.0)
    # a spatial group is its anchor plus the set of the others
    shuffled = [dict(c, args=[[SOFA, ARM1, ARM0]]) if c["tool"] == "get_spatial_relation" else c
                for c in _calls(REFERENCE)]
    assert score_plan(REFERENCE["edges"], shuffled, REFERENCE).argument_f1 == (1.0, 1.0, 1.0)
    swapped = [dict(c, args=[[ARM0, SOFA, ARM1]]) if c["tool"] == "get_spatial_relation" else c
               for c in _calls(REFERENCE)]
    assert score_plan(REFERENCE["edges"], swapped, REFERENCE).argument_f1 == (1.0, 1.0, 0.0)


def test_a_broken_plan_scores_the_hand_computed_values() -> None:
    # spatial relation replaced by a top-down view hanging off START; one wrong info id
    edges = _edges(("START", "get_room_list"), ("get_room_list", "get_object_list"),
                   ("get_object_list", "get_object_info"), ("START", "get_topdown_scene"))
    calls = [{"tool": "get_room_list", "args": []}, {"tool": "get_object_list", "args": [LR]},
             {"tool": "get_object_info", "args": [SOFA, BED]}, {"tool": "get_topdown_scene", "args": []}]
    s = score_plan(edges, calls, REFERENCE)
    # tools: 3 of 4 right each way -> P = R = F1 = 0.75
    assert s.tool_f1 == pytest.approx(0.75)
    # relabel topdown_scene -> spatial_relation (1), delete START->it (1), insert object_list->it (1)
    assert s.ged == 3.0
    # argument calls of reference tools made: object_list 1.0, object_info P = R = 1/2
    assert s.argument_f1 == (1.0, 0.5)


def test_exact_ged_agrees_with_networkx_on_small_plans() -> None:
    rng = np.random.default_rng([11, 0])
    tools = ["get_room_list", "get_object_list", "get_object_info", "get_topdown_room", "get_spatial_relation"]

    def random_plan() -> list[dict[str, str]]:
        names = [str(x) for x in rng.permutation(tools)[: int(rng.integers(1, 5))]]
        pairs = {("START", names[0])} | {(str(rng.choice(["START", *names[:i]])), names[i])
                                         for i in range(1, len(names))}
        if len(names) > 2 and rng.random() < 0.5:
            pairs.add((names[0], names[-1]))
        return _edges(*sorted(pairs))

    for _ in range(25):
        a, b = random_plan(), random_plan()
        slow = nx.graph_edit_distance(plan_graph(a), plan_graph(b), node_match=lambda p, q: p["tool"] == q["tool"])
        assert plan_ged(a, b) == slow, (a, b)


def test_plan_metrics_skip_failed_planning_and_identified_constraints(tasks: list[Task]) -> None:
    task = tasks[0]
    plans = task.target["plans"]
    trace = [{"id": c["id"], "plan": p["edges"], "calls": _calls(p), "plan_source": "reference"}
             for c, p in zip(task.inputs["constraints"], plans, strict=True)]
    trace[0] = {"id": trace[0]["id"], "plan": [], "calls": [], "error": "tool planning: no usable reply"}
    m = plan_metrics(task, LegoEvalOutcome(trace=trace))
    n = len(plans)
    assert m["plan_constraints"] == n - 1 and m["plan_skipped"] == 1 and m["plans_given"] == n - 1
    assert m["tool_f1"] == 1.0 and m["plan_ged"] == 0.0 and m["argument_f1"] == 1.0
    assert m["arg_calls"] == sum(TOOLS[x["tool"]].family > 0 for p in plans[1:] for x in p["nodes"])
    ident = plan_metrics(task, LegoEvalOutcome(trace=trace, identified=[]))
    assert ident["plan_constraints"] == 0 and ident["plan_skipped"] == n
    with pytest.raises(OutcomeError, match=r"outcome.trace\[0\]"):
        plan_metrics(task, LegoEvalOutcome(trace=["nope"]))
    with pytest.raises(OutcomeError, match="outcome.trace: expected a list"):
        plan_metrics(task, LegoEvalOutcome.from_dict({"trace": {}}))  # a stored outcome is read unchecked


def test_given_plans_carry_no_arguments_and_respect_disabled_groups() -> None:
    plan = given_plan(REFERENCE, "OP")
    assert plan.source == "reference" and plan.nodes == [n["tool"] for n in REFERENCE["nodes"]]
    assert all(len(e) == 2 for e in plan.edges)  # tools and edges only
    pruned = given_plan(REFERENCE, "OP", disabled_groups=("environment", "textual"))
    # list tools stay whatever is disabled; info and the environment tool go
    assert pruned.nodes == ["get_room_list", "get_object_list"]
    assert set(pruned.nodes) <= set(tool_menu("OP", disabled_groups=("environment", "textual")))


def test_reference_plans_of_an_unreadable_scene_are_none() -> None:
    program = parse_program({"op": "layout", "kind": "room_exists", "room": "kitchen"})
    assert reference_plans({}, [program]) == [None]
