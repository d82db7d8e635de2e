"""A DreamHouse agent in the released harness's interface, runnable by buildbench as it is.

    buildbench run dreamhouse --agent released:examples/dreamhouse_released_agent.py:generate \
        --split demo --limit 2 -o profile=released

The same file works with the released CLI (``dreamhouse run --agent ...:generate``) against
``buildbench dreamhouse serve``. ``generate`` receives the task prompt ("Build a Generate a
1-story ... Footprint: 9.75m x 9.75m ..."), the paths of the five reference views, and the
earlier attempts with their test results; it returns Blender Python that builds named boxes
into the collection ``COLLECTION_NAME``.

This one needs no model: it reads the footprint from the prompt and frames the floor
platform (sill plates, rim joists, floor joists 16 in on centre), which passes some tests
and fails the roof and wall ones. Replace ``_frame_script`` with a model call (send the
prompt, the images and the last attempt's ``feedback`` text) for a real agent.
"""

from __future__ import annotations

import re

#: Lumber sections, metres: a 2x6 sill laid flat, 2x10 rims and joists on edge.
SILL_W, SILL_H = 0.14, 0.038
JOIST_W, JOIST_H = 0.038, 0.235
#: Joist spacing on centre, metres (16 in).
SPACING_M = 0.4064


def _footprint_m(prompt: str) -> tuple[float, float]:
    found = re.search(r"Footprint:\s*([\d.]+)\s*m\s*x\s*([\d.]+)\s*m", prompt)
    return (float(found.group(1)), float(found.group(2))) if found else (6.0, 10.0)


def _frame_script(width_m: float, depth_m: float) -> str:
    lines = [
        "import bpy",
        'col = bpy.data.collections.get("COLLECTION_NAME") or bpy.data.collections.new("COLLECTION_NAME")',
        "if col.name not in bpy.context.scene.collection.children:",
        "    bpy.context.scene.collection.children.link(col)",
        "for old in list(col.objects):  # the scene persists across attempts: start this frame afresh",
        "    bpy.data.objects.remove(old, do_unlink=True)",
        "def box(name, center, size):",
        "    bpy.ops.mesh.primitive_cube_add(size=1, location=center)",
        "    obj = bpy.context.active_object",
        "    obj.name, obj.scale = name, size",
        "    bpy.ops.object.transform_apply(scale=True)",
        "    for c in obj.users_collection:",
        "        c.objects.unlink(obj)",
        "    col.objects.link(obj)",
    ]
    w, d = width_m, depth_m
    z_sill, z_joist = SILL_H / 2, SILL_H + JOIST_H / 2
    lines += [
        f"box('Sill_01', ({w / 2}, 0.0, {z_sill}), ({w}, {SILL_W}, {SILL_H}))",
        f"box('Sill_02', ({w / 2}, {d}, {z_sill}), ({w}, {SILL_W}, {SILL_H}))",
        f"box('Sill_03', (0.0, {d / 2}, {z_sill}), ({SILL_W}, {d}, {SILL_H}))",
        f"box('Sill_04', ({w}, {d / 2}, {z_sill}), ({SILL_W}, {d}, {SILL_H}))",
        f"box('Rim_01', ({w / 2}, 0.0, {z_joist}), ({w}, {JOIST_W}, {JOIST_H}))",
        f"box('Rim_02', ({w / 2}, {d}, {z_joist}), ({w}, {JOIST_W}, {JOIST_H}))",
    ]
    count = int(w / SPACING_M) + 1
    for k in range(count):
        x = min(k * SPACING_M, w)
        lines.append(f"box('Joist_{k + 1:02d}', ({x}, {d / 2}, {z_joist}), ({JOIST_W}, {d}, {JOIST_H}))")
    return "\n".join(lines) + "\n"


def generate(prompt: str, images: list[str], feedback: list[dict]) -> str:
    """Blender Python for one attempt (the released agent interface)."""
    width_m, depth_m = _footprint_m(prompt)
    return _frame_script(width_m, depth_m)
