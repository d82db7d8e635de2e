# Composing transforms with Matrix.Translation / Rotation / Scale.
import math

import bpy
from mathutils import Matrix, Vector

origin = Vector((2.0, 3.0, 0.3))
for i in range(6):
    angle = math.radians(30 * i)
    m = Matrix.Translation(origin + Vector((math.cos(angle), math.sin(angle), 0)) * 2.5) @ Matrix.Rotation(angle, 4, 'Z')
    bpy.ops.mesh.primitive_cube_add(size=1)
    obj = bpy.context.active_object
    obj.matrix_world = m @ Matrix.Diagonal((1.2, 0.089, 0.038, 1.0))
    obj.name = f"Lookout_{i}"
