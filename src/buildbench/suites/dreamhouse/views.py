"""The five target views of the paper's Table 4, rendered for the Frame and Facade conditions.

Views (paper Table 4, spec §7.1), in Prompt 0 Part 1 image order:

======== ======= ========= ===================
view     azimuth elevation distance multiplier
======== ======= ========= ===================
front    0°      12°       1.05
back     180°    12°       1.05
left     270°    12°       1.05
right    90°     12°       1.05
front_right 45°  18°       1.10
======== ======= ========= ===================

Perspective, 32 mm lens, 512×512 RGBA with a transparent background; the camera looks at
the centre b of the world bounding box from distance c_v·D (D its diagonal).

Azimuth convention: the camera sits at b + d·(sin az·cos el, −cos az·cos el, sin el)
(``buildbench.render``), the formula the spec suggests for Table 4. Azimuth 0° is on −Y
(the front), 45° front-right (+X, −Y), 90° ("Right") on +X, 270° ("Left") on −X. So the
left view stands on the house's left as a viewer facing its front sees it, which is what
our prompts say (rules.md). The paper's Prompt 0 text puts "left" at +X instead; it
contradicts its own Table 4 (spec §11 item 10), and we follow the table.

Appearance (spec §7.2: the paper names no materials): flat, fixed colours per member
category so the MSE is deterministic. Wall and floor framing are near-white, roof framing
tan/pale pine as on the project page's showcase images, the foundation darker; members
whose names match no category are grey. The Facade condition draws the frame plus the
generator's skin: sheathing in a pale clapboard grey, roofing in dark slate.

Framing: :func:`render_views` frames the structure's own bounds (the paper: "generated and
target renders each use their own bounding diagonal"). For scoring, pass the *target's*
bounds as ``frame`` (see :func:`target_frame`) so candidate and target renders share one
camera and a misplaced or mis-scaled candidate shows as such instead of being re-centred.

Renderers (:data:`RENDERERS`): ``raster``, the default, is our deterministic CPU rasterizer
(``buildbench.render.Rasterizer``): the same pixels on every machine, no OpenGL needed.
``gl`` draws the same definition through OpenGL (moderngl on EGL; llvmpipe on a CPU, the
GPU where present) whose edge pixels differ between drivers; a process forked after it
rendered cannot render (use ``spawn``/``forkserver`` pools). ``cycles`` path-traces with
Blender as the paper does (:mod:`.views_cycles`). Neither raster nor gl anti-aliases (see
:data:`MSAA_SAMPLES`). Stored target views record which one drew them
(:mod:`.views_made_by`) and are compared only with candidates drawn the same way.
PNG encoding is in :mod:`.views_png`, dataset rendering in :mod:`.views_dataset`.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from buildbench.harness import Task
from buildbench.harness.errors import ConfigError
from buildbench.render import Bounds, Boxes, Camera, OrbitView, Renderer, Scene, frame_views
from buildbench.render.camera import clip_planes_for_bounds
from buildbench.render.scene import assemble_scene, box_part

from .fidelity_visual import snap_to_target, visual_fidelity
from .model import CATEGORIES, UNKNOWN_CODE, Structure
from .views_basis import CONDITIONS, IMAGE_SIZE_PX, VIEW_NAMES, Condition, drawable
from .views_made_by import made_by, stamp_of, warn_unknown_once
from .views_png import png_bytes as png_bytes  # re-exported: packs, the server and agents encode with it
from .views_png import save_views as save_views

if TYPE_CHECKING:
    from buildbench.render.raster import Rasterizer

#: ``raster``: our deterministic CPU rasterizer (default); ``gl``: the same picture through
#: OpenGL (driver-dependent edge pixels); ``cycles``: Blender Cycles as in the paper (:mod:`.views_cycles`).
RENDERERS: tuple[str, ...] = ("raster", "gl", "cycles")
#: The renderer of targets, candidates and feedback unless a run says otherwise.
DEFAULT_RENDERER = "raster"
#: Paper Table 4, in :data:`VIEW_NAMES` order.
VIEWS: tuple[OrbitView, ...] = (
    OrbitView("front", azimuth_deg=0.0, elevation_deg=12.0, distance_multiplier=1.05),
    OrbitView("back", azimuth_deg=180.0, elevation_deg=12.0, distance_multiplier=1.05),
    OrbitView("left", azimuth_deg=270.0, elevation_deg=12.0, distance_multiplier=1.05),
    OrbitView("right", azimuth_deg=90.0, elevation_deg=12.0, distance_multiplier=1.05),
    OrbitView("front_right", azimuth_deg=45.0, elevation_deg=18.0, distance_multiplier=1.10),
)
#: Paper §7.1: 512×512 renders, 32 mm lens.
FOCAL_LENGTH_MM = 32.0
#: Anti-aliasing of every render; target and candidate must share it (notes/rendering.md).
#: Off: 4× MSAA costs 3.3× the CPU on llvmpipe (0.30 vs 0.09 CPU-s for a house's 10 views,
#: measured here), which would put the 26,543-structure dataset over its 1 h budget, and
#: the paper's Cycles anti-aliasing cannot be matched exactly anyway.
MSAA_SAMPLES = 0

#: Frame colours per category (RGB 0–255). Subsystems share a hue family (spec §7.2).
CATEGORY_COLORS: Mapping[str, tuple[int, int, int]] = {
    # foundation: weathered sill timber
    "Sill": (150, 128, 104), "BeamPost": (140, 118, 96), "Post": (132, 112, 92), "Foundation": (120, 118, 114),
    # floor: near-white
    "Rim": (236, 230, 214), "Joist": (242, 238, 226), "CenterBeam": (226, 218, 200),
    # walls: near-white, openings a touch warmer so headers read
    "SolePlate": (232, 228, 220), "TopPlate": (232, 228, 220), "Plate": (232, 228, 220),
    "Stud": (246, 244, 238), "GableStud": (240, 236, 226), "Header": (228, 214, 188),
    "King": (240, 234, 220), "Trimmer": (236, 228, 210), "Cripple": (238, 232, 216),
    # roof: tan / pale pine
    "Ridge": (196, 160, 112), "Rafter": (218, 186, 138), "Hip": (206, 172, 124), "Valley": (206, 172, 124),
    "Collar": (210, 178, 130), "Lookout": (214, 182, 134), "Purlin": (202, 168, 120),
}  # fmt: skip
#: Colour of members whose names match no category.
UNKNOWN_COLOR: tuple[int, int, int] = (128, 128, 128)
#: Facade skin colours by name prefix (the generator's ``Sheathing_*`` and ``Roofing_*``).
SKIN_COLORS: Mapping[str, tuple[int, int, int]] = {"Sheathing": (200, 204, 198), "Roofing": (72, 76, 84)}
#: Colour of skin panels with any other name.
SKIN_DEFAULT_COLOR: tuple[int, int, int] = (180, 180, 176)

# RGBA rows by category code (the last for unknown names) and by skin prefix (the last for others).
_FRAME_TABLE = np.array([(*CATEGORY_COLORS.get(c, UNKNOWN_COLOR), 255) for c in (*CATEGORIES, "")], dtype=np.uint8)
_SKIN_ROW = {prefix: i for i, prefix in enumerate(SKIN_COLORS)}
_SKIN_TABLE = np.array([(*rgb, 255) for rgb in (*SKIN_COLORS.values(), SKIN_DEFAULT_COLOR)], dtype=np.uint8)


def check_renderer(renderer: str) -> str:
    """``renderer`` if it is one of :data:`RENDERERS`.

    Raises:
        ConfigError: Otherwise.
    """
    if renderer not in RENDERERS:
        raise ConfigError(f"unknown renderer {renderer!r}; use {' or '.join(RENDERERS)}")
    return renderer


def check_condition(condition: str) -> Condition:
    """``condition`` if it is ``frame`` or ``facade``.

    Raises:
        ConfigError: Otherwise.
    """
    if condition not in CONDITIONS:
        raise ConfigError(f"unknown condition {condition!r}; use frame or facade")
    return condition  # type: ignore[return-value]


def frame_colors(structure: Structure) -> np.ndarray:
    """RGBA uint8 colour per frame member, shape ``(n, 4)``, from its category."""
    # By the structure's cached category codes (validation computes them too): a Python pass
    # over ~900 category names cost more than the rest of a house's scene build.
    codes = structure.category_codes
    return _FRAME_TABLE[np.where(codes == UNKNOWN_CODE, len(CATEGORIES), codes)]


def skin_colors(skin: Structure) -> np.ndarray:
    """RGBA uint8 colour per skin panel, shape ``(n, 4)``, from its name prefix."""
    rows = [_SKIN_ROW.get(name.partition("_")[0], len(_SKIN_ROW)) for name in skin.names]
    return _SKIN_TABLE[np.array(rows, dtype=np.intp)]


def as_submitted(structure: Structure) -> Structure:
    """The frame at the precision episodes store it (6 decimals, as the released submission
    JSON and ``env.compact_structure``), so an exact copy of the target renders and scores
    identically to the target (annotations dropped)."""
    mats = structure.matrices.copy()
    mats[:, :3, :] = np.round(mats[:, :3, :], 6)
    return Structure.from_arrays(structure.names, np.round(structure.sizes_m, 6), mats, structure.meta)


def view_bounds(structure: Structure, skin: Structure | None = None) -> Bounds | None:
    """World AABB of the drawable members (and skin panels); ``None`` when there are none."""
    lo, hi = [], []
    for s in (structure, skin):
        if s is None:
            continue
        keep = drawable(s)
        if keep.any():
            lo.append(s.aabb_min_m[keep].min(axis=0))
            hi.append(s.aabb_max_m[keep].max(axis=0))
    if not lo:
        return None
    return Bounds(np.min(lo, axis=0), np.max(hi, axis=0))


def target_frame(target: Structure, skin: Structure | None = None) -> Bounds | None:
    """The bounds that frame every render of a task: the target frame's (and skin's) AABB."""
    return view_bounds(target, skin)


def cameras(frame: Bounds, scene_bounds: Bounds | None = None) -> list[Camera]:
    """The five Table-4 cameras framing ``frame``.

    Clip planes also enclose ``scene_bounds`` (the geometry actually drawn), so a candidate
    larger than the target it is framed on is not cut off by the near or far plane.
    """
    cams = frame_views(frame, VIEWS, focal_length_mm=FOCAL_LENGTH_MM)
    if scene_bounds is None:
        return cams
    both = Bounds(np.minimum(frame.min_m, scene_bounds.min_m), np.maximum(frame.max_m, scene_bounds.max_m))
    if np.array_equal(both.min_m, frame.min_m) and np.array_equal(both.max_m, frame.max_m):
        return cams  # framed on what is drawn (a dataset render): the planes already enclose it
    out = []
    for cam in cams:
        planes = clip_planes_for_bounds(cam.eye_m, cam.forward, both)
        out.append(dataclasses.replace(cam, near_m=planes.near_m, far_m=planes.far_m))
    return out


def render_views(
    structure: Structure,
    skin: Structure | None = None,
    condition: str = "frame",
    *,
    frame: Bounds | None = None,
    renderer: str = DEFAULT_RENDERER,
) -> np.ndarray:
    """Render the five Table-4 views of a frame (``frame``) or of the frame clad in its skin (``facade``).

    Args:
        structure: The timber frame; members that cannot be drawn are left out.
        skin: The facade panels (``GeneratedHouse.skin``); required for ``facade``.
        condition: ``frame`` or ``facade``.
        frame: Bounds to frame the cameras on; by default the rendered geometry's own. Pass
            the target's (:func:`target_frame`) to render a candidate comparably.
        renderer: ``raster``, ``gl`` or ``cycles`` (:data:`RENDERERS`).

    Returns:
        uint8 RGBA of shape ``(5, 512, 512, 4)`` in :data:`VIEW_NAMES` order; fully
        transparent when there is nothing to draw (or nothing to frame).

    Raises:
        ConfigError: For an unknown condition, or ``facade`` without a skin.
        RenderUnavailableError: For ``gl`` when no headless OpenGL context can be created.
        BlenderUnavailable: For ``cycles`` without the ``bpy`` virtualenv.
    """
    check_condition(condition)
    check_renderer(renderer)
    if condition == "facade" and skin is None:
        raise ConfigError("the facade condition needs the structure's skin (facade panels) to render")
    batches = [_boxes(structure, frame_colors(structure))]
    if condition == "facade" and skin is not None:
        batches.append(_boxes(skin, skin_colors(skin)))
    batches = [b for b in batches if len(b)]
    return _render(assemble_scene([box_part(b) for b in batches]), batches, frame, renderer)


def _render(scene: Scene, batches: list[Boxes], frame: Bounds | None, renderer: str,
            out: np.ndarray | None = None) -> np.ndarray:
    """The five views of ``scene`` (made of ``batches``), framed on ``frame`` or on the scene itself
    (the rasterizer draws into ``out`` where given)."""
    framing = frame if frame is not None else scene.bounds
    if scene.bounds is None or framing is None or framing.diagonal_m == 0.0:
        return np.zeros((len(VIEWS), IMAGE_SIZE_PX, IMAGE_SIZE_PX, 4), dtype=np.uint8)
    if renderer == "cycles":
        from . import views_cycles

        return views_cycles.render_boxes_cycles(batches, cameras(framing, scene.bounds), px=IMAGE_SIZE_PX,
                                                samples=views_cycles.CYCLES_SAMPLES)
    if renderer == "gl":
        return _renderer().render(scene, cameras(framing, scene.bounds))
    return _rasterizer().render(scene, cameras(framing, scene.bounds), out=out)


def house_views(structure: Structure, skin: Structure, renderer: str = DEFAULT_RENDERER, *,
                scratch: bool = False) -> dict[str, np.ndarray]:
    """Both conditions of a generated house by condition name, each framed on its own bounds: the
    same images as :func:`render_views` per condition, with the frame's triangles computed once.

    With ``scratch``, ``raster`` draws into this thread's two reused image buffers: the arrays
    returned are overwritten by the thread's next scratch call, so only a caller that encodes
    them at once (dataset rendering) may ask for it. It saves a house two fresh 5 MB images.
    """
    check_renderer(renderer)
    frame = _boxes(structure, frame_colors(structure))
    clad = _boxes(skin, skin_colors(skin))
    frame_part = box_part(frame)
    layers = {"frame": [(frame, frame_part)], "facade": [(frame, frame_part), (clad, box_part(clad))]}
    out = {}
    for condition in CONDITIONS:
        drawn = [(batch, part) for batch, part in layers[condition] if len(batch)]
        scene = assemble_scene([part for _, part in drawn])
        into = _scratch_images(condition) if scratch and renderer == "raster" else None
        out[condition] = _render(scene, [batch for batch, _ in drawn], None, renderer, into)
    return out


def _scratch_images(condition: str) -> np.ndarray:
    """This thread's reused image buffer for ``condition`` (see :func:`house_views`)."""
    buffers: dict[str, np.ndarray] | None = getattr(_rasterizers, "scratch", None)
    if buffers is None:
        buffers = _rasterizers.scratch = {}
    if condition not in buffers:
        # PNG rows (a zero filter byte before each row): png_bytes deflates them in place, no copy.
        n, px = len(VIEWS), IMAGE_SIZE_PX
        buffers[condition] = np.ndarray((n, px, px, 4), np.uint8, buffer=np.zeros((n, px, 1 + 4 * px), np.uint8),
                                        offset=1, strides=(px * (1 + 4 * px), 1 + 4 * px, 4, 1))
    return buffers[condition]


