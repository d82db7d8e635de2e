"""Reference tool plans: the plan an ideal LEGO-Eval evaluator makes for a typed constraint.

The paper scores its planner and argument selector against human-annotated plans (spec
6.3, Tables 5 and 7). Our constraints carry typed programs, so the annotation is derived:
for each program, the tools that gather exactly the facts its check reads, from its type's
menu (spec 3.4), wired as a DAG, with the arguments set to the ids and material names the
check touches in *this* scene. The shape (tools and edges) depends on the program alone,
as a planner sees only the constraint; the arguments depend on the scene, as the argument
selector sees earlier tool outputs. A node whose arguments come out empty (the objects a
count expects are absent) stays in the plan with an empty list.

A plan is JSON: ``{"nodes": [{"tool": str, "args": list}], "edges": [{"from", "to"}]}``,
edges including those from ``START``; ``args`` is a list of ids (or material names), or for
``get_spatial_relation`` a list of id groups, anchor first; tools without an argument
(``get_room_list``, ``get_topdown_scene``, the multimodal tools) have ``[]``.

Derivation rules. ``R(ref)`` are the ids of the rooms a room reference matches (as the
checker matches them), ``ALL`` every room. A selector ``S`` looks in ``rooms(S)`` =
``R(S.room)``, or ``ALL`` when it names no room; its ids are the doors, windows or objects
of its category (and exact id) in those rooms, *ignoring its colour, material and shape*:
those are what the evaluator must inspect, so every candidate is looked at. Its listing
chain is ``get_object_list[rooms(S)] -> get_object_info[ids]`` (``get_door_*`` or
``get_window_*`` for the door and window categories). Every plan starts ``START ->
get_room_list``; list tools and room-keyed views hang off ``get_room_list``.

=====================  =========================================================================
program                tools (arguments)
=====================  =========================================================================
layout room_exists     get_room_info[R(room)]; get_topdown_scene (from START)
layout room_count      get_topdown_scene; with a room type also get_room_info[ALL]
layout room_area       get_room_info[R]; get_topdown_room[R]
layout door_between    get_door_list[R(a) + R(b)] -> get_door_info[their doors]; get_topdown_scene
layout window_count    get_window_list[R] -> get_window_info[their windows]; get_topdown_room[R];
                       with a direction also get_wall_list[R] -> get_wall_info[their walls]
room relation          get_room_info[R(a) + R(b)]; get_topdown_scene
material, floor        get_room_info[R] -> get_material_image[their floor materials]
                       -> get_property_description
material, wall         get_wall_list[R] -> get_wall_info[their walls] -> get_material_image[the
                       materials of the visible (non-empty) walls on the named side, or of all
                       visible walls] -> get_property_description
attribute              listing chain of ``of``; list -> get_multiview_rendered_object[ids]
                       -> get_property_verification
count                  listing chain of ``of``; get_topdown_room[rooms(of)]; with colour, material
                       or shape also list -> get_multiview_rendered_object[ids]
object relation        listing chains of a, b, c (merged per kind); every list ->
                       get_spatial_relation[groups]: ``[b, *a]`` per b for binary relations,
                       ``[b, *a, *c]`` per b for ternary ones, ``[a]`` per a for unary ones,
                       which also read get_room_info[rooms(a)]
=====================  =========================================================================

Tasks whose constraints have no program (the released LEGO-Bench) get no reference plan
(None); the metrics leave those constraints out and count them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from buildbench.harness import Task
from buildbench.scenes.model import Scene, wall_direction

from .check.select import Candidate, candidates, rooms_matching, select
from .constraints import Attribute, Count, Layout, Material, Program, Relation, RoomRelation, Selector
from .task_records import task_constraints
from .tools.context import SceneIndex

START = "START"
#: The tool pair that lists and describes each kind of element.
_CHAINS = {"object": ("get_object_list", "get_object_info"), "door": ("get_door_list", "get_door_info"),
           "window": ("get_window_list", "get_window_info")}


@dataclass
class _Builder:
    """Collects nodes (first call fixes a tool's place) and edges of one plan."""

    nodes: dict[str, list[Any]] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)

    def add(self, tool: str, args: Sequence[Any], *parents: str) -> None:
        if tool in self.nodes:
            self.nodes[tool] = _unique([*self.nodes[tool], *args])
        else:
            self.nodes[tool] = _unique(args)
        for parent in parents or (START,):
            if (parent, tool) not in self.edges:
                self.edges.append((parent, tool))

    def to_json(self) -> dict[str, Any]:
        return {"nodes": [{"tool": t, "args": a} for t, a in self.nodes.items()],
                "edges": [{"from": a, "to": b} for a, b in self.edges]}


