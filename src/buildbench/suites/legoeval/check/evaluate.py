"""Deciding a program on a scene with the geometric tools alone.

:func:`check` returns a :class:`Check`: whether the program holds, one explanation that
names the components by full id, and the evidence (matched ids, measured values).
Quantifiers: the subject's matches are tried one by one; ``exists`` needs one to satisfy
the statement, ``all`` needs at least one match and every match to satisfy it, ``count``
compares the number that do. The ``b``/``c`` roles of a relation are existential.

:func:`evaluate` checks a list of constraints; a constraint whose program is malformed, or
whose text no template reads, or whose relation raises, gets ``holds`` None with the error
as explanation, and the others are still checked.

Wall materials are read off the room's visible walls only (:func:`.select.visible_walls`):
an empty wall of an open floor plan is an opening, so its recorded material is ignored, and
a side that is wholly open has no wall to be any colour.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from buildbench.scenes import relations as rel_mod
from buildbench.scenes.model import EXTERIOR, Scene, wall_direction
from buildbench.scenes.relations.index import unchanged

from ..constraints import (
    Attribute,
    Count,
    Layout,
    Material,
    Program,
    ProgramError,
    Quant,
    Relation,
    RoomRelation,
    constraint_type,
    parse,
    parse_program,
)
from ..task_records import ConstraintSpec, Verdict
from .select import (
    Candidate,
    attribute_matches,
    candidates,
    describe,
    material_matches,
    room_of_type,
    room_walls,
    rooms_matching,
    select,
    visible_walls,
)

_CMP: dict[str, Callable[[int, int], bool]] = {
    "eq": operator.eq, "ge": operator.ge, "le": operator.le, "gt": operator.gt, "lt": operator.lt,
}
_CMP_TEXT = {"eq": "exactly", "ge": "at least", "le": "at most", "gt": "more than", "lt": "fewer than"}
#: Ids listed in an explanation before it is cut short.
_MAX_IDS = 6


@dataclass(frozen=True)
class Check:
    """A program's verdict on one scene."""

    holds: bool
    explanation: str
    evidence: dict[str, Any] = field(default_factory=dict)


def _ids(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_MAX_IDS])
    return (shown + f" and {len(items) - _MAX_IDS} more") if len(items) > _MAX_IDS else (shown or "none")


def _quantified(quant: Quant, matches: list[str], passing: list[str], what: str) -> tuple[bool, str]:
    """Apply a quantifier to the subjects that pass; return the decision and a phrase."""
    if quant.kind == "count":
        assert quant.cmp is not None and quant.n is not None
        ok = _CMP[quant.cmp](len(passing), quant.n)
        return ok, f"{len(passing)} of {len(matches)} {what} do ({_ids(passing)}); needed {_CMP_TEXT[quant.cmp]} {quant.n}"
    if not matches:
        return False, f"no {what} in the scene"
    if quant.kind == "all":
        failing = [m for m in matches if m not in passing]
        if failing:
            return False, f"not every {what} does: {_ids(failing)} do(es) not"
        return True, f"every {what} does ({_ids(passing)})"
    if passing:
        return True, f"{passing[0]} does"
    return False, f"none of {_ids(matches)} does"


def _check_count(scene: Scene, p: Count, pool: list[Candidate]) -> Check:
    found = [c.id for c in select(scene, p.of, pool)]
    ok = _CMP[p.cmp](len(found), p.n)
    text = (f"{len(found)} {describe(p.of)} found ({_ids(found)}); "
            f"needed {_CMP_TEXT[p.cmp]} {p.n}")
    return Check(ok, text, {"matches": found, "count": len(found)})


def _check_attribute(scene: Scene, p: Attribute, pool: list[Candidate]) -> Check:
    matches = select(scene, p.of, pool)
    passing, seen = [], {}
    for c in matches:
        seen[c.id] = {k: c.attributes.get(k) for k in p.attrs}
        if all(attribute_matches(c.attributes, k, v) for k, v in p.attrs.items()):
            passing.append(c.id)
    want = ", ".join(f"{k} {v}" for k, v in p.attrs.items())
    ok, phrase = _quantified(p.quant, [c.id for c in matches], passing, f"{describe(p.of)} with {want}")
    observed = "; ".join(f"{i}: " + ", ".join(f"{k} {v or 'unknown'}" for k, v in a.items())
                         for i, a in list(seen.items())[:_MAX_IDS])
    return Check(ok, f"{phrase}" + (f" (observed {observed})" if observed else ""),
                 {"matches": [c.id for c in matches], "passing": passing, "observed": seen})


