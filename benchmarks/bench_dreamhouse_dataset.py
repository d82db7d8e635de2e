"""DreamHouse dataset work per structure, in CPU seconds (issue 24: ≤ 0.045, so that the paper's
26,543 structures take ≤ 10 min on 2 cores).

Per structure: generate it (its facade skin included), validate it under both profiles,
render the Frame and Facade views and write them as PNG (what ``buildbench dreamhouse
generate --render`` does for each house), on a sample spread over the paper-size dataset,
with the default renderer (``raster``, our CPU rasterizer). Beside it, in the same run: the
same work with ``gl`` (OpenGL on EGL; llvmpipe here), and the baseline: the same work with
the rendering as it was before issue 24 (a frozen copy below: GL, a scene built per
condition with three vertices of its own per triangle, every box's normals from its own
matrix inverse, scene bounds by numpy's axis-0 min/max, transforms checked by SVD, triangles
drawn in the given order with depth test LESS, PNGs deflated by zlib), alternating so that
all see the same load. The figure and the baseline are each the fastest of ``REPEAT`` rounds
(contention only adds CPU time; ``median_round_s``, ``rounds_s`` and the per-stage medians are in
``extra``). ``cpu_render_s`` / ``cpu_render_gl_s``: drawing (and for GL reading back) the
prepared views alone.

``identical_gl_pixels``: our GL path draws every house of a wider sample (``IDENTICAL_SAMPLE``
structures) exactly as the frozen copy does (GL speed work changed no pixel);
``raster_vs_gl_differing_pixels``: the share of pixels where the rasterizer and GL differ on
that sample (edge pixels; the renderer switch changed them on purpose). CPU seconds of this
process, GL driver threads included: the machine is shared. Without a headless OpenGL
context the GL figures and the baseline are skipped with a printed reason.
"""

from __future__ import annotations

import statistics
import struct
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import numpy as np
from _common import Figure

from buildbench.render import Bounds, Boxes, Rasterizer, RenderUnavailableError
from buildbench.render import scene as _scene
from buildbench.render.camera import Camera
from buildbench.render.renderer import Renderer
from buildbench.render.scene import VERTEX_DTYPE, Scene, TriangleGeometry, assemble_scene, box_part
from buildbench.suites.dreamhouse import views, views_dataset
from buildbench.suites.dreamhouse.check import validate_profiles
from buildbench.suites.dreamhouse.generate import (
    PAPER_DATASET_SIZE,
    GeneratedHouse,
    dataset_task_ids,
    generate_structure,
)
from buildbench.suites.dreamhouse.model import Structure

SAMPLE = 26  # structures, 2 per style on average
IDENTICAL_SAMPLE = 312  # structures whose images are compared with the frozen copy's
TARGET_S = 0.045
REPEAT = 5


