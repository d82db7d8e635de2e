"""Lamps: floor lamps (base, pole, shade), table lamps (body, shade), ceiling lamps hanging
from the top of their box, wall lamps."""

from __future__ import annotations

from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec


def _shade(p: Parts, s: Spec, y0: float, y1: float, *, wide_at_top: bool = False) -> None:
    r = min(p.sx, p.sz) / 2
    lo, hi = (0.7 * r, r) if wide_at_top else (r, 0.65 * r)
    p.lathe(p.sx / 2, p.sz / 2, [(y0, lo), (y1, hi)], s.palette.accent, scale_z=p.sz / p.sx if p.sx else 1.0)


def floor_lamp(p: Parts, s: Spec) -> None:
    sy, cx, cz = p.sy, p.sx / 2, p.sz / 2
    shade_h = min(0.4, 0.28 * sy)
    p.cylinder(cx, cz, 0.0, min(0.03, 0.05 * sy), 0.4 * min(p.sx, p.sz), s.palette.frame, segments=16)
    p.cylinder(cx, cz, 0.0, sy - shade_h * 0.5, min(0.015, 0.08 * min(p.sx, p.sz)), s.palette.frame, segments=8)
    _shade(p, s, sy - shade_h, sy)


def table_lamp(p: Parts, s: Spec) -> None:
    sy, cx, cz, r = p.sy, p.sx / 2, p.sz / 2, min(p.sx, p.sz) / 2
    shade_y = 0.55 * sy
    p.lathe(cx, cz, [(0.0, 0.55 * r), (0.3 * shade_y, 0.7 * r), (0.85 * shade_y, 0.3 * r), (shade_y, 0.12 * r)],
            s.palette.main)
    _shade(p, s, shade_y, sy)


def ceiling_lamp(p: Parts, s: Spec) -> None:
    sy, cx, cz, r = p.sy, p.sx / 2, p.sz / 2, min(p.sx, p.sz) / 2
    p.cylinder(cx, cz, sy - min(0.03, 0.1 * sy), sy, 0.3 * r, s.palette.frame)  # canopy on the ceiling
    shade_h = min(0.35, 0.6 * sy)
    p.cylinder(cx, cz, shade_h * 0.5, sy, min(0.01, 0.05 * r), s.palette.frame, segments=6)  # cord
    if s.has("chandelier"):
        for dx, dz in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            x, z = cx + dx * 0.75 * r, cz + dz * 0.75 * r
            p.box((min(cx, x) - 0.01, 0.3 * shade_h, min(cz, z) - 0.01), (max(cx, x) + 0.01, 0.3 * shade_h + 0.02,
                  max(cz, z) + 0.01), s.palette.frame)
            p.cylinder(x, z, 0.0, 0.6 * shade_h, 0.2 * r, s.palette.accent, segments=8)
    else:
        _shade(p, s, 0.0, shade_h, wide_at_top=False)


def lamp(p: Parts, s: Spec) -> None:
    """A lamp of unknown kind: chosen by the words, then by the box's height."""
    if s.has("ceiling", "pendant", "chandelier", "hanging", "suspension"):
        ceiling_lamp(p, s)
    elif s.has("floor", "standing", "arc") or p.sy > 1.0:
        floor_lamp(p, s)
    elif s.has("wall", "sconce"):
        wall_lamp(p, s)
    else:
        table_lamp(p, s)


def wall_lamp(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    p.box((0.3 * sx, 0.2 * sy, 0), (0.7 * sx, 0.8 * sy, min(0.03, 0.2 * sz)), s.palette.frame)
    p.box((0.45 * sx, 0.45 * sy, 0), (0.55 * sx, 0.55 * sy, 0.6 * sz), s.palette.frame)
    p.lathe(sx / 2, 0.6 * sz, [(0.0, 0.35 * sz), (sy, 0.45 * sz)], s.palette.accent)


BUILDERS: dict[str, Builder] = {"floor lamp": floor_lamp, "table lamp": table_lamp, "ceiling lamp": ceiling_lamp,
                                "lamp": lamp, "wall lamp": wall_lamp}
ALIASES: dict[str, str] = {
    "chandelier": "ceiling lamp", "pendant lamp": "ceiling lamp", "pendant": "ceiling lamp",
    "ceiling light": "ceiling lamp", "light": "lamp", "lantern": "table lamp", "desk lamp": "table lamp",
    "standing lamp": "floor lamp", "sconce": "wall lamp", "wall light": "wall lamp", "ceilingfan": "ceiling lamp",
    "ceiling fan": "ceiling lamp", "fan": "floor lamp", "pedestal fan": "floor lamp",
}
