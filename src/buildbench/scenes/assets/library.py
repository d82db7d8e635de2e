"""Real asset meshes: where they are found, how they are placed, and the on-disk cache.

Sources (either or both):

* **3D-FUTURE** (``BUILDBENCH_3DFUTURE_DIR``): ``<jid>/raw_model.glb`` (the converted layout
  the released SceneReVis evaluation reads; preferred) or the dataset's own
  ``<jid>/raw_model.obj`` with ``<jid>/texture.png``.
* **Objaverse / objathor** (``BUILDBENCH_OBJAVERSE_DIR``), by uid (SceneReVis ``uid``, THOR
  ``assetId``): objathor's ``<uid>/<uid>.pkl.gz`` (also ``.json.gz``/``.json``) with
  ``<uid>/albedo.jpg``, or a GLB as ``<uid>/<uid>.glb``, ``<uid>.glb`` or Objaverse's
  ``glbs/<shard>/<uid>.glb``.

Placement is the released code's: scale the mesh per axis to the object's ``size``, move its
bounding box's bottom centre to the origin, then apply ``[R | pos]`` with ``pos`` the bottom
centre — in our centre-based local frame, the bounding box's centre goes to the origin.

Parsed meshes are cached as ``.npz`` under the cache folder, keyed by a hash of the files'
bytes, so a second run skips parsing.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from buildbench.scenes.assets.colors import palette
from buildbench.scenes.assets.files import check_id, read_bytes, safe_file
from buildbench.scenes.assets.formats import RawMesh, load_texture, parse_glb, parse_obj, parse_thor_asset
from buildbench.scenes.assets.mesh import AssetError, ObjectMesh
from buildbench.scenes.model import SceneObject

FUTURE_ENV = "BUILDBENCH_3DFUTURE_DIR"
OBJAVERSE_ENV = "BUILDBENCH_OBJAVERSE_DIR"
CACHE_ENV = "BUILDBENCH_ASSET_CACHE"
#: Bump when parsing changes, so stale cache entries are not reused.
_CACHE_VERSION = b"buildbench-assets/1"
_OBJATHOR_FILES = ("{uid}.pkl.gz", "{uid}.json.gz", "{uid}.json")
#: ReSpace names a rescaled 3D-FUTURE model ``<jid>-(sx)-(sy)-(sz)``; its folder is ``<jid>``.
_SCALE_SUFFIX = re.compile(r"(?:-\([0-9.eE+-]+\)){3}$")


@dataclass(frozen=True)
class _Found:
    source: str  # "3d-future" or "objaverse"
    asset_id: str
    mesh: Path
    texture: Path | None


@dataclass(frozen=True, eq=False)
class AssetLibrary:
    """The configured asset folders and cache.

    Attributes:
        future_dir: 3D-FUTURE folder (``<jid>/…``), or None.
        objaverse_dir: Objaverse/objathor folder (by uid), or None.
        cache_dir: Where parsed meshes are kept between runs (None: only in memory).
        strict: A missing or bad asset raises :class:`AssetError`; otherwise the object gets
            its procedural mesh, with ``(fallback: <reason>)`` in ``ObjectMesh.source``.
    """

    future_dir: Path | None = None
    objaverse_dir: Path | None = None
    cache_dir: Path | None = None
    strict: bool = False
    _memo: OrderedDict[tuple[str, int, int], RawMesh] = field(default_factory=OrderedDict, repr=False)

    @classmethod
    def from_env(cls, *, cache_dir: str | Path | None = None, strict: bool = False,
                 environ: Mapping[str, str] | None = None) -> AssetLibrary:
        """The folders ``BUILDBENCH_3DFUTURE_DIR`` and ``BUILDBENCH_OBJAVERSE_DIR`` name;
        the cache in ``cache_dir``, else ``BUILDBENCH_ASSET_CACHE``, else
        ``$XDG_CACHE_HOME/buildbench/assets`` (``~/.cache/…``). AssetError when a variable
        names something that is not a folder."""
        env = os.environ if environ is None else environ
        dirs = []
        for var in (FUTURE_ENV, OBJAVERSE_ENV):
            value = env.get(var, "").strip()
            if value and not Path(value).is_dir():
                raise AssetError(f"{var}={value}: not a directory")
            dirs.append(Path(value) if value else None)
        if cache_dir is None:
            cache = env.get(CACHE_ENV, "").strip()
            xdg = env.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
            cache_dir = cache or Path(xdg) / "buildbench" / "assets"
        return cls(dirs[0], dirs[1], Path(cache_dir), strict)

    @property
    def configured(self) -> bool:
        return self.future_dir is not None or self.objaverse_dir is not None

    def mesh_for(self, obj: SceneObject) -> ObjectMesh:
        """The real asset of ``obj`` placed in its local frame (see the module docstring)."""
        if not self.configured:
            raise AssetError(f"geometry=mesh needs {FUTURE_ENV} or {OBJAVERSE_ENV} (an asset folder); "
                             "use geometry=procedural without one")
        try:
            found = self.locate(obj)
            return _placed(self._load(found), obj, f"{found.source}:{found.asset_id}")
        except AssetError as exc:
            if self.strict:
                raise
            from buildbench.scenes.assets.procedural import procedural_mesh

            mesh = procedural_mesh(obj)
            return ObjectMesh(mesh.vertices, mesh.faces, mesh.face_colors,
                              source=f"{mesh.source} (fallback: {exc})")

    def locate(self, obj: SceneObject) -> _Found:
        """The files of ``obj``'s asset; AssetError naming the ids tried when none exists."""
        ids = _asset_ids(obj)
        if not ids:
            raise AssetError(f"object {obj.id!r}: no asset id (jid, uid or assetId)")
        for asset_id in ids:
            check_id(asset_id, f"object {obj.id!r} asset")
            if self.future_dir is not None:
                found = self._in_future(self.future_dir, asset_id)
                if found is not None:
                    return found
            if self.objaverse_dir is not None:
                found = self._in_objaverse(self.objaverse_dir, asset_id)
                if found is not None:
                    return found
        where = ", ".join(str(d) for d in (self.future_dir, self.objaverse_dir) if d is not None)
        raise AssetError(f"object {obj.id!r}: no asset {' or '.join(map(repr, ids))} in {where}")

    @staticmethod
    def _in_future(root: Path, jid: str) -> _Found | None:
        glb = safe_file(root, jid, "raw_model.glb")
        if glb is not None:
            return _Found("3d-future", jid, glb, None)
        obj = safe_file(root, jid, "raw_model.obj")
        if obj is not None:
            return _Found("3d-future", jid, obj, safe_file(root, jid, "texture.png"))
        return None

    @staticmethod
    def _in_objaverse(root: Path, uid: str) -> _Found | None:
        for name in _OBJATHOR_FILES:
            path = safe_file(root, uid, name.format(uid=uid))
            if path is not None:
                return _Found("objaverse", uid, path, safe_file(root, uid, "albedo.jpg"))
        for parts in ((uid, f"{uid}.glb"), (f"{uid}.glb",)):
            path = safe_file(root, *parts)
            if path is not None:
                return _Found("objaverse", uid, path, None)
        shards = safe_dir_entries(root, "glbs")
        for shard in shards:
            path = safe_file(root, "glbs", shard, f"{uid}.glb")
            if path is not None:
                return _Found("objaverse", uid, path, None)
        return None

    def _load(self, found: _Found) -> RawMesh:
        stat = found.mesh.stat()
        memo_key = (str(found.mesh), stat.st_size, stat.st_mtime_ns)
        if memo_key in self._memo:
            self._memo.move_to_end(memo_key)
            return self._memo[memo_key]
        data = read_bytes(found.mesh)
        tex = read_bytes(found.texture) if found.texture is not None else b""
        key = hashlib.sha256(_CACHE_VERSION + hashlib.sha256(data).digest() + hashlib.sha256(tex).digest()).hexdigest()
        raw = self._cached(key)
        if raw is None:
            raw = _parse(found, data, tex)
            self._store(key, raw)
        self._memo[memo_key] = raw
        if len(self._memo) > 256:
            self._memo.popitem(last=False)
        return raw

    def _cache_path(self, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / key[:2] / f"{key}.npz"

    def _cached(self, key: str) -> RawMesh | None:
        path = self._cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                return RawMesh(z["vertices"], z["faces"], z["uv"] if "uv" in z else None,
                               z["texture_png"].tobytes() if "texture_png" in z else None,
                               z["face_colors"] if "face_colors" in z else None)
        except (OSError, ValueError, KeyError):
            return None  # a damaged entry is parsed again and overwritten

    def _store(self, key: str, raw: RawMesh) -> None:
        path = self._cache_path(key)
        if path is None:
            return
        arrays: dict[str, Any] = {"vertices": raw.vertices, "faces": raw.faces}
        if raw.uv is not None:
            arrays["uv"] = raw.uv
        if raw.texture_png is not None:
            arrays["texture_png"] = np.frombuffer(raw.texture_png, dtype=np.uint8)
        if raw.face_colors is not None:
            arrays["face_colors"] = raw.face_colors
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
            np.savez(tmp, **arrays)
            tmp.replace(path)
        except OSError:
            pass  # a read-only or full cache only costs speed


def safe_dir_entries(root: Path, name: str) -> list[str]:
    """Sorted names of the plain sub-folders of ``root/name`` (none when it is absent);
    a link anywhere on the way is refused as in :func:`safe_file`."""
    folder = root.resolve() / name
    try:
        info = folder.lstat()
    except FileNotFoundError:
        return []
    import stat as st

    if st.S_ISLNK(info.st_mode):
        raise AssetError(f"{folder}: is a symbolic link (asset folders are read without following links)")
    if not st.S_ISDIR(info.st_mode):
        return []
    return sorted(e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False))