def views_for(task: Task, condition: str = "frame", renderer: str = DEFAULT_RENDERER) -> list[np.ndarray]:
    """The five target views of ``task`` as RGBA uint8 arrays, in Prompt 0 order (see :func:`target_images`)."""
    return target_images(task, condition, renderer)[0]


def target_images(task: Task, condition: str = "frame",
                  renderer: str = DEFAULT_RENDERER) -> tuple[list[np.ndarray], str | None]:
    """The five target views of ``task`` and the stamp of what drew them (:mod:`.views_made_by`;
    ``None`` for views of unknown origin).

    Views come from PNG files the task names in ``inputs["views"][condition]`` (a task pack)
    when they were drawn the way ``renderer`` draws candidates (their stamp,
    ``inputs["views_made_by"]``, equals this machine's for ``renderer``): a perfect copy then
    scores MSE 0 against them. Otherwise the target is rendered from the task's ground truth
    with ``renderer`` (cached per process); views without a stamp are drawn again the same way,
    with a warning once per process. A task without a ground truth to draw from keeps its views
    when their origin is unknown (a released pack: only the agent sees them, nothing scores
    against them), and is refused when they were drawn by another renderer.

    Raises:
        ConfigError: For an unknown condition or renderer, a named view file that is missing or
            not a PNG, a facade request for a task whose ground truth has no skin, or named
            views drawn by another renderer for a task that cannot be drawn again.
        RenderUnavailableError: For ``gl`` without a headless OpenGL context.
    """
    check_condition(condition)
    check_renderer(renderer)
    named = task.inputs.get("views")
    if not (isinstance(named, dict) and named.get(condition)):
        return list(target_views(task, condition, renderer)), made_by(renderer)
    stored, ours = stamp_of(task.inputs), made_by(renderer)
    if stored == ours:
        return _load_named(task, named[condition], condition), stored
    if _can_redraw(task, condition):
        if stored is None:
            warn_unknown_once(f"task {task.id}", renderer)
        return list(target_views(task, condition, renderer)), ours
    if stored is None:
        return _load_named(task, named[condition], condition), None
    raise ConfigError(
        f"task {task.id}: its {condition} views were drawn by {stored} and candidates would be drawn by {ours}, "
        "and the task has no ground truth to draw its target again; use the renderer that drew them "
        f"(-o renderer={stored.split(' ', 1)[0]}) or a pack written with its targets")


