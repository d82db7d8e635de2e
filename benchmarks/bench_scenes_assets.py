"""Asset meshes of a 30-object room: procedural meshes built cold (process cache cleared)
and warm, beside the same room as trimesh boxes; and a real asset (a 3D-FUTURE-layout OBJ of
~50k triangles with a texture) parsed cold and read from the disk cache.

The metrics of a room at mesh level are the mesh-physics benchmark's
(``bench_scenes_mesh_physics.py``); this one times only producing the meshes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import trimesh
from _common import Figure, median_time

from buildbench.scenes.assets import AssetLibrary, clear_cache, object_mesh, world_mesh
from buildbench.scenes.model import SceneObject, yaw_quat_xyzw

KINDS = [("bed", (1.6, 1.1, 2.1)), ("nightstand", (0.5, 0.55, 0.4)), ("wardrobe", (1.2, 2.1, 0.6)),
         ("desk", (1.2, 0.75, 0.6)), ("office chair", (0.6, 1.0, 0.6)), ("bookshelf", (0.9, 1.8, 0.35)),
         ("sofa", (2.0, 0.85, 0.9)), ("coffee table", (1.1, 0.45, 0.6)), ("rug", (2.0, 0.01, 1.4)),
         ("floor lamp", (0.45, 1.6, 0.45)), ("plant", (0.6, 1.3, 0.6)), ("tv stand", (1.6, 0.5, 0.45)),
         ("tv", (1.2, 0.75, 0.25)), ("dining table", (1.6, 0.75, 0.9)), ("chair", (0.45, 0.9, 0.5))]


def room_objects(n: int = 30, seed: int = 0) -> list[SceneObject]:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        category, size = KINDS[k % len(KINDS)]
        centre = (float(rng.uniform(-3, 3)), size[1] / 2, float(rng.uniform(-3, 3)))
        out.append(SceneObject(f"{category}-{k}", category, f"asset-{k}", centre, size,
                               yaw_quat_xyzw(float(rng.uniform(0, 360))),
                               attributes={"description": f"a grey fabric and oak {category}"}))
    return out


def _boxes(objects: list[SceneObject]) -> None:
    for obj in objects:
        box = trimesh.creation.box(obj.size)
        box.apply_transform(np.vstack([np.column_stack([obj.rotation, obj.center]), [0, 0, 0, 1]]))


def _cold(objects: list[SceneObject]) -> None:
    clear_cache()
    for obj in objects:
        world_mesh(obj, "procedural")


def _warm(objects: list[SceneObject]) -> None:
    for obj in objects:
        world_mesh(obj, "procedural")


def _asset_folder(root: Path) -> SceneObject:
    jid = "bench-0000"
    sphere = trimesh.creation.icosphere(subdivisions=6)  # 81,920 triangles
    folder = root / "future" / jid
    folder.mkdir(parents=True)
    lines = [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in sphere.vertices]
    lines += [f"vt {u:.4f} {v:.4f}" for u, v in (sphere.vertices[:, :2] + 1) / 2]
    lines += [f"f {a}/{a} {b}/{b} {c}/{c}" for a, b, c in sphere.faces + 1]
    (folder / "raw_model.obj").write_text("\n".join(lines) + "\n")
    from PIL import Image

    Image.new("RGB", (256, 256), (120, 90, 60)).save(folder / "texture.png")
    return SceneObject("armchair-0", "armchair", jid, (0, 0.45, 0), (0.8, 0.9, 0.8), raw={"jid": jid})


def run() -> list[Figure]:
    objects = room_objects()
    boxes = median_time(lambda: _boxes(objects), repeat=5)
    cold = median_time(lambda: _cold(objects), repeat=5)
    _cold(objects)
    warm = median_time(lambda: _warm(objects), repeat=5)
    n_faces = sum(len(object_mesh(o, "procedural").faces) for o in objects)
    figures = [
        Figure("assets: 30-object room, procedural world meshes (cold)", cold, "trimesh boxes", boxes,
               extra={"triangles": n_faces}),
        Figure("assets: 30-object room, procedural world meshes (warm cache)", warm, "cold", cold),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        obj = _asset_folder(root)

        def parse_cold() -> None:
            lib = AssetLibrary(root / "future", None, None)  # no disk cache: parse every time
            object_mesh(obj, "mesh", library=lib)

        def disk_warm() -> None:
            lib = AssetLibrary(root / "future", None, root / "cache")  # a new process's library
            object_mesh(obj, "mesh", library=lib)

        cold_asset = median_time(parse_cold, repeat=3)
        disk_warm()
        warm_asset = median_time(disk_warm, repeat=3)
        figures.append(Figure("assets: 82k-triangle 3D-FUTURE OBJ from the disk cache", warm_asset,
                              "parsed cold", cold_asset))
    return figures


if __name__ == "__main__":
    for f in run():
        print(f.to_dict())
