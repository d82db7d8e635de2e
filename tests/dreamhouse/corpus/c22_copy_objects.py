# Duplicating a template member with obj.copy() and data.copy().
import bpy

bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, 1.3))
tpl = bpy.context.object
tpl.name = "GableStud"
tpl.scale = (0.038, 0.089, 1.0)
bpy.ops.object.transform_apply(scale=True)
for i in range(1, 6):
    dup = tpl.copy()
    dup.data = tpl.data.copy()
    dup.location.x = i * 0.4064
    dup.scale.z = 1.0 + 0.2 * i
    bpy.context.collection.objects.link(dup)