def _can_redraw(task: Task, condition: str) -> bool:
    """Whether the target of ``task`` can be rendered under ``condition`` from its ground truth
    (the facade needs the generator's skin, which an inline frame lacks)."""
    if "generator" in task.target:
        return True
    return "structure" in task.target and condition == "frame"


def target_views(task: Task, condition: str = "frame", renderer: str = DEFAULT_RENDERER) -> np.ndarray:
    """The task's ground truth rendered under ``condition``, framed on itself, shape ``(5, 512, 512, 4)``.

    The frame is taken at stored precision (:func:`as_submitted`).

    Cached per process by task id, generator reference, condition and renderer.

    Raises:
        ConfigError: As :func:`views_for`.
    """
    check_condition(condition)
    ref = task.target.get("generator")
    key = repr(sorted(ref.items())) if isinstance(ref, dict) else ""
    if not key:
        from .tasks import target_structure

        # A task with an inline ground truth is not cached: its id does not pin its content.
        if condition == "facade":
            raise ConfigError(
                f"task {task.id} has no generated ground truth, so no skin for the facade condition"
            )
        return render_views(as_submitted(target_structure(task)), renderer=renderer)
    return _cached_target_views(task, key, condition, renderer)


# Target renders per (pid, task id, generator reference, condition, renderer); ~5 MB each.
# The pid keeps a forked child from trusting entries it did not make.
_target_cache: dict[tuple[int, str, str, str, str], np.ndarray] = {}
_TARGET_CACHE_SIZE = 8


