"""One house: sections framed in phase order (foundation → floor → walls, story by story
→ roof), then packed into a :class:`Structure` with phase, section and support annotations.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .floor import FloorRefs, a_range, beam_lines, build_floor, build_foundation, cross_axis, joist_p, p_range
from .frame import D2X4, D2X10, FLOOR_DEPTH, MODULE, STORY_H, T2X, FrameArrays, FrameBuilder
from .openings import Opening, free_intervals, sample_openings
from .params import HouseParams, SectionSpec
from .roofgeom import RoofGeom, WallProfile, eave_height
from .roofs import RoofWriter
from .runs import Run
from .skin import Cladding
from .walls import HEAD_M, WallLine, build_wall

_EXTERIOR = ("front", "back", "left", "right")
#: Clear height an A-frame end needs above an opening's head for its header and cripples.
_GABLE_HEAD_CLEAR_M = 0.6
_TOL = 1e-6


def _abutting(
    sec: SectionSpec, side: str, others: tuple[SectionSpec, ...]
) -> list[tuple[float, float, float]]:
    """Intervals of ``sec``'s wall on ``side`` that another section stands against, each with
    the height of that section's eaves (above them only its roof, if anything, hides the wall)."""
    out = []
    for o in others:
        if o is sec:
            continue
        if side in ("front", "back"):
            edge, touch = (sec.y0_m, o.y1_m) if side == "front" else (sec.y1_m, o.y0_m)
            lo, hi = max(sec.x0_m, o.x0_m), min(sec.x1_m, o.x1_m)
        else:
            edge, touch = (sec.x0_m, o.x1_m) if side == "left" else (sec.x1_m, o.x0_m)
            lo, hi = max(sec.y0_m, o.y0_m), min(sec.y1_m, o.y1_m)
        if abs(edge - touch) < _TOL and hi > lo + _TOL:
            out.append((lo, hi, eave_height(o)))
    return out


def _exterior_place(sec: SectionSpec, side: str) -> tuple[str, float, float, float, float]:
    """Axis, start, end, band start and layout origin of an exterior wall: front/back run the
    full width, left/right fit between them."""
    x0, x1, y0, y1 = sec.x0_m, sec.x1_m, sec.y0_m, sec.y1_m
    if side == "front":
        return "x", x0, x1, y0, x0
    if side == "back":
        return "x", x0, x1, y1 - D2X4, x0
    if side == "left":
        return "y", y0 + D2X4, y1 - D2X4, x0, y0
    return "y", y0 + D2X4, y1 - D2X4, x1 - D2X4, y0


def _wall_role(g: RoofGeom, side: str) -> str:
    """``eave``, ``high`` (shed high eave), ``gable`` (gable/gambrel/shed end) or ``hip`` (hip end)."""
    role = {v: k for k, v in g.sides().items()}[side]
    if role in ("near", "far"):
        return "high" if g.spec.kind == "shed" and role == "far" else "eave"
    return "hip" if g.spec.kind == "hip" else "gable"