def _asset_ids(obj: SceneObject) -> list[str]:
    """The ids to look up, in order: the record's ``jid``, ``uid``, THOR ``assetId``, the
    model's asset id, each also without a ReSpace scale suffix; placeholders such as
    ``<NEED_RETRIEVAL>`` are skipped."""
    ids: list[str] = []
    for value in (obj.raw.get("jid"), obj.raw.get("uid"), obj.raw.get("assetId"), obj.asset_id):
        if not isinstance(value, str) or not value.strip() or value.strip().startswith("<"):
            continue
        for candidate in (value.strip(), _SCALE_SUFFIX.sub("", value.strip())):
            if candidate and candidate not in ids:
                ids.append(candidate)
    return ids


def _parse(found: _Found, data: bytes, tex: bytes) -> RawMesh:
    name = str(found.mesh)
    suffix = found.mesh.name.lower()
    if suffix.endswith(".glb"):
        raw = parse_glb(data, name)
    elif suffix.endswith(".obj"):
        raw = parse_obj(data, name)
    else:
        raw = parse_thor_asset(data, name)
    if tex and raw.uv is not None:
        assert found.texture is not None
        raw = RawMesh(raw.vertices, raw.faces, raw.uv, load_texture(tex, str(found.texture)), raw.face_colors)
    elif tex:
        load_texture(tex, str(found.texture))  # still refuse a texture that is not an image
    return raw


