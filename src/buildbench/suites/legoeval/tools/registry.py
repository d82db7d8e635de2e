"""The registry of the 21 tools: group, argument family (§3.5), JSON schema, menus (§3.4).

Arguments travel as ``{"<param>": [...]}`` (or a bare list, taken as that one parameter).
:func:`call_tool` runs a synchronous tool in a worker thread and awaits a multimodal one,
so independent calls overlap on one event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from . import original
from .context import ToolArgumentError, ToolContext
from .environment import ENVIRONMENT
from .multimodal import MULTIMODAL
from .textual import TEXTUAL

Group = Literal["textual", "environment", "multimodal"]
#: Constraint types: floor layout, material selection, object selection, object placement.
CONSTRAINT_TYPES = ("FL", "MS", "OS", "OP")
#: Largest id list one call may carry (a guard against runaway model output).
MAX_IDS = 500


@dataclass(frozen=True)
class ToolSpec:
    """One tool.

    Attributes:
        group: ``textual``, ``environment`` or ``multimodal`` (the paper's three groups).
        family: Argument-selector family 1–5 of §3.5; 0 for tools without arguments.
        param: Name of the one argument (None when the tool takes none).
        param_kind: ``ids`` (a list of strings) or ``groups`` (a list of id lists).
        optional: The argument may be omitted (multimodal tools default to the last shown items).
    """

    name: str
    group: Group
    family: int
    param: str | None
    param_kind: Literal["ids", "groups"]
    description: str
    fn: Callable[..., Any]
    optional: bool = False

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the arguments object."""
        if self.param is None:
            return {"type": "object", "properties": {}, "additionalProperties": False}
        items: dict[str, Any] = {"type": "string"}
        if self.param_kind == "groups":
            items = {"type": "array", "items": {"type": "string"}, "minItems": 1}
        schema: dict[str, Any] = {"type": "object",
                                  "properties": {self.param: {"type": "array", "items": items}},
                                  "additionalProperties": False}
        if not self.optional:
            schema["required"] = [self.param]
        return schema


_FUNCTIONS: dict[str, Callable[..., Any]] = {**TEXTUAL, **ENVIRONMENT, **MULTIMODAL}


def _spec(name: str, group: Group, family: int, param: str | None, description: str, *,
          kind: Literal["ids", "groups"] = "ids", optional: bool = False) -> ToolSpec:
    fn = _FUNCTIONS[name]
    return ToolSpec(name, group, family, param, kind, description, fn, optional)


_SPECS = [
    _spec("get_room_list", "textual", 0, None, "Ids of every room in the house."),
    _spec("get_room_info", "textual", 2, "room_ids",
          "Floor polygon (x, z metres), floor material, room type and area of each room."),
    _spec("get_wall_list", "textual", 1, "room_ids", "Ids of the inside walls of each room."),
    _spec("get_wall_info", "textual", 2, "wall_ids",
          "Room, end points, material, width, height, direction and connected rooms of each wall."),
    _spec("get_door_list", "textual", 1, "room_ids", "Ids of the doors of each room."),
    _spec("get_door_info", "textual", 2, "door_ids",
          "Asset, rooms joined, wall sides, world position, size and openness of each door."),
    _spec("get_window_list", "textual", 1, "room_ids", "Ids of the windows of each room."),
    _spec("get_window_info", "textual", 2, "window_ids",
          "Asset, rooms, wall sides, world position and size of each window."),
    _spec("get_object_list", "textual", 1, "room_ids", "Ids of the objects in each room."),
    _spec("get_object_info", "textual", 2, "object_ids",
          "Asset, room, centre, rotation, footprint (cm), category and size of each object."),
    _spec("get_topdown_scene", "environment", 0, None, "A labelled top-down image of the whole house."),
    _spec("get_topdown_room", "environment", 3, "room_ids", "A top-down image of each room on its own."),
    _spec("get_wall_scene", "environment", 3, "wall_ids",
          "A view facing each wall, with the middle of the room cleared."),
    _spec("get_frontview_object", "environment", 4, "object_ids",
          "A view of each object, door or window from its front."),
    _spec("get_topdown_object", "environment", 4, "object_ids", "A close top-down view of each object."),
    _spec("get_material_image", "environment", 3, "material_names",
          "A swatch of each floor or wall material used in the house."),
    _spec("get_multiview_rendered_object", "environment", 4, "object_ids",
          "Front, back, left, right and top views of each object, door or window."),
    _spec("get_spatial_relation", "environment", 5, "id_groups",
          "For each group (anchor first): an overlay of the elements' boxes with labels, and where each "
          "element lies in the anchor's frame.", kind="groups"),
    _spec("get_object_match", "multimodal", 0, "targets",
          "Which of the kinds named in the constraint each last-shown item is.", optional=True),
    _spec("get_property_description", "multimodal", 0, "targets",
          "Colour, material and shape of each last-shown item or material.", optional=True),
    _spec("get_property_verification", "multimodal", 0, "targets",
          "The properties the constraint asks about, described for each last-shown item.", optional=True),
]

TOOLS: dict[str, ToolSpec] = {s.name: s for s in _SPECS}
TEXTUAL_TOOLS = tuple(TEXTUAL)
LIST_TOOLS = ("get_room_list", "get_wall_list", "get_door_list", "get_window_list", "get_object_list")

#: The type-specific tool menus offered to the planner (§3.4).
MENUS: dict[str, tuple[str, ...]] = {
    "FL": (*TEXTUAL_TOOLS, "get_topdown_scene", "get_topdown_room", "get_wall_scene", "get_spatial_relation"),
    "MS": (*TEXTUAL_TOOLS, "get_topdown_scene", "get_topdown_room", "get_wall_scene", "get_material_image",
           "get_multiview_rendered_object", "get_property_description", "get_property_verification"),
    "OS": (*TEXTUAL_TOOLS, "get_topdown_room", "get_wall_scene", "get_material_image",
           "get_multiview_rendered_object", "get_spatial_relation", "get_property_description",
           "get_property_verification"),
    "OP": (*TEXTUAL_TOOLS, "get_topdown_scene", "get_topdown_room", "get_wall_scene",
           "get_multiview_rendered_object", "get_spatial_relation", "get_topdown_object",
           "get_frontview_object", "get_object_match"),
}


def tool_menu(constraint_type: str, *, disabled_groups: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The menu for a constraint type, less the disabled groups (Table 2's ablations keep the
    list tools whatever is disabled)."""
    if constraint_type not in MENUS:
        raise ToolArgumentError(f"unknown constraint type {constraint_type!r}; expected one of {CONSTRAINT_TYPES}")
    return tuple(n for n in MENUS[constraint_type]
                 if n in LIST_TOOLS or TOOLS[n].group not in disabled_groups)


def get_tool(name: str) -> ToolSpec:
    if name not in TOOLS:
        raise ToolArgumentError(f"unknown tool {name!r}; the tools are: {', '.join(TOOLS)}")
    return TOOLS[name]


def normalise_args(spec: ToolSpec, args: Any) -> list[Any]:
    """The tool's argument list from ``{"<param>": [...]}``, a bare list, or None. An empty
    list is a valid argument (§3.5: the selector may answer ``[]``; the tool answers ``{}``);
    a missing one is not."""
    if args is None or args == {}:
        if spec.param is not None and not spec.optional:
            raise ToolArgumentError(f"{spec.name}: argument {spec.param!r} is required")
        return []
    if args == []:
        return []
    if spec.param is None:
        raise ToolArgumentError(f"{spec.name}: takes no arguments, got {str(args)[:80]}")
    if isinstance(args, dict):
        extra = sorted(set(args) - {spec.param})
        if extra:
            raise ToolArgumentError(f"{spec.name}: unknown argument(s) {extra}; it takes {spec.param!r}")
        args = args.get(spec.param, [])
    if isinstance(args, str):
        args = [args]
    if not isinstance(args, list | tuple):
        raise ToolArgumentError(f"{spec.name}.{spec.param}: expected a list, got {type(args).__name__}")
    if len(args) > MAX_IDS:
        raise ToolArgumentError(f"{spec.name}.{spec.param}: {len(args)} entries, at most {MAX_IDS}")
    if spec.param_kind == "groups":
        return [_group(spec, i, g) for i, g in enumerate(args)]
    return [_id(spec, i, v) for i, v in enumerate(args)]


def _id(spec: ToolSpec, i: int, value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        raise ToolArgumentError(f"{spec.name}.{spec.param}[{i}]: expected an id, got {value!r}")
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise ToolArgumentError(f"{spec.name}.{spec.param}[{i}]: expected an id string, got {type(value).__name__}")
    return str(value)


def _group(spec: ToolSpec, i: int, value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list | tuple) or not value:
        raise ToolArgumentError(f"{spec.name}.{spec.param}[{i}]: expected a non-empty list of ids")
    return [_id(spec, i, v) for v in value]


def _compatible(ctx: ToolContext, spec: ToolSpec, args: Any) -> dict[str, Any] | None:
    """The original-compatible answer (:mod:`.original`): the argument as the original takes
    it, unchecked, for the tools whose answer depends on how they read it."""
    if not ctx.wall_midpoint_positions or spec.param is None or spec.is_async:
        return None
    if isinstance(args, dict) and set(args) == {spec.param}:
        args = args[spec.param]
    if isinstance(args, list | tuple) and len(args) > MAX_IDS:
        raise ToolArgumentError(f"{spec.name}.{spec.param}: {len(args)} entries, at most {MAX_IDS}")
    return original.call(ctx, spec.name, spec.fn, args)


def _run_sync(ctx: ToolContext, spec: ToolSpec, args: Any) -> dict[str, Any]:
    answer = _compatible(ctx, spec, args)
    return dict(answer) if answer is not None else dict(spec.fn(ctx, normalise_args(spec, args)))


async def call_tool(ctx: ToolContext, name: str, args: Any = None) -> dict[str, Any]:
    """Run one tool; bad arguments raise :class:`ToolArgumentError`, unknown ids give
    ``"<id>_error"`` entries in the result."""
    spec = get_tool(name)
    if spec.is_async:
        return dict(await spec.fn(ctx, normalise_args(spec, args)))
    return await asyncio.to_thread(_run_sync, ctx, spec, args)


def run_tool(ctx: ToolContext, name: str, args: Any = None) -> dict[str, Any]:
    """Blocking :func:`call_tool` (synchronous tools run in the calling thread)."""
    spec = get_tool(name)
    if spec.is_async:
        return dict(asyncio.run(spec.fn(ctx, normalise_args(spec, args))))
    return _run_sync(ctx, spec, args)


def llm_tools(names: tuple[str, ...] | None = None) -> list[Any]:
    """The tools as :class:`buildbench.llm.Tool` for function-calling agents."""
    from buildbench.llm import Tool

    return [Tool(s.name, s.description, s.schema()) for s in _SPECS if names is None or s.name in names]
