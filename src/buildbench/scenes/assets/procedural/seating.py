"""Seats: chairs and stools on legs (free space between them), sofas and armchairs with a
base, seat cushions, a back along the rear and arms at the sides, ottomans and benches."""

from __future__ import annotations

from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec


def _seat_height(p: Parts) -> float:
    """Top of the seat: 0.46 m on a chair of ordinary height, proportionally lower on a small one."""
    return min(0.47, 0.52 * p.sy) if p.sy > 0.6 else 0.9 * p.sy


def chair(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    seat_top = _seat_height(p)
    seat_t = min(0.05, 0.3 * seat_top)
    leg = min(0.045, max(0.02, 0.08 * min(sx, sz)))
    back_t = min(0.05, 0.12 * sz)
    p.box((0, seat_top - seat_t, 0), (sx, seat_top, sz), s.palette.main)
    p.legs(0.02 * sx, leg, 0.0, seat_top - seat_t, s.palette.frame, round_legs=s.has("metal", "round"))
    if sy > seat_top + 0.05:  # the back: two posts and a panel at the rear
        for x in (0.02 * sx, sx - 0.02 * sx - leg):
            p.box((x, seat_top, 0.0), (x + leg, sy, back_t), s.palette.frame)
        panel_lo = seat_top + 0.35 * (sy - seat_top)
        p.box((0.02 * sx, panel_lo, 0.0), (sx - 0.02 * sx, sy, back_t), s.palette.main)


def office_chair(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    seat_top = _seat_height(p)
    cx, cz = sx / 2, sz / 2
    base_h = min(0.08, 0.15 * seat_top)
    for lo, hi in (((0.0, 0.0, cz - 0.03), (sx, base_h, cz + 0.03)), ((cx - 0.03, 0.0, 0.0), (cx + 0.03, base_h, sz))):
        p.box(lo, hi, s.palette.frame)  # star base, drawn as a cross of spokes
    p.cylinder(cx, cz, base_h, seat_top - 0.08, 0.03, s.palette.frame, segments=8)
    p.box((0.05 * sx, seat_top - 0.09, 0.1 * sz), (0.95 * sx, seat_top, sz), s.palette.main)
    if sy > seat_top + 0.05:
        back_t = min(0.08, 0.15 * sz)
        p.box((0.1 * sx, seat_top + 0.04, 0.0), (0.9 * sx, sy, back_t), s.palette.main)
        p.box((cx - 0.03, seat_top - 0.05, back_t * 0.3), (cx + 0.03, seat_top + 0.1, 0.15 * sz), s.palette.frame)
        arm_y = min(sy, seat_top + 0.22)
        for x0, x1 in ((0.0, 0.06 * sx), (0.94 * sx, sx)):
            p.box((x0, arm_y - 0.04, 0.25 * sz), (x1, arm_y, 0.8 * sz), s.palette.frame)
            p.box((x0, seat_top - 0.05, 0.45 * sz), (x1, arm_y, 0.52 * sz), s.palette.frame)


def stool(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    seat_t = min(0.05, 0.12 * sy)
    p.cylinder(sx / 2, sz / 2, sy - seat_t, sy, sx / 2, s.palette.main, scale_z=sz / sx, segments=16)
    leg = min(0.035, 0.1 * min(sx, sz))
    p.legs(0.08 * min(sx, sz), leg, 0.0, sy - seat_t, s.palette.frame, round_legs=True)
    if sy > 0.55:  # bar stools: a footrest ring at shin height
        y = 0.3 * sy
        p.box((0.1 * sx, y, 0.1 * sz), (0.9 * sx, y + 0.02, 0.1 * sz + leg), s.palette.frame)
        p.box((0.1 * sx, y, 0.9 * sz - leg), (0.9 * sx, y + 0.02, 0.9 * sz), s.palette.frame)


def sofa(p: Parts, s: Spec) -> None:
    """Sofas, loveseats, armchairs and chaises: what differs is the cushion count and arms."""
    sx, sy, sz = p.sx, p.sy, p.sz
    legs = 0.0 if s.has("skirt", "skirted", "floor", "modular", "sectional") else min(0.12, 0.15 * sy) * s.pick(0.6, 1.0)
    seat_top = min(0.45, 0.55 * sy)
    base_top = seat_top - min(0.15, 0.35 * (seat_top - legs))
    back_d = min(0.22, 0.25 * sz)
    arms = 1 if s.kind == "chaise" else (0 if s.has("armless") else 2)
    arm_w = min(0.18, 0.14 * sx) if arms else 0.0
    arm_top = min(sy, seat_top + 0.2)
    if legs > 0:
        p.legs(0.03 * sx, min(0.05, 0.05 * sx), 0.0, legs + 0.01, s.palette.frame)
    p.box((0, legs, 0), (sx, base_top, sz), s.palette.main)
    p.box((0, base_top, 0), (sx, sy, back_d), s.palette.main)  # back
    if arms:
        p.box((0, legs, 0), (arm_w, arm_top, sz), s.palette.main)
    if arms == 2:
        p.box((sx - arm_w, legs, 0), (sx, arm_top, sz), s.palette.main)
    inner = sx - arm_w * arms
    n = 1 if s.kind in ("armchair", "chaise") or inner < 1.0 else (2 if inner < 1.7 else 3)
    w = inner / n
    for i in range(n):
        x0 = arm_w + w * i
        p.box((x0 + 0.01, base_top, back_d), (x0 + w - 0.01, seat_top, sz - 0.01), s.palette.accent)
        if sy > seat_top + 0.1:  # back cushions leaning on the back
            p.box((x0 + 0.02, base_top, back_d), (x0 + w - 0.02, sy - 0.04, back_d + 0.1), s.palette.accent)


def ottoman(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    if s.has("round", "pouf", "pouffe", "beanbag") or abs(sx - sz) < 0.05 * sx and s.has("drum", "cylinder"):
        p.cylinder(sx / 2, sz / 2, 0.0, sy, sx / 2, s.palette.main, scale_z=sz / sx, segments=16)
        return
    legs = min(0.08, 0.2 * sy) if not s.has("storage", "box") else 0.0
    if legs:
        p.legs(0.04 * sx, min(0.04, 0.1 * sx), 0.0, legs + 0.01, s.palette.frame)
    p.box((0, legs, 0), (sx, sy, sz), s.palette.main)


def bench(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    t = min(0.05, 0.12 * sy)
    p.box((0, sy - t, 0), (sx, sy, sz), s.palette.main)
    side = min(0.05, 0.08 * sx)
    for x0 in (0.03 * sx, 0.97 * sx - side):
        p.box((x0, 0, 0.05 * sz), (x0 + side, sy - t, 0.95 * sz), s.palette.frame)


BUILDERS: dict[str, Builder] = {
    "chair": chair, "office chair": office_chair, "stool": stool, "sofa": sofa, "armchair": sofa,
    "chaise": sofa, "ottoman": ottoman, "bench": bench,
}
ALIASES: dict[str, str] = {
    "dining chair": "chair", "side chair": "chair", "rockingchair": "chair", "rocking chair": "chair",
    "kids chair": "chair", "seat": "chair", "desk chair": "office chair", "swivel chair": "office chair",
    "gaming chair": "office chair", "bar stool": "stool", "barstool": "stool", "couch": "sofa",
    "loveseat": "sofa", "sectional": "sofa", "sofa bed": "sofa", "arm chair": "armchair",
    "lounge chair": "armchair", "sofa chair": "armchair", "accent chair": "armchair", "club chair": "armchair", "recliner": "armchair", "chaise longue": "chaise", "chaise lounge": "chaise",
    "daybed": "chaise", "footstool": "ottoman", "pouf": "ottoman", "pouffe": "ottoman", "beanbag": "ottoman",
    "bean bag": "ottoman",
}
