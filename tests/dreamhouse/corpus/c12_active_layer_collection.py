# New primitives land in the active layer collection.
import bpy

col = bpy.data.collections.new("Frame")
bpy.context.scene.collection.children.link(col)
bpy.context.view_layer.active_layer_collection = bpy.context.view_layer.layer_collection.children["Frame"]
for i in range(3):
    bpy.ops.mesh.primitive_cube_add(size=1, location=(0, i * 0.6, 1.0))
    bpy.context.object.name = f"Post_{i}"
    bpy.context.object.scale = (0.089, 0.089, 2.0)
print([o.name for o in col.objects])