def _relation_fn(name: str) -> Callable[..., Any]:
    return rel_mod.RELATIONS[name]


def _check_relation(scene: Scene, p: Relation, pool: list[Candidate]) -> Check:
    fn = _relation_fn(p.rel)
    subjects = select(scene, p.a, pool)
    bs = select(scene, p.b, pool) if p.b is not None else []
    cs = select(scene, p.c, pool) if p.c is not None else []
    passing: list[str] = []
    witness: dict[str, str] = {}
    last: dict[str, str] = {}
    for a in subjects:
        for args in _argument_tuples(a.id, bs, cs, p):
            verdict = fn(scene, *args, **p.params)
            last[a.id] = verdict.explanation
            if verdict.holds:
                passing.append(a.id)
                witness[a.id] = verdict.explanation
                break
    missing = [r for r, s, sel in (("b", bs, p.b), ("c", cs, p.c)) if sel is not None and not s]
    what = f"{describe(p.a)} {p.rel.replace('_', ' ')}"
    if missing:
        names = " and ".join(describe(sel) for r, sel in (("b", p.b), ("c", p.c)) if r in missing and sel)
        return Check(p.quant.kind == "count" and _CMP[p.quant.cmp or "ge"](0, p.quant.n or 0),
                     f"no {names} in the scene for {p.rel.replace('_', ' ')}",
                     {"matches": [a.id for a in subjects], "passing": []})
    ok, phrase = _quantified(p.quant, [a.id for a in subjects], passing, what)
    detail = next(iter(witness.values()), None) if ok else next(
        (last[a.id] for a in subjects if a.id not in passing and a.id in last), None)
    text = phrase + (f": {detail}" if detail else "")
    return Check(ok, text, {"matches": [a.id for a in subjects], "passing": passing, "witnesses": witness})


def _argument_tuples(a: str, bs: list[Candidate], cs: list[Candidate], p: Relation) -> list[tuple[str, ...]]:
    if p.b is None:
        return [(a,)]
    if p.c is None:
        return [(a, b.id) for b in bs if b.id != a]
    return [(a, b.id, c.id) for b in bs for c in cs if len({a, b.id, c.id}) == 3]


def _check_room_relation(scene: Scene, p: RoomRelation) -> Check:
    fn = _relation_fn(p.rel)
    ra, rb = rooms_matching(scene, p.a), rooms_matching(scene, p.b)
    if not ra or not rb:
        missing = p.a if not ra else p.b
        return Check(False, f"no room {missing!r} in the scene (rooms: {_ids([r.id for r in scene.rooms])})")
    last = ""
    for x in ra:
        for y in rb:
            if x.id == y.id:
                continue
            verdict = fn(scene, x.id, y.id)
            last = verdict.explanation
            if verdict.holds:
                return Check(True, verdict.explanation, {"rooms": [x.id, y.id], "value": verdict.value})
    return Check(False, last or f"{p.a!r} and {p.b!r} name the same room", {})


