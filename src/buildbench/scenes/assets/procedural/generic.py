"""The fallback for categories no family knows, and small objects by their rough shape."""

from __future__ import annotations

from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec


def block(p: Parts, s: Spec) -> None:
    """An unknown object: a body on a slightly inset plinth under a lid, so it reads as a
    made thing rather than a bounding box, while filling the box as an unknown must."""
    sx, sy, sz = p.sx, p.sy, p.sz
    plinth, inset = 0.06 * sy, 0.04 * min(sx, sz)
    lid = 0.08 * sy
    p.box((inset, 0, inset), (sx - inset, plinth, sz - inset), s.palette.frame)
    p.box((0, plinth, 0), (sx, sy - lid, sz), s.palette.main)
    p.box((inset, sy - lid, inset), (sx - inset, sy, sz - inset), s.palette.accent)


def round_thing(p: Parts, s: Spec) -> None:
    """Fruit, balls, eggs: one ellipsoid filling the box."""
    p.ellipsoid((p.sx / 2, p.sy / 2, p.sz / 2), (p.sx / 2, p.sy / 2, p.sz / 2), s.palette.main)


def vessel(p: Parts, s: Spec) -> None:
    """Vases, bottles, cups, pots, bins: a lathed body whose profile suits the kind."""
    r = p.sx / 2
    sy = p.sy
    if s.kind == "bottle":
        profile = [(0, 0.9 * r), (0.6 * sy, r), (0.72 * sy, 0.45 * r), (sy, 0.35 * r)]
    elif s.kind == "bowl":
        profile = [(0, 0.5 * r), (0.5 * sy, 0.85 * r), (sy, r)]
    elif s.kind == "vase":
        profile = [(0, 0.6 * r), (0.35 * sy, r), (0.8 * sy, 0.55 * r), (sy, 0.7 * r)]
    else:  # cups, mugs, pots, bins, baskets: a slightly tapered tub
        profile = [(0, 0.85 * r), (sy, r)]
    p.lathe(p.sx / 2, p.sz / 2, profile, s.palette.main, scale_z=p.sz / p.sx if p.sx > 0 else 1.0)


def flat_thing(p: Parts, s: Spec) -> None:
    """Books, phones, cards, plates laid flat: a slab with a contrasting top."""
    p.box((0, 0, 0), (p.sx, 0.8 * p.sy, p.sz), s.palette.main)
    p.box((0.03 * p.sx, 0.8 * p.sy, 0.03 * p.sz), (0.97 * p.sx, p.sy, 0.97 * p.sz), s.palette.accent)


BUILDERS: dict[str, Builder] = {"object": block, "round thing": round_thing, "bottle": vessel, "bowl": vessel,
                                "vase": vessel, "vessel": vessel, "flat thing": flat_thing}
