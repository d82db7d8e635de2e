# A plain nested list assigned to matrix_world is read column-major by Blender.
import bpy

bpy.ops.mesh.primitive_cube_add(size=1)
o = bpy.context.object
o.name = "Cripple_list"
o.matrix_world = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [2.0, 3.0, 0.5, 1]]
bpy.ops.mesh.primitive_cube_add(size=1)
p = bpy.context.object
p.name = "Cripple_rowlist"
p.matrix_world = [[1, 0, 0, 4.0], [0, 1, 0, 1.0], [0, 0, 1, 0.5], [0, 0, 0, 1]]