def _check_material(scene: Scene, p: Material) -> Check:
    rooms = rooms_matching(scene, p.room)
    if not rooms:
        return Check(False, f"no room {p.room!r} in the scene (rooms: {_ids([r.id for r in scene.rooms])})")
    notes = []
    for room in rooms:
        if p.surface == "floor":
            ok = material_matches(room.floor_material, p.value)
            note = f"floor of {room.id} is {room.floor_material or 'unknown'}"
            if ok:
                return Check(True, f"{note}, which is {p.value}", {"room": room.id, "material": room.floor_material})
            notes.append(note)
            continue
        # Only visible walls are surfaces: an empty wall of an open plan neither passes nor
        # fails "the walls are X" (see select.visible_walls); it is named, not judged.
        walls = visible_walls(scene, room, p.direction)
        open_ids = [w.id for w in room_walls(scene, room, p.direction) if w.empty]
        good = [w.id for w in walls if material_matches(w.material, p.value)]
        bad = [f"{w.id} ({w.material or 'unknown'})" for w in walls if w.id not in good]
        ok = bool(walls) and (not bad if p.quant == "all" else bool(good))
        side = f"{p.direction} " if p.direction else ""
        skipped = f" (not counted, empty walls: {_ids(open_ids)})" if open_ids else ""
        if ok:
            evidence: dict[str, Any] = {"room": room.id, "walls": good}
            if open_ids:
                evidence["empty_walls"] = open_ids
            return Check(True, f"{side}walls of {room.id} are {p.value}: {_ids(good)}{skipped}", evidence)
        if walls:
            notes.append(f"{side}walls of {room.id} not {p.value}: {_ids(bad)}{skipped}")
        elif open_ids:
            notes.append(f"{room.id} has no visible {side}wall: {_ids(open_ids)} open (empty walls)")
        else:
            notes.append(f"{room.id} has no {side}wall")
    return Check(False, "; ".join(notes), {})


def _windows_of(scene: Scene, room_id: str, direction: str | None) -> list[str]:
    # Windows are counted as the scene lists them, on whichever wall holds them: AI2-THOR
    # and our builder put windows in outside walls only, and an empty wall is never one.
    room = scene.room(room_id)
    out = []
    for w in scene.windows:
        if room_id not in (w.room0, w.room1):
            continue
        if direction is not None:
            wall = scene.wall(w.wall0)
            if wall_direction(wall.start, wall.end, room.vertices) != direction:
                continue
        out.append(w.id)
    return out


def _check_layout(scene: Scene, p: Layout) -> Check:
    if p.kind == "room_count":
        assert p.cmp is not None and p.n is not None
        ids = [r.id for r in scene.rooms if p.room_type is None or room_of_type(r, p.room_type)]
        what = f"{p.room_type} room(s)" if p.room_type else "rooms"
        return Check(_CMP[p.cmp](len(ids), p.n),
                     f"{len(ids)} {what} ({_ids(ids)}); needed {_CMP_TEXT[p.cmp]} {p.n}", {"rooms": ids})
    if p.kind == "door_between":
        return _check_door(scene, p.rooms[0], p.rooms[1])
    if p.kind == "door_opens":
        return _check_door_opens(scene, p.rooms[0], p.rooms[1])
    assert p.room is not None
    rooms = rooms_matching(scene, p.room)
    if not rooms:
        return Check(False, f"no room {p.room!r} in the scene (rooms: {_ids([r.id for r in scene.rooms])})")
    if p.kind == "room_exists":
        return Check(True, f"room {rooms[0].id} is a {p.room}", {"rooms": [r.id for r in rooms]})
    if p.kind == "room_area":
        lo, hi = p.min_m2 if p.min_m2 is not None else 0.0, p.max_m2 if p.max_m2 is not None else float("inf")
        areas = {r.id: round(r.area_m2, 3) for r in rooms}
        hit = [rid for rid, a in areas.items() if lo - 1e-6 <= a <= hi + 1e-6]
        desc = ", ".join(f"{rid} {a:.2f} m²" for rid, a in areas.items())
        return Check(bool(hit), f"area {desc}; needed [{lo:g}, {hi:g}] m²", {"areas": areas})
    assert p.cmp is not None and p.n is not None
    counts = {r.id: _windows_of(scene, r.id, p.direction) for r in rooms}
    hit = [rid for rid, ws in counts.items() if _CMP[p.cmp](len(ws), p.n)]
    side = f" on the {p.direction} wall" if p.direction else ""
    desc = "; ".join(f"{rid} has {len(ws)} window(s){side} ({_ids(ws)})" for rid, ws in counts.items())
    return Check(bool(hit), f"{desc}; needed {_CMP_TEXT[p.cmp]} {p.n}", {"windows": counts})


