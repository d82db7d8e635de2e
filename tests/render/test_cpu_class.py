"""Render geometry is the same on every CPU class (render/fixed.py).

``@``, ``np.dot`` and ``np.linalg`` on float64 go to OpenBLAS/LAPACK, whose kernel (and so the
last bits) depends on the CPU; numpy's own SIMD level too. Box corners, normals, scene bounds,
camera matrices, clip planes and the shading factor used to be such products: a scene's framing
could then differ between machines. A child process with OpenBLAS's plainest kernel and numpy
without its dispatched SIMD levels must compute the same bytes as this process, pixels included.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from buildbench.render import Boxes, Camera, Lighting, OrbitView, Rasterizer, TriangleMesh, build_scene
from buildbench.render.camera import clip_planes_for_bounds, frame_views
from buildbench.render.renderer import shade_factor
from buildbench.render.scene import Scene, box_world_geometry, mesh_world_geometry

#: OpenBLAS's plainest kernel per machine (no FMA, other blocking than the one picked by CPU).
_PLAIN_BLAS = {"x86_64": "Prescott", "aarch64": "ARMV8"}
_VIEWS = [OrbitView("front", 0.0, 12.0, 1.05), OrbitView("front_right", 45.0, 18.0, 1.1), OrbitView("odd", 200.0, 35.0, 1.4)]


def _rotations(rng: np.random.Generator, n: int) -> np.ndarray:
    """Rotations from random unit quaternions, elementwise only (no LAPACK QR: the inputs
    themselves must not depend on the CPU)."""
    q = rng.normal(size=(n, 4))
    w, x, y, z = (q / np.sqrt(((q[:, 0:1] ** 2 + q[:, 1:2] ** 2) + q[:, 2:3] ** 2) + q[:, 3:4] ** 2)).T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)  # fmt: skip


def _boxes(rng: np.random.Generator, n: int, offset: float = 0.0) -> Boxes:
    """Rotated boxes, a third of them also scaled and sheared, some mirrored."""
    m = np.tile(np.eye(4), (n, 1, 1))
    m[:, :3, :3] = _rotations(rng, n)
    skew = np.arange(n) % 3 == 0
    m[skew, :3, :3] += rng.uniform(-0.3, 0.3, size=(int(skew.sum()), 3, 3))
    m[np.arange(n) % 5 == 1, :3, 0] *= -1.0
    m[:, :3, 3] = rng.uniform(-3.0, 3.0, size=(n, 3)) + offset
    sizes = np.exp(rng.uniform(np.log(0.01), np.log(1.5), size=(n, 3)))
    return Boxes(m, sizes, rng.integers(0, 256, size=(n, 4)))


def _scenes() -> list[Scene]:
    rng = np.random.default_rng(11)
    mesh = TriangleMesh(rng.normal(size=(30, 3)) * 2.0, rng.integers(0, 30, size=(25, 3)), (0.4, 0.7, 0.2, 1.0))
    return [build_scene(_boxes(rng, 400)), build_scene(_boxes(rng, 200, offset=3.7e3), [mesh])]


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(np.ascontiguousarray(p).tobytes() if isinstance(p, np.ndarray) else json.dumps(p).encode())
    return h.hexdigest()[:20]


def _camera_bytes(cam: Camera, scene: Scene) -> list[Any]:
    assert scene.bounds is not None
    planes = clip_planes_for_bounds(cam.eye_m, cam.forward, scene.bounds)
    return [cam.eye_m, cam.view_matrix(), cam.projection_matrix(96, 64), [planes.near_m, planes.far_m],
            cam.project_to_pixels(scene.bounds.corners_m(), 96, 64)]


def digests() -> dict[str, str]:
    """Digests of every float64 step from boxes to pixels, by name."""
    out: dict[str, str] = {}
    rng = np.random.default_rng(5)
    boxes = _boxes(rng, 300)
    geo = box_world_geometry(boxes)
    out["box corners"] = _digest(geo.positions_m)
    out["box normals"] = _digest(geo.normals, geo.indices)
    mesh_geo = mesh_world_geometry(TriangleMesh(rng.normal(size=(40, 3)), rng.integers(0, 40, size=(30, 3)),
                                                (0.5, 0.5, 0.5)))
    out["mesh normals"] = _digest(mesh_geo.normals)
    lighting = Lighting(direction_view=(0.31, 0.47, 0.83))
    out["lighting"] = _digest(list(lighting.direction_view))
    for i, scene in enumerate(_scenes()):
        assert scene.bounds is not None
        cams = frame_views(scene.bounds, _VIEWS)
        out[f"scene {i} bounds"] = _digest(scene.bounds.min_m, scene.bounds.max_m, scene.bounds.diagonal_m)
        out[f"scene {i} cameras"] = _digest(*[b for cam in cams for b in _camera_bytes(cam, scene)])
        out[f"scene {i} shading"] = _digest(shade_factor(geo.normals, cams[1], lighting))
        out[f"scene {i} pixels"] = _digest(Rasterizer(96, 64).render(scene, cams))
    return out


def _baseline_numpy() -> dict[str, str]:
    """numpy without any of its dispatched SIMD levels (only its compiled-in baseline runs)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__
    except ImportError:  # a numpy without the private table: its levels are left alone
        return {}
    return {"NPY_DISABLE_CPU_FEATURES": " ".join(__cpu_dispatch__)} if __cpu_dispatch__ else {}


def test_render_geometry_is_the_same_with_another_blas_kernel_and_simd_level() -> None:
    kernel = _PLAIN_BLAS.get(platform.machine())
    if kernel is None:
        pytest.skip(f"no plain OpenBLAS kernel known for {platform.machine()}")
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel, "OPENBLAS_NUM_THREADS": "2", **_baseline_numpy()}
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_cpu_class as t; "
            "print(json.dumps(t.digests()))")
    child = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True, text=True,
                           env=env, timeout=120, check=False)
    assert child.returncode == 0, child.stderr[-2000:]
    got, here = json.loads(child.stdout.splitlines()[-1]), digests()
    assert {k for k in here if got.get(k) != here[k]} == set()


def test_fixed_order_products_equal_numpy_products_to_rounding() -> None:
    """The fixed-order sums compute the same products (to a few ulps) as numpy's, so renders
    did not move beyond the last bits."""
    from buildbench.render import fixed

    rng = np.random.default_rng(3)
    p, m = rng.normal(size=(50, 8, 4)), rng.normal(size=(50, 1, 3, 4))
    np.testing.assert_allclose(fixed.apply(p, m), (p[..., None, :] * m).sum(axis=-1), rtol=0, atol=1e-14)
    a, b = rng.normal(size=(7, 4, 4)), rng.normal(size=(7, 4, 4))
    np.testing.assert_allclose(fixed.matmul4(a, b), np.einsum("nij,njk->nik", a, b), rtol=0, atol=1e-14)
    mats = rng.normal(size=(20, 3, 3))
    np.testing.assert_allclose(fixed.det3(mats), np.linalg.det(mats), rtol=1e-12, atol=1e-14)
    v = rng.normal(size=(9, 3))
    np.testing.assert_allclose(fixed.length3(v), np.sqrt((v * v).sum(axis=1)), rtol=1e-15)
    assert fixed.length(v[0]) == float(fixed.length3(v[0]))
