# Applying rotation but not scale (a model's mistake that Blender still executes).
import bpy

bpy.ops.mesh.primitive_cube_add(size=2, location=(1, 2, 3), rotation=(0.5, 0, 0.25))
o = bpy.context.active_object
o.scale = (2, 1, 0.5)
o.name = "Purlin_A"
bpy.ops.object.transform_apply(location=False, rotation=True, scale=False)
