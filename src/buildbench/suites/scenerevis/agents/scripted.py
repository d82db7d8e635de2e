"""Scripted SceneReVis agents. Every one answers in the model's text protocol (§2.2), so the
env parses their replies exactly as it parses a model's.

* ``diagnose``: turn 0 creates a room of the instruction's type; later turns first repair
  what the physics check reports (push the smaller object of a colliding pair out along the
  shallower axis, pull out-of-bounds objects back, relocate or as a last resort remove
  either), then add the room's missing core furniture, ``ADD_PER_TURN`` at a time, at free
  wall spots; it terminates when the room is clean and complete.
* ``one-pass``: all objects in one turn at nominal spots (round-robin along the walls, no
  free-space check), then terminates without looking (a LayoutGPT-like baseline).
* ``random``: the same objects at uniform random spots and yaws in the room's bounding box.
* ``oracle``: replays the recorded chain the task carries (``target["chain"]``).
"""

from __future__ import annotations

import json
import math
from abc import abstractmethod
from typing import Any

import numpy as np

from buildbench.harness import Action, Agent, EpisodeContext, Observation, Task
from buildbench.harness.errors import ConfigError

from ..actions import NEED_RETRIEVAL
from ..options import SceneReVisOptions
from .planner import (
    TEMPLATES,
    Floor,
    Item,
    Spot,
    describe,
    find_spot,
    make_room,
    missing_items,
    object_footprint,
    room_type_of,
    style_of,
    wall_spots,
    wanted_items,
    yaw_of,
    yaw_quat,
)

#: Objects the diagnose agent adds per turn (coarse to fine: template order).
ADD_PER_TURN = 3


def create_reply(room: dict[str, Any]) -> str:
    return f"<create_scene>\n```json\n{json.dumps(room, indent=2)}\n```\n</create_scene>"


def turn_reply(think: str, calls: list[dict[str, Any]]) -> str:
    numbered = [{"id": f"tool_{k + 1}", **c} for k, c in enumerate(calls)]
    return f"<think>\n{think}\n</think>\n\n<tool_calls>\n{json.dumps(numbered, indent=2)}\n</tool_calls>"


def add_call(item: Item, spot: Spot, style: str, floor_y: float) -> dict[str, Any]:
    return {"name": "add_object", "arguments": {
        "object_description": describe(item, style), "position": [spot.x, round(floor_y, 3), spot.z],
        "rotation": yaw_quat(spot.yaw_deg), "size": [round(v, 3) for v in item.size]}}


def _handle(obj: dict[str, Any]) -> str:
    return str(obj.get("id") or obj.get("jid"))


def _asset_names(obj: dict[str, Any]) -> tuple[Any, Any]:
    """What a ``jid`` argument matches under ``address=jid``: the asset jid (not while it is the
    retrieval placeholder) or the Objaverse uid."""
    jid = obj.get("jid")
    return (None if jid == NEED_RETRIEVAL else jid), obj.get("uid")


def call_names(scene: dict[str, Any]) -> list[str | None]:
    """What a call's ``jid`` argument names each scene object by, in scene order; None where no
    value names that object alone.

    A scene that shows ids (``address=id``) names every object by its id. Under ``address=jid``
    it shows none and a call names an asset jid or uid: the released executor edits the first
    object carrying it and removes every copy, so only a value one object holds names one
    object, and an object still waiting for retrieval has none.
    """
    objects = list(scene.get("objects") or [])
    names: list[str | None] = []
    for obj in objects:
        if obj.get("id"):
            names.append(str(obj["id"]))
            continue
        name = next((v for v in _asset_names(obj) if isinstance(v, str) and v), None)
        holders = sum(1 for other in objects if name in _asset_names(other)) if name else 0
        names.append(name if holders == 1 else None)
    return names


def _terminate(reason: str) -> dict[str, Any]:
    return {"name": "terminate", "arguments": {"reason": reason}}


