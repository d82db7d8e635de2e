# Deleting a chosen subset via selection, then adding more.
import bpy

for i in range(6):
    bpy.ops.mesh.primitive_cube_add(size=0.3, location=(i, 0, 0))
    bpy.context.object.name = f"Stud_{i}"
bpy.ops.object.select_all(action='DESELECT')
for name in ("Stud_1", "Stud_3", "Cube"):
    bpy.data.objects[name].select_set(True)
bpy.ops.object.delete()
bpy.ops.object.select_all(action='SELECT')
bpy.ops.object.select_all(action='INVERT')
bpy.ops.mesh.primitive_cube_add(size=0.3, location=(9, 0, 0))
bpy.context.object.name = "Stud_1"
print(len(bpy.context.selected_objects), bpy.context.view_layer.objects.active.name)
