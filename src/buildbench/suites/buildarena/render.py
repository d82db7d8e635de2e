"""Pictures of a machine (the original's ``machine_preview``): every block drawn as its body.

The original showed a trimesh scene of the blocks' shrunk colliders, coloured
along a colour map by block order. Here each block is drawn as the body the
physics uses (``library.bodies.body_graph``: the catalogue's unshrunk outline,
a box, or a cylinder for a Powered Wheel) in the real frame ``[east, north,
up]``, Brace and Winch as thin rods between the faces they join. Bodies are
drawn a little smaller than they are (``gap_units`` off every extent) so that
neighbouring blocks of one colour stay apart. Colours follow the block type
(``colors="type"``, with a legend) or give every block its own colour
(``colors="block"``, as the original did). Several views go into one image,
each titled; ``labels`` writes every block's id where that block is seen.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from PIL import Image, ImageDraw

from buildbench.render import (
    Boxes,
    Camera,
    Lighting,
    OrbitView,
    Renderer,
    TriangleMesh,
    build_scene,
    frame_views,
)
from buildbench.render import Scene as RenderScene
from buildbench.scenes.views.drawing import BLACK, WHITE, Canvas, font, label_size_px, to8

from .library.bodies import body_graph
from .library.geometry import WorldShape
from .model import Machine

RGB = tuple[float, float, float]
ColorMode = Literal["type", "block"]

#: Colour of each block type (``colors="type"``).
TYPE_COLORS: dict[str, RGB] = {
    "Starting Block": (0.50, 0.52, 0.56),
    "Small Wooden Block": (0.82, 0.62, 0.36),
    "Powered Wheel": (0.20, 0.40, 0.80),
    "Water Cannon": (0.15, 0.68, 0.70),
    "Torch": (0.92, 0.33, 0.12),
    "Brace": (0.25, 0.62, 0.25),
    "Winch": (0.58, 0.32, 0.72),
    "Ballast": (0.30, 0.30, 0.30),
}
UNKNOWN_TYPE_COLOR: RGB = (0.95, 0.10, 0.75)

#: The views ``render`` knows, seen from the named side (azimuth 0° looks north from the south).
VIEWS: dict[str, OrbitView] = {
    "iso": OrbitView("iso", 35.0, 30.0, 1.1),
    "top": OrbitView("top", 0.0, 90.0, 1.1),
    "bottom": OrbitView("bottom", 0.0, -90.0, 1.1),
    "south": OrbitView("south", 0.0, 0.0, 1.1),
    "east": OrbitView("east", 90.0, 0.0, 1.1),
    "north": OrbitView("north", 180.0, 0.0, 1.1),
    "west": OrbitView("west", 270.0, 0.0, 1.1),
}
DEFAULT_VIEWS = ("iso", "top", "south", "east")

MIN_PX, MAX_PX = 64, 2048
"""Side of one view in pixels."""
MAX_VIEWS = 8
GAP_UNITS = 0.06
"""Taken off every body extent so that touching blocks show a seam (units)."""
ROD_RADIUS_UNITS = 0.06
"""Radius of the rod drawn for a Brace or Winch (units)."""
CYLINDER_SIDES = 32

# Unlit: every pixel shows its block's colour exactly (for the id pass behind the labels).
_FLAT = Lighting(ambient=1.0, diffuse=0.0)


class RenderRequestError(ValueError):
    """A render request that cannot be drawn (unknown view, size out of range, empty machine)."""


@dataclass(frozen=True)
class Item:
    """One drawn block: its id, type, placed body and how much is taken off its extents (units)."""

    id: str
    type: str
    shape: WorldShape
    gap_units: float


@dataclass(frozen=True)
class MachineScene:
    """A machine ready to draw.

    Attributes:
        scene: Boxes and meshes of every drawn block.
        items: The drawn blocks, in the order of ``colors``.
        colors: RGB of each drawn block.
    """

    scene: RenderScene
    items: tuple[Item, ...]
    colors: tuple[RGB, ...]


def block_palette(count: int) -> list[RGB]:
    """``count`` distinct colours, neighbours in order far apart in hue (golden-ratio steps)."""
    out: list[RGB] = []
    for k in range(count):
        hue = (k * 0.618033988749895) % 1.0
        value = (0.92, 0.72, 0.55)[k % 3]
        out.append(colorsys.hsv_to_rgb(hue, 0.75, value))
    return out


def _cylinder_mesh(shape: WorldShape, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and outward counter-clockwise faces of a closed prism around the local z axis."""
    radius = max(shape.size[0] - gap / 2, shape.size[0] * 0.5)
    half = max(shape.size[2] - gap, shape.size[2] * 0.5) / 2
    angles = np.linspace(0.0, 2.0 * math.pi, CYLINDER_SIDES, endpoint=False)
    ring = np.c_[radius * np.cos(angles), radius * np.sin(angles)]
    local = np.vstack([np.c_[ring, np.full(CYLINDER_SIDES, -half)], np.c_[ring, np.full(CYLINDER_SIDES, half)],
                       [[0.0, 0.0, -half], [0.0, 0.0, half]]])
    n = CYLINDER_SIDES
    faces = []
    for i in range(n):
        j = (i + 1) % n
        faces += [(i, j, n + j), (i, n + j, n + i), (2 * n, j, i), (2 * n + 1, n + i, n + j)]
    vertices = local @ np.asarray(shape.rotation).T + np.asarray(shape.center)
    return vertices, np.asarray(faces, dtype=np.int64)