class _Planned(Agent):
    """Shared turn-0 behaviour: a room of the instruction's type drawn with the episode seed."""

    def __init__(self, task: Task, name: str) -> None:
        self.task = task
        self.name = name
        instruction = str(task.inputs.get("instruction", ""))
        known = str(task.metadata.get("room_type", ""))
        self.room_type = known if known in TEMPLATES else room_type_of(instruction)
        self.style = style_of(instruction)
        self.items = wanted_items(self.room_type, instruction)

    def _scene(self, observation: Observation) -> dict[str, Any] | None:
        scene = observation.state.get("scene")
        return scene if isinstance(scene, dict) else None

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        scene = self._scene(observation)
        if scene is None:
            room = make_room(self.room_type, np.random.default_rng([ctx.seed, 0]))
            return Action(text=create_reply(room))
        return Action(text=self.edit(scene, observation, ctx))

    @abstractmethod
    def edit(self, scene: dict[str, Any], observation: Observation, ctx: EpisodeContext) -> str:
        """The reply to a diagnose-and-act turn."""


class DiagnoseAgent(_Planned):
    """Repairs what the physics check reports, adds missing core furniture, then stops.

    It plans on instance ids (the state's ``object_ids``, which the physics report names) and
    writes each call's target as :func:`call_names` gives it; a conflict whose objects no call
    can name (``address=jid``: a shared or missing jid) is left, and said so when it stops.
    """

    def __init__(self, task: Task, name: str) -> None:
        super().__init__(task, name)
        self._names: dict[str, str | None] = {}

    def edit(self, scene: dict[str, Any], observation: Observation, ctx: EpisodeContext) -> str:
        objects = list(scene["objects"])
        ids = [str(i) for i in observation.state.get("object_ids") or [_handle(o) for o in objects]]
        self._names = dict(zip(ids, call_names(scene), strict=True))
        scene = {**scene, "objects": [{**o, "id": i} for o, i in zip(objects, ids, strict=True)]}
        collisions = observation.state.get("collisions") or []
        outside = observation.state.get("out_of_bounds") or []
        status = "No physical conflicts."
        if collisions or outside:
            repairs, notes = self.repairs(scene, collisions, outside)
            if repairs:
                think = ("Physical conflicts first. " + " ".join(notes) +
                         " Layout additions wait until the scene is clean.")
                return turn_reply(think, repairs)
            status = (f"{len(collisions) + len(outside)} physical conflict(s) remain between objects that no call "
                      "can name alone (a jid that several objects share, or none yet).")
        missing = missing_items(self.items, scene)
        floor = Floor(scene)
        calls: list[dict[str, Any]] = []
        placed: list[str] = []
        skipped: list[str] = []
        work = {**scene, "objects": list(scene["objects"])}
        for item in missing:
            if len(calls) == ADD_PER_TURN:
                break
            spot = find_spot(item, floor, work)
            if spot is None:
                skipped.append(item.category)
                continue
            call = add_call(item, spot, self.style, floor.floor_y)
            calls.append(call)
            floor.take(f"new{len(calls)}", spot.shape(item.size))
            args = call["arguments"]
            work["objects"].append({"desc": args["object_description"], "pos": args["position"],
                                    "rot": args["rotation"], "size": args["size"]})
            placed.append(f"{item.category} at ({spot.x:.2f}, {spot.z:.2f}) facing {spot.yaw_deg:.0f}°")
        if not calls:
            left = bool(collisions or outside)
            reason = (f"{status} The room holds its core furniture." if left else
                      "The room is free of collisions and out-of-bounds objects and holds its core furniture.")
            if skipped:
                reason += f" No free spot was left for: {', '.join(skipped)}."
            return turn_reply(reason if left else f"{status} {reason}", [_terminate(reason)])
        think = (f"{status} The {self.room_type} still lacks "
                 f"{', '.join(i.category for i in missing)}; placing the largest first against free walls: "
                 + "; ".join(placed) + ".")
        return turn_reply(think, calls)

    def repairs(self, scene: dict[str, Any], collisions: list[list[Any]],
                outside: list[list[Any]]) -> tuple[list[dict[str, Any]], list[str]]:
        """Calls that resolve the reported problems (each object handled once per turn)."""
        objects = {_handle(o): o for o in scene["objects"] if self._names.get(_handle(o))}
        moved: set[str] = set()
        calls: list[dict[str, Any]] = []
        notes: list[str] = []
        floor = Floor(scene)
        for oid, frac in outside:
            if oid in objects and oid not in moved:
                moved.add(oid)
                calls += self._relocate(objects[oid], scene, floor, notes,
                                        f"{self._label(objects[oid])} is {100 * float(frac):.0f}% outside the room")
        everything = {_handle(o): o for o in scene["objects"]}
        for a, b, depth in collisions:
            if a in moved or b in moved or (a not in objects and b not in objects) or \
                    a not in everything or b not in everything:
                continue
            # The smaller object moves, unless no call can name it.
            small, big = sorted((everything[a], everything[b]),
                                key=lambda o: (_handle(o) not in objects, float(np.prod(o["size"])), _handle(o)))
            moved.add(_handle(small))
            why = f"{self._label(small)} overlaps {self._label(big)} by {100 * float(depth):.1f} cm"
            push = self._push(small, big, float(depth), floor)
            if push is not None:
                calls.append({"name": "move_object", "arguments": {"jid": self._name(small), "new_position": push}})
                notes.append(f"{why}: pushing it clear along the shallower axis.")
                floor = Floor({**scene, "objects": [o for o in scene["objects"] if o is not small]})
                floor.take(_handle(small), object_footprint({**small, "pos": push}))
                continue
            calls += self._relocate(small, scene, floor, notes, why)
        return calls, notes

    def _push(self, small: dict[str, Any], big: dict[str, Any], depth: float, floor: Floor) -> list[float] | None:
        """Move ``small`` out of ``big`` along ``big``'s local axis that needs the shorter push."""
        yaw = math.radians(yaw_of(big["rot"]))
        axes = [(math.cos(yaw), -math.sin(yaw)), (math.sin(yaw), math.cos(yaw))]
        dx, dz = float(small["pos"][0]) - float(big["pos"][0]), float(small["pos"][2]) - float(big["pos"][2])
        other = object_footprint(big)
        options = []
        for ax, az in axes:
            sign = 1.0 if dx * ax + dz * az >= 0 else -1.0
            for step in np.arange(depth + 0.06, 3.0, 0.05):
                cand = [float(small["pos"][0]) + sign * ax * step, float(small["pos"][1]),
                        float(small["pos"][2]) + sign * az * step]
                moved = object_footprint({**small, "pos": cand})
                if not moved.buffer(0.049).intersects(other) and floor.inner.contains(moved) and \
                        _clear_of_others(moved, floor, {_handle(small), _handle(big)}):
                    options.append((round(float(step), 6), [round(v, 3) for v in cand]))
                    break
        return min(options)[1] if options else None

    def _relocate(self, obj: dict[str, Any], scene: dict[str, Any], floor: Floor, notes: list[str],
                  why: str) -> list[dict[str, Any]]:
        oid, name = _handle(obj), self._name(obj)
        rest = Floor(scene, exclude={oid})
        for spot in wall_spots(rest, obj["size"]):
            shape = spot.shape(obj["size"])
            if rest.free(shape):
                notes.append(f"{why}: moving it to a free wall spot ({spot.x:.2f}, {spot.z:.2f}).")
                floor.take(oid, shape)
                return [{"name": "move_object", "arguments": {"jid": name, "new_position": [spot.x, obj["pos"][1], spot.z]}},
                        {"name": "rotate_object", "arguments": {"jid": name, "new_rotation": yaw_quat(spot.yaw_deg)}}]
        notes.append(f"{why}: no free spot fits it, so it is removed.")
        return [{"name": "remove_object", "arguments": {"jid": name}}]

    def _name(self, obj: dict[str, Any]) -> str:
        name = self._names.get(_handle(obj))
        assert name is not None, "repairs only edit objects a call can name"
        return name

    def _label(self, obj: dict[str, Any]) -> str:
        """The object as the scene names it: its call name, else the start of its description."""
        return self._names.get(_handle(obj)) or f"the {str(obj.get('desc', 'object'))[:40]}"


