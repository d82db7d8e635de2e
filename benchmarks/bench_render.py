"""Render 1,500 timber-frame boxes from 5 views at 512×512 RGBA, readback to numpy included.

Ours: the whole scene in one vertex buffer, one draw call per view (``buildbench.render``).
Baseline: the naive way, one VAO and one draw call per box, re-uploaded every frame, with the
same shaders, framebuffers and back-face culling, so the ratio measures batching alone.
Also times scene construction (vectorised vs. box by box).

The machine is shared, so each render figure also records the fastest of 9 further calls,
the process CPU seconds per call (llvmpipe's worker threads included) and the load average:
on a busy 2-core machine the median wall time can be several times the idle one.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from typing import NamedTuple

import moderngl
import numpy as np
from _common import Figure, median_time

from buildbench.render import (
    Boxes,
    Camera,
    OrbitView,
    Renderer,
    Scene,
    build_scene,
    frame_views,
    gl_info,
    on_gl_thread,
)
from buildbench.render.renderer import _FRAGMENT_SHADER, _VERTEX_SHADER
from buildbench.render.scene import VERTEX_ATTRIBUTES, VERTEX_FORMAT

BOX_COUNT = 1500
VIEWS = [
    OrbitView("front", 0.0, 12.0, 1.05),
    OrbitView("back", 180.0, 12.0, 1.05),
    OrbitView("left", 270.0, 12.0, 1.05),
    OrbitView("right", 90.0, 12.0, 1.05),
    OrbitView("front_right", 45.0, 18.0, 1.10),
]
STUD_M = (0.038, 0.089)
SPACING_M = 0.406


def _rot_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def timber_frame_boxes(count: int = BOX_COUNT) -> Boxes:
    """A 30 m × 20 m, 3-storey stick frame with interior walls and a pitched roof, thinned to ``count``."""
    length, width, storey, stories = 30.0, 20.0, 2.7, 3
    centres, sizes, rotations, colors = [], [], [], []

    def add(c, s, r=None, rgb=(0.92, 0.9, 0.85)) -> None:
        centres.append(c)
        sizes.append(s)
        rotations.append(np.eye(3) if r is None else r)
        colors.append(rgb)

    for k in range(stories):
        z0 = 0.3 + k * storey
        stud_h = storey - 0.3
        for x in np.arange(0.0, length, SPACING_M):  # long walls and interior cross walls' ends
            for y in (0.0, width):
                add((x, y, z0 + stud_h / 2), (STUD_M[0], STUD_M[1], stud_h))
        for y in np.arange(0.0, width, SPACING_M):
            for x in (0.0, 5.0, 10.0, 15.0, 20.0, 25.0, length):
                add((x, y, z0 + stud_h / 2), (STUD_M[1], STUD_M[0], stud_h))
        for x in np.arange(0.0, length, SPACING_M):  # floor joists spanning y
            add((x, width / 2, z0 - 0.12), (STUD_M[0], width, 0.235), rgb=(0.85, 0.8, 0.7))
        for y in (0.0, width):  # plates
            add((length / 2, y, z0 + 0.02), (length, STUD_M[1], STUD_M[0]), rgb=(0.8, 0.75, 0.65))
            add((length / 2, y, z0 + stud_h), (length, STUD_M[1], STUD_M[0]), rgb=(0.8, 0.75, 0.65))
    pitch = math.radians(35.0)
    rafter_len = (width / 2) / math.cos(pitch)
    z_eave = 0.3 + stories * storey
    for x in np.arange(0.0, length, 0.61):
        for side in (-1.0, 1.0):
            y = width / 2 + side * width / 4
            z = z_eave + (width / 4) * math.tan(pitch)
            add((x, y, z), (STUD_M[0], rafter_len, 0.184), _rot_x(-side * pitch), rgb=(0.76, 0.6, 0.42))
    add((length / 2, width / 2, z_eave + (width / 2) * math.tan(pitch)), (length, 0.038, 0.235), rgb=(0.7, 0.55, 0.4))
    keep = np.linspace(0, len(centres) - 1, count).round().astype(int)
    return Boxes.from_centres(
        np.array(centres)[keep],
        np.array(sizes)[keep] / 2.0,
        np.array(colors)[keep],
        rotations=np.array(rotations)[keep],
    )


class NaiveRenderer:
    """One VAO + buffer per box, created, drawn and released every frame.

    Shares the framebuffers and resolve pass of ``reference`` so that only the geometry
    submission differs; its images are checked to be identical to ours.
    """

    def __init__(self, reference: Renderer):
        # GL calls must run on the process's GL thread, like the Renderer's own.
        on_gl_thread(self._init_gl, reference)

    def _init_gl(self, reference: Renderer) -> None:
        self.ref = reference
        self.ctx = reference._ctx
        self.program = self.ctx.program(vertex_shader=_VERTEX_SHADER, fragment_shader=_FRAGMENT_SHADER)
        for name, value in (
            ("u_light_dir", reference.lighting.direction_view),
            ("u_ambient", reference.lighting.ambient),
            ("u_diffuse", reference.lighting.diffuse),
            ("u_premultiply", bool(reference.samples)),
        ):
            self.program[name].value = value

    def render(self, scene: Scene, cameras: list[Camera]) -> np.ndarray:
        return on_gl_thread(self._render, scene, cameras)

    def _render(self, scene: Scene, cameras: list[Camera]) -> np.ndarray:
        ref, ctx = self.ref, self.ctx
        out = np.empty((len(cameras), ref.height, ref.width, 4), np.uint8)
        per_box = scene.vertices[scene.indices].reshape(-1, 36)  # each box's 12 triangles, unindexed
        ctx.front_face, ctx.cull_face = "cw", "back"
        to_world = np.eye(4)
        to_world[:3, 3] = scene.origin_m
        for i, cam in enumerate(cameras):
            view = cam.view_matrix()
            mvp = np.diag([1.0, -1.0, 1.0, 1.0]) @ cam.projection_matrix(ref.width, ref.height) @ view @ to_world
            self.program["u_mvp"].write(np.ascontiguousarray(mvp.T, dtype=np.float32))
            self.program["u_view_rotation"].write(np.ascontiguousarray(view[:3, :3].T, dtype=np.float32))
            ref._target.use()
            ref._target.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
            ctx.enable_only(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
            for box in per_box:
                vbo = ctx.buffer(box.tobytes())
                vao = ctx.vertex_array(self.program, [(vbo, VERTEX_FORMAT, *VERTEX_ATTRIBUTES)])
                vao.render(moderngl.TRIANGLES)
                vao.release()
                vbo.release()
            if ref.samples:
                ref._resolve()
            ref._resolved.read_into(out, components=4, alignment=1, write_offset=i * out[0].nbytes)
        return out


def _build_box_by_box(boxes: Boxes) -> Scene:
    parts = [build_scene(Boxes(boxes.matrices[i : i + 1], boxes.sizes_m[i : i + 1], boxes.colors[i : i + 1])) for i in range(len(boxes))]
    offsets = np.cumsum([0] + [len(p.vertices) for p in parts[:-1]])
    vertices = np.concatenate([p.vertices for p in parts])
    indices = np.concatenate([p.indices + k for p, k in zip(parts, offsets, strict=True)]).astype(np.uint32)
    return Scene(vertices=vertices, indices=indices, origin_m=np.zeros(3), bounds=None)


class _Profile(NamedTuple):
    min_wall_s: float
    cpu_s_per_call: float


def _profile(fn: Callable[[], object], repeat: int = 9) -> _Profile:
    """Fastest wall time (closest to an idle machine) and mean process CPU time per call."""
    walls = []
    cpu_start = time.process_time()
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
    return _Profile(min(walls), (time.process_time() - cpu_start) / repeat)


def run() -> list[Figure]:
    boxes = timber_frame_boxes()
    scene = build_scene(boxes)
    assert scene.bounds is not None
    cameras = frame_views(scene.bounds, VIEWS)
    info = gl_info()
    extra = {"boxes": len(boxes), "triangles": scene.triangle_count, "views": len(VIEWS), "gl": info.renderer}
    figures = []
    for samples, label in ((4, "4x MSAA"), (0, "no AA")):
        ours = Renderer(512, 512, samples=samples)
        naive = NaiveRenderer(ours)
        if naive.render(scene, cameras).tobytes() != ours.render(scene, cameras).tobytes():
            raise AssertionError(f"naive baseline and batched renderer disagree ({label})")
        ours_s = median_time(lambda r=ours: r.render(scene, cameras), repeat=9, warmup=2)
        naive_s = median_time(lambda n=naive: n.render(scene, cameras), repeat=3, warmup=1)
        prof = _profile(lambda r=ours: r.render(scene, cameras))
        load = {
            "min_wall_s": round(prof.min_wall_s, 4),
            "cpu_s_per_call": round(prof.cpu_s_per_call, 4),
            "load_avg_1min": os.getloadavg()[0],
            "cpu_count": os.cpu_count(),
        }
        figures.append(
            Figure(
                name=f"render 1.5k boxes, 5 views 512² RGBA, {label}",
                seconds=ours_s,
                baseline="naive: one VAO + draw call per box, re-uploaded per frame",
                baseline_seconds=naive_s,
                target_seconds=0.15 if samples else None,
                extra={**extra, **load},
            )
        )
        ours.release()
    figures.append(
        Figure(
            name="build_scene 1.5k boxes (vectorised)",
            seconds=median_time(lambda: build_scene(boxes), repeat=9, warmup=1),
            baseline="box by box",
            baseline_seconds=median_time(lambda: _build_box_by_box(boxes), repeat=3, warmup=1),
            extra={"boxes": len(boxes)},
        )
    )
    return figures
