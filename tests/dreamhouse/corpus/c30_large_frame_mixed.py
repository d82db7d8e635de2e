# A small two-wall frame using most idioms at once (about 80 members).
import math

import bpy
from mathutils import Vector

bpy.ops.object.select_all(action='SELECT')
bpy.ops.object.delete()
col = bpy.data.collections.new("TASK_01")
bpy.context.scene.collection.children.link(col)

def add(name, loc, dims, rot=(0, 0, 0)):
    bpy.ops.mesh.primitive_cube_add(size=1, location=loc, rotation=rot)
    ob = bpy.context.active_object
    ob.name = name
    ob.scale = dims
    bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
    for c in list(ob.users_collection):
        c.objects.unlink(ob)
    col.objects.link(ob)
    return ob

W, D, H = 6.1, 4.9, 2.438
for wall, (p0, p1) in {"front": ((0, 0), (W, 0)), "left": ((0, 0), (0, D))}.items():
    a, b = Vector((*p0, 0.3)), Vector((*p1, 0.3))
    d = b - a
    yaw = math.atan2(d.y, d.x)
    add(f"SolePlate_{wall}", (a + b) / 2 + Vector((0, 0, 0.019)), (d.length, 0.089, 0.038), (0, 0, yaw))
    n = int(d.length / 0.4064)
    for i in range(n + 1):
        t = min(i * 0.4064, d.length) / d.length
        p = a.lerp(b, t)
        add(f"Stud_{wall}_{i:02d}", p + Vector((0, 0, 0.038 + H / 2)), (0.038, 0.089, H), (0, 0, yaw))
    for k in range(2):
        add(f"TopPlate_{wall}_{k}", (a + b) / 2 + Vector((0, 0, 0.038 + H + 0.019 + 0.038 * k)), (d.length, 0.089, 0.038), (0, 0, yaw))
pitch = math.radians(26.57)
for i in range(8):
    y = 0.3 + i * 0.6096
    add(f"Rafter_{i:02d}", (W / 4, y, 3.5), (W / 2 / math.cos(pitch), 0.038, 0.184), (0, -pitch, 0))
