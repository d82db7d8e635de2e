"""A rule-based "model" for DreamHouse, run with::

    buildbench run dreamhouse --model python:examples/dreamhouse/model.py:chat --split demo --limit 1

The protocol first asks for a construction plan (one JSON object), then for the frame as a
Blender Python script. This function reads the building context out of the task prompt (lot,
footprint, stories, collection name) the way a model would, answers the plan request with a
one-section plan that copies the lot exactly, and answers every build request with a simple
rectangular frame: sills, floor joists, sole and top plates with studs at 0.406 m, and a gable
of rafters at 0.610 m meeting a ridge. It ignores the five views and does not read feedback:
a format example, not a frame that passes every structural test. Replace :func:`chat` with
your own model; it receives OpenAI-style messages (views as ``image_url`` data URLs).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

STUD_SPACING_M = 0.406
RAFTER_SPACING_M = 0.610
STORY_M = 2.7
FLOOR_Z_M = 0.3


@dataclass(frozen=True)
class Context:
    """What the task prompt says about the house."""

    lot: dict[str, float]
    footprint_x_m: float
    footprint_y_m: float
    stories: int
    collection: str


def read_context(prompt: str) -> Context:
    lot = re.search(r"Lot: ([0-9.]+)m x ([0-9.]+)m, area ([0-9.]+)m", prompt)
    foot = re.search(r"Footprint of the frame: ([0-9.]+)m along X by ([0-9.]+)m along Y", prompt)
    stories = re.search(r"Stories: (\d+)", prompt)
    collection = re.search(r'collection named "([^"]+)"', prompt)
    if not (lot and foot and stories and collection):
        raise ValueError("the prompt lacks the lot, footprint, stories or collection line")
    return Context({"width": float(lot.group(1)), "depth": float(lot.group(2)), "area": float(lot.group(3))},
                   float(foot.group(1)), float(foot.group(2)), int(stories.group(1)), collection.group(1))


def plan(c: Context) -> str:
    """The construction plan: one section, four phases per story, in order."""
    hx, hy = c.footprint_x_m / 2, c.footprint_y_m / 2
    order, step = [], 0
    phases = [("foundation", "Sill")] + [(p, t) for _ in range(c.stories) for p, t in
                                         (("floor", "Joist"), ("walls", "Stud"))] + [("roof", "Rafter")]
    for k, (phase, member) in enumerate(phases):
        step += 1
        story = 1 + max(0, (k - 1) // 2) if phase in ("floor", "walls") else None
        entry = {"step": step, "section": "main", "phase": phase, "step_type": "critical",
                 "members": [{"type": member, "count": 4}], "depends_on": [step - 1] if step > 1 else []}
        if story is not None:
            entry["story"] = story
        order.append(entry)
    doc = {"analysis": {"description": "a rectangular timber frame", "stories": c.stories, "sections": ["main"],
                        "roof_type": "gable", "complexity": "simple", "lot_size": c.lot},
           "sections": [{"name": "main", "bounds": {"x_min": -hx, "x_max": hx, "y_min": -hy, "y_max": hy,
                                                     "z_base": 0.0},
                         "stories": c.stories, "systems": ["foundation", "floor", "walls", "roof"],
                         "dependencies": []}],
           "construction_order": order,
           "expected_member_counts": {"Sill": 4, "Joist": 1, "Stud": 1, "Rafter": 1}}
    return "```json\n" + json.dumps(doc, indent=1) + "\n```"


def _members(c: Context) -> list[tuple[str, tuple[float, float, float], tuple[float, float, float], float]]:
    """(name, centre m, size m, rotation about x rad) of every member of the frame."""
    hx, hy = c.footprint_x_m / 2, c.footprint_y_m / 2
    out: list[tuple[str, tuple[float, float, float], tuple[float, float, float], float]] = []
    for side, y in (("front", -hy), ("back", hy)):
        out.append((f"Sill_{side}", (0.0, y, 0.019), (2 * hx, 0.14, 0.038), 0.0))
    for side, x in (("left", -hx), ("right", hx)):
        out.append((f"Sill_{side}", (x, 0.0, 0.019), (0.14, 2 * hy, 0.038), 0.0))
    for s in range(c.stories):
        base = FLOOR_Z_M + s * STORY_M
        joists = int(2 * hx / STUD_SPACING_M) + 1
        for j in range(joists):
            x = -hx + min(j * STUD_SPACING_M, 2 * hx)
            out.append((f"Joist_floor{s + 1}_{j:03d}", (x, 0.0, base - 0.1175), (0.038, 2 * hy, 0.235), 0.0))
        for side, y in (("front", -hy), ("back", hy)):
            out.append((f"SolePlate_s{s + 1}_{side}", (0.0, y, base + 0.019), (2 * hx, 0.089, 0.038), 0.0))
            out.append((f"TopPlate_s{s + 1}_{side}", (0.0, y, base + 0.038 + 2.438 + 0.019), (2 * hx, 0.089, 0.038),
                        0.0))
            for k in range(int(2 * hx / STUD_SPACING_M) + 1):
                x = -hx + min(k * STUD_SPACING_M, 2 * hx)
                out.append((f"Stud_s{s + 1}_{side}_{k:03d}", (x, y, base + 0.038 + 1.219), (0.038, 0.089, 2.438), 0.0))
    top = FLOOR_Z_M + (c.stories - 1) * STORY_M + 0.038 + 2.438 + 0.038
    rise = hy * math.tan(math.radians(30))
    out.append(("Ridge_main", (0.0, 0.0, top + rise), (2 * hx, 0.038, 0.235), 0.0))
    length = math.hypot(hy, rise)
    for side, sign in (("left", -1.0), ("right", 1.0)):
        for k in range(int(2 * hx / RAFTER_SPACING_M) + 1):
            x = -hx + min(k * RAFTER_SPACING_M, 2 * hx)
            angle = -sign * math.atan2(rise, hy)
            out.append((f"Rafter_main_{side}_{k:03d}", (x, sign * hy / 2, top + rise / 2), (0.038, length, 0.184),
                        angle))
    return out


def frame_script(c: Context) -> str:
    """The Blender script that builds the frame into the task's collection."""
    lines = ["import bpy", f"col = bpy.data.collections.get({c.collection!r})", "if col is None:",
             f"    col = bpy.data.collections.new({c.collection!r})", "    bpy.context.scene.collection.children.link(col)",
             "for old in list(col.objects):  # a resubmission replaces the frame instead of doubling it",
             "    bpy.data.objects.remove(old, do_unlink=True)",
             "def member(name, loc, size, rx):",
             "    bpy.ops.mesh.primitive_cube_add(size=1, location=loc, rotation=(rx, 0, 0))",
             "    obj = bpy.context.active_object", "    obj.scale = size", "    obj.name = name",
             "    for other in list(obj.users_collection):", "        other.objects.unlink(obj)",
             "    col.objects.link(obj)"]
    for name, loc, size, rx in _members(c):
        lines.append(f"member({name!r}, {tuple(round(v, 4) for v in loc)}, {tuple(round(v, 4) for v in size)}, "
                     f"{rx:.5f})")
    return "```python\n" + "\n".join(lines) + "\n```"


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **options: Any) -> str:
    """The plan while no plan was accepted yet, the frame script after."""
    texts = [_text(m) for m in messages if m["role"] == "user"]
    context = read_context(next((t for t in texts if "Lot:" in t), ""))
    if not any("plan is accepted" in t for t in texts):
        return plan(context)
    return frame_script(context)
