"""Tables and desks: a top on legs (or a pedestal) with the space under the top left free,
so a chair's seat slides beneath it as in a real room."""

from __future__ import annotations

from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec


def _top_thickness(p: Parts) -> float:
    return min(0.05, 0.08 * p.sy)


def _is_round(p: Parts, s: Spec) -> bool:
    square = abs(p.sx - p.sz) < 0.15 * max(p.sx, p.sz)
    return s.has("round", "circular", "oval") or (s.has("pedestal", "tulip") and square)


def table(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    t = _top_thickness(p)
    top_color = s.palette.accent if s.has("glass") else s.palette.main
    if _is_round(p, s):
        p.cylinder(sx / 2, sz / 2, sy - t, sy, sx / 2, top_color, scale_z=sz / sx, segments=20)
        column = 0.08 * min(sx, sz)
        p.cylinder(sx / 2, sz / 2, 0.03 * sy, sy - t, column, s.palette.frame)
        p.cylinder(sx / 2, sz / 2, 0.0, 0.03 * sy, 0.3 * min(sx, sz), s.palette.frame, scale_z=sz / sx)
        return
    p.box((0, sy - t, 0), (sx, sy, sz), top_color)
    leg = min(0.06, max(0.025, 0.06 * min(sx, sz)))
    inset = 0.04 * min(sx, sz) * s.pick(0.5, 1.0)
    p.legs(inset, leg, 0.0, sy - t, s.palette.frame, round_legs=s.has("metal", "round"))
    apron = min(0.08, 0.12 * sy)
    if sy > 0.6 and s.kind in ("table", "dining table", "desk"):  # a rail between the legs under the top
        for z0, z1 in ((inset, inset + 0.02), (sz - inset - 0.02, sz - inset)):
            p.box((inset + leg, sy - t - apron, z0), (sx - inset - leg, sy - t, z1), s.palette.frame)
    if s.kind == "coffee table" and sy > 0.25:  # a lower shelf for magazines
        p.box((inset, 0.12 * sy, inset), (sx - inset, 0.12 * sy + min(0.025, 0.08 * sy), sz - inset),
              s.palette.main)


def desk(p: Parts, s: Spec) -> None:
    """A top on legs (side panels when the words say so), with a drawer pedestal on the right
    when drawers are named; the knee space stays open."""
    sx, sy, sz = p.sx, p.sy, p.sz
    t = _top_thickness(p)
    under = sy - t
    p.box((0, under, 0), (sx, sy, sz), s.palette.main)
    leg = min(0.05, 0.06 * min(sx, sz))
    pedestal = s.has("drawer", "drawers", "pedestal", "storage", "cabinet") and sx > 0.9
    right = sx * (0.62 if pedestal else 1.0)
    if s.has("panel", "panels", "waterfall", "solid"):
        p.box((0, 0, 0.02 * sz), (leg, under, sz * 0.98), s.palette.frame)
        if not pedestal:
            p.box((sx - leg, 0, 0.02 * sz), (sx, under, 0.98 * sz), s.palette.frame)
        p.box((leg, 0.55 * under, 0.03 * sz), (right, under, 0.03 * sz + 0.02), s.palette.frame)  # modesty panel
    else:
        p.legs(0.01 * sx, leg, 0.0, under, s.palette.frame, round_legs=s.has("metal", "round"),
               x1=sx if not pedestal else right + leg + 0.01 * sx)
    if pedestal:  # drawer unit on the right
        p.box((right, 0, 0.02 * sz), (sx, under, 0.97 * sz), s.palette.frame)
        for k in range(3):
            y0 = under * (0.05 + 0.31 * k)
            p.box((right + 0.02, y0, 0.97 * sz), (sx - 0.02, y0 + 0.27 * under, sz), s.palette.main)


def dressing_table(p: Parts, s: Spec) -> None:
    """A dressing table or vanity: a desk at table height, a mirror above it when the box
    is tall enough to hold one."""
    sx, sy, sz = p.sx, p.sy, p.sz
    if sy < 1.1:
        desk(p, s)
        return
    table_h = 0.76
    sub = Parts((sx, table_h, sz))
    desk(sub, s)
    p.merge(sub)
    p.box((0.2 * sx, table_h, 0.0), (0.8 * sx, sy, min(0.04, 0.2 * sz)), s.palette.frame)
    p.box((0.24 * sx, table_h + 0.05, min(0.04, 0.2 * sz)), (0.76 * sx, sy - 0.05, min(0.05, 0.25 * sz)),
          (200, 215, 225, 255))


def cart(p: Parts, s: Spec) -> None:
    """Trolleys and bar carts: two shelves on four posts."""
    sx, sy, sz = p.sx, p.sy, p.sz
    t = min(0.025, 0.05 * sy)
    p.legs(0.0, min(0.03, 0.08 * min(sx, sz)), 0.0, sy, s.palette.frame, round_legs=True)
    for y in (0.15 * sy, sy - t):
        p.box((0, y, 0), (sx, y + t, sz), s.palette.main)


BUILDERS: dict[str, Builder] = {
    "cart": cart,
    "table": table, "dining table": table, "coffee table": table, "side table": table, "desk": desk,
    "dressing table": dressing_table,
}
ALIASES: dict[str, str] = {
    "kitchen table": "dining table", "diningtable": "dining table", "tea table": "coffee table",
    "coffee_table": "coffee table", "end table": "side table", "console table": "side table",
    "console": "side table", "side_table": "side table", "end_table": "side table", "pedestal": "side table",
    "plantstand": "side table", "plant stand": "side table", "writing desk": "desk", "computer desk": "desk",
    "study desk": "desk", "office desk": "desk", "vanity": "dressing table", "dressingtable": "dressing table",
    "makeup table": "dressing table", "easel": "side table", "trolley": "cart", "bar cart": "cart",
    "bar_cart": "cart", "serving cart": "cart",
}
