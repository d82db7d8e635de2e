"""Colours of scene elements: from the object's own attributes, the asset catalogue or the
material table, else a fixed palette; plus distinct overlay colours.

Every lookup is deterministic (palette indices come from ``zlib.crc32``, never ``hash()``).
"""

from __future__ import annotations

import colorsys
import zlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from PIL import ImageColor

from buildbench.scenes.catalogue import COLOURS, MATERIALS, default_catalogue, material_info
from buildbench.scenes.model import Room, SceneObject, Wall

RGB = tuple[float, float, float]

#: Used when neither the scene nor the catalogue knows a colour.
DEFAULT_FLOOR_RGB: RGB = (0.78, 0.75, 0.70)
DEFAULT_WALL_RGB: RGB = (0.90, 0.88, 0.84)
DOOR_FRAME_RGB: RGB = (0.45, 0.30, 0.20)
WINDOW_FRAME_RGB: RGB = (0.96, 0.96, 0.96)
WINDOW_PANE_RGB: RGB = (0.62, 0.80, 0.95)

# Muted, mutually distinct fills for objects whose colour nobody knows; picked by category
# so the same category looks the same everywhere.
_FALLBACK_PALETTE: tuple[RGB, ...] = (
    (0.55, 0.42, 0.32), (0.40, 0.52, 0.62), (0.62, 0.58, 0.40), (0.50, 0.60, 0.45),
    (0.66, 0.45, 0.45), (0.52, 0.46, 0.62), (0.42, 0.58, 0.58), (0.70, 0.60, 0.50),
    (0.46, 0.46, 0.50), (0.60, 0.50, 0.58),
)

# Floor/wall material families by name fragment, for materials the table does not list.
_MATERIAL_HINTS: tuple[tuple[str, RGB], ...] = (
    ("wood", (0.60, 0.45, 0.30)), ("oak", (0.66, 0.52, 0.35)), ("walnut", (0.42, 0.30, 0.20)),
    ("parquet", (0.62, 0.47, 0.30)), ("tile", (0.82, 0.82, 0.80)), ("marble", (0.90, 0.89, 0.87)),
    ("stone", (0.62, 0.60, 0.57)), ("concrete", (0.64, 0.64, 0.62)), ("carpet", (0.56, 0.52, 0.48)),
    ("brick", (0.66, 0.36, 0.28)), ("drywall", (0.91, 0.90, 0.87)), ("plaster", (0.92, 0.90, 0.86)),
)

_SHADE_WORDS = {"light": 0.45, "pale": 0.5, "dark": -0.45, "deep": -0.35}
_EXTRA_COLOR_WORDS: dict[str, RGB] = {
    "wooden": (0.60, 0.45, 0.30), "wood": (0.60, 0.45, 0.30), "natural": (0.72, 0.60, 0.45),
    "cream": (0.96, 0.93, 0.82), "charcoal": (0.21, 0.27, 0.31), "multicolor": (0.7, 0.5, 0.6),
}


def parse_color(value: Any) -> RGB | None:
    """An RGB triple in [0, 1] from a colour word (``"dark brown"``), a CSS/hex string or a
    numeric triple (0–1 floats or 0–255 ints); None when it names no colour."""
    if isinstance(value, (list, tuple)) and len(value) in (3, 4):
        try:
            rgb = [float(v) for v in value[:3]]
        except (TypeError, ValueError):
            return None
        scale = 255.0 if max(rgb) > 1.0 else 1.0
        if all(0.0 <= v <= scale for v in rgb):
            return (rgb[0] / scale, rgb[1] / scale, rgb[2] / scale)
        return None
    if isinstance(value, dict):
        return parse_color([value.get(k) for k in ("r", "g", "b")])
    if not isinstance(value, str) or not value.strip():
        return None
    return _parse_color_text(value.strip().lower())


@lru_cache(maxsize=512)
def _parse_color_text(text: str) -> RGB | None:
    whole = _named_rgb(text.replace(" ", "")) or _named_rgb(text)
    if whole:
        return whole
    words = text.replace("-", " ").replace("/", " ").replace(",", " ").split()
    base = next((rgb for w in reversed(words) if (rgb := _named_rgb(w))), None)
    if base is None:
        return None
    shade = sum(_SHADE_WORDS.get(w, 0.0) for w in words)
    if shade > 0:
        return tuple(c + (1.0 - c) * min(shade, 0.8) for c in base)  # type: ignore[return-value]
    return tuple(c * (1.0 + max(shade, -0.8)) for c in base)  # type: ignore[return-value]


def _named_rgb(word: str) -> RGB | None:
    if word in COLOURS:
        return COLOURS[word]
    if word in _EXTRA_COLOR_WORDS:
        return _EXTRA_COLOR_WORDS[word]
    try:
        r, g, b = ImageColor.getrgb(word)[:3]
    except ValueError:
        return None
    return (r / 255.0, g / 255.0, b / 255.0)


def palette_rgb(key: str) -> RGB:
    """A fixed palette colour for a category or name."""
    return _FALLBACK_PALETTE[zlib.crc32(key.encode("utf-8")) % len(_FALLBACK_PALETTE)]


def object_rgb(obj: SceneObject) -> RGB:
    """The object's own ``color`` attribute, else its catalogue asset's colour, else the
    palette colour of its category."""
    own = parse_color(obj.attributes.get("color"))
    if own:
        return own
    info = default_catalogue().get(obj.asset_id) if obj.asset_id else None
    if info is not None and (known := parse_color(info.color)):
        return known
    return palette_rgb(obj.category or obj.asset_id)


def material_rgb(name: str | None, default: RGB) -> RGB:
    """A floor/wall material's colour: the catalogue's material table, else a family guess
    from the name (``…Wood…`` is brown), else ``default``."""
    if not name:
        return default
    entry = material_entry(name)
    if entry is not None:
        return entry[0]
    lowered = name.lower()
    return next((rgb for hint, rgb in _MATERIAL_HINTS if hint in lowered), default)


def material_entry(name: str) -> tuple[RGB, str, str] | None:
    """``(rgb, family, colour word)`` of a named material from the catalogue's table
    (case and a trailing copy number forgiven), or None."""
    return material_info(name)


def known_material_names() -> list[str]:
    """Names in the catalogue's material table."""
    return sorted(MATERIALS)


def floor_rgb(room: Room) -> RGB:
    return material_rgb(room.floor_material, DEFAULT_FLOOR_RGB)


def wall_rgb(wall: Wall) -> RGB:
    return material_rgb(wall.material, DEFAULT_WALL_RGB)


def distinct_colors(count: int, *, skip_hues: Sequence[tuple[float, float]] = ((0.25, 0.35), (0.5, 0.7))) -> list[RGB]:
    """``count`` saturated colours with well-spread hues (golden-ratio steps), skipping the
    hue ranges given (by default greens and blues, which the original overlay avoids so
    outlines stand out on floors and panes)."""
    out: list[RGB] = []
    hue = 0.0
    while len(out) < count:
        if not any(lo <= hue < hi for lo, hi in skip_hues):
            out.append(colorsys.hsv_to_rgb(hue, 0.85, 0.9 if len(out) % 2 == 0 else 0.7))
        hue = (hue + 0.618033988749895) % 1.0
    return out
