"""The original's argument semantics, for the original-compatible mode.

The original tools never check their argument: an info tool keeps the scene elements whose id
is ``in`` the argument, a list tool iterates it for its keys and files each element under the
room it names. So a bare string selects by substring and lists its characters, a ``None`` or
a number among the ids matches nothing but still becomes a (JSON) key, a child object is not
found (only top-level ``objects`` are searched), and a relation's image key joins whatever
the pair iterates to. This module reproduces those answers from our index, element for
element in the file's order. Where the original raises (a number where a list belongs, an
unhashable key, a room its keys lack), we refuse with a :class:`ToolArgumentError` carrying
the original's own error text, so an evaluation sees a tool error either way.

Outside that mode :mod:`.registry` checks the argument and answers id by id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from .context import ToolArgumentError, ToolContext, unknown

#: Longest bare string taken as an argument (substring tests are quadratic in it).
MAX_STRING_CHARS = 10_000


def json_key(key: Any) -> str:
    """How ``json.dumps`` writes a dict key: ``None`` → ``null``, ``True`` → ``true``, 5 → ``5``."""
    return key if isinstance(key, str) else json.dumps(key)


def selected(args: Any, candidates: Iterable[str]) -> list[str]:
    """The candidates (in file order) whose id is ``in`` the argument, as the original tests."""
    return [c for c in candidates if c in args]


def listing(args: Any, entries: Iterable[tuple[Any, str]], suffix: str = "") -> dict[str, Any]:
    """A list tool's answer: a key per item of the argument (``room + suffix``), then each
    ``(room, id)`` entry filed under its room when the room is ``in`` the argument."""
    out: dict[Any, list[str]] = {}
    for room in args:
        out[room + suffix if suffix else room] = []
    for room, eid in entries:
        if room in args:
            out[room + suffix if suffix else room].append(eid)
    return {json_key(k): v for k, v in out.items()}


def _unknown_entries(ctx: ToolContext, args: Any, kind: str, known: dict[str, Any]) -> dict[str, Any]:
    """``"<id>_error"`` for each string of a list argument the scene lacks (the original skips
    it silently; the entry is our documented addition)."""
    if not isinstance(args, list):
        return {}
    return {f"{a}_error": unknown(kind, a, known) for a in dict.fromkeys(a for a in args if isinstance(a, str))
            if a not in known}


def _top_level(ctx: ToolContext) -> list[str]:
    return [o.id for o in ctx.scene.objects if not o.attributes.get("thor_nested")]


def _viewable(ctx: ToolContext) -> list[str]:
    return _top_level(ctx) + [w.id for w in ctx.scene.windows] + [d.id for d in ctx.scene.doors]


def _raw_room(raw: Any, key: str, fallback: str) -> Any:
    value = raw.get(key, fallback) if isinstance(raw, dict) and raw else fallback
    return value if value is not None else fallback


#: Info tools: which candidates the membership test runs over, and the kind named in errors.
_INFO: dict[str, tuple[Callable[[ToolContext], list[str]], str, Callable[[ToolContext], dict[str, Any]]]] = {
    "get_room_info": (lambda c: [r.id for r in c.scene.rooms], "room", lambda c: c.index.rooms),
    "get_wall_info": (lambda c: [w.id for w in c.scene.walls], "wall", lambda c: c.index.walls),
    "get_wall_scene": (lambda c: [w.id for w in c.scene.walls], "wall", lambda c: c.index.walls),
    "get_door_info": (lambda c: [d.id for d in c.scene.doors], "door", lambda c: c.index.doors),
    "get_window_info": (lambda c: [w.id for w in c.scene.windows], "window", lambda c: c.index.windows),
    "get_object_info": (_top_level, "object", lambda c: dict.fromkeys(_top_level(c))),
    "get_multiview_rendered_object": (_viewable, "object/door/window", lambda c: dict.fromkeys(_viewable(c))),
}


def _list_entries(ctx: ToolContext, name: str) -> list[tuple[Any, str]]:
    idx = ctx.index
    if name == "get_wall_list":
        return [(w.room_id, w.id) for w in ctx.scene.walls if w.id in idx.walls_by_room.get(w.room_id, ())]
    if name == "get_door_list":
        return [(_raw_room(d.raw, side, room), d.id) for d in ctx.scene.doors
                for side, room in (("room0", d.room0), ("room1", d.room1))]
    if name == "get_window_list":
        rooms = [(_raw_room(w.raw, "roomId", w.room0), w.id) for w in ctx.scene.windows]
        return [(r, wid) for r, wid in rooms if not (isinstance(r, str) and "exterior" in r)]
    top = set(_top_level(ctx))
    return [(o.room_id, o.id) for o in ctx.scene.objects if o.id in top]


def _render_each(ctx: ToolContext, fn: Callable[..., dict[str, Any]], args: Any, known: dict[str, Any]) -> dict[str, Any]:
    """Tools that open one file per item (room views, swatches): the original raises at the
    first item it has no file for; ours does the same for a room view."""
    out: dict[str, Any] = {}
    for item in args:
        if not (isinstance(item, str) and item in known):
            raise FileNotFoundError(f"no pre-rendered view for {item!r}")
        out.update(fn(ctx, [item]))
    return out


def _materials(ctx: ToolContext, fn: Callable[..., dict[str, Any]], args: Any) -> dict[str, Any]:
    """Every item is looked up by its text; an item without a swatch is skipped by the
    original and named in an ``_error`` entry by ours."""
    out: dict[str, Any] = {}
    for item in args:
        out.update(fn(ctx, [f"{item}"]))
    return out


def _relations(ctx: ToolContext, fn: Callable[..., dict[str, Any]], args: Any) -> dict[str, Any]:
    """Each pair's image key is ``"_".join(list(pair))``: a bare string joins its characters."""
    out: dict[str, Any] = {}
    for pair in args:
        key = "_".join(list(pair))
        out.update(fn(ctx, [[str(e) for e in pair]], key=key))
    return out


def call(ctx: ToolContext, name: str, fn: Callable[..., dict[str, Any]], args: Any) -> dict[str, Any] | None:
    """The compatible-mode answer of tool ``name`` (``fn`` our implementation), or None when
    the tool has no argument semantics of its own (it then goes the default way)."""
    if isinstance(args, str) and len(args) > MAX_STRING_CHARS:
        raise ToolArgumentError(f"{name}: a string argument of {len(args)} characters, at most {MAX_STRING_CHARS}")
    try:
        if name in _INFO:
            candidates, kind, known = _INFO[name]
            ids = selected(args, candidates(ctx))
            return {**_unknown_entries(ctx, args, kind, known(ctx)), **fn(ctx, ids)}
        if name in ("get_wall_list", "get_door_list", "get_window_list", "get_object_list"):
            suffix = "_wall_list" if name == "get_wall_list" else ""
            answer = listing(args, _list_entries(ctx, name), suffix)
            return {**_unknown_entries(ctx, args, "room", ctx.index.rooms), **answer}
        if name == "get_topdown_room":
            return _render_each(ctx, fn, args, ctx.index.rooms)
        if name == "get_material_image":
            return _materials(ctx, fn, args)
        if name == "get_spatial_relation":
            return _relations(ctx, fn, args)
    except (TypeError, KeyError, FileNotFoundError) as exc:
        raise ToolArgumentError(f"{name}: the original fails on this argument: {type(exc).__name__}: {exc}") from None
    return None