def _rod_shape(start: np.ndarray, end: np.ndarray) -> WorldShape | None:
    axis = np.asarray(end, float) - np.asarray(start, float)
    length = float(np.linalg.norm(axis))
    if length < 1e-9:
        return None
    z = axis / length
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    rotation = np.c_[x, np.cross(z, x), z]
    return WorldShape("cylinder", (ROD_RADIUS_UNITS, ROD_RADIUS_UNITS, length), (start + end) / 2, rotation)


def machine_scene(machine: Machine, *, colors: ColorMode = "type", gap_units: float = GAP_UNITS) -> MachineScene:
    """The machine's bodies and connector rods as a render scene.

    Raises:
        RenderRequestError: A machine with nothing to draw, or a bad colour mode or gap.
    """
    if colors not in ("type", "block"):
        raise RenderRequestError(f"unknown colour mode {colors!r}; modes: type, block")
    if not (math.isfinite(gap_units) and 0.0 <= gap_units <= 0.5):
        raise RenderRequestError(f"gap {gap_units!r} units must lie in [0, 0.5]")
    graph = body_graph(machine)
    items = [Item(b.id, b.type, b.shape, gap_units) for b in graph.bodies]
    for link in graph.links:
        rod = _rod_shape(link.point_a, link.point_b)
        if rod is not None:
            items.append(Item(link.id, link.type, rod, 0.0))
    if not items:
        raise RenderRequestError("the machine has no blocks to draw")
    palette = block_palette(len(items))
    rgb = [TYPE_COLORS.get(item.type, UNKNOWN_TYPE_COLOR) if colors == "type" else palette[k]
           for k, item in enumerate(items)]
    return MachineScene(_scene(items, rgb), tuple(items), tuple(rgb))


def _scene(items: Sequence[Item], rgb: Sequence[RGB]) -> RenderScene:
    boxes = [(item, color) for item, color in zip(items, rgb, strict=True) if item.shape.kind == "box"]
    meshes = []
    for item, color in zip(items, rgb, strict=True):
        if item.shape.kind == "cylinder":
            vertices, faces = _cylinder_mesh(item.shape, item.gap_units)
            meshes.append(TriangleMesh(vertices, faces, np.asarray(color), closed=True))
    batch: tuple[Boxes, ...] = ()
    if boxes:
        sizes = np.array([[max(s - item.gap_units, s * 0.5) for s in item.shape.size] for item, _ in boxes])
        batch = (Boxes.from_centres(np.array([item.shape.center for item, _ in boxes]), sizes / 2,
                                    np.array([c for _, c in boxes]),
                                    rotations=np.array([item.shape.rotation for item, _ in boxes])),)
    return build_scene(batch, meshes)


def parse_views(text: str) -> tuple[str, ...]:
    """View names from ``"iso,top"``.

    Raises:
        RenderRequestError: An unknown name, none, or more than ``MAX_VIEWS``.
    """
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in VIEWS]
    if unknown:
        raise RenderRequestError(f"unknown view {unknown[0]!r}; views: {', '.join(VIEWS)}")
    if not names or len(names) > MAX_VIEWS:
        raise RenderRequestError(f"give 1 to {MAX_VIEWS} views, got {len(names)}")
    return names


def _check_px(px: int) -> int:
    if isinstance(px, bool) or not isinstance(px, int) or not MIN_PX <= px <= MAX_PX:
        raise RenderRequestError(f"view size {px!r} px must be an integer in [{MIN_PX}, {MAX_PX}]")
    return px


def _render(scene: RenderScene, cameras: Sequence[Camera], px: int, *, samples: int,
            lighting: Lighting | None = None) -> np.ndarray:
    renderer = Renderer(px, px, samples=samples, lighting=lighting)
    try:
        return renderer.render(scene, list(cameras))
    finally:
        renderer.release()


def id_images(drawn: MachineScene, cameras: Sequence[Camera], px: int) -> np.ndarray:
    """``(views, px, px)`` int: 1 + the index of the item seen at each pixel, 0 for the background."""
    codes = np.arange(1, len(drawn.items) + 1)
    rgb = np.c_[(codes >> 16) & 255, (codes >> 8) & 255, codes & 255] / 255.0
    images = _render(_scene(drawn.items, [tuple(c) for c in rgb]), cameras, px, samples=0, lighting=_FLAT)
    seen = images[..., :3].astype(np.int64)
    return np.where(images[..., 3] > 0, (seen[..., 0] << 16) | (seen[..., 1] << 8) | seen[..., 2], 0)


