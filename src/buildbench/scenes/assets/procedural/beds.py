"""Beds: legs (or a base to the floor), frame, mattress, pillows, blanket, headboard at the back.

Real bed frames stand on legs with a gap beneath (a rug or storage box slides under);
platform and storage beds sit on a base to the floor, which their words name.
"""

from __future__ import annotations

from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec


def _deck(p: Parts, s: Spec, y0: float, top: float, z0: float, inset: float = 0.0) -> None:
    """Frame, mattress and bedding between heights ``y0`` and ``top``, from ``z0`` to the foot,
    ``inset`` in from the box's sides."""
    sx, sz = p.sx, p.sz
    x0, x1 = inset, sx - inset
    mattress = min(0.22, 0.45 * (top - y0))
    frame_top = top - mattress
    p.box((x0, y0, z0), (x1, frame_top, sz), s.palette.frame)
    p.box((x0 + 0.02 * sx, frame_top, z0 + 0.01 * sz), (x1 - 0.02 * sx, top - 0.03 * mattress, 0.985 * sz),
          s.palette.accent)
    # blanket over the front two thirds, draping down the foot
    p.box((x0 + 0.015 * sx, top - 0.05 * mattress, z0 + 0.35 * (sz - z0)), (x1 - 0.015 * sx, top, sz),
          s.palette.main)


def bed(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    head = min(0.09, 0.05 * sz)  # headboard thickness
    top = min(0.55, 0.6 * sy) if sy > 0.75 else sy  # mattress top; low boxes are all mattress
    base_to_floor = s.has("platform", "storage", "drawer", "drawers", "tatami", "box", "divan")
    clearance = 0.0 if base_to_floor else min(0.2, 0.3 * top) * s.pick(0.8, 1.0)
    # the headboard's upper panel is the widest part; the frame, mattress and the
    # headboard's lower part are 20 % narrower than the box and at most 1.85 m wide (a 1.8 m
    # mattress): in the 3D-FRONT bedrooms nightstands (tops below about 0.8 m) reach into the
    # bed's box a median 8 cm (2 m beds) to 30 cm (beds over 2.5 m), a tenth of them 16-47 cm
    inset = (sx - min(0.8 * sx, 1.85)) / 2
    if clearance > 0:
        leg = min(0.07, 0.08 * sx)
        p.legs(0.02 * sx, leg, 0.0, clearance + 0.01, s.palette.frame, x0=inset, x1=sx - inset, z0=head)
    _deck(p, s, clearance, top, head, inset)
    panel = min(max(top + 0.08, 0.8), sy - min(0.05, 0.1 * sy))
    p.box((inset, 0, 0), (sx - inset, panel, head), s.palette.main)  # down to the floor
    p.box((0, panel, 0), (sx, sy, head), s.palette.main)
    pillow_top = min(sy, top + 0.14)
    if pillow_top > top + 0.05:
        n = 2 if sx > 1.2 else 1
        w = 0.9 * sx / n
        for i in range(n):
            cx = 0.05 * sx + w * (i + 0.5)
            p.ellipsoid((cx, (top + pillow_top) / 2, head + 0.14), (0.42 * w, (pillow_top - top) / 2, 0.11),
                        s.palette.accent)


def bunk_bed(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    post = min(0.07, 0.06 * sx)
    lower_top = min(0.5, 0.3 * sy)
    upper_base = max(lower_top + 0.6, 0.55 * sy) if sy > 1.4 else 0.6 * sy
    upper_top = min(sy - 0.15 * (sy - upper_base), upper_base + 0.3)
    _deck(p, s, 0.15 * lower_top, lower_top, post)
    _deck(p, s, upper_base, upper_top, post)
    p.legs(0.0, post, 0.0, sy, s.palette.frame)  # four corner posts, full height
    p.box((post, upper_top, post), (sx - post, sy, 2 * post), s.palette.frame)  # upper guard rail (back)
    p.box((post, upper_top, sz - 2 * post), (0.6 * sx, sy, sz - post), s.palette.frame)  # front rail


def dog_bed(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    rim = 0.15 * min(sx, sz)
    p.box((0, 0, 0), (sx, 0.4 * sy, sz), s.palette.main)
    for lo, hi in (((0, 0, 0), (sx, sy, rim)), ((0, 0, 0), (rim, sy, sz)), ((sx - rim, 0, 0), (sx, sy, sz))):
        p.box(lo, hi, s.palette.main)
    p.box((rim, 0.4 * sy, rim), (sx - rim, 0.55 * sy, sz - 0.02), s.palette.accent)


BUILDERS: dict[str, Builder] = {"bed": bed, "bunk bed": bunk_bed, "dog bed": dog_bed}
ALIASES: dict[str, str] = {
    "double bed": "bed", "single bed": "bed", "king bed": "bed", "queen bed": "bed", "bedframe": "bed",
    "bed frame": "bed", "loftbed": "bunk bed", "loft bed": "bunk bed", "bunkbed": "bunk bed",
    "petbed": "dog bed", "pet bed": "dog bed", "crib": "bed", "mattress": "bed", "kids bed": "bed",
}
