# Build several members, select them all, make one active, apply scale to all at once.
import bpy

bpy.ops.object.select_all(action='DESELECT')
made = []
for i in range(4):
    bpy.ops.mesh.primitive_cube_add(size=1, location=(i * 0.6, 0, 0.5))
    ob = bpy.context.active_object
    ob.name = f"Post_{i}"
    ob.scale = (0.089, 0.089, 1.0 + i * 0.1)
    made.append(ob)
bpy.ops.object.select_all(action='DESELECT')
for ob in made:
    ob.select_set(True)
bpy.context.view_layer.objects.active = made[0]
bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
print(bpy.context.active_object.name, len(bpy.context.selected_objects))
