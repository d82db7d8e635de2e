# Mirrored members (negative scale) and dimensions on a rotated member.
import bpy

bpy.ops.mesh.primitive_cube_add(size=1, location=(1, 1, 1))
m = bpy.context.object
m.name = "Trimmer_mirror"
m.scale = (-0.038, 0.089, 2.032)
bpy.ops.mesh.primitive_cube_add(size=2, location=(3, 1, 1), rotation=(0, 0, 0.7))
r = bpy.context.object
r.name = "Header_rot"
r.dimensions = (1.5, 0.089, 0.235)
bpy.context.view_layer.update()
r.dimensions = (r.dimensions.x * 2, 0.089, 0.235)