def _clear_of_others(shape: Any, floor: Floor, skip: set[str]) -> bool:
    grown = shape.buffer(0.049)
    return not any(grown.intersects(other) for oid, other in floor.taken if oid not in skip)


class OnePassAgent(_Planned):
    """Every object in one turn at nominal wall spots, no checks; then terminate."""

    def edit(self, scene: dict[str, Any], observation: Observation, ctx: EpisodeContext) -> str:
        if scene["objects"]:
            return turn_reply("The layout was planned in one pass.", [_terminate("One-pass layout complete.")])
        floor = Floor(scene)
        walls = floor.walls()
        calls = []
        for k, item in enumerate(self.items):
            start, d, normal, length = walls[k % len(walls)]
            slot = (k // len(walls) + 1) / (len(self.items) // len(walls) + 2)
            c = start + d * length * slot + normal * (item.size[2] / 2 + 0.02)
            yaw = math.degrees(math.atan2(normal[0], normal[1]))
            calls.append(add_call(item, Spot(round(float(c[0]), 3), round(float(c[1]), 3), round(yaw, 3)),
                                  self.style, floor.floor_y))
        return turn_reply(f"Planning the whole {self.room_type} at once along the walls.", calls)


class RandomAgent(_Planned):
    """The same objects at random spots and yaws in the room's bounding box; then terminate."""

    def edit(self, scene: dict[str, Any], observation: Observation, ctx: EpisodeContext) -> str:
        if scene["objects"]:
            return turn_reply("Random placement done.", [_terminate("Random layout complete.")])
        rng = np.random.default_rng([ctx.seed, 1])
        pts = np.asarray(scene["bounds_bottom"], dtype=float)[:, [0, 2]]
        lo, hi = pts.min(0), pts.max(0)
        floor_y = float(np.asarray(scene["bounds_bottom"])[:, 1].min())
        calls = []
        for item in self.items:
            x, z = rng.uniform(lo, hi)
            spot = Spot(round(float(x), 3), round(float(z), 3), round(float(rng.uniform(0, 360)), 3))
            calls.append(add_call(item, spot, self.style, floor_y))
        return turn_reply("Placing every object at random.", calls)


class OracleAgent(Agent):
    """Replays ``task.target["chain"]``: the room, each recorded turn's calls, then terminate."""

    name = "oracle"

    def __init__(self, task: Task) -> None:
        chain = task.target.get("chain")
        if not isinstance(chain, dict) or "room" not in chain or not isinstance(chain.get("turns"), list):
            raise ConfigError(f"task {task.id} carries no recorded chain (target.chain with room and turns); "
                              "the oracle replays chains made by `buildbench scenerevis reverse`")
        self.room = {**dict(chain["room"]), "objects": []}
        self.turns = [list(t) for t in chain["turns"]]
        self._next = 0

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        if observation.state.get("scene") is None:
            return Action(text=create_reply(self.room))
        if self._next < len(self.turns):
            calls = [{"name": c["name"], "arguments": c["arguments"]} for c in self.turns[self._next]]
            self._next += 1
            return Action(text=turn_reply(f"Replaying recorded turn {self._next} of {len(self.turns)}.", calls))
        return Action(text=turn_reply("The recorded chain is complete.",
                                      [_terminate("The current scene layout is already optimal.")]))


def _factory(cls: type[_Planned], name: str) -> Any:
    def make(task: Task, model: Any, options: SceneReVisOptions) -> Agent:
        return cls(task, name)

    return make


diagnose = _factory(DiagnoseAgent, "diagnose")
one_pass = _factory(OnePassAgent, "one-pass")
random_placement = _factory(RandomAgent, "random")


def oracle(task: Task, model: Any, options: SceneReVisOptions) -> Agent:
    return OracleAgent(task)

