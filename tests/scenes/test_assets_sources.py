"""Real asset sources on tiny fixture assets written here: 3D-FUTURE (OBJ with texture, GLB),
Objaverse/objathor (GLB, THOR asset records), placement as the released SceneReVis code
places a mesh, the disk cache, and every bad input (one-line AssetError or a fallback)."""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trimesh
from PIL import Image

from buildbench.scenes.assets import AssetError, AssetLibrary, object_mesh, world_mesh
from buildbench.scenes.assets import formats as asset_formats
from buildbench.scenes.io import load_scene
from buildbench.scenes.model import SceneObject

JID = "0a1b2c3d-0000-4000-8000-00000000f00d"
UID = "5d7e9f1a2b3c4d5e6f708192a3b4c5d6"
#: An L-shaped solid in centimetres, off the origin: placement must move and scale it.
_L = trimesh.util.concatenate([trimesh.creation.box((40, 10, 60)), trimesh.creation.box((10, 50, 60))])
assert isinstance(_L, trimesh.Trimesh)
L_SHAPE: trimesh.Trimesh = _L
L_SHAPE.apply_translation((120.0, 30.0, -7.0))


def _obj_text(mesh: trimesh.Trimesh) -> str:
    lines = [f"v {x} {y} {z}" for x, y, z in mesh.vertices]
    lines += [f"vt {u} {v}" for u, v in (mesh.vertices[:, [0, 2]] % 1.0)]
    lines += [f"f {a + 1}/{a + 1} {b + 1}/{b + 1} {c + 1}/{c + 1}" for a, b, c in mesh.faces]
    return "# fixture\nmtllib model.mtl\n" + "\n".join(lines) + "\n"


def _png(color: tuple[int, int, int] = (200, 30, 40)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buf, format="PNG")
    return buf.getvalue()


def _glb(mesh: trimesh.Trimesh) -> bytes:
    return bytes(trimesh.Scene([mesh]).export(file_type="glb"))


def _room(asset_key: str, asset_id: str, size: list[float] | None = None) -> SceneObject:
    record = {"room_type": "bedroom", "bounds_bottom": [[-3, 0, -3], [3, 0, -3], [3, 0, 3], [-3, 0, 3]],
              "bounds_top": [[-3, 2.6, -3], [3, 2.6, -3], [3, 2.6, 3], [-3, 2.6, 3]],
              "objects": [{"desc": "grey fabric armchair", "size": size or [0.8, 0.9, 0.7],
                           "pos": [1.0, 0.0, -0.5], "rot": [0.0, 0.38268343, 0.0, 0.92387953], asset_key: asset_id}]}
    return load_scene(record).objects[0]


def _released_placement(raw_vertices: np.ndarray, obj: SceneObject) -> np.ndarray:
    """spec scenerevis.md §1.3, as the released code does it: scale per axis to ``size``,
    bounding box's bottom centre to the origin, then ``[R | pos]`` with pos the bottom centre."""
    rec = obj.raw
    lo, hi = raw_vertices.min(0), raw_vertices.max(0)
    scaled = raw_vertices * (np.asarray(rec["size"]) / (hi - lo))
    slo, shi = scaled.min(0), scaled.max(0)
    moved = scaled - np.array([(slo[0] + shi[0]) / 2, slo[1], (slo[2] + shi[2]) / 2])
    return moved @ obj.rotation.T + np.asarray(rec["pos"])


def _same_points(a: np.ndarray, b: np.ndarray) -> bool:
    ua, ub = np.unique(np.round(a, 9), axis=0), np.unique(np.round(b, 9), axis=0)
    return ua.shape == ub.shape and bool(np.allclose(ua, ub, atol=1e-8))


@pytest.fixture
def future(tmp_path: Path) -> Path:
    root = tmp_path / "3d-future"
    (root / JID).mkdir(parents=True)
    (root / JID / "raw_model.obj").write_text(_obj_text(L_SHAPE))
    (root / JID / "texture.png").write_bytes(_png())
    (root / JID / "model_info.json").write_text(json.dumps({"category": "armchair"}))
    return root


def _lib(tmp_path: Path, *, future: Path | None = None, objaverse: Path | None = None,
         strict: bool = True) -> AssetLibrary:
    return AssetLibrary(future, objaverse, tmp_path / "cache", strict)


def test_3dfuture_obj_with_texture_is_placed_as_the_released_code_places_it(tmp_path: Path, future: Path) -> None:
    obj = _room("jid", JID)
    lib = _lib(tmp_path, future=future)
    mesh = object_mesh(obj, "mesh", library=lib)
    assert mesh.source == f"3d-future:{JID}"
    assert mesh.texture is not None and mesh.texture.size == (8, 8)
    assert mesh.uv is not None and mesh.uv.shape == (len(mesh.vertices), 2)
    assert tuple(mesh.face_colors[0]) == (200, 30, 40, 255)  # the texture's colour
    assert np.allclose(mesh.vertices.min(0), -np.asarray(obj.size) / 2)
    assert np.allclose(mesh.vertices.max(0), np.asarray(obj.size) / 2)
    assert _same_points(world_mesh(obj, "mesh", library=lib).vertices, _released_placement(L_SHAPE.vertices, obj))
    assert mesh.to_trimesh().volume > 0  # outward winding kept