def _gable_free(
    g: RoofGeom, a: float, b: float, zf: float, free: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    """Restrict an A-frame end's free wall (``a`` … ``b``, sole plate at ``zf``) to where the
    roof clears an opening head."""
    s = np.linspace(a, b, 200)
    need = zf + T2X + HEAD_M + _GABLE_HEAD_CLEAR_M
    ok = s[g.profile(g.v_of_world(s)) >= need]
    if ok.size == 0:
        return []
    lo, hi = float(ok.min()) + 0.3, float(ok.max()) - 0.3
    return [(max(a, lo), min(b, hi)) for a, b in free if min(b, hi) > max(a, lo)]


def _section_walls(
    fb: FrameBuilder,
    p: HouseParams,
    sec: SectionSpec,
    g: RoofGeom,
    story: int,
    deck: float,
    floor: FloorRefs,
    rng: np.random.Generator,
    clad: list[Cladding],
) -> FloorRefs:
    """All walls of one story of one section; returns the runs the next floor/roof bears on.

    Exterior walls are also appended to ``clad`` for the facade skin.
    """
    top_story = story == sec.stories - 1
    main_front = sec is p.sections[0] and story == 0
    tops: dict[str, Run] = {}
    for side in _EXTERIOR:
        axis, a, b, t0, origin = _exterior_place(sec, side)
        mode, profile, knee = "full", None, None
        if top_story:
            role = _wall_role(g, side)
            if sec.roof.aframe:
                mode = {"eave": "seat", "hip": "seat", "gable": "gable", "high": "full"}[role]
            if role == "gable":
                profile = WallProfile(g)
            elif role == "high":
                knee = g.knee_plate_top
        blocked = _abutting(sec, side, p.sections)
        free = free_intervals(a, b, [(lo, hi) for lo, hi, _ in blocked])
        if mode == "gable":
            free = _gable_free(g, a, b, deck, free)
        openings: list[Opening] = []
        if mode != "seat":
            garages = (
                (2 if sec.width_m >= 7 * MODULE else 1)
                if p.style == "CH" and main_front and side == "front"
                else 0
            )
            openings = sample_openings(
                rng, free, p.openings_per_wall, entry=main_front and side == "front", garages=garages
            )
        # The line built once, with everything (dataclasses.replace cost as much as building it).
        line = WallLine(
            sec.name, story, side, axis, a, b, t0, deck, origin, mode, profile, knee, tuple(openings)
        )
        tops[side] = build_wall(fb, line, floor.sides[side])
        z_bottom = sec.z_base_m if story == 0 else deck - D2X10
        clad.append(Cladding(line, z_bottom, tuple(blocked)))
    beams: list[Run] = []
    p0, p1 = p_range(sec)
    if not top_story:
        for j, ab in enumerate(beam_lines(sec)):
            a, b = p0 + D2X4, p1 - D2X4
            line = WallLine(
                sec.name, story, f"bear{j + 1}", cross_axis(sec), a, b, ab - D2X4 / 2, deck, p0,
                openings=tuple(sample_openings(rng, free_intervals(a, b, []), 0, interior=True)),
            )  # fmt: skip
            beams.append(build_wall(fb, line, floor.beams[j]))
    elif p.interior_walls and not sec.roof.aframe and p1 - p0 >= 3 * MODULE:
        ps = joist_p(sec)
        pm = float(ps[len(ps) // 2])
        a0, a1 = a_range(sec)
        a, b = a0 + D2X4, a1 - D2X4
        line = WallLine(
            sec.name, story, "part1", sec.joist_axis, a, b, pm - D2X4 / 2, deck, a0,
            openings=tuple(sample_openings(rng, free_intervals(a, b, []), 0, interior=True)),
        )  # fmt: skip
        k = len(ps) // 2
        build_wall(fb, line, Run(floor.bay_starts, floor.bay_starts, floor.joists[:, k]))
    return FloorRefs(tops, beams)


class BuiltFrame(NamedTuple):
    """A framed house and the exterior walls its skin clads."""

    frame: FrameArrays
    cladding: list[Cladding]


def build_frame(p: HouseParams) -> BuiltFrame:
    """Frame every section of ``p``: members as arrays, plus the exterior walls for the skin."""
    fb = FrameBuilder()
    clad: list[Cladding] = []
    rng = np.random.default_rng(np.random.SeedSequence((*p.seed, 1)))
    for sec in p.sections:
        g = RoofGeom(sec, sec.roof)
        below = build_foundation(fb, sec)
        for story in range(sec.stories):
            zb = sec.z_base_m + T2X + story * STORY_H
            floor = build_floor(fb, sec, story, zb, below)
            below = _section_walls(fb, p, sec, g, story, zb + FLOOR_DEPTH - T2X, floor, rng, clad)
        RoofWriter(fb, g, sec.stories - 1, below.sides).build()
    return BuiltFrame(fb.finish(), clad)
