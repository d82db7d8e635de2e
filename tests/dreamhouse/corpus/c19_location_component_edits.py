# In-place edits of location/scale components and vector arithmetic.
import bpy
from mathutils import Vector

bpy.ops.mesh.primitive_cube_add(size=1)
o = bpy.context.object
o.name = "Trimmer_1"
o.location.x = 2.5
o.location.z += 1.016
o.scale.z = 2.032
o.scale[1] = 0.089
o.scale.x *= 0.038
o.location += Vector((0.0, 0.5, 0.0))
o.rotation_euler.z = 0.25
o.rotation_euler[0] = 0.0