def test_3dfuture_glb_is_preferred_and_a_respace_scaled_jid_finds_its_folder(tmp_path: Path, future: Path) -> None:
    other = trimesh.creation.cylinder(radius=0.3, height=0.5, sections=10)
    (future / JID / "raw_model.glb").write_bytes(_glb(other))
    obj = _room("jid", f"{JID}-(0.81)-(1.0)-(0.72)")
    mesh = object_mesh(obj, "mesh", library=_lib(tmp_path, future=future))
    assert mesh.source == f"3d-future:{JID}" and len(mesh.faces) == len(other.faces)
    assert _same_points(mesh.placed(obj).vertices, _released_placement(other.vertices, obj))


@pytest.mark.parametrize("layout", ["uid/uid.glb", "uid.glb", "glbs/000-001/uid.glb"])
def test_objaverse_glb_by_uid(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "objaverse"
    path = root / layout.replace("uid", UID)
    path.parent.mkdir(parents=True)
    path.write_bytes(_glb(L_SHAPE))
    obj = _room("uid", UID)
    mesh = object_mesh(obj, "mesh", library=_lib(tmp_path, objaverse=root))
    assert mesh.source == f"objaverse:{UID}"
    assert _same_points(mesh.placed(obj).vertices, _released_placement(L_SHAPE.vertices, obj))


def _thor_record(mesh: trimesh.Trimesh) -> dict[str, Any]:
    return {"name": UID, "vertices": [{"x": x, "y": y, "z": z} for x, y, z in mesh.vertices],
            "triangles": [int(i) for i in mesh.faces.ravel()],
            "uvs": [{"x": float(x % 1), "y": float(z % 1)} for x, _, z in mesh.vertices],
            "albedoTexturePath": "albedo.jpg"}


@pytest.mark.parametrize("name", ["{uid}.pkl.gz", "{uid}.json.gz", "{uid}.json"])
def test_objathor_thor_asset_for_a_thor_asset_id(tmp_path: Path, name: str) -> None:
    root = tmp_path / "objathor"
    (root / UID).mkdir(parents=True)
    record = _thor_record(L_SHAPE)
    data = pickle.dumps(record) if name.startswith("{uid}.pkl") else json.dumps(record).encode()
    (root / UID / name.format(uid=UID)).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), (20, 160, 40)).save(buf, format="JPEG")
    (root / UID / "albedo.jpg").write_bytes(buf.getvalue())
    obj = SceneObject("Chair|2|1", "chair", UID, (0.0, 0.45, 0.0), (0.5, 0.9, 0.5), raw={"assetId": UID})
    mesh = object_mesh(obj, "mesh", library=_lib(tmp_path, objaverse=root))
    assert mesh.source == f"objaverse:{UID}" and mesh.texture is not None and len(mesh.faces) == len(L_SHAPE.faces)
    assert mesh.face_colors[0][1] > 120  # the albedo's green


def test_a_hostile_pickle_is_refused_without_running_it(tmp_path: Path) -> None:
    root = tmp_path / "objathor"
    (root / UID).mkdir(parents=True)
    marker = tmp_path / "ran"
    (root / UID / f"{UID}.pkl.gz").write_bytes(gzip.compress(pickle.dumps(_Boom(str(marker)))))
    obj = SceneObject("o", "chair", UID, (0, 0.45, 0), (0.5, 0.9, 0.5))
    with pytest.raises(AssetError, match=r"unreadable THOR asset \(refused to load"):
        object_mesh(obj, "mesh", library=_lib(tmp_path, objaverse=root))
    assert not marker.exists()


