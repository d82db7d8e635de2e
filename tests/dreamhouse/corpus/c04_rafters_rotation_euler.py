# Gable rafters pitched with rotation_euler about Y, plus a ridge board.
import math

import bpy

bpy.data.objects.remove(bpy.data.objects["Cube"])

span = 7.2
pitch = math.radians(33.7)
ridge_z = 2.9 + (span / 2) * math.tan(pitch)
rafter_len = (span / 2) / math.cos(pitch) + 0.3

bpy.ops.mesh.primitive_cube_add(size=1, location=(span / 2, 4.0, ridge_z))
ridge = bpy.context.active_object
ridge.name = "Ridge_main"
ridge.scale = (0.038, 8.0, 0.286)

for i in range(11):
    y = i * 0.6096 + 0.95
    for side, sign in (("L", -1), ("R", 1)):
        cx = span / 2 + sign * (span / 4)
        cz = 2.9 + (span / 4) * math.tan(pitch)
        bpy.ops.mesh.primitive_cube_add(size=1, location=(cx, y, cz), rotation=(0, sign * pitch, 0))
        r = bpy.context.active_object
        r.name = f"Rafter_{side}_{i:02d}"
        r.scale = (rafter_len, 0.038, 0.184)
