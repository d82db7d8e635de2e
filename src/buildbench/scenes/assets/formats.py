"""Parsing asset files into plain arrays: Wavefront OBJ, binary glTF (GLB) and objathor's
THOR asset records (JSON, gzipped JSON or gzipped pickle of plain data).

Every parser checks the triangle count from the file before building arrays, and the
result before returning it (finite vertices, some extent, indices in range), so a bad
file gives one :class:`AssetError` line, never a crash.
"""

from __future__ import annotations

import gzip
import io
import json
import pickle
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from buildbench.scenes.assets.files import MAX_FACES, MAX_TEXTURE_PIXELS
from buildbench.scenes.assets.mesh import AssetError, ColorArray, FloatArray, IntArray


@dataclass(frozen=True)
class RawMesh:
    """An asset as its file holds it (file frame and units; not yet fitted to a box)."""

    vertices: FloatArray
    faces: IntArray
    uv: FloatArray | None = None
    texture_png: bytes | None = None  # the texture image, encoded
    face_colors: ColorArray | None = None


def parse_obj(data: bytes, name: str) -> RawMesh:
    """An OBJ's vertices, triangles (polygons fanned) and texture coordinates; materials and
    other files it names are ignored (the caller attaches the texture it trusts)."""
    rough = data.count(b"\nf ") + int(data.startswith(b"f "))
    if rough > MAX_FACES:
        raise AssetError(f"{name}: about {rough} faces is over the {MAX_FACES}-face limit")
    positions: list[tuple[float, float, float]] = []
    uvs: list[tuple[float, float]] = []
    corners: dict[tuple[int, int], int] = {}
    faces: list[tuple[int, int, int]] = []
    try:
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            head, _, rest = line.strip().partition(" ")
            if head == "v":
                x, y, z = rest.split()[:3]
                positions.append((float(x), float(y), float(z)))
            elif head == "vt":
                u, v = rest.split()[:2]
                uvs.append((float(u), float(v)))
            elif head == "f":
                ids = [_obj_corner(tok, len(positions), len(uvs), corners) for tok in rest.split()]
                if len(ids) < 3:
                    raise ValueError(f"line {number}: a face needs 3 corners")
                faces.extend((ids[0], ids[k], ids[k + 1]) for k in range(1, len(ids) - 1))
                if len(faces) > MAX_FACES:
                    raise AssetError(f"{name}: over the {MAX_FACES}-face limit")
    except (ValueError, IndexError) as exc:
        raise AssetError(f"{name}: unreadable OBJ ({exc})") from None
    order = sorted(corners.items(), key=lambda kv: kv[1])
    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    vertices = pos[[vi for (vi, _), _ in order]] if order else np.zeros((0, 3))
    uv = None
    if uvs and all(ti >= 0 for (_, ti), _ in order):
        uv = np.asarray(uvs, dtype=np.float64)[[ti for (_, ti), _ in order]]
    return checked(RawMesh(vertices, np.asarray(faces, dtype=np.int64).reshape(-1, 3), uv), name)


def _obj_corner(token: str, n_pos: int, n_uv: int, corners: dict[tuple[int, int], int]) -> int:
    fields = token.split("/")
    vi = _obj_index(fields[0], n_pos)
    ti = _obj_index(fields[1], n_uv) if len(fields) > 1 and fields[1] else -1
    key = (vi, ti)
    if key not in corners:
        corners[key] = len(corners)
    return corners[key]


def _obj_index(text: str, count: int) -> int:
    k = int(text)
    index = k - 1 if k > 0 else count + k  # OBJ counts from 1; negatives count back
    if not 0 <= index < count:
        raise ValueError(f"index {k} out of range (1..{count})")
    return index


def glb_face_count(data: bytes, name: str) -> int:
    """Triangles a GLB declares, read from its JSON chunk (before any geometry is loaded)."""
    if len(data) < 20 or data[:4] != b"glTF":
        raise AssetError(f"{name}: not a binary glTF file (no 'glTF' header)")
    version, _total, chunk_len, chunk_type = struct.unpack_from("<IIII", data, 4)
    if version != 2 or chunk_type != 0x4E4F534A or 20 + chunk_len > len(data):
        raise AssetError(f"{name}: unreadable GLB header (version {version})")
    try:
        gltf = json.loads(data[20:20 + chunk_len])
        accessors = gltf.get("accessors", [])
        total = 0
        for mesh in gltf.get("meshes", []):
            for prim in mesh.get("primitives", []):
                if prim.get("mode", 4) != 4:
                    continue
                index = prim.get("indices", prim.get("attributes", {}).get("POSITION"))
                total += int(accessors[index]["count"]) // 3 if index is not None else 0
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise AssetError(f"{name}: unreadable GLB JSON chunk ({exc})") from None
    return total


