# decompose / inverted / transposed on a placement matrix.
import math

import bpy
from mathutils import Matrix, Vector

m = Matrix.Translation((3, 1, 2)) @ Matrix.Rotation(math.radians(30), 4, 'Z') @ Matrix.Scale(2.0, 4, (1, 0, 0))
loc, quat, scale = m.decompose()
bpy.ops.mesh.primitive_cube_add(size=1, location=loc, rotation=quat.to_euler())
o = bpy.context.object
o.scale = scale
o.name = "BeamPost_dec"
inv = m.inverted()
p = inv @ Vector((4, 2, 2))
bpy.ops.mesh.primitive_cube_add(size=0.2, location=p)
bpy.context.object.name = "BeamPost_inv"
t = m.transposed().transposed()
bpy.ops.mesh.primitive_cube_add(size=0.2, location=t.translation)
bpy.context.object.name = "BeamPost_t"
