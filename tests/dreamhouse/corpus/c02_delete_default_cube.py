# Clear the scene first, the way most model scripts start.
import bpy

bpy.ops.object.select_all(action='SELECT')
bpy.ops.object.delete(use_global=False)

for i in range(4):
    bpy.ops.mesh.primitive_cube_add(size=1, location=(i * 2.0, 0, 0.019))
    sill = bpy.context.object
    sill.name = f"Sill_{i + 1:02d}"
    sill.scale = (2.0, 0.14, 0.038)