def _cached_target_views(task: Task, key: str, condition: str, renderer: str) -> np.ndarray:
    from .tasks import ground_truth

    ck = (os.getpid(), task.id, key, condition, renderer)
    hit = _target_cache.get(ck)
    if hit is not None:
        return hit
    house = ground_truth(task)
    images = render_views(as_submitted(house.structure), house.skin, condition, renderer=renderer)
    images.setflags(write=False)
    if len(_target_cache) >= _TARGET_CACHE_SIZE:
        _target_cache.pop(next(iter(_target_cache)))
    _target_cache[ck] = images
    return images


def _load_named(task: Task, paths: Mapping[str, str], condition: str) -> list[np.ndarray]:
    from buildbench.render import RenderInputError, load_png

    missing = [v for v in VIEW_NAMES if v not in paths]
    if missing:
        raise ConfigError(f"task {task.id}: {condition} views lack {', '.join(missing)}")
    images = []
    for view in VIEW_NAMES:
        path = Path(paths[view])
        try:
            images.append(load_png(path))
        except RenderInputError as exc:
            raise ConfigError(
                f"task {task.id}: cannot read {condition} view {view} at {path}: {exc}"
            ) from exc
    return images


def _boxes(structure: Structure, colors: np.ndarray) -> Boxes:
    # drawable() keeps exactly the members Boxes would accept, so they are not checked twice.
    keep = drawable(structure)
    return Boxes.of_checked(structure.matrices[keep], structure.sizes_m[keep], colors[keep])


