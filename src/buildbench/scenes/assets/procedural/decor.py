"""Soft furnishings and decor: plants, rugs, pictures and mirrors, pillows, curtains,
statues, clocks."""

from __future__ import annotations

import math

from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec

_LEAF = (60, 120, 55, 255)
_POT = (150, 95, 70, 255)


def plant(p: Parts, s: Spec) -> None:
    """A pot with a trunk and a crown of overlapping foliage blobs filling the upper box."""
    sx, sy, sz = p.sx, p.sy, p.sz
    cx, cz = sx / 2, sz / 2
    pot_h = min(0.35 * sy, 0.45)
    r = min(sx, sz) / 2
    pot = s.palette.main if s.has("white", "black", "gray", "grey", "ceramic", "concrete") else _POT
    p.lathe(cx, cz, [(0.0, 0.32 * r), (pot_h, 0.45 * r)], pot)
    crown_lo = pot_h + 0.1 * (sy - pot_h)
    p.cylinder(cx, cz, pot_h * 0.9, crown_lo + 0.1 * (sy - crown_lo), max(0.01, 0.05 * r), (90, 65, 40, 255), segments=6)
    ry = (sy - crown_lo) / 2
    p.ellipsoid((cx, crown_lo + ry, cz), (0.75 * sx / 2, ry, 0.75 * sz / 2), _LEAF)
    for k in range(5):  # side blobs reach the box's sides, so the crown fills its footprint
        a = 2 * math.pi * (k / 5 + s.pick(0.0, 0.1))
        bx = cx + 0.5 * sx / 2 * math.cos(a)
        bz = cz + 0.5 * sz / 2 * math.sin(a)
        p.ellipsoid((bx, crown_lo + ry * s.pick(0.7, 1.2), bz), (0.5 * sx / 2, 0.6 * ry, 0.5 * sz / 2),
                    (50 + 10 * k, 110 + 8 * k, 50, 255))


def rug(p: Parts, s: Spec) -> None:
    """A rug is a surface as thin as its box (open below, see :meth:`Parts.mat`), with a
    border in the frame colour."""
    p.mat(0.06 * min(p.sx, p.sz), s.palette.main, s.palette.frame)


def picture(p: Parts, s: Spec) -> None:
    """Paintings, mirrors, frames: a frame around a picture or glass, facing +z."""
    sx, sy, sz = p.sx, p.sy, p.sz
    f = 0.06 * min(sx, sy)
    p.box((0, 0, 0), (sx, sy, 0.6 * sz), s.palette.main)  # backing board
    for lo, hi in (((0, 0, 0), (sx, f, sz)), ((0, sy - f, 0), (sx, sy, sz)), ((0, 0, 0), (f, sy, sz)),
                   ((sx - f, 0, 0), (sx, sy, sz))):
        p.box(lo, hi, s.palette.frame)
    face = (205, 220, 230, 255) if s.kind == "mirror" else s.palette.accent
    p.box((f, f, 0.6 * sz), (sx - f, sy - f, 0.8 * sz), face)


def pillow(p: Parts, s: Spec) -> None:
    p.ellipsoid((p.sx / 2, p.sy / 2, p.sz / 2), (p.sx / 2, p.sy / 2, p.sz / 2), s.palette.main)
    p.box((0.15 * p.sx, 0.2 * p.sy, 0.15 * p.sz), (0.85 * p.sx, 0.8 * p.sy, 0.85 * p.sz), s.palette.main)


def curtain(p: Parts, s: Spec) -> None:
    """A rod along the top and a curtain in folds hanging from it."""
    sx, sy, sz = p.sx, p.sy, p.sz
    p.box((0, 0.97 * sy, 0), (sx, sy, sz), s.palette.frame)
    n = max(3, round(sx / 0.12))
    w = sx / n
    for k in range(n):
        z0 = 0.0 if k % 2 == 0 else 0.4 * sz
        p.box((k * w, 0.0, z0), ((k + 1) * w + 0.002, 0.97 * sy, z0 + 0.6 * sz), s.palette.main)


def statue(p: Parts, s: Spec) -> None:
    """Statues and sculptures: a figure of stacked round forms on a plinth."""
    sx, sy, sz = p.sx, p.sy, p.sz
    cx, cz, r = sx / 2, sz / 2, min(sx, sz) / 2
    p.box((0, 0, 0), (sx, 0.12 * sy, sz), s.palette.frame)
    p.lathe(cx, cz, [(0.12 * sy, 0.6 * r), (0.5 * sy, 0.8 * r), (0.75 * sy, 0.45 * r), (0.8 * sy, 0.25 * r)],
            s.palette.main, scale_z=sz / sx if sx else 1.0)
    p.ellipsoid((cx, 0.9 * sy, cz), (0.35 * r, 0.1 * sy, 0.35 * r * sz / sx if sx else 0.35 * r), s.palette.main)


