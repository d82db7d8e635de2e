"""Fixtures of a house: doors and windows (frame, leaf or glass, handles, bars), blinds,
and bathroom pieces (toilet, sink, bathtub, shower head)."""

from __future__ import annotations

from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec

_GLASS = (175, 205, 225, 255)
_PORCELAIN = (242, 242, 240, 255)


def door(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    f = min(0.06, 0.08 * sx)
    for lo, hi in (((0, 0, 0), (f, sy, sz)), ((sx - f, 0, 0), (sx, sy, sz)), ((0, sy - f, 0), (sx, sy, sz))):
        p.box(lo, hi, s.palette.frame)
    leaf = (0.3 * sz, 0.7 * sz)
    p.box((f, 0.0, leaf[0]), (sx - f, sy - f, leaf[1]), s.palette.main)
    p.box((sx - f - 0.12, 0.45 * sy, 0.0), (sx - f - 0.05, 0.47 * sy, sz), s.palette.frame)  # handles, both sides


def window(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    f = min(0.06, 0.08 * min(sx, sy))
    for lo, hi in (((0, 0, 0), (f, sy, sz)), ((sx - f, 0, 0), (sx, sy, sz)), ((0, 0, 0), (sx, f, sz)),
                   ((0, sy - f, 0), (sx, sy, sz))):
        p.box(lo, hi, s.palette.main if s.palette.family else (238, 238, 236, 255))
    p.box((f, f, 0.45 * sz), (sx - f, sy - f, 0.55 * sz), _GLASS)
    p.box((sx / 2 - f / 3, f, 0.3 * sz), (sx / 2 + f / 3, sy - f, 0.7 * sz), (238, 238, 236, 255))  # mullion


def blinds(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    p.box((0, 0.95 * sy, 0), (sx, sy, sz), s.palette.frame)
    n = max(3, round(sy / 0.05))
    for k in range(n):
        y = k * 0.95 * sy / n
        p.box((0, y, 0), (sx, y + 0.5 * 0.95 * sy / n, sz), s.palette.main)


def toilet(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    tank = min(0.2, 0.3 * sz)
    p.box((0.05 * sx, 0.45 * sy, 0), (0.95 * sx, sy, tank), _PORCELAIN)  # cistern at the back
    p.lathe(sx / 2, tank + (sz - tank) * 0.45, [(0.0, 0.3 * sx), (0.35 * sy, 0.35 * sx), (0.5 * sy, 0.5 * sx)],
            _PORCELAIN, scale_z=(sz - tank) / sx * 0.95)
    p.box((0.2 * sx, 0.0, 0.5 * tank), (0.8 * sx, 0.45 * sy, tank + 0.1), _PORCELAIN)


def basin(p: Parts, s: Spec) -> None:
    """Sinks and bathtubs: an open vessel (rim walls and a floor), on a pedestal when tall."""
    sx, sy, sz = p.sx, p.sy, p.sz
    wall = min(0.06, 0.1 * min(sx, sz))
    depth = min(0.45 if s.kind == "bathtub" else 0.18, 0.9 * sy)
    y0 = sy - depth
    if y0 > 0.05:  # a pedestal under a free-standing basin
        p.box((0.35 * sx, 0, 0.1 * sz), (0.65 * sx, y0 + 0.01, 0.6 * sz), _PORCELAIN)
    p.box((0, y0, 0), (sx, y0 + 0.3 * depth, sz), _PORCELAIN)
    for lo, hi in (((0, y0, 0), (sx, sy, wall)), ((0, y0, sz - wall), (sx, sy, sz)), ((0, y0, 0), (wall, sy, sz)),
                   ((sx - wall, y0, 0), (sx, sy, sz))):
        p.box(lo, hi, _PORCELAIN)


def shower_head(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    p.box((0.4 * sx, 0.5 * sy, 0), (0.6 * sx, 0.6 * sy, 0.7 * sz), s.palette.frame)
    p.cylinder(sx / 2, 0.7 * sz, 0.0, sy, 0.5 * min(sx, 0.6 * sz), s.palette.frame)


BUILDERS: dict[str, Builder] = {
    "door": door, "window": window, "blinds": blinds, "toilet": toilet, "sink": basin, "bathtub": basin,
    "shower head": shower_head,
}
ALIASES: dict[str, str] = {
    "doorway": "door", "gate": "door", "blind": "blinds", "shutter": "blinds", "wc": "toilet",
    "washbasin": "sink", "basin": "sink", "bath": "bathtub", "tub": "bathtub", "bath tub": "bathtub",
    "faucet": "shower head", "tap": "shower head",
}
