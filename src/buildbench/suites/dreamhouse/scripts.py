"""Blender Python written from a structure: what the oracle emits and how the env rebuilds a scene.

The script is written the way the released examples build members
(``bpy.ops.mesh.primitive_cube_add(size=1, location=…, rotation=…)``, then ``scale``,
then relinking into the task's collection), so it runs unchanged in real Blender and in
the fast executor. Rotations are Blender's default XYZ Euler angles.
"""

from __future__ import annotations

import math

import numpy as np

from .model import Structure

_HEADER = '''import bpy

COLLECTION = {collection!r}
{exported}
coll = bpy.data.collections.get(COLLECTION)
if coll is None:
    coll = bpy.data.collections.new(COLLECTION)
    bpy.context.scene.collection.children.link(coll)
{clear}
# name, size (m), centre (m), XYZ Euler rotation (rad)
MEMBERS = [
'''

_CLEAR = '''
# Rebuild from scratch: drop what earlier attempts left in the collection.
for old in list(coll.objects):
    bpy.data.objects.remove(old, do_unlink=True)
'''

_CLEAR_EXPORTED = '''
# No collection of that name: the members were the meshes of the collection holding the most
# (the exporter's fallback, first on a tie). They are rebuilt in COLLECTION, so none of them may
# stay behind there as a copy that is no member.
if bpy.data.collections.get(COLLECTION) is None:
    exported, most = None, 0
    for c in bpy.data.collections:
        n = sum(1 for o in c.objects if o.type == 'MESH')
        if n > most:
            exported, most = c, n
    if exported is not None:
        for old in [o for o in exported.objects if o.type == 'MESH']:
            bpy.data.objects.remove(old, do_unlink=True)
'''

_FREE_NAMES = '''
# Each member keeps its name: an object outside the collection that holds one (a fresh
# scene's Cube, Light or Camera) would turn the member into 'Cube.001'.
for name, *_ in MEMBERS:
    held = bpy.data.objects.get(name)
    if held is not None:
        bpy.data.objects.remove(held, do_unlink=True)
'''

_BODY = '''
for name, size, location, rotation in MEMBERS:
    bpy.ops.mesh.primitive_cube_add(size=1, location=location, rotation=rotation)
    obj = bpy.context.active_object
    obj.name = name
    obj.scale = size
    for other in list(obj.users_collection):
        other.objects.unlink(obj)
    coll.objects.link(obj)
'''


def euler_xyz(rotation: np.ndarray) -> tuple[float, float, float]:
    """Blender XYZ Euler angles (radians) of a 3x3 rotation ``Rz @ Ry @ Rx``.

    At gimbal lock (|R[2,0]| = 1) the Z angle is set to 0 and X absorbs the rest.
    """
    r = np.asarray(rotation, dtype=np.float64)
    sy = -float(np.clip(r[2, 0], -1.0, 1.0))
    ay = math.asin(sy)
    if abs(sy) < 1.0 - 1e-9:
        return math.atan2(r[2, 1], r[2, 2]), ay, math.atan2(r[1, 0], r[0, 0])
    return math.atan2(-r[1, 2], r[1, 1]), ay, 0.0


def _num(v: float) -> str:
    if not math.isfinite(v):
        return f"float({str(float(v))!r})"  # a scene may hold NaN/inf sizes an agent set
    out = f"{round(float(v), 6):.6f}".rstrip("0").rstrip(".")
    return "0" if out in ("-0", "") else out


def _triple(values: tuple[float, float, float] | np.ndarray) -> str:
    return "(" + ", ".join(_num(v) for v in values) + ")"


def structure_to_bpy(structure: Structure, collection: str, *, clear: bool = False) -> str:
    """A Blender Python script that adds every member of ``structure`` to ``collection``.

    The collection is created when absent and reused when present, so the script can run
    on a scene that persists from earlier attempts; with ``clear`` it first deletes the
    objects already in the collection and any other object holding a member's name (a full
    rebuild: the collection then holds exactly these members, in this order, under these names),
    and, when the scene has no such collection, the meshes of the one the exporter read the
    members from instead (the one holding the most), so no earlier member stays as a copy.
    """
    lines = [_HEADER.format(collection=collection, clear=_CLEAR if clear else "",
                            exported=_CLEAR_EXPORTED if clear else "")]
    for i, name in enumerate(structure.names):
        rot = euler_xyz(structure.matrices[i, :3, :3])
        lines.append(
            f"    ({name!r}, {_triple(structure.sizes_m[i])}, {_triple(structure.centers_m[i])}, "
            f"{_triple(rot)}),\n"
        )
    lines.append("]\n")
    if clear:
        lines.append(_FREE_NAMES)
    lines.append(_BODY)
    return "".join(lines)


def fenced(code: str) -> str:
    """``code`` in a Markdown python fence, as a model would answer."""
    return f"```python\n{code}```\n"
