"""The merged observation image (spec §2.4): the top view beside a seeded diagonal view.

Drawn by :func:`buildbench.scenes.views.revis_views` and merged by
:func:`~buildbench.scenes.views.merge_views` (512² panels, blue boxes, front arrows, red
floor dots every 1 m labelled ``(x, z)``, "Top View" in red and "Diagonal View" in blue).
This module turns the flat scene the model edits into the shared scene model: ``pos`` (the
bottom centre) becomes the box centre through the object's true rotation, and an object's
3D-FUTURE category (from retrieval) picks its catalogue colour. The release draws the
diagonal azimuth from the clock; we draw it from the episode seed and the turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from buildbench.geometry import rotation_from_quat_xyzw
from buildbench.scenes.model import Room, Scene, SceneObject

PANEL_PX = 512
LABELS = ("Top View", "Diagonal View")


def scene_model(flat: dict[str, Any], geometry: str = "box") -> Scene:
    """A flat SceneReVis record (checked, with unique ``id``s) as a :class:`Scene`; at a mesh
    ``geometry`` level its objects carry the category and asset id the physics uses."""
    from buildbench.scenes.catalogue import category_of

    from .retrieval import catalogue_category

    room_id = str(flat.get("room_id") or "room")
    room = Room(id=room_id, vertices=[(float(p[0]), float(p[2])) for p in flat["bounds_bottom"]],
                room_type=str(flat.get("room_type", "")), floor_y=min(float(p[1]) for p in flat["bounds_bottom"]),
                ceiling_y=max(float(p[1]) for p in flat["bounds_top"]))
    objects = []
    for k, o in enumerate(flat.get("objects", [])):
        rot = tuple(float(v) for v in o["rot"])
        size = tuple(float(v) for v in o["size"])
        centre = np.asarray(o["pos"], dtype=float) + rotation_from_quat_xyzw(rot)[:, 1] * (size[1] / 2.0)
        if geometry == "box":
            category = catalogue_category(str(o["category"])) if o.get("category") else None
            asset_id = str(o.get("jid") or "")
        else:  # the category and asset the physics meshes the object by, so both see one shape
            category = category_of(str(o.get("desc", ""))) or "object"
            asset_id = str(o.get("jid") or o.get("uid") or o.get("id") or "")
        objects.append(SceneObject(
            id=str(o.get("id") or f"object_{k}"), category=category or "", asset_id=asset_id,
            center=(float(centre[0]), float(centre[1]), float(centre[2])), size=(size[0], size[1], size[2]),
            rotation_xyzw=(rot[0], rot[1], rot[2], rot[3]), room_id=room_id,
            attributes={"description": str(o.get("desc", ""))}))
    return Scene(rooms=[room], objects=objects, source_format="scenerevis-flat")


def view_seed(seed: int, turn: int) -> int:
    """The seed of a turn's diagonal azimuth."""
    return int(np.random.default_rng([seed, turn]).integers(2**31))


def render_merged(scene: dict[str, Any], *, seed: int = 0, turn: int = 0, geometry: str = "box") -> np.ndarray:
    """The ``(570, 1070, 3)`` uint8 merged image of a flat scene record, objects drawn at the
    ``geometry`` level (``box`` as the release; ``procedural`` or ``mesh``: shaded furniture
    meshes, labelled with their ids in the top view)."""
    from buildbench.scenes.views import merge_views, revis_views

    top, diagonal = revis_views(scene_model(scene, geometry), view_seed(seed, turn), PANEL_PX, geometry=geometry)
    return np.ascontiguousarray(merge_views([top, diagonal], list(LABELS))[..., :3])