def _check_door(scene: Scene, ref0: str, ref1: str) -> Check:
    def ids(ref: str) -> set[str]:
        return {EXTERIOR} if ref == EXTERIOR else {r.id for r in rooms_matching(scene, ref)}

    r0, r1 = ids(ref0), ids(ref1)
    for door in scene.doors:
        if (door.room0 in r0 and door.room1 in r1) or (door.room0 in r1 and door.room1 in r0):
            return Check(True, f"{door.id} joins {door.room0} and {door.room1}", {"door": door.id})
    if not r0 or not r1:
        missing = ref0 if not r0 else ref1
        return Check(False, f"no room {missing!r} in the scene", {})
    return Check(False, f"no door joins {ref0!r} and {ref1!r} (doors: {_ids([d.id for d in scene.doors])})", {})


def _check_door_opens(scene: Scene, ref0: str, ref1: str) -> Check:
    """Every door between the two rooms swings open freely (``door_opens``); none is a failure."""
    found = _check_door(scene, ref0, ref1)
    if not found.holds:
        return found
    r0 = {EXTERIOR} if ref0 == EXTERIOR else {r.id for r in rooms_matching(scene, ref0)}
    r1 = {EXTERIOR} if ref1 == EXTERIOR else {r.id for r in rooms_matching(scene, ref1)}
    doors = [d.id for d in scene.doors if {d.room0, d.room1} & r0 and {d.room0, d.room1} & r1]
    verdicts = [_relation_fn("door_opens")(scene, d) for d in doors]
    ok = all(v.holds for v in verdicts)
    text = "; ".join(v.explanation for v in verdicts if ok or not v.holds)
    return Check(ok, text, {"doors": doors})


def check(scene: Scene, program: Program, pool: list[Candidate] | None = None) -> Check:
    """Decide ``program`` on ``scene`` (``pool``: precomputed :func:`candidates`)."""
    pool = candidates(scene) if pool is None else pool
    with unchanged(scene):  # a check only reads the scene: one index for all its relation calls
        return _check(scene, program, pool)


def _check(scene: Scene, program: Program, pool: list[Candidate]) -> Check:
    if isinstance(program, Count):
        return _check_count(scene, program, pool)
    if isinstance(program, Attribute):
        return _check_attribute(scene, program, pool)
    if isinstance(program, RoomRelation):
        return _check_room_relation(scene, program)
    if isinstance(program, Relation):
        return _check_relation(scene, program, pool)
    if isinstance(program, Material):
        return _check_material(scene, program)
    return _check_layout(scene, program)


def _program_of(c: ConstraintSpec | dict[str, Any], where: str) -> tuple[str, Program]:
    if isinstance(c, ConstraintSpec):
        return c.id, c.program if c.program is not None else parse(c.text, where)
    cid = str(c.get("id", where))
    raw = c.get("program")
    if raw is not None:
        return cid, parse_program(raw, f"constraint {cid}")
    return cid, parse(str(c.get("text", "")), f"constraint {cid}")


def evaluate(scene: Scene, constraints: Sequence[ConstraintSpec | dict[str, Any]]) -> list[Verdict]:
    """Verdicts for every constraint, in order; one bad constraint does not stop the rest.

    A constraint is a :class:`ConstraintSpec` or a dict with ``id`` and ``program`` (JSON)
    or ``text`` (a template sentence)."""
    pool = candidates(scene)
    with unchanged(scene):
        return [_verdict(scene, c, i, pool) for i, c in enumerate(constraints)]


def _verdict(scene: Scene, c: ConstraintSpec | dict[str, Any], i: int, pool: list[Candidate]) -> Verdict:
    where = f"constraint {c.id if isinstance(c, ConstraintSpec) else c.get('id', i)}"
    try:
        cid, program = _program_of(c, where)
        result = check(scene, program, pool)
        return Verdict(cid, result.holds, f"[{constraint_type(program)}] {result.explanation}")
    except (ProgramError, KeyError, ValueError, TypeError) as exc:
        cid = c.id if isinstance(c, ConstraintSpec) else str(c.get("id", i))
        message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        return Verdict(cid, None, f"error: {message.splitlines()[0] if message else type(exc).__name__}")