_renderers: dict[int, Renderer] = {}


def _renderer() -> Renderer:
    """One 512×512 renderer per process (GL contexts do not survive a fork)."""
    pid = os.getpid()
    if pid not in _renderers:
        _renderers[pid] = Renderer(IMAGE_SIZE_PX, IMAGE_SIZE_PX, samples=MSAA_SAMPLES)
    return _renderers[pid]


_rasterizers = threading.local()


def _rasterizer() -> Rasterizer:
    """This thread's 512×512 rasterizer: no GL context, so nothing ties it to a process (a forked
    worker may use it); one per thread, as its interface promises nothing about sharing one."""
    raster: Rasterizer | None = getattr(_rasterizers, "raster", None)
    if raster is None:
        from buildbench.render.raster import Rasterizer

        raster = _rasterizers.raster = Rasterizer(IMAGE_SIZE_PX, IMAGE_SIZE_PX)
    return raster


@dataclass(frozen=True)
class VisualScore:
    """Visual fidelity of a frame against the target views (paper Eq. 1).

    Attributes:
        score: Mean S over the views.
        per_view: S_v per view, in :data:`VIEW_NAMES` order.
        images: Side-by-side comparison images (current vs target) shown to the agent.
    """

    score: float
    per_view: tuple[float, ...]
    images: tuple[np.ndarray, ...] = ()


