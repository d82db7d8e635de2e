# dimensions are computed from the evaluated matrix: stale after a scale change.
import bpy

bpy.ops.mesh.primitive_cube_add(size=1)
o = bpy.context.object
o.name = "Header_A"
o.scale = (1.2, 0.089, 0.235)
d_stale = tuple(o.dimensions)
bpy.context.view_layer.update()
d_fresh = tuple(o.dimensions)
bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 1, 0))
b = bpy.context.object
b.name = "Header_B"
b.scale = (d_stale[0] + d_fresh[0], 0.089, 0.235)
