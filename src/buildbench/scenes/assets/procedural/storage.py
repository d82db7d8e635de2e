"""Storage: closed carcasses with doors or drawers (wardrobes, cabinets, dressers,
nightstands, counters), open shelving (bookcases, shelves) and low media units with an
open compartment in the middle."""

from __future__ import annotations

from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec

_FRONT = 0.02  # how far door and drawer fronts (with their handles) stand proud of the carcass
_SIDE = 0.01  # the body stands this far inside the box's sides under a top that spans it


def _carcass(p: Parts, s: Spec, *, legs: float, kick: float = 0.0) -> tuple[float, float]:
    """The body from ``legs`` (leg height) or a recessed toe-kick of height ``kick`` up to the
    top; returns the front's bottom and top heights."""
    sx, sy, sz = p.sx, p.sy, p.sz
    body_z = sz - _FRONT
    if legs > 0:
        p.legs(0.03 * sx, min(0.05, 0.08 * min(sx, sz)), 0.0, legs + 0.01, s.palette.frame, z1=body_z)
    elif kick > 0:
        p.box((0.02 * sx, 0.0, 0.02 * sz), (0.98 * sx, kick + 0.01, body_z - 0.05), s.palette.frame)
    bottom = max(legs, kick)
    side = min(_SIDE, 0.03 * sx)
    top = min(0.03, 0.06 * sy)
    p.box((side, bottom, 0), (sx - side, sy - top, body_z), s.palette.main)
    p.box((0, sy - top, 0), (sx, sy, sz), s.palette.main)  # the top overhangs sides and fronts
    return bottom, sy - top


def _fronts(p: Parts, s: Spec, y0: float, y1: float, rows: int, cols: int, *, drawers: bool) -> None:
    """Door or drawer fronts in a grid with a handle on each."""
    side = min(_SIDE, 0.03 * p.sx)
    sx, sz = p.sx - 2 * side, p.sz
    gap = min(0.006, 0.01 * sx)
    w, h = sx / cols, (y1 - y0) / rows
    handle = min(0.012, _FRONT / 2)
    for r in range(rows):
        for c in range(cols):
            x0, yb = side + c * w + gap, y0 + r * h + gap
            p.box((x0, yb, sz - _FRONT), (x0 + w - 2 * gap, yb + h - 2 * gap, sz - handle), s.palette.main)
            if drawers:  # a bar across the top of each drawer
                hx, hy = x0 + 0.35 * w, yb + 0.7 * h
                p.box((hx, hy, sz - handle), (hx + 0.3 * w - 2 * gap, hy + min(0.02, 0.1 * h), sz), s.palette.frame)
            else:  # a vertical bar near the meeting edge
                hx = x0 + (w - 2 * gap - 0.05 if c % 2 == 0 else 0.03)
                p.box((hx, yb + 0.4 * h, sz - handle), (hx + 0.02, yb + 0.6 * h, sz), s.palette.frame)


def wardrobe(p: Parts, s: Spec) -> None:
    y0, y1 = _carcass(p, s, legs=0.0, kick=min(0.08, 0.05 * p.sy))
    _fronts(p, s, y0, y1, 1, max(2, round(p.sx / 0.5)), drawers=False)


def cabinet(p: Parts, s: Spec) -> None:
    """Cabinets, sideboards, chests: doors, or drawers when the words say so."""
    legs = min(0.15, 0.18 * p.sy) if s.has("legs", "leg", "legged", "mid", "century", "splayed") else 0.0
    y0, y1 = _carcass(p, s, legs=legs, kick=0.0 if legs else min(0.06, 0.08 * p.sy))
    cols = max(1, round(p.sx / 0.5))
    if s.has("drawer", "drawers") or s.kind == "chest":
        _fronts(p, s, y0, y1, max(1, round((y1 - y0) / 0.25)), min(cols, 2), drawers=True)
    else:
        _fronts(p, s, y0, y1, 1, cols, drawers=False)


def dresser(p: Parts, s: Spec) -> None:
    """Dressers and nightstands: drawers on short legs or a plinth."""
    legs = min(0.12, 0.2 * p.sy) * s.pick(0.5, 1.0) if s.has("legs", "leg", "splayed", "tapered") or \
        s.rng.random() < 0.5 else 0.0
    y0, y1 = _carcass(p, s, legs=legs, kick=0.0 if legs else min(0.05, 0.08 * p.sy))
    rows = max(1, min(6, round((y1 - y0) / 0.22)))
    _fronts(p, s, y0, y1, rows, 2 if p.sx > 0.9 else 1, drawers=True)


def counter(p: Parts, s: Spec) -> None:
    """Kitchen counters and islands: base units with a toe-kick under an overhanging top."""
    sx, sy, sz = p.sx, p.sy, p.sz
    top = min(0.04, 0.05 * sy)
    kick = min(0.1, 0.12 * sy)
    p.box((0.0, sy - top, 0.0), (sx, sy, sz), s.palette.accent)
    sub = Parts((sx, sy - top, sz - 0.02))
    _carcass(sub, s, legs=0.0, kick=kick)
    _fronts(sub, s, kick, sy - top - 0.01, 1, max(1, round(sx / 0.6)), drawers=False)
    p.merge(sub)


