"""The structured tool set: the comparison action format (``-o action_format=structured``).

Instead of free Python, the agent picks from five tools (query elements, get properties,
create / modify / delete an element). Each call becomes a short, fixed snippet run in the
same sandboxed worker as ``execute_ifc_code``, so both formats share limits, failure
classes and scoring; the operations live in :mod:`.structured_ops`.
"""

from __future__ import annotations

import json
from typing import Any

from buildbench.llm import Tool

PROMPT_NOTES = ("Lengths are in metres whatever the model's unit. Creating, modifying or deleting an "
                "element saves the model at once.")

_NUM = {"type": "number"}
_XY = {"type": "array", "items": _NUM, "minItems": 2, "maxItems": 2}
_OUTLINE = {"type": "array", "items": _XY, "minItems": 3}

#: Tool name → (description, JSON schema properties, required keys, operation in structured_ops).
_SPECS: dict[str, tuple[str, dict[str, Any], tuple[str, ...], str]] = {
    "query_elements": (
        "List elements of an IFC class (subclasses included) with GlobalId, name, storey and world "
        "position in metres; optionally only those in one storey or whose name contains a text.",
        {"ifc_class": {"type": "string", "description": "e.g. IfcWall, IfcSpace, IfcBuildingStorey"},
         "storey": {"type": "string", "description": "GlobalId of a storey"},
         "name_contains": {"type": "string"}},
        (), "query_elements"),
    "get_properties": (
        "Attributes, property sets, world placement (metres) and relations (container, openings, "
        "fillings, connections, space boundaries) of one element.",
        {"guid": {"type": "string"}}, ("guid",), "get_properties"),
    "create_element": (
        "Create an element in a storey. kind=wall: start, end ([x, y] m), thickness_m, height_m. "
        "kind=slab: outline ([[x, y], ...]), thickness_m (the slab's top is at the storey elevation "
        "plus thickness_m). kind=column: at [x, y], width_m, height_m. kind=space: outline, height_m. "
        "kind=door or window: host (wall GlobalId), along_m (from the wall's start), width_m, "
        "height_m, sill_m, host_thickness_m; an opening is cut in the host and filled. Optional "
        "elevation_m overrides the storey's elevation.",
        {"kind": {"type": "string", "enum": ["wall", "slab", "column", "space", "door", "window"]},
         "storey": {"type": "string", "description": "GlobalId of the storey"},
         "name": {"type": "string"}, "start": _XY, "end": _XY, "at": _XY, "outline": _OUTLINE,
         "thickness_m": _NUM, "height_m": _NUM, "width_m": _NUM, "elevation_m": _NUM, "host": {"type": "string"},
         "along_m": _NUM, "sill_m": _NUM, "host_thickness_m": _NUM, "external": {"type": "boolean"}},
        ("kind", "storey"), "create_element"),
    "modify_element": (
        "Change an element: move_by_m [dx, dy, dz] (a door or window moves with its opening), "
        "attributes {name: value}, properties {pset name: {property: value}}.",
        {"guid": {"type": "string"}, "move_by_m": {"type": "array", "items": _NUM, "minItems": 3, "maxItems": 3},
         "attributes": {"type": "object"}, "properties": {"type": "object"}},
        ("guid",), "modify_element"),
    "delete_element": (
        "Delete an element together with its openings, the doors and windows filling them, and all "
        "its relations.",
        {"guid": {"type": "string"}}, ("guid",), "remove_element"),
}
_MUTATING = {"create_element", "modify_element", "delete_element"}


def tools() -> list[Tool]:
    """The five tools, as offered to a function-calling model."""
    return [Tool(name, desc, {"type": "object", "properties": props, "required": list(required)})
            for name, (desc, props, required, _) in _SPECS.items()]


def check_arguments(name: str, arguments: dict[str, Any]) -> str | None:
    """Why these arguments cannot be run (unknown or missing keys), or None when they can."""
    _, props, required, _ = _SPECS[name]
    unknown = sorted(set(arguments) - set(props))
    if unknown:
        return f"{name}: unknown argument(s) {unknown}; known: {sorted(props)}"
    missing = [k for k in required if k not in arguments]
    if missing:
        return f"{name}: missing required argument(s) {missing}"
    return None


def call_code(name: str, arguments: dict[str, Any]) -> str:
    """The snippet the worker runs for one structured call (arguments travel as a JSON literal)."""
    op = _SPECS[name][3]
    extra = "commit, " if name in _MUTATING else ""
    payload = json.dumps(json.dumps(arguments))
    return ("import json as _json\n"
            "from buildbench.suites.bimedit import structured_ops as _ops\n"
            f"result = _ops.{op}(ifc, {extra}**_json.loads({payload}))\n")