def _label_spots(ids_image: np.ndarray) -> dict[int, tuple[float, float]]:
    """Per item seen: the pixel of its visible area nearest that area's mean (column, row)."""
    spots: dict[int, tuple[float, float]] = {}
    for code in np.unique(ids_image[ids_image > 0]):
        rows, cols = np.nonzero(ids_image == code)
        mean_col, mean_row = cols.mean(), rows.mean()
        k = int(np.argmin((cols - mean_col) ** 2 + (rows - mean_row) ** 2))
        spots[int(code) - 1] = (float(cols[k]) + 0.5, float(rows[k]) + 0.5)
    return spots


def _panel(image: np.ndarray, title: str, spots: dict[int, tuple[float, float]] | None,
           drawn: MachineScene) -> Image.Image:
    px = image.shape[1]
    canvas = Canvas(image, background=WHITE)
    size = label_size_px(px)
    if spots is not None:
        for index, at in sorted(spots.items()):
            canvas.label(drawn.items[index].id, at, size_px=max(9, size - 2))
    canvas.label(title, (4, 4), size_px=size, anchor="topleft", avoid=False, bg=None)
    return canvas.image


def _legend(drawn: MachineScene, width: int, size_px: int) -> Image.Image:
    kinds = list(dict.fromkeys(item.type for item in drawn.items))
    f = font(size_px)
    row_h = size_px + 8
    probe = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
    widths = [int(probe.textlength(k, font=f)) + size_px + 24 for k in kinds]
    rows, x = 1, 8
    for w in widths:
        if x + w > width and x > 8:
            rows, x = rows + 1, 8
        x += w
    legend = Image.new("RGBA", (width, rows * row_h + 8), to8(WHITE))
    draw = ImageDraw.Draw(legend)
    x, y = 8, 4
    for kind, w in zip(kinds, widths, strict=True):
        if x + w > width and x > 8:
            x, y = 8, y + row_h
        draw.rectangle([x, y + 2, x + size_px, y + 2 + size_px], fill=to8(TYPE_COLORS.get(kind, UNKNOWN_TYPE_COLOR)),
                       outline=to8(BLACK))
        draw.text((x + size_px + 6, y + 1), kind, font=f, fill=to8(BLACK))
        x += w
    return legend


def render_machine(machine: Machine, *, views: Sequence[str] = DEFAULT_VIEWS, px: int = 384,
                   colors: ColorMode = "type", labels: bool = False, gap_units: float = GAP_UNITS) -> np.ndarray:
    """One opaque ``(H, W, 4)`` uint8 image: the views in a grid, a legend of block types below.

    Args:
        views: Names from ``VIEWS``.
        px: Side of each view in pixels.
        colors: ``type`` (one colour per block type, with a legend) or ``block`` (one per block).
        labels: Write each block's id where it is seen.
        gap_units: Taken off each body's extents so that touching blocks show a seam.

    Raises:
        RenderRequestError: Unknown views, a size out of range, or nothing to draw.
        buildbench.render.RenderUnavailableError: No headless OpenGL on this computer.
    """
    px = _check_px(px)
    names = parse_views(",".join(views))
    drawn = machine_scene(machine, colors=colors, gap_units=gap_units)
    cameras = view_cameras(drawn, names)
    images = _render(drawn.scene, cameras, px, samples=4)
    spots = [_label_spots(ids) for ids in id_images(drawn, cameras, px)] if labels else [None] * len(names)
    panels = [_panel(images[k], names[k], spots[k], drawn) for k in range(len(names))]
    columns = len(panels) if len(panels) <= 3 else (2 if len(panels) == 4 else 3)
    grid_rows = math.ceil(len(panels) / columns)
    parts = [Image.new("RGBA", (columns * px, grid_rows * px), to8(WHITE))]
    for k, panel in enumerate(panels):
        parts[0].paste(panel, ((k % columns) * px, (k // columns) * px))
    _separate(parts[0], columns, grid_rows, px)
    if colors == "type":
        parts.append(_legend(drawn, columns * px, label_size_px(px)))
    out = Image.new("RGBA", (columns * px, sum(p.height for p in parts)), to8(WHITE))
    y = 0
    for part in parts:
        out.paste(part, (0, y))
        y += part.height
    return np.asarray(out, dtype=np.uint8).copy()


def _separate(grid: Image.Image, columns: int, rows: int, px: int) -> None:
    """Thin grey lines between the views."""
    draw = ImageDraw.Draw(grid)
    grey = to8((0.75, 0.75, 0.75))
    for c in range(1, columns):
        draw.line([(c * px, 0), (c * px, rows * px)], fill=grey, width=1)
    for r in range(1, rows):
        draw.line([(0, r * px), (columns * px, r * px)], fill=grey, width=1)


def view_cameras(drawn: MachineScene, views: Sequence[str]) -> list[Camera]:
    """One camera per view name, framing the whole machine."""
    assert drawn.scene.bounds is not None  # machine_scene refuses machines with nothing to draw
    return frame_views(drawn.scene.bounds, [VIEWS[v] for v in views])
