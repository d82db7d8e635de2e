# Full transform_apply: the mesh carries everything, origin at the world origin.

import bpy

for i in range(3):
    bpy.ops.mesh.primitive_cube_add(size=1, location=(1 + i, 2, 3), rotation=(0.1 * i, 0.2, 0.3))
    o = bpy.context.active_object
    o.scale = (2, 0.1, 0.2)
    o.name = "Collar_%d" % i  # noqa: UP031 - written the way models write it
    bpy.ops.object.transform_apply(location=True, rotation=True, scale=True)
