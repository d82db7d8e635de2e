"""The Cycles renderer (``-o renderer=cycles``): the paper renders targets, candidates and
refinement feedback with Blender Cycles (spec §7.1), so S and the joint pass are closer to
its numbers when both sides are rendered that way too.

Blender runs as a separate process on the ``bpy`` virtualenv made by ``make setup``
(``.venv-blender``; ``BUILDBENCH_BLENDER_VENV`` overrides). It receives only numbers (box
transforms, sizes, colours and cameras), never agent code, so it runs outside the sandbox.
Cameras are the same Table-4 cameras as the GL renderer's; members keep their category
colours, lit by a sun from the front-right above and a grey sky, on a transparent
background. Deterministic: fixed seed, no denoiser, no adaptive sampling, CPU.

Cost: the five 512² views of a 9-member frame took 13 s at :data:`CYCLES_SAMPLES` on the
project's two shared cores (Blender's start-up included), so it is opt-in; GL is the default.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from buildbench.harness.errors import ConfigError
from buildbench.render import Boxes, Camera, load_png

from .executors.blender import find_blender_python

#: Path-tracing samples per pixel; the paper does not give its count.
CYCLES_SAMPLES = 16
#: Longest one Cycles call (five views) may take, seconds.
CYCLES_TIMEOUT_S = 900.0
_DRIVER = Path(__file__).with_name("_cycles_driver.py")


def _job(batches: Sequence[Boxes], cameras: Sequence[Camera], px: int, samples: int) -> dict[str, object]:
    mats = np.concatenate([np.asarray(b.matrices, np.float64).reshape(-1, 16) for b in batches])
    sizes = np.concatenate([np.asarray(b.sizes_m, np.float64).reshape(-1, 3) for b in batches])
    colors = np.concatenate([np.asarray(b.colors)[:, :3].astype(np.float64) / 255.0 for b in batches])
    return {
        "boxes": {"matrices": mats.tolist(), "sizes": sizes.tolist(), "colors": colors.tolist()},
        "cameras": [
            {"eye": c.eye_m.tolist(), "target": c.target_m.tolist(), "up": c.up.tolist(),
             "lens_mm": c.focal_length_mm, "sensor_mm": c.sensor_width_mm, "near": c.near_m, "far": c.far_m}
            for c in cameras
        ],
        "px": int(px),
        "samples": int(samples),
        "seed": 0,
    }


def render_boxes_cycles(
    batches: Sequence[Boxes], cameras: Sequence[Camera], *, px: int = 512, samples: int = CYCLES_SAMPLES
) -> np.ndarray:
    """Render box batches through each camera with Cycles.

    Returns:
        uint8 RGBA of shape ``(len(cameras), px, px, 4)``, transparent where nothing is drawn.

    Raises:
        ConfigError: For a non-positive size or sample count, or when Blender fails.
        BlenderUnavailable: When the ``bpy`` virtualenv is missing.
    """
    if px < 1 or samples < 1:
        raise ConfigError(f"cycles render needs px >= 1 and samples >= 1, got px={px}, samples={samples}")
    if not cameras:
        return np.zeros((0, px, px, 4), np.uint8)
    if sum(len(b) for b in batches) == 0:
        return np.zeros((len(cameras), px, px, 4), np.uint8)
    python = find_blender_python()
    with tempfile.TemporaryDirectory(prefix="bb-cycles-") as tmp:
        job = Path(tmp) / "job.json"
        job.write_text(json.dumps(_job(batches, cameras, px, samples)))
        try:
            proc = subprocess.run([str(python), "-s", "-B", str(_DRIVER), str(job), tmp], capture_output=True,
                                  text=True, timeout=CYCLES_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ConfigError(f"cycles render took over {CYCLES_TIMEOUT_S:.0f} s") from exc
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise ConfigError(f"cycles render failed (exit {proc.returncode}): {last}")
        return np.stack([load_png(Path(tmp) / f"{k}.png") for k in range(len(cameras))])
