"""The typed constraint language of the deterministic mode: program types and their JSON form.

A *program* states one atomic fact about a house that the geometric tools can settle on
their own. Programs are plain JSON objects with an ``op``:

``count``
    ``{"op": "count", "of": SELECTOR, "cmp": "eq"|"ge"|"le"|"gt"|"lt", "n": 2}`` -- how many
    objects match (``ge 1`` is existence, ``eq 0`` absence).
``attribute``
    ``{"op": "attribute", "of": SELECTOR, "attrs": {"color": "red", "material": "leather",
    "shape": "round"}, "quant": ...}`` -- catalogue attributes of the matching objects.
``relation``
    ``{"op": "relation", "rel": "near", "a": SELECTOR, "b": SELECTOR, "c": SELECTOR,
    "quant": ..., "params": {...}}`` -- one of :data:`OBJECT_RELATIONS` between objects
    (``b`` absent for the unary ``against_wall``/``in_corner``/``in_middle`` and for
    ``reachable``, :data:`PATH_RELATIONS`; ``c`` only for
    ``between`` and ``closer_than``), or one of :data:`ROOM_RELATIONS` between two rooms given
    as ``{"room": "kitchen"}``. ``params`` are threshold overrides passed to
    :mod:`buildbench.scenes.relations`.
``material``
    ``{"op": "material", "room": "bedroom", "surface": "floor"|"wall", "value": "wood",
    "direction": "north"|None, "quant": "all"|"exists"}`` -- a floor or wall material; the
    value matches a material's name, family or colour word (``MATERIALS`` of the catalogue).
``layout``
    ``{"op": "layout", "kind": KIND, ...}`` with ``kind`` one of ``room_exists`` (``room``),
    ``room_count`` (``cmp``, ``n``, optional ``room_type``), ``room_area`` (``room``,
    ``min_m2`` and/or ``max_m2``), ``door_between`` and ``door_opens`` (:data:`CLEARANCE_KINDS`;
    ``rooms``: two room refs, ``"exterior"``
    for the outside) and ``window_count`` (``room``, optional ``direction``, ``cmp``, ``n``).

A SELECTOR is ``{"category": "chair", "room": "dining room", "color": ..., "material": ...,
"shape": ..., "id": ...}``; it matches objects by category (and optional attributes, room and
exact id). A room reference matches a room whose id or type equals it (case-insensitive);
when several rooms match, a room-level statement holds if it holds for one of them.

The quantifier ``quant`` (``exists`` default, ``all`` or ``count`` with ``cmp``/``n``)
ranges over the objects the subject selector ``of``/``a`` matches: ``all`` needs at least
one match and every match to satisfy the statement, ``count`` compares how many do. Objects
named by ``b`` and ``c`` are existential ("there is a matching b such that...").

:func:`parse_program` validates a JSON object and raises :class:`ProgramError`, one line
naming the constraint and the field; :func:`program_to_json` is its inverse.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ConstraintType = Literal["FL", "MS", "OS", "OP"]
#: The four constraint types of the paper (spec section 1.2), short code to full name.
CONSTRAINT_TYPES: dict[str, str] = {
    "FL": "Floor Layout",
    "MS": "Material Selection",
    "OS": "Object Selection",
    "OP": "Object Placement",
}
Cmp = Literal["eq", "ge", "le", "gt", "lt"]
CMPS: tuple[str, ...] = ("eq", "ge", "le", "gt", "lt")
QUANTS: tuple[str, ...] = ("exists", "all", "count")
ATTRIBUTES: tuple[str, ...] = ("color", "material", "shape")
DIRECTIONS: tuple[str, ...] = ("north", "south", "east", "west")
SURFACES: tuple[str, ...] = ("floor", "wall")
UNARY_RELATIONS: tuple[str, ...] = ("against_wall", "in_corner", "in_middle")
TERNARY_RELATIONS: tuple[str, ...] = ("between", "closer_than")
BINARY_RELATIONS: tuple[str, ...] = (
    "near", "far", "left_of", "right_of", "in_front_of", "behind", "facing", "on_top_of", "under",
    "aligned", "same_direction",
)
#: Relations between objects, by arity: ``a`` alone, ``a``-``b`` or ``a``-``b``-``c``.
OBJECT_RELATIONS: tuple[str, ...] = BINARY_RELATIONS + UNARY_RELATIONS + TERNARY_RELATIONS
#: Unary relations about walking (:mod:`buildbench.scenes.relations.path`: "there is a clear path
#: from the door to the bed"), judged where a constraint names them; kept out of
#: :data:`OBJECT_RELATIONS`, which the fact generator draws from, so generated sets stay as they were.
PATH_RELATIONS: tuple[str, ...] = ("reachable",)
#: Relations between two rooms.
ROOM_RELATIONS: tuple[str, ...] = ("adjacent_rooms", "larger_room")
LAYOUT_KINDS: tuple[str, ...] = ("room_exists", "room_count", "room_area", "door_between", "window_count")
#: Layout kinds about clearance (:mod:`buildbench.scenes.navigability`): ``door_opens`` (``rooms``:
#: two room refs; every door between them can swing open freely). Judged where a constraint names
#: them; kept out of :data:`LAYOUT_KINDS`, which the translation prompt lists.
CLEARANCE_KINDS: tuple[str, ...] = ("door_opens",)


class ProgramError(ValueError):
    """A constraint program is malformed; the message names the constraint and the field."""


@dataclass(frozen=True)
class Selector:
    """Objects of one category (or one exact id), optionally narrowed by attributes and room."""

    category: str | None = None
    room: str | None = None
    color: str | None = None
    material: str | None = None
    shape: str | None = None
    id: str | None = None

    def attributes(self) -> dict[str, str]:
        return {k: v for k in ATTRIBUTES if (v := getattr(self, k)) is not None}


@dataclass(frozen=True)
class Quant:
    """How many subjects must satisfy a statement: ``exists``, ``all`` or ``count cmp n``."""

    kind: str = "exists"
    cmp: str | None = None
    n: int | None = None


@dataclass(frozen=True)
class Count:
    of: Selector
    cmp: str
    n: int


@dataclass(frozen=True)
class Attribute:
    of: Selector
    attrs: dict[str, str]
    quant: Quant = Quant()


@dataclass(frozen=True)
class Relation:
    rel: str
    a: Selector
    b: Selector | None = None
    c: Selector | None = None
    quant: Quant = Quant()
    params: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class RoomRelation:
    rel: str
    a: str
    b: str


@dataclass(frozen=True)
class Material:
    room: str
    surface: str
    value: str
    direction: str | None = None
    quant: str = "all"


@dataclass(frozen=True)
class Layout:
    """A floor-layout fact; which fields matter depends on ``kind`` (see the module doc)."""

    kind: str
    room: str | None = None
    rooms: tuple[str, ...] = ()
    room_type: str | None = None
    direction: str | None = None
    cmp: str | None = None
    n: int | None = None
    min_m2: float | None = None
    max_m2: float | None = None


Program = Count | Attribute | Relation | RoomRelation | Material | Layout


def constraint_type(program: Program) -> ConstraintType:
    """The paper's type of a program: layout and room relations are FL, materials MS,
    object attributes OS, counts (existence) and object relations OP (spec 1.2)."""
    if isinstance(program, Layout | RoomRelation):
        return "FL"
    if isinstance(program, Material):
        return "MS"
    if isinstance(program, Attribute):
        return "OS"
    return "OP"


# --- reading --------------------------------------------------------------------------------
class _Fields:
    """Typed field access on one JSON object; every error names ``where.field``."""

    def __init__(self, obj: Any, where: str, allowed: set[str]) -> None:
        if not isinstance(obj, Mapping):
            raise ProgramError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        unknown = sorted(set(obj) - allowed)
        if unknown:
            raise ProgramError(f"{where}: unknown field {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")
        self.obj, self.where = obj, where

    def path(self, name: str) -> str:
        return f"{self.where}.{name}"

    def text(self, name: str, *, required: bool = True) -> str | None:
        value = self.obj.get(name)
        if value is None:
            if required:
                raise ProgramError(f"{self.path(name)}: missing (a non-empty string)")
            return None
        if not isinstance(value, str) or not value.strip():
            raise ProgramError(f"{self.path(name)}: expected a non-empty string, got {value!r}")
        return value.strip()

    def choice(self, name: str, options: tuple[str, ...], *, default: str | None = None) -> str | None:
        value = self.obj.get(name, default)
        if value is None:
            if default is None and name in self.obj:
                raise ProgramError(f"{self.path(name)}: expected one of {', '.join(options)}, got null")
            return None
        if value not in options:
            raise ProgramError(f"{self.path(name)}: expected one of {', '.join(options)}, got {value!r}")
        return str(value)

    def count(self, name: str) -> int:
        value = self.obj.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10_000:
            raise ProgramError(f"{self.path(name)}: expected an integer in [0, 10000], got {value!r}")
        return value

    def area(self, name: str) -> float | None:
        value = self.obj.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                or not 0 <= value <= 1e6:
            raise ProgramError(f"{self.path(name)}: expected a number of square metres in [0, 1e6], got {value!r}")
        return float(value)


def parse_selector(obj: Any, where: str) -> Selector:
    f = _Fields(obj, where, {"category", "room", "id", *ATTRIBUTES})
    sel = Selector(
        category=_lower(f.text("category", required=False)),
        room=f.text("room", required=False),
        color=_lower(f.text("color", required=False)),
        material=_lower(f.text("material", required=False)),
        shape=_lower(f.text("shape", required=False)),
        id=f.text("id", required=False),
    )
    if sel.category is None and sel.id is None:
        raise ProgramError(f"{where}: a selector needs 'category' or 'id'")
    return sel


def _lower(value: str | None) -> str | None:
    return None if value is None else value.lower()


def _room_ref(obj: Any, where: str) -> str:
    if isinstance(obj, str):
        obj = {"room": obj}
    room = _Fields(obj, where, {"room"}).text("room")
    assert room is not None
    return room


def _quant(f: _Fields, kinds: tuple[str, ...] = QUANTS) -> Quant:
    kind = f.choice("quant", kinds, default="exists")
    assert kind is not None
    if kind == "count":
        cmp = f.choice("cmp", CMPS)
        if cmp is None:
            raise ProgramError(f"{f.path('cmp')}: missing (quant 'count' needs cmp and n)")
        return Quant("count", cmp, f.count("n"))
    for extra in ("cmp", "n"):
        if extra in f.obj:
            raise ProgramError(f"{f.path(extra)}: only allowed with quant 'count', not {kind!r}")
    return Quant(kind)


def _params(obj: Any, where: str) -> dict[str, float]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise ProgramError(f"{where}: expected an object of threshold numbers, got {type(obj).__name__}")
    out: dict[str, float] = {}
    for key, value in obj.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise ProgramError(f"{where}: threshold name {key!r} is not an identifier")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ProgramError(f"{where}.{key}: expected a finite number, got {value!r}")
        out[key] = float(value)
    return out


def _parse_count(obj: Mapping[str, Any], where: str) -> Count:
    f = _Fields(obj, where, {"op", "of", "cmp", "n"})
    cmp = f.choice("cmp", CMPS, default="ge")
    assert cmp is not None
    return Count(parse_selector(obj.get("of"), f.path("of")), cmp, f.count("n"))


def _parse_attribute(obj: Mapping[str, Any], where: str) -> Attribute:
    f = _Fields(obj, where, {"op", "of", "attrs", "quant", "cmp", "n"})
    attrs_obj = obj.get("attrs")
    af = _Fields(attrs_obj, f.path("attrs"), set(ATTRIBUTES))
    attrs = {k: v.lower() for k in ATTRIBUTES if (v := af.text(k, required=False)) is not None}
    if not attrs:
        raise ProgramError(f"{f.path('attrs')}: needs at least one of {', '.join(ATTRIBUTES)}")
    return Attribute(parse_selector(obj.get("of"), f.path("of")), attrs, _quant(f))


def _parse_relation(obj: Mapping[str, Any], where: str) -> Relation | RoomRelation:
    f = _Fields(obj, where, {"op", "rel", "a", "b", "c", "quant", "cmp", "n", "params"})
    rel = f.choice("rel", OBJECT_RELATIONS + PATH_RELATIONS + ROOM_RELATIONS)
    if rel is None:
        raise ProgramError(f"{f.path('rel')}: missing (one of "
                           f"{', '.join(OBJECT_RELATIONS + PATH_RELATIONS + ROOM_RELATIONS)})")
    if rel in ROOM_RELATIONS:
        for extra in ("c", "quant", "cmp", "n", "params"):
            if extra in obj:
                raise ProgramError(f"{f.path(extra)}: not used by the room relation {rel!r}")
        return RoomRelation(rel, _room_ref(obj.get("a"), f.path("a")), _room_ref(obj.get("b"), f.path("b")))
    want_b = rel not in UNARY_RELATIONS + PATH_RELATIONS
    want_c = rel in TERNARY_RELATIONS
    for name, wanted in (("b", want_b), ("c", want_c)):
        if wanted and obj.get(name) is None:
            raise ProgramError(f"{f.path(name)}: missing (relation {rel!r} needs it)")
        if not wanted and obj.get(name) is not None:
            raise ProgramError(f"{f.path(name)}: not used by relation {rel!r}")
    return Relation(
        rel=rel,
        a=parse_selector(obj.get("a"), f.path("a")),
        b=parse_selector(obj["b"], f.path("b")) if want_b else None,
        c=parse_selector(obj["c"], f.path("c")) if want_c else None,
        quant=_quant(f),
        params=_params(obj.get("params"), f.path("params")),
    )


def _parse_material(obj: Mapping[str, Any], where: str) -> Material:
    f = _Fields(obj, where, {"op", "room", "surface", "value", "direction", "quant"})
    surface = f.choice("surface", SURFACES)
    if surface is None:
        raise ProgramError(f"{f.path('surface')}: missing (floor or wall)")
    direction = f.choice("direction", DIRECTIONS)
    if direction is not None and surface != "wall":
        raise ProgramError(f"{f.path('direction')}: only walls have a direction")
    quant = f.choice("quant", ("all", "exists"), default="all")
    room, value = f.text("room"), f.text("value")
    assert room is not None and value is not None and quant is not None
    return Material(room, surface, value.lower(), direction, quant)


def _parse_layout(obj: Mapping[str, Any], where: str) -> Layout:
    allowed = {
        "room_exists": {"room"},
        "room_count": {"cmp", "n", "room_type"},
        "room_area": {"room", "min_m2", "max_m2"},
        "door_between": {"rooms"},
        "door_opens": {"rooms"},
        "window_count": {"room", "direction", "cmp", "n"},
    }
    kind = obj.get("kind")
    if kind not in allowed:
        raise ProgramError(f"{where}.kind: expected one of {', '.join(LAYOUT_KINDS + CLEARANCE_KINDS)}, "
                           f"got {kind!r}")
    f = _Fields(obj, where, {"op", "kind"} | allowed[kind])
    if kind == "room_exists":
        return Layout(kind, room=f.text("room"))
    if kind == "room_count":
        return Layout(kind, room_type=f.text("room_type", required=False), cmp=f.choice("cmp", CMPS, default="eq"),
                      n=f.count("n"))
    if kind == "room_area":
        lo, hi = f.area("min_m2"), f.area("max_m2")
        if lo is None and hi is None:
            raise ProgramError(f"{where}: room_area needs min_m2 and/or max_m2")
        if lo is not None and hi is not None and lo > hi:
            raise ProgramError(f"{f.path('min_m2')}: {lo} exceeds max_m2 {hi}")
        return Layout(kind, room=f.text("room"), min_m2=lo, max_m2=hi)
    if kind in ("door_between", "door_opens"):
        rooms = obj.get("rooms")
        if not isinstance(rooms, list | tuple) or len(rooms) != 2:
            raise ProgramError(f"{f.path('rooms')}: expected a list of two room references, got {rooms!r}")
        return Layout(kind, rooms=tuple(_room_ref(r, f"{f.path('rooms')}[{i}]") for i, r in enumerate(rooms)))
    return Layout(kind, room=f.text("room"), direction=f.choice("direction", DIRECTIONS),
                  cmp=f.choice("cmp", CMPS, default="ge"), n=f.count("n"))


_PARSERS: dict[str, Callable[[Mapping[str, Any], str], Program]] = {
    "count": _parse_count,
    "attribute": _parse_attribute,
    "relation": _parse_relation,
    "material": _parse_material,
    "layout": _parse_layout,
}


def parse_program(obj: Any, where: str = "program") -> Program:
    """Validate a JSON program and return its typed form.

    Raises:
        ProgramError: one line naming ``where`` and the offending field.
    """
    if not isinstance(obj, Mapping):
        raise ProgramError(f"{where}: expected a JSON object with an 'op', got {type(obj).__name__}")
    op = obj.get("op")
    if op not in _PARSERS:
        raise ProgramError(f"{where}.op: expected one of {', '.join(_PARSERS)}, got {op!r}")
    return _PARSERS[op](obj, where)


# --- writing --------------------------------------------------------------------------------
def selector_to_json(sel: Selector) -> dict[str, str]:
    return {k: v for k in ("category", "id", *ATTRIBUTES, "room") if (v := getattr(sel, k)) is not None}


def _quant_json(q: Quant) -> dict[str, Any]:
    if q.kind == "count":
        return {"quant": "count", "cmp": q.cmp, "n": q.n}
    return {"quant": q.kind}


def program_to_json(program: Program) -> dict[str, Any]:
    """The JSON object :func:`parse_program` reads back to an equal program."""
    if isinstance(program, Count):
        return {"op": "count", "of": selector_to_json(program.of), "cmp": program.cmp, "n": program.n}
    if isinstance(program, Attribute):
        return {"op": "attribute", "of": selector_to_json(program.of), "attrs": dict(program.attrs),
                **_quant_json(program.quant)}
    if isinstance(program, RoomRelation):
        return {"op": "relation", "rel": program.rel, "a": {"room": program.a}, "b": {"room": program.b}}
    if isinstance(program, Relation):
        out: dict[str, Any] = {"op": "relation", "rel": program.rel, "a": selector_to_json(program.a)}
        if program.b is not None:
            out["b"] = selector_to_json(program.b)
        if program.c is not None:
            out["c"] = selector_to_json(program.c)
        out.update(_quant_json(program.quant))
        if program.params:
            out["params"] = dict(program.params)
        return out
    if isinstance(program, Material):
        out = {"op": "material", "room": program.room, "surface": program.surface, "value": program.value,
               "quant": program.quant}
        if program.direction is not None:
            out["direction"] = program.direction
        return out
    out = {"op": "layout", "kind": program.kind}
    for name in ("room", "room_type", "direction", "cmp", "n", "min_m2", "max_m2"):
        if (value := getattr(program, name)) is not None:
            out[name] = value
    if program.rooms:
        out["rooms"] = list(program.rooms)
    return out
