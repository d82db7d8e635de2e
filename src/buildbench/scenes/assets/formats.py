"""Parsing asset files into plain arrays: Wavefront OBJ, binary glTF (GLB) and objathor's
THOR asset records (JSON, gzipped JSON or gzipped pickle of plain data).

Every parser checks the triangle count from the file before building arrays, and the
result before returning it (finite vertices, some extent, indices in range), so a bad
file gives one :class:`AssetError` line, never a crash.
"""

from __future__ import annotations

import gzip
import io
import pickle
import re
import struct
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from buildbench.jsonio import parse_json
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


_CORNER = re.compile(rb"(-?\d+)(?:/(-?\d*))?(?:/(-?\d*))?")
_V = re.compile(rb"^[ \t]*v[ \t]+([^\r\n]*)", re.M)
_VT = re.compile(rb"^[ \t]*vt[ \t]+([^\r\n]*)", re.M)
_F = re.compile(rb"^[ \t]*f[ \t]+([^\r\n]*)", re.M)
_DEFINING = re.compile(rb"^[ \t]*(v|vt|f)[ \t]", re.M)


def _defined_before(data: bytes, n_faces: int) -> list[tuple[int, int]]:
    """Vertices and texture coordinates defined before each face line (for OBJ's negative,
    relative indices)."""
    out: list[tuple[int, int]] = []
    n_v = n_vt = 0
    for match in _DEFINING.finditer(data):
        kind = match.group(1)
        if kind == b"v":
            n_v += 1
        elif kind == b"vt":
            n_vt += 1
        else:
            out.append((n_v, n_vt))
    return out[:n_faces]


def parse_obj(data: bytes, name: str) -> RawMesh:
    """An OBJ's vertices, triangles (polygons fanned) and texture coordinates; materials and
    other files it names are ignored (the caller attaches the texture it trusts). Corners
    with the same position and texture index become one vertex."""
    rough = data.count(b"\nf ") + int(data.startswith(b"f "))
    if rough > MAX_FACES:
        raise AssetError(f"{name}: about {rough} faces is over the {MAX_FACES}-face limit")
    bodies = _F.findall(data)
    counts = np.array([len(body.split()) for body in bodies], dtype=np.int64)
    if len(counts) and counts.min() < 3:
        raise AssetError(f"{name}: unreadable OBJ (a face with fewer than 3 corners)")
    if counts.sum() > 3 * MAX_FACES:
        raise AssetError(f"{name}: over the {MAX_FACES}-face limit")
    try:
        pos = _numbers(_V.findall(data), 3, "vertex")
        uv_all = _numbers(_VT.findall(data), 2, "texture coordinate")
        fields = _corners(b" ".join(bodies), int(counts.sum()))
        face_of_corner = np.repeat(np.arange(len(counts)), counts)
        if (fields[:, :2] < 0).any():  # relative indices count back from the last line defined
            before = np.asarray(_defined_before(data, len(bodies)), dtype=np.int64).reshape(-1, 2)[face_of_corner]
        else:
            before = np.zeros((len(fields), 2), dtype=np.int64)
        vi = _obj_indices(fields[:, 0], before[:, 0], len(pos), "vertex")
        has_uv = len(uv_all) > 0 and bool((fields[:, 1] != 0).all())
        ti = _obj_indices(fields[:, 1], before[:, 1], len(uv_all), "texture") if has_uv else None
    except ValueError as exc:
        raise AssetError(f"{name}: unreadable OBJ ({exc})") from None
    stride = len(uv_all) + 1
    unique_key, corner_vertex = np.unique(vi * stride + (ti if ti is not None else 0), return_inverse=True)
    corner_vertex = corner_vertex.reshape(-1)
    # fan each polygon from its first corner: (0, k, k + 1) for k = 1 … n - 2
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    fans = counts - 2
    first = np.repeat(starts, fans)
    k = np.arange(int(fans.sum())) - np.repeat(np.cumsum(fans) - fans, fans) + 1
    faces = corner_vertex[np.column_stack([first, first + k, first + k + 1])]
    uv = uv_all[unique_key % stride] if ti is not None else None
    return checked(RawMesh(pos[unique_key // stride], faces.astype(np.int64).reshape(-1, 3), uv), name)


def _numbers(lines: list[bytes], width: int, what: str) -> NDArray[np.float64]:
    """The first ``width`` numbers of each line as an ``(n, width)`` array."""
    if not lines:
        return np.zeros((0, width))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns when text stops parsing; the count tells
        flat = np.fromstring(b"\n".join(lines), sep=" ")  # noqa: NPY201 - the text form, not deprecated
    if flat.size == width * len(lines):
        return flat.reshape(-1, width)
    rows = [line.split()[:width] for line in lines]  # extra numbers (w, colours) or bad text
    if any(len(r) < width for r in rows):
        raise ValueError(f"a {what} line with fewer than {width} numbers")
    return np.array(rows, dtype=np.bytes_).astype(np.float64)


def _corners(text: bytes, n: int) -> NDArray[np.int64]:
    """``(n, 2)`` position and texture indices (0: none) of every face corner in ``text``
    (``v``, ``v/vt``, ``v//vn`` or ``v/vt/vn`` tokens)."""
    slashes = text.count(b"/")
    doubles = text.count(b"//")
    if doubles == 0 and slashes % max(n, 1) == 0:  # one layout throughout: parse in one go
        k = slashes // max(n, 1) + 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            flat = np.fromstring(text.replace(b"/", b" "), sep=" ")  # noqa: NPY201
        if flat.size == n * k and np.array_equal(flat, np.round(flat)):
            cols = flat.reshape(n, k).astype(np.int64)
            return np.column_stack([cols[:, 0], cols[:, 1] if k > 1 else np.zeros(n, np.int64)])
    corners = _CORNER.findall(text)
    if len(corners) != n:
        raise ValueError("a face corner is not 'v', 'v/vt', 'v//vn' or 'v/vt/vn'")
    return np.array([(int(v), int(t) if t else 0) for v, t, _ in corners], dtype=np.int64).reshape(-1, 2)


def _obj_indices(raw: NDArray[np.int64], before: NDArray[np.int64], count: int, what: str) -> NDArray[np.int64]:
    """0-based indices from OBJ's 1-based (negative: counted back from the last defined)."""
    index = np.where(raw > 0, raw - 1, before + raw)
    bad = (raw == 0) | (index < 0) | (index >= count)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{what} index {int(raw[k])} out of range (1..{count})")
    return index


def glb_face_count(data: bytes, name: str) -> int:
    """Triangles a GLB declares, read from its JSON chunk (before any geometry is loaded)."""
    if len(data) < 20 or data[:4] != b"glTF":
        raise AssetError(f"{name}: not a binary glTF file (no 'glTF' header)")
    version, _total, chunk_len, chunk_type = struct.unpack_from("<IIII", data, 4)
    if version != 2 or chunk_type != 0x4E4F534A or 20 + chunk_len > len(data):
        raise AssetError(f"{name}: unreadable GLB header (version {version})")
    try:
        gltf = parse_json(data[20:20 + chunk_len])
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
                  else parse_json(raw))
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
