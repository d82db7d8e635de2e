"""Rooms and houses (SceneReVis, LEGO-Eval) and the example suite's tower (y up).

Objects are boxes, or, when the run chose ``-o geometry=procedural|mesh``, the meshes the
asset layer gives them at that level (sent as separate triangles, so the page shades each
face flat), coloured by verdict like the boxes.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from buildbench.harness.episode import Episode
from buildbench.harness.episode_outcome import episode_outcome
from buildbench.scenes.model import EXTERIOR, Scene, SceneObject

from . import Artefact, ArtefactContext, no_outcome

#: Wall and opening slab thickness drawn, metres (the scene model keeps walls as lines).
WALL_THICKNESS_M = 0.06


def room_artefact(episode: Episode, context: ArtefactContext) -> Artefact:
    """SceneReVis: the final scene's objects, colliding and out-of-bounds ones marked.

    Judged by the suite's own physics check under its evaluation rules, the check that
    produced the episode's ``collision_rate`` and ``oob_rate``.
    """
    from buildbench.suites.scenerevis.check.layout import parse_layout
    from buildbench.suites.scenerevis.check.physics import check_physics
    from buildbench.suites.scenerevis.outcome import SceneReVisOutcome

    art = Artefact("room")
    outcome = episode_outcome(episode, SceneReVisOutcome)
    if outcome is None:
        return no_outcome(art, episode)
    scene = outcome.scene
    if scene is None:
        art.notes.append("the episode left no final scene")
        return art
    from buildbench.suites.scenerevis.render import scene_model

    layout = parse_layout(scene)
    level = _level(art, context)
    report = check_physics(layout, geometry=level)  # type: ignore[arg-type]
    model = scene_model(scene, level)
    meshes = _meshes(art, model, level)
    names = [f"{layout.ids[i] or i}: {layout.descs[i] or 'object'}" for i in range(len(layout))]
    box_ids = [f"obj-{i}" for i in range(len(layout))]
    colliding, outside = set(report.colliding), set(report.out_of_bounds)
    art.polygon("floor", f"floor of {layout.room_type or 'the room'}",
                [[x, layout.floor_y, z] for x, z in layout.floor_xz], "floor")
    _walls_around(art, layout.floor_xz, layout.floor_y, layout.ceiling_y)
    for i in range(len(layout)):
        status = ("both" if i in colliding and i in outside else "collision" if i in colliding
                  else "out_of_bounds" if i in outside else "ok")
        _object(art, box_ids[i], names[i], model.objects[i], status, meshes)
    for contact in report.contacts:
        art.finding("collision", f"collision ({contact.depth_m:.3f} m deep)",
                    f"{names[contact.a]} and {names[contact.b]} interpenetrate by {contact.depth_m:.3f} m",
                    [box_ids[contact.a], box_ids[contact.b]])
    for i in report.out_of_bounds:
        art.finding("out_of_bounds", "out of bounds",
                    f"{names[i]}: {report.outside_fraction[i]:.0%} of its surface outside the room", [box_ids[i]])
    art.summary = (f"{len(layout)} objects; {len(report.contacts)} colliding pair(s), "
                   f"{len(report.out_of_bounds)} object(s) out of bounds ({report.rules.name} rules)")
    art.notes.append(f"collisions and bounds recomputed with the suite's physics check (evaluation rules, "
                     f"{report.geometry} geometry)")
    return art


def _walls_around(art: Artefact, floor_xz: np.ndarray, floor_y: float, ceiling_y: float) -> None:
    pts = np.asarray(floor_xz, dtype=np.float64)
    height = max(ceiling_y - floor_y, 0.1)
    for k in range(len(pts)):
        a, b = pts[k], pts[(k + 1) % len(pts)]
        _wall_box(art, f"wall-{k}", f"wall {k}", a, b, floor_y, height)


def _wall_box(art: Artefact, box_id: str, label: str, a: np.ndarray, b: np.ndarray, bottom_y: float,
              height: float, status: str = "wall", thickness: float = WALL_THICKNESS_M) -> None:
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    length = float(np.hypot(d[0], d[1]))
    if length <= 1e-9:
        return
    ux, uz = d[0] / length, d[1] / length
    # Columns: local x along the wall, local y up, local z its normal in the floor plane.
    rot = np.array([[ux, 0.0, -uz], [0.0, 1.0, 0.0], [uz, 0.0, ux]])
    mid = (np.asarray(a) + np.asarray(b)) / 2.0
    art.box(box_id, label, (mid[0], bottom_y + height / 2.0, mid[1]), (length, height, thickness), rot, status)


def house_artefact(episode: Episode, context: ArtefactContext) -> Artefact:
    """LEGO-Eval: the task's house, objects named by the agent's verdicts marked.

    An object is red when a constraint the agent judged violated names it, blue when only
    constraints judged to hold do; its collisions and out-of-bounds placement (the scenes
    layer's checks) are listed as findings too.
    """
    from buildbench.scenes.collision import collisions, out_of_bounds
    from buildbench.suites.legoeval.env import load_task_scene
    from buildbench.suites.legoeval.outcome import LegoEvalOutcome

    art = Artefact("house")
    outcome = episode_outcome(episode, LegoEvalOutcome)
    task = context.task(episode.task_id)
    if task is None:
        art.notes.append("the task's house is not available here (its tasks could not be loaded)")
        return art if outcome is not None else no_outcome(art, episode)
    scene = load_task_scene(task)
    verdicts = [v for v in outcome.verdicts if isinstance(v, dict)] if outcome is not None else []
    marks = _verdict_marks(scene, verdicts)
    level = _level(art, context)
    _draw_house(art, scene, marks, _meshes(art, scene, level))
    texts = {str(c.get("id")): str(c.get("text", "")) for c in task.inputs.get("constraints") or []
             if isinstance(c, dict)}
    for v in verdicts:
        holds = bool(v.get("holds"))
        cid = str(v.get("id", "?"))
        named = [f"obj-{o.id}" for o in scene.objects if _names(str(v.get("explanation", "")), o.id)]
        art.finding("holds" if holds else "violates", f"{cid}: {'holds' if holds else 'violated'}",
                    f"{texts.get(cid, '')}\n{v.get('explanation', '')}".strip(), named)
    for c in collisions(scene):
        art.finding("collision", "collision", c.explanation, [f"obj-{c.a}", f"obj-{c.b}"])
    for o in out_of_bounds(scene):
        art.finding("out_of_bounds", "out of bounds", o.explanation, [f"obj-{o.object_id}"])
    if outcome is None:  # the house is the task's; the agent's verdicts are what is missing
        no_outcome(art, episode)
        art.summary = f"{len(scene.rooms)} room(s), {len(scene.objects)} objects; {art.summary}: no verdicts"
        return art
    violated = sum(1 for v in verdicts if not v.get("holds"))
    judged = {True: "valid", False: "invalid", None: "neither valid nor invalid (no holistic verdict)"}
    art.summary = (f"{len(scene.rooms)} room(s), {len(scene.objects)} objects; agent judged "
                   f"{len(verdicts) - violated} constraint(s) holding, {violated} violated; house judged "
                   f"{judged[outcome.valid]}")
    art.notes.append("objects are marked by the verdicts whose explanation names them")
    return art


def _names(text: str, object_id: str) -> bool:
    # Ids such as "candle-0|coffee table-0 (living room)" are matched whole, not inside longer ids.
    return re.search(r"(?<![\w|-])" + re.escape(object_id) + r"(?![\w|-])", text) is not None


def _verdict_marks(scene: Scene, verdicts: list[dict[str, Any]]) -> dict[str, str]:
    marks: dict[str, str] = {}
    for v in verdicts:
        for o in scene.objects:
            if _names(str(v.get("explanation", "")), o.id):
                marks[o.id] = "violates" if not v.get("holds") or marks.get(o.id) == "violates" else "holds"
    return marks


def _draw_house(art: Artefact, scene: Scene, marks: dict[str, str], meshes: dict[str, Any]) -> None:
    for room in scene.rooms:
        art.polygon(f"room-{room.id}", f"{room.id} ({room.room_type})",
                    [[x, room.floor_y, z] for x, z in room.vertices], "floor")
    for wall in scene.walls:
        if wall.exterior or wall.room_id == EXTERIOR or wall.empty:
            continue  # each physical wall once: its room side; an empty wall is invisible (open plan)
        _wall_box(art, f"wall-{wall.id}", wall.id, np.asarray(wall.start), np.asarray(wall.end), wall.bottom_y,
                  wall.height_m)
    for opening in scene.openings():
        wall = scene.wall(opening.wall0)
        x, y, z = scene.opening_center(opening)
        d = np.asarray(wall.end) - np.asarray(wall.start)
        unit = d / max(float(np.hypot(*d)), 1e-9)
        half = unit * opening.width_m / 2.0
        _wall_box(art, f"opening-{opening.id}", f"{opening.kind} {opening.id}", np.array([x, z]) - half,
                  np.array([x, z]) + half, y - opening.height_m / 2.0, opening.height_m, "opening",
                  WALL_THICKNESS_M * 2)
    for o in scene.objects:
        _object(art, f"obj-{o.id}", f"{o.id} ({o.category})", o, marks.get(o.id, "ok"), meshes)


def _level(art: Artefact, context: ArtefactContext) -> str:
    """The run's geometry level (``box`` when it set none, or one this page cannot read)."""
    from buildbench.scenes.views.meshes import LEVELS

    level = str(context.options.get("geometry", "box"))
    if level not in LEVELS:
        art.notes.append(f"the run's geometry option {level!r} is not a level; objects drawn as boxes")
        return "box"
    return level


def _meshes(art: Artefact, scene: Scene, level: str) -> dict[str, Any]:
    """Each object's placed mesh at ``level`` by id (none at the box level, or when the
    level cannot be drawn here: then a note says why and the objects stay boxes)."""
    from buildbench.scenes.views import ViewInputError
    from buildbench.scenes.views.meshes import MeshSource

    if level == "box":
        return {}
    try:
        placed = MeshSource(scene, level).placed([o.id for o in scene.objects])
    except ViewInputError as exc:
        art.notes.append(f"objects drawn as boxes: {exc}")
        return {}
    art.notes.append(f"objects drawn as their {level} meshes")
    return {m.owner: m for m in placed}


def _object(art: Artefact, element_id: str, label: str, obj: SceneObject, status: str,
            meshes: dict[str, Any]) -> None:
    mesh = meshes.get(obj.id)
    if mesh is None:
        art.box(element_id, label, obj.center, obj.size, obj.rotation, status)
        return
    triangles = mesh.vertices[mesh.faces].reshape(-1, 3)
    art.mesh(element_id, label, triangles, np.arange(len(triangles)).reshape(-1, 3), status)


def tower_artefact(episode: Episode, context: ArtefactContext) -> Artefact:
    """The example suite's block tower (z up): its blocks as stacked boxes."""
    from buildbench.suites.example.outcome import TowerOutcome

    art = Artefact("blocks", up="z")
    outcome = episode_outcome(episode, TowerOutcome)
    if outcome is None:
        return no_outcome(art, episode)
    for k, block in enumerate(outcome.blocks):
        art.box(f"block-{k}", f"block {k}", block["center"], block["size"], None, "block")
    passed = episode.metrics.get("passed")
    art.summary = f"{len(art.boxes)} blocks" + ("" if passed is None else f"; passed: {bool(passed)}")
    return art