def _sample(size: int = SAMPLE) -> list[str]:
    ids = dataset_task_ids(PAPER_DATASET_SIZE)
    return [str(t) for t in ids[:: len(ids) // size][:size]]


# -- the rendering before issue 24 (frozen copy) ------------------------------------------
_old: list[Renderer] = []


def _old_renderer() -> Renderer:
    """The dataset renderer drawing the triangles in the given order with depth test LESS."""
    if not _old:
        _old.append(Renderer(views.IMAGE_SIZE_PX, views.IMAGE_SIZE_PX, samples=views.MSAA_SAMPLES, reverse=False))
    return _old[0]


def _cond_by_svd(linear: np.ndarray, limit: float = 1e12) -> np.ndarray:
    return np.linalg.cond(linear) < limit if len(linear) else np.zeros(0, dtype=bool)


def _old_box_world_geometry(boxes: Boxes) -> TriangleGeometry:
    linear = boxes.matrices[:, :3, :3]
    local = _scene._CUBE_POSITIONS[None, :, :] * boxes.sizes_m[:, None, :]
    positions = local @ linear.transpose(0, 2, 1) + boxes.matrices[:, None, :3, 3]
    normal_matrix = np.linalg.inv(linear).transpose(0, 2, 1)
    face_normals = _scene._CUBE_NORMALS[None, :, :] @ normal_matrix.transpose(0, 2, 1)
    face_normals /= np.linalg.norm(face_normals, axis=2, keepdims=True)
    normals = face_normals[:, _scene._CUBE_FACE_OF_VERTEX, :]
    indices = _scene._CUBE_INDICES[None, :] + len(_scene._CUBE_POSITIONS) * np.arange(len(boxes))[:, None]
    mirrored = np.linalg.det(linear) < 0
    if mirrored.any():
        indices[mirrored] = indices[mirrored].reshape(-1, 12, 3)[:, :, [0, 2, 1]].reshape(-1, 36)
    return TriangleGeometry(positions.reshape(-1, 3), normals.reshape(-1, 3), indices.reshape(-1))


def _old_build_scene(batches: list[Boxes]) -> Scene:
    # three vertices of its own per triangle (an index per vertex), as before issue 24
    geometries = [_old_box_world_geometry(b) for b in batches]
    parts = [(g.triangles_m(), g.normals[g.indices], np.repeat(b.colors, 36, axis=0))
             for g, b in zip(geometries, batches, strict=True)]
    count = sum(len(p) for p, _, _ in parts)
    vertices = np.empty(count, dtype=VERTEX_DTYPE)
    indices = np.arange(count, dtype=np.uint32)
    if count == 0:
        return Scene(vertices=vertices, indices=indices, origin_m=np.zeros(3), bounds=None)
    positions = np.concatenate([p for p, _, _ in parts])
    bounds = Bounds(positions.min(axis=0), positions.max(axis=0))
    vertices["position"] = positions - bounds.centre_m
    vertices["normal"] = np.concatenate([n for _, n, _ in parts])
    vertices["color"] = np.concatenate([c for _, _, c in parts])
    return Scene(vertices=vertices, indices=indices, origin_m=bounds.centre_m, bounds=bounds,
                 closed_vertex_count=count)


def _old_render_views(structure: Structure, skin: Structure, condition: str) -> np.ndarray:
    batches = [views._boxes(structure, views.frame_colors(structure))]
    if condition == "facade":
        batches.append(views._boxes(skin, views.skin_colors(skin)))
    scene = _old_build_scene([b for b in batches if len(b)])
    if scene.bounds is None or scene.bounds.diagonal_m == 0.0:
        return np.zeros((len(views.VIEWS), views.IMAGE_SIZE_PX, views.IMAGE_SIZE_PX, 4), dtype=np.uint8)
    return _old_renderer().render(scene, views.cameras(scene.bounds, scene.bounds))


def _old_png_bytes(image: np.ndarray) -> bytes:
    h, w, _ = image.shape
    rows = np.zeros((h, 1 + 4 * w), dtype=np.uint8)
    rows[:, 1:] = image.reshape(h, 4 * w)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 1))
            + chunk(b"IEND", b""))


def _old_images(structure: Structure, skin: Structure) -> dict[str, np.ndarray]:
    with mock.patch("buildbench.render.scene.well_conditioned", _cond_by_svd):
        return {c: _old_render_views(structure, skin, c) for c in views.CONDITIONS}


