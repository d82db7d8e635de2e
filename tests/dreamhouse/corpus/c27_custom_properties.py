# Members tagged with custom properties for phase bookkeeping.
import bpy

for i, phase in enumerate(["foundation", "floor", "walls", "roof"]):
    bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, i))
    ob = bpy.context.object
    ob.name = ["Sill", "Rim", "Stud", "Rafter"][i] + "_tagged"
    ob["phase"] = phase
    ob["order"] = i
    if ob.get("phase") == "walls":
        ob.scale = (0.038, 0.089, 2.438)
