"""Renders boxes with Blender Cycles; runs on the ``bpy`` virtualenv's Python, not buildbench's.

Usage: ``python _cycles_driver.py JOB.json OUT_DIR``. The job holds ``boxes`` (flat lists
``matrices`` n×16 row-major, ``sizes`` n×3 metres, ``colors`` n×3 in 0–1 sRGB), ``cameras``
(``eye``, ``target``, ``up``, ``lens_mm``, ``sensor_mm``, ``near``, ``far``), ``px``,
``samples`` and ``seed``. It writes ``OUT_DIR/<k>.png`` (RGBA, transparent background) per
camera. All boxes go into one mesh (corner colours read by the shader), which keeps a
1,500-member house to one object. Imports nothing from buildbench: Blender's Python has its
own packages.
"""

import json
import os
import sys

import bpy
import numpy as np
from mathutils import Matrix, Vector

# The unit cube's corners and its six quads (outward winding).
_CORNERS = np.array(
    [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1], [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]],
    dtype=np.float64,
) * 0.5
_QUADS = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]])


def _srgb_to_linear(c):  # noqa: ANN001, ANN202 - plain script
    c = np.asarray(c, dtype=np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _mesh(boxes):  # noqa: ANN001, ANN202
    mats = np.asarray(boxes["matrices"], dtype=np.float64).reshape(-1, 4, 4)
    sizes = np.asarray(boxes["sizes"], dtype=np.float64).reshape(-1, 3)
    n = len(mats)
    local = _CORNERS[None, :, :] * sizes[:, None, :]
    world = np.einsum("nij,nkj->nki", mats[:, :3, :3], local) + mats[:, None, :3, 3]
    faces = (_QUADS[None, :, :] + 8 * np.arange(n)[:, None, None]).reshape(-1, 4)
    mesh = bpy.data.meshes.new("boxes")
    mesh.from_pydata(world.reshape(-1, 3).tolist(), [], faces.tolist())
    colors = _srgb_to_linear(np.asarray(boxes["colors"], dtype=np.float64).reshape(-1, 3))
    rgba = np.concatenate([colors, np.ones((n, 1))], axis=1)
    attr = mesh.color_attributes.new("member_color", "FLOAT_COLOR", "CORNER")
    per_corner = np.repeat(rgba, 24, axis=0)  # 6 faces × 4 corners per box, in face order
    attr.data.foreach_set("color", per_corner.ravel().astype(np.float32))
    mesh.update()
    return mesh


def _material():  # noqa: ANN202
    mat = bpy.data.materials.new("member")
    mat.use_nodes = True
    nodes, links = mat.node_tree.nodes, mat.node_tree.links
    bsdf = nodes.get("Principled BSDF")
    attr = nodes.new("ShaderNodeAttribute")
    attr.attribute_name = "member_color"
    links.new(attr.outputs["Color"], bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = 0.9
    return mat


def _scene(job):  # noqa: ANN001, ANN202
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    obj = bpy.data.objects.new("boxes", _mesh(job["boxes"]))
    obj.data.materials.append(_material())
    scene.collection.objects.link(obj)
    world = bpy.data.worlds.new("world")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Strength"].default_value = 1.0
    scene.world = world
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.data.energy = 3.0
    sun.rotation_euler = (0.7, 0.2, 0.6)  # from above, front-right
    scene.collection.objects.link(sun)
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = int(job["samples"])
    scene.cycles.seed = int(job.get("seed", 0))
    scene.cycles.use_denoising = False
    scene.cycles.use_adaptive_sampling = False
    scene.render.film_transparent = True
    scene.render.resolution_x = scene.render.resolution_y = int(job["px"])
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGBA"
    scene.view_settings.view_transform = "Standard"
    return scene


def _camera(scene, spec):  # noqa: ANN001, ANN202
    eye, target, up = (Vector(spec[k]) for k in ("eye", "target", "up"))
    forward = (target - eye).normalized()
    right = forward.cross(up).normalized()
    true_up = right.cross(forward)
    rot = Matrix((right, true_up, -forward)).transposed()  # camera looks down its local -Z
    cam = bpy.data.objects.get("camera")
    if cam is None:
        cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
        scene.collection.objects.link(cam)
    cam.matrix_world = Matrix.Translation(eye) @ rot.to_4x4()
    cam.data.lens = float(spec["lens_mm"])
    cam.data.sensor_width = float(spec["sensor_mm"])
    cam.data.sensor_fit = "AUTO"
    cam.data.clip_start = float(spec["near"])
    cam.data.clip_end = float(spec["far"])
    scene.camera = cam


def main(argv):  # noqa: ANN001, ANN201
    job_path, out_dir = argv[1], argv[2]
    with open(job_path) as fh:
        job = json.load(fh)
    scene = _scene(job)
    for k, spec in enumerate(job["cameras"]):
        _camera(scene, spec)
        scene.render.filepath = os.path.join(out_dir, f"{k}.png")
        bpy.ops.render.render(write_still=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
