# Names Blender cannot keep as given: past 255 bytes, with a NUL, or taken at the limit
# (where 'name.001' does not fit, the name loses its last character instead).
import bpy

bpy.ops.object.select_all(action='SELECT')
bpy.ops.object.delete(use_global=False)

names = ["Post\x00_hidden", "Sill_" + "x" * 300] + ["B" * 252] * 4 + ["C" * 255, "C" * 254] * 3 + ["A" * 250] * 2
for i, name in enumerate(names):
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(i, 0, 0.25))
    bpy.context.object.name = name
