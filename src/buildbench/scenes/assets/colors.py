"""Colours of a procedural or box mesh, from the object's own words.

A sofa described as "grey fabric" must look grey and soft, a "red leather" one red and
glossy: the colour comes from the first colour word of ``attributes['color']``, then the
description, then a THOR material name (``attributes['material']`` or the record's
``material``/``materials``); the material family (wood, fabric, metal…) shades it and gives
parts that are not upholstered (legs, frames) their own tone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from buildbench.scenes.catalogue import COLOURS, material_info
from buildbench.scenes.model import SceneObject

Rgba = tuple[int, int, int, int]

#: Extra colour words (beyond the catalogue's) mapped to rgb in [0, 1].
_MORE_COLOURS: dict[str, tuple[float, float, float]] = {
    "grey": COLOURS["gray"], "dark": (0.22, 0.2, 0.19), "light": (0.86, 0.84, 0.8),
    "walnut": (0.38, 0.24, 0.14), "oak": (0.72, 0.55, 0.35), "navy": (0.12, 0.16, 0.38),
    "teal": (0.15, 0.5, 0.5), "ivory": (0.96, 0.94, 0.86), "charcoal": (0.22, 0.22, 0.24),
    "khaki": (0.74, 0.69, 0.5), "olive": (0.45, 0.45, 0.2), "maroon": (0.45, 0.1, 0.12),
    "turquoise": (0.25, 0.75, 0.72), "brass": (0.76, 0.62, 0.3), "copper": (0.72, 0.45, 0.3),
    "chrome": (0.8, 0.8, 0.83), "mahogany": (0.42, 0.16, 0.1), "cherry": (0.55, 0.22, 0.14),
    "espresso": (0.24, 0.16, 0.12), "natural": (0.78, 0.64, 0.45), "taupe": (0.55, 0.5, 0.45),
    "mustard": (0.82, 0.65, 0.2), "emerald": (0.1, 0.5, 0.3), "lavender": (0.7, 0.62, 0.85),
    "burgundy": (0.5, 0.1, 0.18), "violet": (0.5, 0.3, 0.7), "golden": COLOURS["gold"],
}
_ALL_COLOURS = {**COLOURS, **_MORE_COLOURS}

#: Material family -> (words that name it, default rgb, shading factor for the main parts).
_FAMILIES: dict[str, tuple[tuple[str, ...], tuple[float, float, float]]] = {
    "wood": (("wood", "wooden", "walnut", "oak", "pine", "timber", "bamboo", "rattan", "wicker",
              "mahogany", "teak", "birch", "plywood", "mdf"), (0.55, 0.38, 0.22)),
    "fabric": (("fabric", "cloth", "linen", "cotton", "velvet", "upholstered", "upholstery", "wool",
                "textile", "felt", "boucle", "cushion", "padded", "carpet"), (0.6, 0.58, 0.55)),
    "leather": (("leather", "suede", "faux"), (0.35, 0.22, 0.14)),
    "metal": (("metal", "metallic", "steel", "iron", "chrome", "aluminum", "aluminium", "brass",
               "copper", "stainless"), (0.62, 0.62, 0.65)),
    "glass": (("glass", "mirror", "mirrored", "acrylic", "crystal"), (0.78, 0.87, 0.92)),
    "stone": (("marble", "stone", "granite", "concrete", "terrazzo", "ceramic", "porcelain"),
              (0.85, 0.84, 0.82)),
    "plastic": (("plastic", "resin", "polypropylene", "vinyl"), (0.85, 0.85, 0.85)),
}


@dataclass(frozen=True)
class Palette:
    """The colours one object's parts use. ``main``: the body (upholstery, carcass, top);
    ``frame``: legs, frames, handles; ``accent``: cushions, shades, screens, leaves;
    ``family``: the main material family (``wood``, ``fabric``, … or ``""``)."""

    main: Rgba
    frame: Rgba
    accent: Rgba
    family: str


def palette(obj: SceneObject, *, accent: tuple[float, float, float] | None = None,
            typical: str = "") -> Palette:
    """The object's palette from its colour and material words (see the module docstring).
    ``accent``: the category's own accent colour (a plant's green, a screen's black);
    ``typical``: the material family the category usually has (``wood`` for a table), used
    when no word names one, so wordless objects (Objaverse ids) still look like themselves."""
    attrs = obj.attributes
    colour_words = _words(attrs.get("color"), attrs.get("description"), obj.raw.get("desc"))
    words = colour_words + _words(attrs.get("material"))
    family = _family(words, obj) or typical
    rgb = _first_colour(colour_words) or _thor_material_rgb(obj) or _first_colour(words)
    if rgb is None:
        rgb = _FAMILIES[family][1] if family else (0.62, 0.6, 0.57)
    shade = 0.95 if family in ("fabric", "leather") else 1.0
    main = _rgba(tuple(c * shade for c in rgb))
    # legs and frames: the wood or metal named in the words, else a darker tone of the body
    frame_family = next((f for f in ("metal", "wood") if f != family and _mentions(words, f)), "")
    frame_rgb = _FAMILIES[frame_family][1] if frame_family else tuple(c * 0.6 for c in rgb)
    accent_rgb = accent if accent is not None else tuple(min(1.0, c * 1.15 + 0.05) for c in rgb)
    return Palette(main, _rgba(frame_rgb), _rgba(accent_rgb), family)


def _words(*texts: object) -> list[str]:
    out: list[str] = []
    for text in texts:
        if isinstance(text, str):
            spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
            out.extend(w for w in re.split(r"[^a-z]+", spaced.lower()) if w)
    return out


def _first_colour(words: list[str]) -> tuple[float, float, float] | None:
    for i, word in enumerate(words):
        rgb = _ALL_COLOURS.get(word)
        if rgb is None:
            continue
        if word in ("dark", "light") and i + 1 < len(words):
            after = words[i + 1]
            base = _ALL_COLOURS.get(after) or next((tone for names, tone in _FAMILIES.values()
                                                    if after in names), None)
            if base is None:
                return rgb
            factor = 0.55 if word == "dark" else 1.0
            lift = 0.0 if word == "dark" else 0.25
            return tuple(min(1.0, c * factor + lift) for c in base)  # type: ignore[return-value]
        return rgb
    return None


def _family(words: list[str], obj: SceneObject) -> str:
    for family in _FAMILIES:
        if _mentions(words, family):
            return family
    info = _thor_material(obj)
    if info is not None and info[1] in _FAMILIES:
        return info[1]
    return ""


def _mentions(words: list[str], family: str) -> bool:
    names = _FAMILIES[family][0]
    return any(w in names for w in words)


def _thor_material(obj: SceneObject) -> tuple[tuple[float, float, float], str, str] | None:
    for name in _material_names(obj):
        info = material_info(name)
        if info is not None:
            return info
    return None


def _thor_material_rgb(obj: SceneObject) -> tuple[float, float, float] | None:
    color = obj.raw.get("color")
    if isinstance(color, dict) and all(isinstance(color.get(k), int | float) for k in "rgb"):
        return tuple(min(1.0, max(0.0, float(color[k]))) for k in "rgb")  # type: ignore[return-value]
    info = _thor_material(obj)
    return info[0] if info is not None else None


def _material_names(obj: SceneObject) -> list[str]:
    found: list[str] = []
    for value in (obj.attributes.get("material"), obj.raw.get("material"), obj.raw.get("materials")):
        found.extend(_names_in(value))
    return found


def _names_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return _names_in(value.get("name"))
    if isinstance(value, list):
        return [n for item in value for n in _names_in(item)]
    return []


def _rgba(rgb: tuple[float, ...]) -> Rgba:
    r, g, b = (int(round(min(1.0, max(0.0, c)) * 255)) for c in rgb[:3])
    return (r, g, b, 255)