def clock(p: Parts, s: Spec) -> None:
    """A clock facing +z: a round face on a thin case (a box that stands when it is deep)."""
    sx, sy, sz = p.sx, p.sy, p.sz
    p.box((0, 0, 0), (sx, sy, 0.7 * sz), s.palette.main)
    p.disc_z(sx / 2, sy / 2, 0.7 * sz, sz, 0.45 * min(sx, sy), (240, 238, 230, 255), segments=16)


def teddy(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    p.ellipsoid((sx / 2, 0.3 * sy, sz / 2), (sx / 2, 0.3 * sy, sz / 2), s.palette.main)
    p.ellipsoid((sx / 2, 0.78 * sy, sz / 2), (0.35 * sx, 0.22 * sy, 0.35 * sz), s.palette.main)


def coat_rack(p: Parts, s: Spec) -> None:
    """Coat stands and garment racks: a pole (or two) on a base with hooks or a rail."""
    sx, sy, sz = p.sx, p.sy, p.sz
    pole = min(0.03, 0.15 * min(sx, sz))
    if sx > 2 * sz:  # a garment rack: two uprights and a rail
        for x in (0.0, sx - pole):
            p.box((x, 0, 0), (x + pole, sy, sz), s.palette.frame)
        p.box((0, 0.95 * sy, 0.5 * sz - pole / 2), (sx, sy, 0.5 * sz + pole / 2), s.palette.frame)
        return
    p.cylinder(sx / 2, sz / 2, 0.0, 0.03 * sy, 0.45 * min(sx, sz), s.palette.frame, segments=12)
    p.cylinder(sx / 2, sz / 2, 0.0, sy, pole / 2, s.palette.frame, segments=8)
    y = 0.85 * sy
    p.box((0, y, sz / 2 - pole / 2), (sx, y + pole, sz / 2 + pole / 2), s.palette.frame)
    p.box((sx / 2 - pole / 2, y, 0), (sx / 2 + pole / 2, y + pole, sz), s.palette.frame)


BUILDERS: dict[str, Builder] = {
    "coat rack": coat_rack,
    "plant": plant, "rug": rug, "painting": picture, "mirror": picture, "pillow": pillow, "curtain": curtain,
    "statue": statue, "clock": clock, "teddy bear": teddy,
}
ALIASES: dict[str, str] = {
    "planter": "plant", "tree": "plant", "cactus": "plant", "bonsai": "plant", "flower": "plant",
    "flowers": "plant", "potted plant": "plant", "houseplant": "plant", "terrarium": "plant",
    "carpet": "rug", "mat": "rug", "doormat": "rug", "turf": "rug", "bath mat": "rug", "artwork": "painting",
    "picture": "painting", "frame": "painting", "poster": "painting", "wall art": "painting",
    "wallart": "painting", "wall decoration": "painting", "wall decor": "painting", "map": "painting",
    "chart": "painting", "panel": "painting", "wallpanel": "painting", "scroll": "painting",
    "cushion": "pillow", "throw pillow": "pillow", "blanket": "pillow", "throw": "pillow", "bedding": "pillow",
    "curtains": "curtain", "drape": "curtain", "drapes": "curtain", "shower curtain": "curtain",
    "sculpture": "statue", "figurine": "statue", "bust": "statue", "ornament": "statue", "decor": "statue",
    "decorative": "statue", "room decor": "statue", "table top decor": "vase", "centerpiece": "vase",
    "alarm clock": "clock", "wall clock": "clock", "stuffed animal": "teddy bear", "plush": "teddy bear",
    "toy": "teddy bear", "coatstand": "coat rack", "coat stand": "coat rack", "coat_rack": "coat rack",
    "coat_stand": "coat rack", "garmentrack": "coat rack", "garment rack": "coat rack", "valet": "coat rack",
    "towelrack": "coat rack", "towel rack": "coat rack", "pole": "coat rack", "towel holder": "coat rack",
    "hand towel holder": "coat rack", "toilet paper hanger": "coat rack", "hanger": "coat rack",
    "headboard": "painting", "partition": "painting", "roomdivider": "painting", "room divider": "painting", "bear": "teddy bear", "teddy": "teddy bear", "bunny": "teddy bear",
}
