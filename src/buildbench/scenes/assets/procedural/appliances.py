"""Screens and appliances: TVs and monitors (a screen on a stand, or a wall panel), laptops,
computers, fridges, washing machines, ovens, microwaves and small kitchen machines."""

from __future__ import annotations

from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec

_SCREEN = (18, 20, 24, 255)
_GLASS = (40, 45, 55, 255)
_STEEL = (190, 192, 196, 255)


def tv(p: Parts, s: Spec) -> None:
    """A screen panel; on a foot when the box is deep enough to stand, else wall-mounted."""
    sx, sy, sz = p.sx, p.sy, p.sz
    panel = min(0.06, sz)
    z0 = (sz - panel) / 2 if sz > 0.12 else 0.0
    stand = sz > 0.12
    y0 = 0.12 * sy if stand else 0.0
    if stand:
        p.box((0.3 * sx, 0.0, 0.0), (0.7 * sx, 0.02 * sy + 0.005, sz), s.palette.frame)
        p.box((0.46 * sx, 0.0, z0), (0.54 * sx, y0 + 0.1 * sy, z0 + panel * 0.6), s.palette.frame)
    body = (30, 30, 32, 255) if not s.has("white", "silver") else s.palette.main
    p.box((0, y0, z0), (sx, sy, z0 + 0.8 * panel), body)
    b = 0.02 * min(sx, sy)
    p.box((b, y0 + b, z0 + 0.8 * panel), (sx - b, sy - b, z0 + panel), _SCREEN)


def laptop(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    base = min(0.02, 0.15 * sy) if sy > 0.05 else 0.5 * sy
    p.box((0, 0, 0), (sx, base, sz), s.palette.main)
    p.box((0.05 * sx, base, 0.3 * sz), (0.95 * sx, base * 1.05, 0.9 * sz), _SCREEN)  # keyboard
    p.box((0, base, 0), (sx, sy, min(0.015, 0.1 * sz)), s.palette.main)  # open lid at the back
    p.box((0.04 * sx, base + 0.05 * sy, min(0.015, 0.1 * sz)), (0.96 * sx, 0.95 * sy, min(0.02, 0.12 * sz)), _SCREEN)


def tall_appliance(p: Parts, s: Spec) -> None:
    """Fridges and freezers: a cabinet with two doors (freezer below) and long handles."""
    sx, sy, sz = p.sx, p.sy, p.sz
    front = min(0.03, 0.05 * sz)
    body = s.palette.main if s.palette.family or s.has(*_COLOUR_WORDS) else _STEEL
    p.box((0, 0, 0), (sx, sy, sz - front), body)
    split = 0.35 * sy if sy > 1.2 else 0.0
    doors = ((0.01 * sy, split - 0.005), (split + 0.005, 0.99 * sy)) if split else ((0.01 * sy, 0.99 * sy),)
    for y0, y1 in doors:
        p.box((0.01 * sx, y0, sz - front), (0.99 * sx, y1, sz - front / 2), body)
        p.box((0.85 * sx, y0 + 0.25 * (y1 - y0), sz - front / 2), (0.88 * sx, y1 - 0.2 * (y1 - y0), sz),
              s.palette.frame)


def washer(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    p.box((0, 0, 0), (sx, sy, 0.95 * sz), s.palette.main if s.has(*_COLOUR_WORDS) else (235, 235, 235, 255))
    p.box((0.05 * sx, 0.82 * sy, 0.95 * sz), (0.95 * sx, 0.95 * sy, sz), s.palette.frame)  # control strip
    p.disc_z(sx / 2, 0.45 * sy, 0.95 * sz, sz, 0.32 * min(sx, sy), _GLASS, segments=16)


def oven(p: Parts, s: Spec) -> None:
    """Ovens, stoves, microwaves: a box with a glass door and a control strip; burners on top
    of a free-standing stove."""
    sx, sy, sz = p.sx, p.sy, p.sz
    body = s.palette.main if s.has(*_COLOUR_WORDS) else _STEEL
    p.box((0, 0, 0), (sx, sy, 0.95 * sz), body)
    micro = s.kind == "microwave"
    door_x1 = 0.72 * sx if micro else 0.95 * sx
    door_y = (0.1 * sy, 0.9 * sy) if micro else (0.08 * sy, 0.7 * sy)
    p.box((0.05 * sx, door_y[0], 0.95 * sz), (door_x1, door_y[1], sz), _GLASS)
    strip = (0.76 * sx, 0.1 * sy, 0.95 * sx, 0.9 * sy) if micro else (0.05 * sx, 0.75 * sy, 0.95 * sx, 0.92 * sy)
    p.box((strip[0], strip[1], 0.95 * sz), (strip[2], strip[3], sz), s.palette.frame)


def small_machine(p: Parts, s: Spec) -> None:
    """Coffee machines, toasters and the like: a body with a darker top and a spout side."""
    sx, sy, sz = p.sx, p.sy, p.sz
    p.box((0, 0, 0), (sx, 0.85 * sy, sz), s.palette.main)
    p.box((0.05 * sx, 0.85 * sy, 0.05 * sz), (0.95 * sx, sy, 0.95 * sz), s.palette.frame)
    if s.kind == "coffee machine":
        p.box((0.3 * sx, 0.1 * sy, 0.6 * sz), (0.7 * sx, 0.14 * sy, sz), _SCREEN)


def air_conditioner(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    p.box((0, 0, 0), (sx, sy, 0.9 * sz), s.palette.main if s.has(*_COLOUR_WORDS) else (240, 240, 238, 255))
    for k in range(4):
        y = (0.1 + 0.2 * k) * sy
        p.box((0.05 * sx, y, 0.9 * sz), (0.95 * sx, y + 0.06 * sy, sz), s.palette.frame)


def speaker(p: Parts, s: Spec) -> None:
    sx, sy, sz = p.sx, p.sy, p.sz
    p.box((0, 0, 0), (sx, sy, 0.93 * sz), s.palette.main)
    r = 0.35 * min(sx, sy / 2)
    for y in (0.3 * sy, 0.72 * sy):
        p.disc_z(sx / 2, y, 0.93 * sz, sz, r, _SCREEN, segments=12)


_COLOUR_WORDS = ("white", "black", "red", "blue", "green", "yellow", "pink", "orange", "purple", "gray", "grey",
                 "silver", "gold", "brown", "beige", "cream")

BUILDERS: dict[str, Builder] = {
    "tv": tv, "laptop": laptop, "fridge": tall_appliance, "washing machine": washer, "oven": oven,
    "microwave": oven, "coffee machine": small_machine, "toaster": small_machine, "air conditioner": air_conditioner,
    "speaker": speaker, "small machine": small_machine,
}
ALIASES: dict[str, str] = {
    "television": "tv", "monitor": "tv", "screen": "tv", "computer": "tv", "desktop": "tv",
    "refrigerator": "fridge", "freezer": "fridge", "winecooler": "fridge", "wine_cooler": "fridge",
    "cooler": "fridge", "washer": "washing machine", "dryer": "washing machine", "washing_machine": "washing machine",
    "dishwasher": "washing machine", "stove": "oven", "range": "oven", "cooker": "oven", "appliance": "oven",
    "air purifier": "air conditioner", "heater": "air conditioner", "radiator": "air conditioner",
    "ventilator": "air conditioner", "air_conditioner": "air conditioner", "stereo": "speaker", "radio": "speaker",
    "gramophone": "speaker", "vacuum cleaner": "small machine", "vacuum": "small machine",
}