def _old_render_house(structure: Structure, skin: Structure, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for condition, images in _old_images(structure, skin).items():
        for name, image in zip(views.VIEW_NAMES, images, strict=True):
            (out / f"{condition}_{name}.png").write_bytes(_old_png_bytes(image))


def _gl_render_house(structure: Structure, skin: Structure, out: Path) -> None:
    views_dataset.render_house(structure, skin, out, "gl")


# -- timing ---------------------------------------------------------------------------------
def _dataset_work(ids: list[str], render: Callable[[Structure, Structure, Path], object], out: Path) -> dict[str, float]:
    """CPU seconds per structure of each stage over ``ids``."""
    cpu = {"generate": 0.0, "validate": 0.0, "render_png": 0.0}
    for tid in ids:
        c0 = time.process_time()
        house = generate_structure(tid)
        skin = house.skin  # built on first use; the dataset stores it, so it is generation work
        c1 = time.process_time()
        validate_profiles(house.structure, ("paper", "released"))
        c2 = time.process_time()
        render(house.structure, skin, out / tid)
        c3 = time.process_time()
        cpu["generate"] += c1 - c0
        cpu["validate"] += c2 - c1
        cpu["render_png"] += c3 - c2
    return {k: v / len(ids) for k, v in cpu.items()}


def _render_jobs(ids: list[str]) -> list[tuple[Scene, list[Camera]]]:
    """The scenes and cameras of both conditions of each house, as ``views.house_views`` draws them."""
    jobs = []
    for tid in ids:
        house = generate_structure(tid)
        frame = views._boxes(house.structure, views.frame_colors(house.structure))
        clad = views._boxes(house.skin, views.skin_colors(house.skin))
        for batches in ([frame], [frame, clad]):
            scene = assemble_scene([box_part(b) for b in batches if len(b)])
            if scene.bounds is not None and scene.bounds.diagonal_m > 0.0:
                jobs.append((scene, views.cameras(scene.bounds, scene.bounds)))
    return jobs


def _draw_only(jobs: list[tuple[Scene, list[Camera]]], houses: int, renderer: Renderer | Rasterizer) -> float:
    """CPU seconds per structure of drawing (and reading back) the prepared views."""
    c0 = time.process_time()
    for scene, cams in jobs:
        renderer.render(scene, cams)
    return (time.process_time() - c0) / houses


def _compare(house: GeneratedHouse) -> tuple[bool, int, int]:
    """Whether our GL path draws the house as the frozen copy; pixels where raster and GL differ, of all."""
    gl = views.house_views(house.structure, house.skin, "gl")
    raster = views.house_views(house.structure, house.skin, "raster")
    same = all(np.array_equal(gl[c], old) for c, old in _old_images(house.structure, house.skin).items())
    differing = sum(int((gl[c] != raster[c]).any(axis=3).sum()) for c in views.CONDITIONS)
    return same, differing, sum(gl[c][..., 0].size for c in views.CONDITIONS)


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def run() -> list[Figure]:
    ids = _sample()
    try:
        compared = [_compare(generate_structure(tid)) for tid in _sample(IDENTICAL_SAMPLE)]
    except RenderUnavailableError as exc:
        compared, no_gl = [], f"no headless OpenGL ({exc})"
        print(f"dreamhouse dataset per structure: GL figures and the baseline skipped: {no_gl}")
    else:
        no_gl = ""
    ours: list[dict[str, float]] = []
    ours_gl: list[dict[str, float]] = []
    before: list[dict[str, float]] = []
    draw: list[float] = []
    draw_gl: list[float] = []
    draw_before: list[float] = []
    jobs = _render_jobs(ids)
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(REPEAT):  # alternating, so all see the same load
            ours.append(_dataset_work(ids, views_dataset.render_house, Path(tmp) / f"ours{k}"))
            draw.append(_draw_only(jobs, len(ids), views._rasterizer()))
            if not no_gl:
                ours_gl.append(_dataset_work(ids, _gl_render_house, Path(tmp) / f"gl{k}"))
                before.append(_dataset_work(ids, _old_render_house, Path(tmp) / f"before{k}"))
                draw_gl.append(_draw_only(jobs, len(ids), views._renderer()))
                draw_before.append(_draw_only(jobs, len(ids), _old_renderer()))
    total = [sum(r.values()) for r in ours]
    # The least disturbed round: this machine's speed moved by 1.7x between two quiet runs (the same
    # work, ours and the frozen copy alike), and contention only ever adds CPU time. Medians in extra.
    seconds = min(total)
    met = seconds <= TARGET_S
    extra: dict[str, object] = {
        "median_round_s": round(statistics.median(total), 5), "rounds_s": [round(t, 5) for t in total],
        **{f"cpu_{k}_s": round(v, 5) for k, v in _median(ours).items()},
        "cpu_render_s": round(statistics.median(draw), 5),
        "renderer": views.DEFAULT_RENDERER, "raster_native": views._rasterizer().native,
        "goal_met": met, "projected_minutes_2_cores": round(PAPER_DATASET_SIZE * seconds / 2 / 60, 2),
        "repeat": REPEAT}
    baseline = None
    if not no_gl:
        baseline = min(sum(r.values()) for r in before)
        differing, pixels = sum(c[1] for c in compared), sum(c[2] for c in compared)
        extra.update({
            "gl_total_cpu_s": round(statistics.median(sum(r.values()) for r in ours_gl), 5),
            **{f"gl_cpu_{k}_s": round(v, 5) for k, v in _median(ours_gl).items()},
            **{f"before_cpu_{k}_s": round(v, 5) for k, v in _median(before).items()},
            "cpu_render_gl_s": round(statistics.median(draw_gl), 5),
            "cpu_render_gl_given_order_s": round(statistics.median(draw_before), 5),
            "identical_gl_pixels": all(c[0] for c in compared), "identical_pixels_structures": IDENTICAL_SAMPLE,
            "raster_vs_gl_differing_pixels": round(differing / pixels, 7)})
    print(f"dreamhouse dataset work: {seconds:.4f} CPU s per structure (fastest of {REPEAT} rounds; median "
          f"{statistics.median(total):.4f}) with {views.DEFAULT_RENDERER} "
          f"(native {views._rasterizer().native}); goal ≤ {TARGET_S} {'met' if met else 'NOT met'}; "
          f"26,543 structures on 2 cores ≈ {PAPER_DATASET_SIZE * seconds / 2 / 60:.1f} min; drawing alone "
          f"{statistics.median(draw):.4f}"
          + (f"; with GL {extra['gl_total_cpu_s']:.4f} (drawing {extra['cpu_render_gl_s']:.4f}); "
             f"before issue 24 {baseline:.4f} ({baseline / seconds:.2f}x ours)" if baseline is not None else ""))
    return [Figure(
        name=f"dreamhouse dataset work per structure (generate, validate ×2, Frame+Facade PNGs), CPU s, "
             f"{SAMPLE}-structure sample",
        seconds=seconds,
        baseline="same work with the rendering before issue 24 (frozen copy, GL)",
        baseline_seconds=baseline,
        baseline_skipped=no_gl or None,
        target_seconds=TARGET_S,
        extra=extra)]