def shelves(p: Parts, s: Spec) -> None:
    """Bookcases and shelving units: back, sides, top, bottom and open shelves, some books."""
    sx, sy, sz = p.sx, p.sy, p.sz
    if sy < 0.3 and sz < 0.4:  # a wall shelf: one board on two brackets
        p.box((0, 0.75 * sy, 0), (sx, sy, sz), s.palette.main)
        for x in (0.1 * sx, 0.85 * sx):
            p.box((x, 0, 0), (x + 0.05 * sx, 0.75 * sy, 0.3 * sz), s.palette.frame)
        return
    t = min(0.025, 0.05 * min(sx, sz))
    p.box((0, 0, 0), (sx, sy, t), s.palette.main)  # back
    p.box((0, 0, 0), (t, sy, sz), s.palette.main)
    p.box((sx - t, 0, 0), (sx, sy, sz), s.palette.main)
    n = max(1, round(sy / 0.35))
    pitch = (sy - t) / n
    for k in range(n + 1):
        y = k * pitch
        p.box((t, y, t), (sx - t, y + t, sz), s.palette.main)
        if k < n and s.rng.random() < 0.7:  # a row of books on the shelf
            x, end = t + 0.02, t + (sx - 2 * t) * s.pick(0.35, 0.8)
            height = min(0.28, 0.75 * (pitch - t))
            while x < end:
                w = s.pick(0.02, 0.05)
                tone = int(s.rng.integers(60, 200))
                p.box((x, y + t, 0.3 * sz), (x + w, y + t + height * s.pick(0.75, 1.0), 0.85 * sz),
                      (tone, int(tone * 0.7), int(tone * 0.5), 255))
                x += w + 0.002


def media_unit(p: Parts, s: Spec) -> None:
    """TV stands: a low unit with closed ends and an open compartment in the middle."""
    sx, sy, sz = p.sx, p.sy, p.sz
    legs = min(0.12, 0.2 * sy) if s.has("legs", "leg") else 0.0
    if legs:
        p.legs(0.03 * sx, 0.04, 0.0, legs + 0.01, s.palette.frame)
    t = min(0.025, 0.06 * sy)
    p.box((0, legs, 0), (sx, legs + t, sz), s.palette.main)
    p.box((0, sy - t, 0), (sx, sy, sz), s.palette.main)
    p.box((0, legs, 0), (sx, sy, t), s.palette.main)
    side = 0.3 * sx if sx > 1.0 else t
    for x0, x1 in ((0.0, side), (sx - side, sx)):
        p.box((x0, legs, 0), (x1, sy, sz - _FRONT), s.palette.main)
        if side > t:
            p.box((x0 + 0.005, legs + t, sz - _FRONT), (x1 - 0.005, sy - t, sz - 0.01), s.palette.frame)


def piano(p: Parts, s: Spec) -> None:
    """An upright piano: a tall case with a keyboard ledge at the front and a pedal gap."""
    sx, sy, sz = p.sx, p.sy, p.sz
    ledge = 0.7 * sy if sy > 1.0 else 0.6 * sy
    p.box((0, 0, 0), (sx, sy, 0.45 * sz), s.palette.main)
    for x0 in (0.0, 0.95 * sx):
        p.box((x0, 0, 0), (x0 + 0.05 * sx, ledge, sz), s.palette.main)  # cheeks holding the keys
    p.box((0.05 * sx, ledge - 0.06 * sy, 0.45 * sz), (0.95 * sx, ledge, sz), (240, 240, 236, 255))


BUILDERS: dict[str, Builder] = {
    "piano": piano,
    "wardrobe": wardrobe, "cabinet": cabinet, "chest": cabinet, "dresser": dresser, "nightstand": dresser,
    "kitchen counter": counter, "shelf": shelves, "tv stand": media_unit,
}
ALIASES: dict[str, str] = {
    "armoire": "wardrobe", "closet": "wardrobe", "hall tree": "wardrobe", "hall_tree": "wardrobe",
    "wine cabinet": "cabinet", "cabinetry": "cabinet", "sideboard": "cabinet", "buffet": "cabinet",
    "credenza": "cabinet", "hutch": "cabinet", "showcase": "cabinet", "storage": "cabinet",
    "display cabinet": "cabinet", "shoe cabinet": "cabinet", "file cabinet": "cabinet", "drawer": "dresser",
    "chest of drawers": "dresser", "night stand": "nightstand", "bedside table": "nightstand",
    "bedside cabinet": "nightstand", "trunk": "chest", "kitchen": "kitchen counter", "counter": "kitchen counter",
    "island": "kitchen counter", "kitchen island": "kitchen counter", "bar": "kitchen counter",
    "kitchen cabinet": "kitchen counter", "countertop": "kitchen counter", "bookshelf": "shelf",
    "bookcase": "shelf", "shelving": "shelf", "rack": "shelf", "fireplace": "cabinet", "mantelpiece": "cabinet", "shelves": "shelf", "display": "shelf",
    "magazine holder": "shelf", "tvstand": "tv stand", "tv cabinet": "tv stand", "media console": "tv stand",
    "entertainment center": "tv stand", "tv unit": "tv stand", "safe": "cabinet", "wine cooler": "fridge",
}
