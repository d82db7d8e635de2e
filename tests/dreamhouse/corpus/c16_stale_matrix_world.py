# Reading matrix_world right after moving an object gives the old matrix until an update.
import bpy
from mathutils import Vector

bpy.ops.mesh.primitive_cube_add(size=1, location=(1, 0, 0))
a = bpy.context.active_object
a.name = "Post_A"
a.location = (5, 0, 0)
stale = a.matrix_world.translation.copy()
bpy.context.view_layer.update()
fresh = a.matrix_world.translation.copy()
bpy.ops.mesh.primitive_cube_add(size=1, location=stale + Vector((0, 1, 0)))
bpy.context.active_object.name = "Post_B"
bpy.ops.mesh.primitive_cube_add(size=1, location=fresh + Vector((0, 2, 0)))
bpy.context.active_object.name = "Post_C"
print(tuple(stale), tuple(fresh))
