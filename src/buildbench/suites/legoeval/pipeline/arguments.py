"""Step 3a: argument selection for one tool call, by the argument family of §3.5.

:func:`select_arguments` asks the model (``Arguments: [...]``); :func:`reference_arguments`
picks ids by matching the constraint's words against room ids/types and object categories,
the rule counterpart used by the scripted reference model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from buildbench.suites.legoeval.literal import model_literal
from buildbench.suites.legoeval.prompts import fill
from buildbench.suites.legoeval.tools import TOOLS, ToolContext
from buildbench.suites.legoeval.tools.environment import scene_materials
from buildbench.suites.legoeval.tools.multimodal import mentioned_categories

from .chat import Asker

#: What each family's argument list holds (the prompt's "It expects").
EXPECTS = {
    1: "a list of room ids",
    2: "a list of ids of the rooms, walls, doors, windows or objects to describe",
    3: "a list of room ids, wall ids or material names",
    4: "a list of object, door or window ids",
    5: "a list of id lists; the first id of each list is the anchor the others are placed relative to",
}
_ARGS = re.compile(r"Arguments\s*:\s*(\[.*\])", re.IGNORECASE | re.DOTALL)
#: Characters of earlier tool output shown to the selector (a large house lists many ids).
OUTPUT_CHARS = 6000


def parse_arguments(reply: str, family: int) -> list[Any]:
    match = _ARGS.search(reply)
    if match is None:
        raise ValueError("no 'Arguments: [...]' in the reply")
    try:
        value = model_literal(match.group(1))
    except ValueError as exc:
        raise ValueError(f"the arguments are not a list literal: {exc}") from None
    if not isinstance(value, list | tuple):
        raise ValueError("the arguments are not a list")
    if family == 5:
        return [[str(x) for x in g] if isinstance(g, list | tuple) else [str(g)] for g in value]
    return [str(x) for x in value]


def outputs_text(outputs: dict[str, Any], limit: int = OUTPUT_CHARS) -> str:
    text = json.dumps(outputs, default=str)
    return text if len(text) <= limit else text[:limit] + " …(cut)"


async def select_arguments(asker: Asker, tool: str, *, instruction: str, constraint: str, plan_json: str,
                           reasoning: str, previous: list[str], outputs: dict[str, Any]) -> list[Any]:
    family = TOOLS[tool].family
    prompt = fill("arguments", INSTRUCTION=instruction, CONSTRAINT=constraint, PLAN=plan_json, REASONING=reasoning,
                  PREVIOUS="; ".join(previous) or "(none)", OUTPUTS=outputs_text(outputs), TOOL=tool,
                  EXPECTS=EXPECTS[family])
    return await asker.parsed(f"argument selection for {tool}", prompt, lambda r: parse_arguments(r, family),
                              retries=2, warm_by=0.01)


def mentioned_rooms(ctx: ToolContext, text: str) -> list[str]:
    """Rooms whose id or type the text names, in order of mention (all rooms when none is)."""
    low = text.lower()
    hits = []
    for room in ctx.scene.rooms:
        names = {room.id.lower(), room.room_type.lower()} - {""}
        pos = [low.find(n) for n in names if re.search(rf"\b{re.escape(n)}\b", low)]
        if pos:
            hits.append((min(pos), room.id))
    return [rid for _, rid in sorted(hits)] or [r.id for r in ctx.scene.rooms]


def _objects(ctx: ToolContext, rooms: list[str], categories: list[str]) -> list[str]:
    ids = [oid for r in rooms for oid in ctx.index.objects_by_room.get(r, [])]
    if not categories:
        return ids
    return [oid for c in categories for oid in ids if ctx.index.objects[oid].category == c]


def reference_arguments(ctx: ToolContext, tool: str, constraint: str) -> list[Any]:
    """Rule-based arguments for ``tool`` given the constraint's words."""
    low = constraint.lower()
    rooms = mentioned_rooms(ctx, constraint)
    categories = [c for c in mentioned_categories(ctx, constraint) if c not in ("door", "window")]
    if tool in ("get_room_info", "get_wall_list", "get_door_list", "get_window_list", "get_object_list",
                "get_topdown_room"):
        return rooms
    if tool in ("get_wall_info", "get_wall_scene"):
        return [w for r in rooms for w in ctx.index.walls_by_room.get(r, [])]
    if tool == "get_door_info":
        return list(dict.fromkeys(d for r in rooms for d in ctx.index.doors_by_room.get(r, [])))
    if tool == "get_window_info":
        return [w for r in rooms for w in ctx.index.windows_by_room.get(r, [])]
    if tool == "get_material_image":
        want_floor, want_wall = "floor" in low, "wall" in low
        names = [ctx.index.rooms[r].floor_material for r in rooms if want_floor or not want_wall]
        # Visible walls only, as the checker reads them: an empty wall's material is unseen.
        names += [ctx.index.walls[w].material for r in rooms if want_wall
                  for w in ctx.index.walls_by_room.get(r, []) if not ctx.index.walls[w].empty]
        known = scene_materials(ctx)
        return [n for n in dict.fromkeys(names) if n in known]
    if tool in ("get_object_info", "get_multiview_rendered_object", "get_frontview_object", "get_topdown_object"):
        ids = _objects(ctx, rooms, categories)
        if tool == "get_multiview_rendered_object":
            for kind, by_room in (("door", ctx.index.doors_by_room), ("window", ctx.index.windows_by_room)):
                if kind in low:
                    ids += [i for r in rooms for i in by_room.get(r, [])]
        return list(dict.fromkeys(ids))
    if tool == "get_spatial_relation":
        if len(categories) >= 2:
            movers, anchors = _objects(ctx, rooms, categories[:1]), _objects(ctx, rooms, categories[1:2])
            return [[a, *movers] for a in anchors if movers]
        return [[o] for o in _objects(ctx, rooms, categories)]
    return []
