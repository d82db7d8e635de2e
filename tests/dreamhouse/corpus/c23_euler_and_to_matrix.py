# Euler/Matrix conversions used to orient hip rafters.
import math

import bpy
from mathutils import Euler, Matrix, Vector

e = Euler((0.0, math.radians(-26.57), math.radians(45)), 'XYZ')
rot = e.to_matrix().to_4x4()
for i in range(3):
    loc = Matrix.Translation(Vector((1 + i * 0.8, 1 + i * 0.8, 3.2 + 0.4 * i)))
    bpy.ops.mesh.primitive_cube_add(size=1)
    o = bpy.context.object
    o.name = f"Rafter_hip_{i}"
    o.matrix_world = loc @ rot @ Matrix.Scale(1.0, 4)
    o.scale = (3.0 - i * 0.6, 0.038, 0.235)
back = rot.to_euler()
bpy.ops.mesh.primitive_cube_add(size=1, location=(5, 5, 5), rotation=back)
bpy.context.object.name = "Ridge_hip"
