# Repeated names: Blender appends .001, .002 ... and reuses freed numbers.
import bpy

for _ in range(3):
    bpy.ops.mesh.primitive_cube_add(size=0.5)
    bpy.context.object.name = "Post"
bpy.data.objects.remove(bpy.data.objects["Post.001"])
bpy.ops.mesh.primitive_cube_add(size=0.5, location=(1, 0, 0))
bpy.context.object.name = "Post"
bpy.ops.mesh.primitive_cube_add(size=0.5, location=(2, 0, 0))
bpy.context.object.name = "Post.002"
bpy.ops.mesh.primitive_cube_add(size=0.5, location=(3, 0, 0))
bpy.context.object.name = "Post.7"
bpy.ops.mesh.primitive_cube_add(size=0.5, location=(4, 0, 0))
bpy.context.object.name = "Cube"
