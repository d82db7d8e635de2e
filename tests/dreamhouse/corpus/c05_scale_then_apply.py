# Scale then apply scale only, keeping the rotation on the object.
import math

import bpy

for i in range(5):
    bpy.ops.mesh.primitive_cube_add(size=2, location=(i, 1.5, 2.0), rotation=(0, 0, math.radians(15 * i)))
    obj = bpy.context.active_object
    obj.name = "Joist_%02d" % i  # noqa: UP031 - written the way models write it
    obj.scale = (1.8, 0.019, 0.1175)
    bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
