# A floor system from small helper functions: rims, joists at 16" o.c., a centre beam.
import bpy

IN = 0.0254
def box(name, center, size):
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=center)
    ob = bpy.context.active_object
    ob.name = name
    ob.scale = size
    return ob

def rim_joists(w, d, z):
    box("Rim_front", (w / 2, 0.019, z), (w, 0.038, 0.235))
    box("Rim_back", (w / 2, d - 0.019, z), (w, 0.038, 0.235))

def joists(w, d, z, oc=16 * IN):
    x, i = 0.019, 0
    while x < w:
        box(f"Joist_{i:03d}", (x, d / 2, z), (0.038, d - 0.076, 0.235))
        x += oc
        i += 1
    return i

rim_joists(7.3, 9.8, 0.1555)
n = joists(7.3, 9.8, 0.1555)
box("CenterBeam_main", (7.3 / 2, 9.8 / 2, 0.1555 - 0.25), (7.3, 0.114, 0.286))
print("joists", n)
