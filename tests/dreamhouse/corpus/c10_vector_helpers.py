# A helper that places a member between two points (midpoint, length, yaw).
import math

import bpy
from mathutils import Vector


def member_between(name, p0, p1, width=0.038, depth=0.14):
    a, b = Vector(p0), Vector(p1)
    mid = (a + b) / 2
    d = b - a
    yaw = math.atan2(d.y, d.x)
    bpy.ops.mesh.primitive_cube_add(size=1, location=mid, rotation=(0, 0, yaw))
    obj = bpy.context.active_object
    obj.scale = (d.length, width, depth)
    obj.name = name
    return obj

pts = [(0, 0, 0.1), (8, 0, 0.1), (8, 6, 0.1), (0, 6, 0.1)]
for i in range(4):
    member_between(f"Sill_{i}", pts[i], pts[(i + 1) % 4])
member_between("Joist_diag", (0.5, 0.5, 0.3), (7.5, 5.5, 0.3), 0.038, 0.235)
