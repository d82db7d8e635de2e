# Phase collections nested under a house collection; objects linked with objects.new.
import bpy

house = bpy.data.collections.new("House")
bpy.context.scene.collection.children.link(house)
phases = {}
for phase in ("Foundation", "Floor", "Walls"):
    c = bpy.data.collections.new(phase)
    house.children.link(c)
    phases[phase] = c

cube_mesh_src = bpy.data.objects["Cube"].data
for i, (phase, prefix) in enumerate((("Foundation", "Sill"), ("Floor", "Rim"), ("Walls", "SolePlate"))):
    me = cube_mesh_src.copy()
    ob = bpy.data.objects.new(f"{prefix}_{i:02d}", me)
    ob.location = (0, 0, 0.1 + i * 0.3)
    ob.scale = (3.0, 0.07, 0.019)
    phases[phase].objects.link(ob)
bpy.data.objects.remove(bpy.data.objects["Cube"], do_unlink=True)
