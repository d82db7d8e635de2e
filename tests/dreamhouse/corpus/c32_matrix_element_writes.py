# Element writes through matrix rows, translation setter and swizzles.
import bpy
from mathutils import Matrix, Vector

bpy.ops.mesh.primitive_cube_add(size=1)
a = bpy.context.object
a.name = "Rim_a"
a.matrix_world[0][3] = 2.0
m = Matrix.Identity(4)
m[1][3] = 1.5
m.translation = (m.translation.x + 0.25, m.translation.y, 0.7)
bpy.ops.mesh.primitive_cube_add(size=1)
b = bpy.context.object
b.name = "Rim_b"
b.matrix_world = m
b.location = b.location + Vector((0.0, 0.0, 0.1))
xy = b.location.xy
bpy.ops.mesh.primitive_cube_add(size=1, location=(xy[0], xy[1] + 1.0, 0.0))
c = bpy.context.object
c.name = "Rim_c"
c.location.z = round(b.location.to_tuple(3)[2] * 2, 3)