def parse_glb(data: bytes, name: str) -> RawMesh:
    """A GLB's triangles with the scene graph's transforms applied, and its texture (when the
    whole asset uses one image) or its material colours."""
    import trimesh
    from trimesh.visual import TextureVisuals

    faces_declared = glb_face_count(data, name)
    if faces_declared > MAX_FACES:
        raise AssetError(f"{name}: {faces_declared} faces is over the {MAX_FACES}-face limit")
    try:
        scene = trimesh.load_scene(io.BytesIO(data), file_type="glb")
        geoms = [g for g in scene.geometry.values() if isinstance(g, trimesh.Trimesh)]
        if not geoms:
            raise AssetError(f"{name}: GLB holds no triangle mesh")
        mesh = scene.to_mesh()
    except AssetError:
        raise
    except Exception as exc:  # noqa: BLE001 - trimesh raises many types for broken files
        raise AssetError(f"{name}: unreadable GLB ({type(exc).__name__}: {exc})") from None
    uv = texture = None
    colors: ColorArray | None = None
    visual = mesh.visual
    image = _visual_image(visual) if isinstance(visual, TextureVisuals) else None
    if image is not None and visual.uv is not None and len(visual.uv) == len(mesh.vertices):
        uv = np.asarray(visual.uv, dtype=np.float64)
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        texture = buf.getvalue()
    try:
        colors = np.asarray(visual.to_color().face_colors if isinstance(visual, TextureVisuals)
                            else visual.face_colors, dtype=np.uint8)
    except Exception:  # noqa: BLE001 - a visual trimesh cannot colour: leave colours to the caller
        colors = None
    raw = RawMesh(np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64),
                  uv, texture, colors if colors is not None and len(colors) == len(mesh.faces) else None)
    return checked(raw, name)


def _visual_image(visual: Any) -> Any:
    material = getattr(visual, "material", None)
    for attr in ("baseColorTexture", "image"):
        image = getattr(material, attr, None)
        if image is not None:
            return image
    return None


#: What a pickle of plain data may name besides builtins: numpy's array and scalar rebuilders
#: (their elements go through the same restricted loader).
_PICKLE_ALLOWED = frozenset({
    ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"), ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"), ("numpy", "ndarray"),
})


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles plain data only (dicts, lists, numbers, strings, numpy arrays): no other
    class or function is ever loaded, so a hostile pickle cannot run code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _PICKLE_ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused to load {module}.{name} (plain data only)")


def parse_thor_asset(data: bytes, name: str) -> RawMesh:
    """objathor's THOR asset record (``vertices`` of ``{x, y, z}``, flat ``triangles``, ``uvs``)
    from JSON, gzipped JSON or gzipped pickle."""
    try:
        raw = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        record = (_PlainUnpickler(io.BytesIO(raw)).load() if name.endswith((".pkl.gz", ".pkl"))
                  else json.loads(raw))
    except (OSError, EOFError, ValueError, pickle.UnpicklingError) as exc:
        raise AssetError(f"{name}: unreadable THOR asset ({exc})") from None
    try:
        tris = record["triangles"]
        if len(tris) // 3 > MAX_FACES:
            raise AssetError(f"{name}: {len(tris) // 3} faces is over the {MAX_FACES}-face limit")
        vertices = np.array([[v["x"], v["y"], v["z"]] for v in record["vertices"]], dtype=np.float64)
        faces = np.asarray(tris, dtype=np.int64).reshape(-1, 3)
        uvs = record.get("uvs")
        uv = np.array([[t["x"], t["y"]] for t in uvs], dtype=np.float64) if uvs else None
    except (KeyError, TypeError, ValueError) as exc:
        raise AssetError(f"{name}: THOR asset lacks vertices/triangles ({exc})") from None
    if uv is not None and len(uv) != len(vertices):
        uv = None
    return checked(RawMesh(vertices, faces, uv), name)


def checked(raw: RawMesh, name: str) -> RawMesh:
    """``raw`` when it is a usable mesh; AssetError naming the fault otherwise."""
    v, f = raw.vertices, raw.faces
    if len(f) == 0 or len(v) == 0:
        raise AssetError(f"{name}: mesh has no triangles")
    if len(f) > MAX_FACES:
        raise AssetError(f"{name}: {len(f)} faces is over the {MAX_FACES}-face limit")
    if not np.isfinite(v).all():
        raise AssetError(f"{name}: mesh has non-finite (NaN or infinite) vertices")
    if f.min() < 0 or f.max() >= len(v):
        raise AssetError(f"{name}: face indices out of range (0..{len(v) - 1})")
    extent = v.max(axis=0) - v.min(axis=0)
    if np.any(extent <= 1e-9):
        raise AssetError(f"{name}: mesh has zero extent along {'xyz'[int(np.argmin(extent))]}")
    if raw.uv is not None and not np.isfinite(raw.uv).all():
        raise AssetError(f"{name}: texture coordinates are not finite")
    return raw


def load_texture(data: bytes, name: str) -> bytes:
    """``data`` re-encoded as PNG when it is a decodable image of sane size."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as probe:
            w, h = probe.size
            if w * h > MAX_TEXTURE_PIXELS:
                raise AssetError(f"{name}: {w}x{h} texture is over the {MAX_TEXTURE_PIXELS}-pixel limit")
            image = probe.convert("RGBA")
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        return buf.getvalue()
    except AssetError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise AssetError(f"{name}: texture is not an image ({type(exc).__name__})") from None
