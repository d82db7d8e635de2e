"""Material swatches: a flat tile in the material's colour with a procedural texture of its
family (wood planks and grain, tile grid, brick bond, carpet fuzz…) and its name written on
it (LEGO-Eval's ``get_material_image``, which loads photographs we do not have).

Colour and family come from the catalogue's material table
(:data:`buildbench.scenes.catalogue.MATERIALS`); a name the table lacks is accepted when
its words give the family away (``DarkWoodFloors`` is wood), and refused otherwise.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np

from buildbench.scenes.views import colors
from buildbench.scenes.views.drawing import Canvas, label_size_px
from buildbench.scenes.views.frame import ViewInputError, check_px

Texture = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


def material_swatch(name: str, *, px: int = 256, label: bool = True) -> np.ndarray:
    """A ``(px, px, 4)`` uint8 RGBA swatch of the named material (opaque)."""
    px = check_px(px, "material_swatch")
    if not isinstance(name, str) or not name.strip():
        raise ViewInputError(f"material_swatch: material name must be a non-empty string, got {name!r}")
    rgb, family = _material(name)
    rng = np.random.default_rng([zlib.crc32(name.encode("utf-8"))])
    coords = np.arange(px, dtype=np.float32) / px
    shade = np.broadcast_to(_texture(family, name)(coords[None, :], coords[:, None], rng), (px, px))
    rgba = np.full((px, px, 4), 255, np.uint8)
    for channel, value in enumerate(rgb):
        rgba[..., channel] = np.clip(shade * (np.float32(value) * 255) + 0.5, 0, 255).astype(np.uint8)
    if not label:
        return rgba
    canvas = Canvas(rgba, background=None)
    size = label_size_px(px, 1.2 if px <= 256 else 1.0)
    canvas.label(name, (px / 2, px - size), size_px=size, avoid=False)
    return canvas.array()


def _material(name: str) -> tuple[tuple[float, float, float], str]:
    entry = colors.material_entry(name)
    if entry is not None:
        return entry[0], entry[1].lower()
    family = next((f for f in _FAMILY_WORDS if any(w in name.lower() for w in _FAMILY_WORDS[f])), None)
    if family is None:
        known = colors.known_material_names()
        raise ViewInputError(f"material_swatch: unknown material {name!r} (not in the catalogue's "
                             f"{len(known)} materials, e.g. {', '.join(known[:4])}, and no family in its name)")
    return colors.material_rgb(name, colors.DEFAULT_WALL_RGB), family


# Words in a material's name that give away its family, for names outside the table.
_FAMILY_WORDS: dict[str, tuple[str, ...]] = {
    "wood": ("wood", "oak", "walnut", "parquet", "laminate", "plank", "pine", "maple"),
    "tile": ("tile", "ceramic", "mosaic"),
    "marble": ("marble", "granite"),
    "brick": ("brick",),
    "carpet": ("carpet", "rug", "fabric"),
    "stone": ("stone", "concrete", "cement", "slate"),
    "metal": ("metal", "steel", "alumin"),
    "plaster": ("drywall", "plaster", "paint", "wall", "stucco"),
}


def _texture(family: str, name: str) -> Texture:
    if "marble" in name.lower():
        return _marble
    for key, fn in _TEXTURES:
        if key in family:
            return fn
    return _plain


# Textures take the column coordinate as a (1, px) row and the row coordinate as a (px, 1)
# column, both in [0, 1), and return a shade factor broadcastable to (px, px).
def _smooth_noise(px: int, rng: np.random.Generator, cells: int) -> np.ndarray:
    """Value noise: a random ``cells``² grid, bilinearly interpolated to ``(px, px)``."""
    grid = rng.random((cells + 1, cells + 1), dtype=np.float32)
    t = np.linspace(0, cells, px, endpoint=False, dtype=np.float32)
    i = t.astype(int)
    f = t - i
    rows = grid[i] * (1 - f)[:, None] + grid[i + 1] * f[:, None]
    return rows[:, i] * (1 - f)[None, :] + rows[:, i + 1] * f[None, :]


def _wood(xx: np.ndarray, yy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    planks = 6
    row = np.floor(yy * planks)
    plank_shade = 0.9 + 0.2 * rng.random(planks + 1, dtype=np.float32)[row.astype(int)]
    wobble = 0.4 * _smooth_noise(xx.shape[1], rng, 4)
    grain = 0.07 * np.sin(np.float32(2 * np.pi) * (yy * (planks * 5) + wobble + row * 0.37))
    seam = (np.abs(yy * planks - np.round(yy * planks)) < 0.02) * np.float32(0.35)
    return plank_shade - seam + grain


def _tile(xx: np.ndarray, yy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    grout = (np.abs(xx * 4 - np.round(xx * 4)) < 0.03) | (np.abs(yy * 4 - np.round(yy * 4)) < 0.03)
    return 1.0 + 0.04 * (_smooth_noise(xx.shape[1], rng, 8) - 0.5) - 0.3 * grout


def _marble(xx: np.ndarray, yy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    veins = np.abs(np.sin(np.float32(5 * np.pi) * (xx + yy + 0.8 * _smooth_noise(xx.shape[1], rng, 5))))
    return 1.0 - 0.18 * (veins < 0.08)


def _brick(xx: np.ndarray, yy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    rows = 8
    r = np.floor(yy * rows)
    shifted = xx * 4 + 0.5 * (r % 2)
    mortar = (np.abs(yy * rows - np.round(yy * rows)) < 0.06) | (np.abs(shifted - np.round(shifted)) < 0.025)
    brick_shade = 0.9 + 0.2 * rng.random((rows + 1, 6), dtype=np.float32)[r.astype(int), np.floor(shifted).astype(int) % 6]
    return np.where(mortar, np.float32(1.35), brick_shade)


def _carpet(xx: np.ndarray, yy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return 0.95 + 0.1 * rng.random((yy.shape[0], xx.shape[1]), dtype=np.float32)


def _stone(xx: np.ndarray, yy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    px = xx.shape[1]
    return 0.88 + 0.18 * _smooth_noise(px, rng, 6) + 0.05 * rng.random((px, px), dtype=np.float32)


def _metal(xx: np.ndarray, yy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    streaks = rng.random((yy.shape[0], 1), dtype=np.float32)
    return 0.92 + 0.1 * streaks + 0.08 * (1 - yy) + 0 * xx


def _plain(xx: np.ndarray, yy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return 0.98 + 0.03 * rng.random((yy.shape[0], xx.shape[1]), dtype=np.float32)


_TEXTURES: tuple[tuple[str, Texture], ...] = (
    ("wood", _wood), ("tile", _tile), ("ceramic", _tile), ("marble", _marble), ("brick", _brick),
    ("carpet", _carpet), ("fabric", _carpet), ("leather", _carpet), ("stone", _stone), ("concrete", _stone),
    ("metal", _metal),
)
