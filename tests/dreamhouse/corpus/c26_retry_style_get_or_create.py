# Idempotent style: reuse an existing member by name, otherwise create it.
import bpy


def get_or_create(name, loc, scale):
    ob = bpy.data.objects.get(name)
    if ob is None:
        bpy.ops.mesh.primitive_cube_add(size=1, location=loc)
        ob = bpy.context.active_object
        ob.name = name
    ob.location = loc
    ob.scale = scale
    return ob

for i in range(4):
    get_or_create(f"Post_{i}", (i * 2.4, 0, 0.6), (0.089, 0.089, 1.2))
get_or_create("Post_1", (2.4, 0.5, 0.6), (0.14, 0.14, 1.2))
