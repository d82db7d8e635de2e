# The released quickstart's stub: four sills relinked into a named collection.
import bpy

collection_name = "AF_01_0018"
if collection_name not in bpy.data.collections:
    col = bpy.data.collections.new(collection_name)
    bpy.context.scene.collection.children.link(col)
else:
    col = bpy.data.collections[collection_name]


def add_member(name, location, scale):
    bpy.ops.mesh.primitive_cube_add(size=1, location=location)
    obj = bpy.context.active_object
    obj.name = name
    obj.scale = scale
    bpy.ops.object.transform_apply(scale=True)
    for c in obj.users_collection:
        c.objects.unlink(obj)
    col.objects.link(obj)
    return obj


W, D = 6.0, 10.0
SILL = (0.038, 0.14)
add_member("Sill_01", (W / 2, 0, SILL[0] / 2), (W, SILL[1], SILL[0]))
add_member("Sill_02", (W / 2, D, SILL[0] / 2), (W, SILL[1], SILL[0]))
add_member("Sill_03", (0, D / 2, SILL[0] / 2), (SILL[1], D, SILL[0]))
add_member("Sill_04", (W, D / 2, SILL[0] / 2), (SILL[1], D, SILL[0]))