#: ``scorer(task, structure, condition, renderer)``.
VisualScorer = Callable[[Task, Structure, str, str], VisualScore]
_registered: dict[str, VisualScorer] = {}


def register_visual_scorer(scorer: VisualScorer) -> None:
    """Install the function that renders a frame and scores it against a task's views.

    Iterative refinement and the τ_retry visual gate use it; without one they report that
    visual feedback is unavailable.
    """
    _registered["scorer"] = scorer


def visual_scorer() -> VisualScorer | None:
    """The installed visual scorer, else :func:`score_visual`."""
    return _registered.get("scorer", score_visual)


def score_visual(task: Task, structure: Structure, condition: str, renderer: str = DEFAULT_RENDERER) -> VisualScore:
    """Render ``structure`` framed on the target and score it against the target's frame views.

    S follows paper Eq. 1 on frame renders under either condition (see ``fidelity``). The
    comparison images put each candidate view (left) beside the view the agent was given
    under ``condition`` (right), each ``512 × 1024`` RGBA.

    Raises:
        ConfigError: As :func:`views_for`.
    """
    from .tasks import target_structure

    target = as_submitted(target_structure(task))
    # The same coincidence rule as the final score, so in-episode and final S agree.
    candidate = render_views(snap_to_target(structure, target), frame=target_frame(target), renderer=renderer)
    fidelity = visual_fidelity(candidate, target_views(task, "frame", renderer))
    shown = views_for(task, condition, renderer)
    images = tuple(np.concatenate([c, t], axis=1) for c, t in zip(candidate, shown, strict=True))
    return VisualScore(score=fidelity.mean, per_view=fidelity.per_view, images=images)
