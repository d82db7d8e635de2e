# Members split over collections; the exporter falls back to the collection with most meshes.
import bpy

a = bpy.data.collections.new("Roof")
b = bpy.data.collections.new("Walls")
for c in (a, b):
    bpy.context.scene.collection.children.link(c)
for i in range(3):
    ob = bpy.data.objects.new(f"Rafter_{i}", bpy.data.meshes.new("m"))
    a.objects.link(ob)
for i in range(5):
    bpy.ops.mesh.primitive_cube_add(size=1, location=(i, 0, 0))
    ob = bpy.context.object
    ob.name = f"Stud_{i}"
    for c in ob.users_collection:
        c.objects.unlink(ob)
    b.objects.link(ob)
