# A stud wall at 406 mm on centre between a sole plate and a double top plate.
import bpy

if "Cube" in bpy.data.objects:
    bpy.data.objects.remove(bpy.data.objects["Cube"], do_unlink=True)

WALL_LEN = 4.8
SPACING = 0.4064
STUD_H = 2.438
Z0 = 0.3

bpy.ops.mesh.primitive_cube_add(size=1, location=(WALL_LEN / 2, 0, Z0 + 0.019))
plate = bpy.context.active_object
plate.name = "SolePlate_front"
plate.scale = (WALL_LEN, 0.089, 0.038)

n = int(WALL_LEN / SPACING) + 1
for i in range(n):
    x = min(i * SPACING, WALL_LEN - 0.019)
    bpy.ops.mesh.primitive_cube_add(size=1, location=(x, 0, Z0 + 0.038 + STUD_H / 2))
    stud = bpy.context.active_object
    stud.name = f"Stud_front_{i:03d}"
    stud.scale = (0.038, 0.089, STUD_H)

for k in range(2):
    z = Z0 + 0.038 + STUD_H + 0.019 + k * 0.038
    bpy.ops.mesh.primitive_cube_add(size=1, location=(WALL_LEN / 2, 0, z))
    top = bpy.context.active_object
    top.name = f"TopPlate_front_{k + 1}"
    top.scale = (WALL_LEN, 0.089, 0.038)
