"""Input limits: how large a file, a document or an action may be before it is refused.

Each limit has a documented default and can be raised or lowered per process with the
environment variable ``BUILDBENCH_LIMIT_<NAME>`` (e.g. ``BUILDBENCH_LIMIT_HOUSE_MEMBERS=50000``).
A refused input gets one line naming the limit and the variable, never a hang or a crash.
"""

from __future__ import annotations

import os

__all__ = ["LIMITS", "limit", "unknown_overrides"]

#: name -> (default, what it bounds)
LIMITS: dict[str, tuple[int, str]] = {
    "json_depth": (200, "nesting levels of any JSON input"),
    "json_file_bytes": (64 * 1024 * 1024, "bytes of a JSON or JSONL input file"),
    "input_file_bytes": (512 * 1024 * 1024, "bytes of any other input file (IFC, mesh, image, pack, replay)"),
    "line_bytes": (16 * 1024 * 1024, "bytes of one line of a JSONL or text input file"),
    "model_response_bytes": (32 * 1024 * 1024, "bytes of one response from a model endpoint"),
    "model_request_bytes": (64 * 1024 * 1024, "bytes of the text, tool arguments and images of one request to a "
                            "model endpoint (far past any context window; a longer one is the agent's overflow)"),
    "episode_reply_bytes": (128 * 1024 * 1024, "bytes of model replies (text and tool calls) one episode keeps "
                            "in its steps and conversation; past it the agent's budget is spent (status budget)"),
    "house_members": (20_000, "members of a DreamHouse structure"),
    "ifc_entities": (5_000_000, "entities of an IFC model an agent wrote, checked before scoring"),
    "ifc_element_points": (100_000, "points in one element's shape in an IFC model an agent wrote"),
    "ifc_element_booleans": (60, "boolean operations (clippings, openings) to tessellate one element of an "
                             "IFC model an agent wrote"),
    "ifc_tessellation_seconds": (60, "CPU seconds the geometry kernel may spend tessellating the elements one "
                                 "IFC model is scored by"),
    "http_request_seconds": (60, "seconds a client of our HTTP servers (view, dreamhouse serve) may take to send "
                             "one request's line and headers, and its body (plus one second per 256 KiB; also "
                             "the headers and a POST's body to `buildbench mcp --transport http`)"),
    "machine_blocks": (5_000, "blocks of a BuildArena machine"),
    "scene_objects": (5_000, "objects of an indoor scene"),
    "scene_rooms": (200, "rooms of an indoor scene"),
}


def limit(name: str) -> int:
    """The limit ``name``, from ``BUILDBENCH_LIMIT_<NAME>`` when set, else its default.

    Raises:
        ValueError: For an unknown name or a malformed override (the message names the variable).
    """
    if name not in LIMITS:
        raise ValueError(f"unknown limit {name!r}; limits: {', '.join(sorted(LIMITS))}")
    var = f"BUILDBENCH_LIMIT_{name.upper()}"
    raw = os.environ.get(var)
    if raw is None:
        return LIMITS[name][0]
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{var}={raw!r} is not an integer") from None
    if value < 1:
        raise ValueError(f"{var}={raw!r} must be >= 1")
    return value


def unknown_overrides(environ: dict[str, str] | None = None) -> list[str]:
    """``BUILDBENCH_LIMIT_*`` variables that name no limit (a typo would otherwise be ignored, and
    the limit the user meant to move would stay where it was)."""
    env = os.environ if environ is None else environ
    known = {f"BUILDBENCH_LIMIT_{name.upper()}" for name in LIMITS}
    return sorted(var for var in env if var.startswith("BUILDBENCH_LIMIT_") and var not in known)
