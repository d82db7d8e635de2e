# Placing members by assigning matrix_world built from rows.
import bpy
from mathutils import Matrix


def beam(name, length, depth, width, mat_rows):
    bpy.ops.mesh.primitive_cube_add(size=1)
    obj = bpy.context.active_object
    obj.name = name
    obj.scale = (length, width, depth)
    bpy.ops.object.transform_apply(scale=True)
    obj.matrix_world = Matrix(mat_rows)
    return obj

beam("CenterBeam_1", 6.0, 0.286, 0.114, [[1, 0, 0, 3.0], [0, 1, 0, 4.5], [0, 0, 1, 0.2], [0, 0, 0, 1]])
beam("CenterBeam_2", 4.0, 0.286, 0.114, [[0, -1, 0, 6.0], [1, 0, 0, 2.0], [0, 0, 1, 0.2], [0, 0, 0, 1]])
