"""Rendering through cached :class:`buildbench.render.Renderer` objects, and 2D overlays
(outlines, box wireframes, arrows, text labels) drawn with Pillow on top.

Text uses Pillow's built-in scalable font (``ImageFont.load_default(size=…)``, bundled with
Pillow), so labels look the same on every machine and need no system fonts.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from buildbench.render import Camera, Renderer
from buildbench.render import Scene as RenderScene

RGB = tuple[float, float, float]
WHITE: RGB = (1.0, 1.0, 1.0)
BLACK: RGB = (0.0, 0.0, 0.0)

#: MSAA samples of every view (edges anti-aliased; deterministic on a given driver).
SAMPLES = 4

# BOX_CORNER_SIGNS order: the two faces across local y as closed rings, then the four
# edges joining them (together the 12 edges of BOX_EDGES).
_BOX_RINGS = ((0, 1, 5, 4, 0), (2, 3, 7, 6, 2))
_BOX_VERTICALS = ((0, 2), (1, 3), (4, 6), (5, 7))

_renderers: dict[tuple[int, int, int], Renderer] = {}
_renderers_lock = threading.Lock()


def renderer(width: int, height: int, samples: int = SAMPLES) -> Renderer:
    """A process-wide renderer of this size, created once (compiling shaders and making
    framebuffers costs more than a small render)."""
    key = (width, height, samples)
    with _renderers_lock:
        if key not in _renderers:
            _renderers[key] = Renderer(width, height, samples=samples)
        return _renderers[key]


def render_views(scene: RenderScene, cameras: Sequence[Camera], px: int) -> np.ndarray:
    """``(views, px, px, 4)`` uint8 RGBA renders, transparent background."""
    if scene.triangle_count == 0:
        return np.zeros((len(cameras), px, px, 4), np.uint8)
    return renderer(px, px).render(scene, list(cameras))


def to8(rgb: Sequence[float], alpha: float = 1.0) -> tuple[int, int, int, int]:
    """8-bit RGBA of a [0, 1] RGB colour and alpha (clipped)."""
    return _to8(tuple(float(c) for c in rgb[:3]), float(alpha))


@lru_cache(maxsize=1024)
def _to8(rgb: tuple[float, ...], alpha: float) -> tuple[int, int, int, int]:
    r, g, b = (int(round(255 * min(max(c, 0.0), 1.0))) for c in rgb)
    return (r, g, b, int(round(255 * min(max(alpha, 0.0), 1.0))))


@lru_cache(maxsize=32)
def font(size_px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=max(6, int(size_px)))


def label_size_px(px: int, scale: float = 1.0) -> int:
    """Font size for labels on a ``px``-wide image (13 px at 512)."""
    return max(9, int(round(px / 40 * scale)))


class Canvas:
    """A rendered image with a background under it and overlays drawn on it.

    Args:
        rgba: ``(H, W, 4)`` uint8 render (straight alpha).
        background: Opaque RGB to composite the render over, or None to keep transparency.
    """

    def __init__(self, rgba: np.ndarray, background: RGB | None = WHITE):
        image = Image.fromarray(np.ascontiguousarray(rgba), "RGBA")
        if background is not None:
            base = Image.new("RGBA", image.size, to8(background))
            image = Image.alpha_composite(base, image)
        self.image = image
        self.draw = ImageDraw.Draw(self.image, "RGBA")
        self._taken: list[tuple[float, float, float, float]] = []

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size

    def polyline(self, points_px: np.ndarray, rgb: RGB, width: int, *, closed: bool = False) -> None:
        pts = [(float(x), float(y)) for x, y in np.asarray(points_px)[:, :2]]
        if closed:
            pts.append(pts[0])
        self.draw.line(pts, fill=to8(rgb), width=max(1, width), joint="curve")

    def dashed(self, points_px: np.ndarray, rgb: RGB, width: int, *, dash_px: float, gap_px: float) -> None:
        """A polyline drawn as dashes of ``dash_px`` with gaps of ``gap_px`` (pixels), the
        pattern running on across its vertices."""
        pts = np.asarray(points_px, float)[:, :2]
        fill, w = to8(rgb), max(1, width)
        period, phase = dash_px + gap_px, 0.0
        for p0, p1 in zip(pts[:-1], pts[1:], strict=True):
            length = float(np.hypot(*(p1 - p0)))
            if length < 1e-9:
                continue
            d = (p1 - p0) / length
            t = -phase
            while t < length:
                a, b = max(t, 0.0), min(t + dash_px, length)
                if b > a:
                    self.draw.line([tuple(p0 + d * a), tuple(p0 + d * b)], fill=fill, width=w)
                t += period
            phase = (phase + length) % period

    def box_wireframe(self, corners_px: np.ndarray, rgb: RGB, width: int) -> None:
        """The 12 edges of a projected box (corners in ``BOX_CORNER_SIGNS`` order)."""
        fill, w = to8(rgb), max(1, width)
        pts = [(float(c[0]), float(c[1])) for c in corners_px]
        for ring in _BOX_RINGS:
            self.draw.line([pts[k] for k in ring], fill=fill, width=w)
        for a, b in _BOX_VERTICALS:
            self.draw.line([pts[a], pts[b]], fill=fill, width=w)

    def arrow(self, start_px: Sequence[float], end_px: Sequence[float], rgb: RGB, width: int) -> None:
        p0, p1 = np.asarray(start_px[:2], float), np.asarray(end_px[:2], float)
        d = p1 - p0
        length = float(np.hypot(*d))
        if length < 1.0:
            return
        d /= length
        head = min(length * 0.4, 4.0 * width + 4.0)
        side = np.array([-d[1], d[0]])
        self.draw.line([tuple(p0), tuple(p1 - d * head * 0.5)], fill=to8(rgb), width=max(1, width))
        tip = [tuple(p1), tuple(p1 - d * head + side * head * 0.5), tuple(p1 - d * head - side * head * 0.5)]
        self.draw.polygon(tip, fill=to8(rgb))

    def disc(self, center_px: Sequence[float], radius_px: float, rgb: RGB) -> None:
        x, y = center_px[:2]
        r = max(radius_px, 1.0)
        self.draw.ellipse([x - r, y - r, x + r, y + r], fill=to8(rgb))

    def label(self, text: str, at_px: Sequence[float], *, size_px: int, fg: RGB = BLACK, bg: RGB | None = WHITE,
              bg_alpha: float = 0.85, avoid: bool = True, anchor: str = "center") -> tuple[float, float, float, float]:
        """Write ``text`` centred on (or, with ``anchor="topleft"``, from) ``at_px``. With
        ``avoid``, it moves to the first nearby spot that overlaps no earlier avoiding
        label (staying put if there is none). Returns the box it took."""
        tile = _text_tile(text, int(size_px), to8(fg), None if bg is None else to8(bg, bg_alpha))
        w, h = tile.size
        x, y = float(at_px[0]), float(at_px[1])
        if anchor == "center":
            x, y = x - w / 2, y - h / 2
        box = self._free_spot(x, y, w, h) if avoid else (x, y, x + w, y + h)
        if avoid:
            self._taken.append(box)
        self._paste(tile, int(round(box[0])), int(round(box[1])))
        return box

    def text_size(self, text: str, size_px: int) -> tuple[int, int]:
        """Width and height in pixels a label of ``text`` takes (background box included)."""
        return _text_tile(text, int(size_px), (0, 0, 0, 255), (255, 255, 255, 255)).size

    def taken(self) -> list[tuple[float, float, float, float]]:
        """Boxes of the labels placed so far with ``avoid``."""
        return list(self._taken)

    def _paste(self, tile: Image.Image, x: int, y: int) -> None:
        """Alpha-composite ``tile`` with its top-left at ``(x, y)``, clipped to the image."""
        iw, ih = self.size
        left, top = max(0, -x), max(0, -y)
        right, bottom = min(tile.width, iw - x), min(tile.height, ih - y)
        if right <= left or bottom <= top:
            return
        part = tile if (left, top, right, bottom) == (0, 0, tile.width, tile.height) else tile.crop((left, top, right, bottom))
        self.image.alpha_composite(part, dest=(x + left, y + top))

    def _free_spot(self, x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
        iw, ih = self.size
        for dx, dy in ((0, 0), (0, -h), (0, h), (w * 0.6, 0), (-w * 0.6, 0), (0, -2 * h), (0, 2 * h),
                       (w * 0.6, -h), (-w * 0.6, h), (w * 0.6, h), (-w * 0.6, -h)):
            bx = min(max(x + dx, 0.0), max(iw - w, 0.0))
            by = min(max(y + dy, 0.0), max(ih - h, 0.0))
            box = (bx, by, bx + w, by + h)
            if not any(_overlap(box, t) for t in self._taken):
                return box
        bx, by = min(max(x, 0.0), max(iw - w, 0.0)), min(max(y, 0.0), max(ih - h, 0.0))
        return (bx, by, bx + w, by + h)

    def array(self) -> np.ndarray:
        return np.asarray(self.image, dtype=np.uint8).copy()


@lru_cache(maxsize=4096)
def _text_tile(text: str, size_px: int, fg: tuple[int, int, int, int],
               bg: tuple[int, int, int, int] | None) -> Image.Image:
    """``text`` on its (optional) background box as a small RGBA image; cached, because
    views repeat the same labels (ids, grid coordinates) call after call."""
    f = font(size_px)
    probe = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
    left, top, right, bottom = probe.textbbox((0, 0), text, font=f)
    tile = Image.new("RGBA", (int(right - left) + 4, int(bottom - top) + 4), bg or (0, 0, 0, 0))
    ImageDraw.Draw(tile).text((2 - left, 2 - top), text, font=f, fill=fg)
    return tile


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def stamp(rgba: np.ndarray, text: str, *, size_px: int | None = None) -> np.ndarray:
    """``rgba`` with ``text`` written in its top-left corner on a white box."""
    canvas = Canvas(rgba, background=None)
    canvas.label(text, (4, 4), size_px=size_px or label_size_px(rgba.shape[1]), anchor="topleft", avoid=False)
    return canvas.array()


def box_corners_px(camera: Camera, corners_render: np.ndarray, px: int) -> np.ndarray:
    """``(n, 8, 3)`` pixel column, row and depth of box corners already in the render world."""
    flat = camera.project_to_pixels(corners_render.reshape(-1, 3), px, px)
    return flat.reshape(corners_render.shape[0], 8, 3)
