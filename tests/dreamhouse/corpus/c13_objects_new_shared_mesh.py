# One box mesh shared by many joists (objects.new + context.collection).
import bpy

mesh = bpy.data.meshes.new("JoistMesh")
mesh.from_pydata([(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)], [], [])
mesh.update()
for i in range(12):
    ob = bpy.data.objects.new(f"Joist_{i:03d}", mesh)
    ob.location = (0.3 + i * 0.4064, 3.0, 0.3 + 0.1175)
    ob.scale = (0.038, 6.0, 0.235)
    bpy.context.collection.objects.link(ob)