def _placed(raw: RawMesh, obj: SceneObject, source: str) -> ObjectMesh:
    """``raw`` scaled per axis to ``obj.size`` with its bounding box centred on the origin."""
    size = np.asarray(obj.size, dtype=np.float64)
    lo, hi = raw.vertices.min(axis=0), raw.vertices.max(axis=0)
    local = (raw.vertices - (lo + hi) / 2.0) * (size / (hi - lo))
    faces = raw.faces
    if _signed_volume(local, faces) < 0:  # inward-wound source: turn it outward
        faces = faces[:, ::-1]
    texture = None
    if raw.texture_png is not None:
        from PIL import Image

        try:
            texture = Image.open(io.BytesIO(raw.texture_png))
            texture.load()
        except (OSError, ValueError) as exc:  # a damaged cache entry
            raise AssetError(f"{source}: texture is not an image ({type(exc).__name__})") from None
    if raw.face_colors is not None:
        colors = raw.face_colors
    elif texture is not None:
        mean = np.asarray(texture.convert("RGB").resize((1, 1)).getpixel((0, 0)), dtype=np.uint8)
        colors = np.tile(np.append(mean, 255).astype(np.uint8), (len(faces), 1))
    else:
        colors = np.tile(np.asarray(palette(obj).main, dtype=np.uint8), (len(faces), 1))
    return ObjectMesh(np.ascontiguousarray(local), np.ascontiguousarray(faces, dtype=np.int64),
                      np.ascontiguousarray(colors, dtype=np.uint8), raw.uv, texture, source)


def _signed_volume(vertices: np.ndarray, faces: np.ndarray) -> float:
    a, b, c = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)
