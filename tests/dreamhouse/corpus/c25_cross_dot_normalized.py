# Orienting a collar tie with cross/dot/normalized vector maths.
import math

import bpy
from mathutils import Vector

a = Vector((0.0, 2.0, 3.6))
b = Vector((7.2, 2.0, 3.6))
axis = (b - a).normalized()
up = Vector((0, 0, 1))
side = axis.cross(up)
ang = math.acos(axis.dot(Vector((1, 0, 0))))
bpy.ops.mesh.primitive_cube_add(size=1, location=(a + b) * 0.5, rotation=(0, 0, ang))
c = bpy.context.object
c.name = "Collar_01"
c.scale = ((b - a).length, 0.038, 0.14)
bpy.ops.mesh.primitive_cube_add(size=1, location=(a + b) * 0.5 + side * 0.6)
d = bpy.context.object
d.name = "Collar_02"
d.scale = ((b - a).length * 0.9, 0.038, 0.14)
