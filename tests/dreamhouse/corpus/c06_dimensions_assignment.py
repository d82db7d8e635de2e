# Members sized by assigning .dimensions instead of scale.
import bpy

bpy.ops.object.select_all(action="DESELECT")
bpy.data.objects["Cube"].select_set(True)
bpy.ops.object.delete()

sizes = {"Header_door": (1.0, 0.089, 0.235), "King_L": (0.038, 0.089, 2.438), "King_R": (0.038, 0.089, 2.438),
         "Trimmer_L": (0.038, 0.089, 2.032), "Trimmer_R": (0.038, 0.089, 2.032)}
xs = {"Header_door": 1.5, "King_L": 0.962, "King_R": 2.038, "Trimmer_L": 1.0, "Trimmer_R": 2.0}
for name, dims in sizes.items():
    bpy.ops.mesh.primitive_cube_add(location=(xs[name], 0.0, dims[2] / 2 + 0.338))
    o = bpy.context.object
    o.dimensions = dims
    o.name = name