def _unique(items: Sequence[Any]) -> list[Any]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = repr(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


@dataclass
class _Scene:
    """What the derivation reads of one scene: its id index and selector candidates."""

    scene: Scene
    index: SceneIndex
    pool: list[Candidate]

    @classmethod
    def of(cls, scene: Scene) -> _Scene:
        return cls(scene, SceneIndex.build(scene), candidates(scene))

    def rooms(self, ref: str | None) -> list[str]:
        if ref is None:
            return [r.id for r in self.scene.rooms]
        return [r.id for r in rooms_matching(self.scene, ref)]

    def walls(self, rooms: list[str]) -> list[str]:
        return [w for r in rooms for w in self.index.walls_by_room.get(r, [])]


def _kind(sel: Selector) -> str:
    return sel.category if sel.category in ("door", "window") else "object"


def _ids(s: _Scene, sel: Selector) -> list[str]:
    """Candidates of the selector's category, id and room; attributes never narrow them."""
    bare = Selector(category=sel.category, room=sel.room, id=sel.id)
    return [c.id for c in select(s.scene, bare, s.pool)]


def _chains(b: _Builder, s: _Scene, selectors: Sequence[Selector]) -> list[str]:
    """The listing chains of the selectors, merged per kind; returns the list tools used."""
    lists = []
    for sel in selectors:
        list_tool, info_tool = _CHAINS[_kind(sel)]
        b.add(list_tool, s.rooms(sel.room), "get_room_list")
        b.add(info_tool, _ids(s, sel), list_tool)
        lists.append(list_tool)
    return list(dict.fromkeys(lists))


def _layout(b: _Builder, s: _Scene, p: Layout) -> None:
    rooms = s.rooms(p.room) if p.room is not None else []
    if p.kind == "room_exists":
        b.add("get_room_info", rooms, "get_room_list")
        b.add("get_topdown_scene", [])
    elif p.kind == "room_count":
        if p.room_type is not None:
            b.add("get_room_info", s.rooms(None), "get_room_list")
        b.add("get_topdown_scene", [])
    elif p.kind == "room_area":
        b.add("get_room_info", rooms, "get_room_list")
        b.add("get_topdown_room", rooms, "get_room_list")
    elif p.kind == "door_between":
        joined = [r for ref in p.rooms for r in s.rooms(ref)]
        b.add("get_door_list", joined, "get_room_list")
        b.add("get_door_info", [d for r in joined for d in s.index.doors_by_room.get(r, [])], "get_door_list")
        b.add("get_topdown_scene", [])
    else:  # window_count
        b.add("get_window_list", rooms, "get_room_list")
        b.add("get_window_info", [w for r in rooms for w in s.index.windows_by_room.get(r, [])], "get_window_list")
        b.add("get_topdown_room", rooms, "get_room_list")
        if p.direction is not None:
            b.add("get_wall_list", rooms, "get_room_list")
            b.add("get_wall_info", s.walls(rooms), "get_wall_list")


def _material(b: _Builder, s: _Scene, p: Material) -> None:
    rooms = s.rooms(p.room)
    if p.surface == "floor":
        b.add("get_room_info", rooms, "get_room_list")
        names = [m for r in rooms if (m := s.index.rooms[r].floor_material)]
        b.add("get_material_image", names, "get_room_info")
    else:
        b.add("get_wall_list", rooms, "get_room_list")
        walls = s.walls(rooms)
        # Every wall's info (it is what tells an evaluator which walls are empty), but only
        # the visible walls' materials: the checker ignores an empty wall's material.
        b.add("get_wall_info", walls, "get_wall_list")
        names = [m for w in walls if not s.index.walls[w].empty and (m := s.index.walls[w].material)
                 and _faces(s, w, p.direction)]
        b.add("get_material_image", names, "get_wall_info")
    b.add("get_property_description", [], "get_material_image")


def _faces(s: _Scene, wall_id: str, direction: str | None) -> bool:
    if direction is None:
        return True
    wall = s.index.walls[wall_id]
    return wall_direction(wall.start, wall.end, s.index.rooms[wall.room_id].vertices) == direction


def _attribute(b: _Builder, s: _Scene, p: Attribute) -> None:
    (list_tool,) = _chains(b, s, [p.of])
    b.add("get_multiview_rendered_object", _ids(s, p.of), list_tool)
    b.add("get_property_verification", [], "get_multiview_rendered_object")


def _count(b: _Builder, s: _Scene, p: Count) -> None:
    (list_tool,) = _chains(b, s, [p.of])
    b.add("get_topdown_room", s.rooms(p.of.room), "get_room_list")
    if p.of.attributes():
        b.add("get_multiview_rendered_object", _ids(s, p.of), list_tool)


def _relation(b: _Builder, s: _Scene, p: Relation) -> None:
    selectors = [x for x in (p.a, p.b, p.c) if x is not None]
    lists = _chains(b, s, selectors)
    subjects = _ids(s, p.a)
    if p.b is None:
        b.add("get_room_info", s.rooms(p.a.room), "get_room_list")
        groups = [[a] for a in subjects]
    else:
        thirds = _ids(s, p.c) if p.c is not None else []
        groups = [[anchor, *(x for x in [*subjects, *thirds] if x != anchor)] for anchor in _ids(s, p.b)]
    b.add("get_spatial_relation", groups, *lists)


def _room_relation(b: _Builder, s: _Scene, p: RoomRelation) -> None:
    b.add("get_room_info", [*s.rooms(p.a), *s.rooms(p.b)], "get_room_list")
    b.add("get_topdown_scene", [])


def _derive(s: _Scene, program: Program) -> dict[str, Any]:
    b = _Builder()
    b.add("get_room_list", [])
    if isinstance(program, Layout):
        _layout(b, s, program)
    elif isinstance(program, RoomRelation):
        _room_relation(b, s, program)
    elif isinstance(program, Material):
        _material(b, s, program)
    elif isinstance(program, Attribute):
        _attribute(b, s, program)
    elif isinstance(program, Count):
        _count(b, s, program)
    else:
        _relation(b, s, program)
    return b.to_json()


def reference_plan(scene: Scene, program: Program) -> dict[str, Any]:
    """The reference plan of one program on one scene (see the module doc)."""
    return _derive(_Scene.of(scene), program)


def reference_plans(scene: Scene | Mapping[str, Any], programs: Sequence[Program | None]) -> list[dict[str, Any] | None]:
    """One reference plan per program (None where a constraint has no program). A scene
    that does not read gets no plans: evaluating it fails with the reader's message anyway,
    and its episodes never reach the plan metrics."""
    if all(p is None for p in programs):
        return [None] * len(programs)
    if not isinstance(scene, Scene):
        from buildbench.scenes.io import load_scene
        from buildbench.scenes.model import SceneFormatError

        try:
            scene = load_scene(dict(scene))
        except SceneFormatError:
            return [None] * len(programs)
    s = _Scene.of(scene)
    return [None if p is None else _derive(s, p) for p in programs]


def plans_from_json(scene: Scene | Mapping[str, Any], programs: Sequence[Mapping[str, Any] | None],
                    where: str = "programs") -> list[dict[str, Any] | None]:
    """:func:`reference_plans` for programs in their JSON form (ProgramError names ``where``)."""
    from .constraints import parse_program

    return reference_plans(scene, [None if p is None else parse_program(p, f"{where}[{i}]")
                                   for i, p in enumerate(programs)])


def task_plans(task: Task) -> list[dict[str, Any] | None]:
    """A task's reference plans: stored in ``target["plans"]``, else derived from its
    programs (a LEGO-Bench folder we wrote carries programs), else None per constraint."""
    n = len(task.inputs.get("constraints") or [])
    stored = task.target.get("plans")
    if isinstance(stored, list) and len(stored) == n:
        return list(stored)
    programs = [c.program for c in task_constraints(task)]
    if all(p is None for p in programs):
        return [None] * n
    return reference_plans(task.inputs["scene"], programs)


def plan_tools(plan: Mapping[str, Any]) -> list[str]:
    """The tools of a reference plan, in order."""
    return [str(n["tool"]) for n in plan["nodes"]]


def plan_edges(plan: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(e["from"]), str(e["to"])) for e in plan["edges"]]