class _Boom:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def test_the_disk_cache_serves_a_second_library_without_parsing(tmp_path: Path, future: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    obj = _room("jid", JID)
    first = object_mesh(obj, "mesh", library=_lib(tmp_path, future=future))
    assert list((tmp_path / "cache").rglob("*.npz"))

    def no_parsing(*_: Any) -> None:
        raise AssertionError("parsed although cached")

    monkeypatch.setattr("buildbench.scenes.assets.library.parse_obj", no_parsing)
    second = object_mesh(obj, "mesh", library=_lib(tmp_path, future=future))
    assert second.vertices.tobytes() == first.vertices.tobytes() and second.texture is not None
    for entry in (tmp_path / "cache").rglob("*.npz"):
        entry.write_bytes(b"damaged")
    monkeypatch.undo()
    third = object_mesh(obj, "mesh", library=_lib(tmp_path, future=future))  # a damaged entry is rebuilt
    assert third.vertices.tobytes() == first.vertices.tobytes()


def _bad_asset(root: Path, case: str) -> None:
    folder = root / JID
    folder.mkdir(parents=True, exist_ok=True)
    if case == "unreadable obj":
        (folder / "raw_model.obj").write_text("v 1 2\nf 1 2 3\n")
    elif case == "unreadable glb":
        (folder / "raw_model.glb").write_bytes(b"not a glb at all, just text")
    elif case == "nan vertex":
        (folder / "raw_model.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 nan 1\nv 0 1 0\nf 1 2 3\nf 1 3 4\n")
    elif case == "zero extent":
        (folder / "raw_model.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 0 1\nv 1 0 1\nf 1 2 3\nf 2 4 3\n")
    elif case == "texture not an image":
        (folder / "raw_model.obj").write_text(_obj_text(L_SHAPE))
        (folder / "texture.png").write_bytes(b"\x89PNG but not really")
    elif case == "too many faces (glb header)":
        chunk = json.dumps({"asset": {"version": "2.0"}, "accessors": [{"count": 3 * 10**7 + 3}],
                            "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 0}]}]}).encode()
        chunk += b" " * (-len(chunk) % 4)
        (folder / "raw_model.glb").write_bytes(b"glTF" + struct.pack("<III", 2, 20 + len(chunk), len(chunk))
                                               + b"JSON" + chunk)
    elif case == "index out of range":
        (folder / "raw_model.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 1\nf 1 2 9\n")


BAD = {
    "unknown jid": "no asset '0a1b2c3d-0000-4000-8000-00000000f00d' in",
    "unreadable obj": "unreadable OBJ",
    "unreadable glb": "not a binary glTF file",
    "nan vertex": "non-finite",
    "zero extent": "zero extent along y",
    "texture not an image": "texture is not an image",
    "too many faces (glb header)": "10000001 faces is over the 10000000-face limit",
    "index out of range": "index 9 out of range",
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_assets_are_one_line_errors_when_strict_and_named_fallbacks_otherwise(tmp_path: Path, case: str) -> None:
    root = tmp_path / "3d-future"
    root.mkdir()
    if case != "unknown jid":
        _bad_asset(root, case)
    obj = _room("jid", JID)
    with pytest.raises(AssetError, match=BAD[case]) as err:
        object_mesh(obj, "mesh", library=_lib(tmp_path, future=root))
    assert "\n" not in str(err.value)
    mesh = object_mesh(obj, "mesh", library=_lib(tmp_path, future=root, strict=False))
    assert mesh.source.startswith(f"procedural:{obj.category} (fallback: ") and BAD[case] in mesh.source
    assert len(mesh.faces) > 12  # the procedural shape, never a silent box


def test_too_many_obj_faces_are_refused_before_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(asset_formats, "MAX_FACES", 10)
    root = tmp_path / "3d-future"
    (root / JID).mkdir(parents=True)
    (root / JID / "raw_model.obj").write_text(_obj_text(L_SHAPE))  # 24 triangles
    with pytest.raises(AssetError, match="about 24 faces is over the 10-face limit"):
        object_mesh(_room("jid", JID), "mesh", library=_lib(tmp_path, future=root))


@pytest.mark.parametrize("link", ["folder", "file"])
def test_links_out_of_the_asset_folder_are_refused(tmp_path: Path, link: str) -> None:
    outside = tmp_path / "outside" / JID
    outside.mkdir(parents=True)
    (outside / "raw_model.obj").write_text(_obj_text(L_SHAPE))
    root = tmp_path / "3d-future"
    root.mkdir()
    if link == "folder":
        os.symlink(outside, root / JID)
    else:
        (root / JID).mkdir()
        os.symlink(outside / "raw_model.obj", root / JID / "raw_model.obj")
    obj = _room("jid", JID)
    with pytest.raises(AssetError, match="is a symbolic link"):
        object_mesh(obj, "mesh", library=_lib(tmp_path, future=root))
    assert "symbolic link" in object_mesh(obj, "mesh", library=_lib(tmp_path, future=root, strict=False)).source


@pytest.mark.parametrize("bad_id", ["../escape", "a/b", "..", "x" * 200])
def test_ids_that_are_not_plain_names_are_refused(tmp_path: Path, future: Path, bad_id: str) -> None:
    obj = SceneObject("o", "chair", bad_id, (0, 0.45, 0), (0.5, 0.9, 0.5), raw={"jid": bad_id})
    with pytest.raises(AssetError, match="not a valid asset id"):
        object_mesh(obj, "mesh", library=_lib(tmp_path, future=future))


def test_an_object_without_asset_id_falls_back_with_the_reason(tmp_path: Path, future: Path) -> None:
    obj = SceneObject("door-1", "door", "", (0, 1, 0), (0.9, 2.0, 0.1))
    mesh = object_mesh(obj, "mesh", library=_lib(tmp_path, future=future, strict=False))
    assert mesh.source == "procedural:door (fallback: object 'door-1': no asset id (jid, uid or assetId))"
