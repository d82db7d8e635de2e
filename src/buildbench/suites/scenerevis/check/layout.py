"""A SceneReVis room as arrays: the floor polygon, the floor–ceiling range and object boxes.

Reads the scene dict directly, flat (``bounds_top``/``bounds_bottom``/``objects``) or
grouped (``room_envelope`` + ``groups[].objects``), or a record holding the scene under
``"scene"`` (the shared ReSpace file). Objects are numbered in file order (group by group
for grouped scenes); every check in this package reports those indices.

Box convention (SceneReVis §1.3): ``size`` is the extent along the object's own x, y, z
before rotation, ``pos`` the *bottom centre* (x/z centre, y of the bottom face) and ``rot``
a scalar-last quaternion in SciPy's convention. The box centre is therefore
``pos + R @ (0, size_y / 2, 0)``: the pivot is the bottom centre of the unrotated box, as
the released code places meshes (translate bottom centre to the origin, then ``[R | pos]``).
The full 3-D rotation is kept; nothing here reduces it to a yaw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from buildbench.geometry import Boxes
from buildbench.scenes.model import MAX_COORD_M, Scene, SceneFormatError, check_height, within_bounds
from buildbench.scenes.revis import revis_quat

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class RoomLayout:
    """One room and its objects, as arrays.

    Attributes:
        floor_xz: ``(m, 2)`` floor polygon ``(x, z)`` in file order, metres.
        floor_y: Lowest ``bounds_bottom`` y (the floor), metres.
        ceiling_y: Highest ``bounds_top`` y (the ceiling), metres.
        sizes: ``(n, 3)`` box extents in the object's frame, metres.
        bottoms: ``(n, 3)`` ``pos`` as written (bottom centre), metres.
        quats_xyzw: ``(n, 4)`` rotations as written.
        rotations: ``(n, 3, 3)`` rotation matrices (columns: local axes in the world).
        descs: Object descriptions ("" when absent).
        ids: ``jid``, else ``uid``, else ``id`` of each object ("" when absent).
        room_type: ``room_type`` as written ("" when absent).
    """

    floor_xz: FloatArray
    floor_y: float
    ceiling_y: float
    sizes: FloatArray
    bottoms: FloatArray
    quats_xyzw: FloatArray
    rotations: FloatArray
    descs: tuple[str, ...]
    ids: tuple[str, ...]
    room_type: str = ""

    def __len__(self) -> int:
        return len(self.sizes)

    @property
    def centers(self) -> FloatArray:
        """``(n, 3)`` box centres: the bottom centre lifted by half the height along local y."""
        return self.bottoms + self.rotations[:, :, 1] * (self.sizes[:, 1:2] / 2.0)

    @property
    def boxes(self) -> Boxes:
        return Boxes(self.centers, self.sizes / 2.0, self.rotations)

    @property
    def volumes_m3(self) -> FloatArray:
        return np.prod(self.sizes, axis=1)

    @property
    def room_center_xz(self) -> FloatArray:
        """Mean of the floor vertices (Algorithm 2's ``c_room``)."""
        return self.floor_xz.mean(axis=0)

    def corners(self) -> FloatArray:
        """``(n, 8, 3)`` world corners."""
        return self.boxes.corners()

    def subset(self, keep: Sequence[int]) -> RoomLayout:
        """The same room with only the objects at ``keep`` (in that order)."""
        idx = np.asarray(list(keep), dtype=np.int64)
        return RoomLayout(
            self.floor_xz,
            self.floor_y,
            self.ceiling_y,
            self.sizes[idx],
            self.bottoms[idx],
            self.quats_xyzw[idx],
            self.rotations[idx],
            tuple(self.descs[i] for i in idx),
            tuple(self.ids[i] for i in idx),
            self.room_type,
        )

    def moved(self, index: int, bottom: Sequence[float], quat_xyzw: Sequence[float]) -> RoomLayout:
        """A copy with object ``index`` at a new bottom centre and rotation."""
        bottoms, quats, rots = self.bottoms.copy(), self.quats_xyzw.copy(), self.rotations.copy()
        bottoms[index] = bottom
        quats[index] = quat_xyzw
        rots[index] = Rotation.from_quat(quat_xyzw).as_matrix()
        return RoomLayout(
            self.floor_xz,
            self.floor_y,
            self.ceiling_y,
            self.sizes,
            bottoms,
            quats,
            rots,
            self.descs,
            self.ids,
            self.room_type,
        )


def scene_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The scene inside ``record``: ``record["scene"]`` when it holds one, else the record."""
    inner = record.get("scene") if isinstance(record, Mapping) else None
    return inner if isinstance(inner, Mapping) else record


def scene_objects(scene: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``(where, object)`` for every object, flat or grouped, in index order."""
    if not isinstance(scene, Mapping):
        raise SceneFormatError(f"scene: expected a JSON object, got {type(scene).__name__}")
    if scene.get("groups"):  # an empty list falls back to "objects", as the released code reads it
        groups = scene["groups"]
        if not isinstance(groups, list):
            raise SceneFormatError(f"groups: expected a list, got {type(groups).__name__}")
        out = []
        for g, group in enumerate(groups):
            if not isinstance(group, Mapping):
                raise SceneFormatError(f"groups[{g}]: expected an object, got {type(group).__name__}")
            objs = group.get("objects") or []
            if not isinstance(objs, list):
                raise SceneFormatError(f"groups[{g}].objects: expected a list, got {type(objs).__name__}")
            out += [(f"groups[{g}].objects[{i}]", o) for i, o in enumerate(objs)]
        return out
    objs = scene.get("objects") or []
    if not isinstance(objs, list):
        raise SceneFormatError(f"objects: expected a list, got {type(objs).__name__}")
    return [(f"objects[{i}]", o) for i, o in enumerate(objs)]


def parse_layout(record: Mapping[str, Any]) -> RoomLayout:
    """Read a SceneReVis scene (or a record holding one under ``"scene"``).

    Raises:
        SceneFormatError: one line naming the field: a missing or ragged boundary, a size
            that is negative or not finite, a zero quaternion, a huge coordinate.
    """
    scene = scene_of(record)
    if not isinstance(scene, Mapping):
        raise SceneFormatError(f"scene: expected a JSON object, got {type(scene).__name__}")
    inner = scene.get("room_envelope")
    envelope: Mapping[str, Any] = inner if isinstance(inner, Mapping) else scene
    bottom = _points(envelope.get("bounds_bottom"), "bounds_bottom")
    top = _points(envelope.get("bounds_top"), "bounds_top")
    if len(bottom) < 3:
        raise SceneFormatError(f"bounds_bottom: a floor polygon needs at least 3 vertices, got {len(bottom)}")
    floor_y, ceiling_y = float(bottom[:, 1].min()), float(top[:, 1].max())
    check_height(floor_y, ceiling_y, "bounds_top")
    objects = scene_objects(scene)
    n = len(objects)
    sizes, bottoms, quats = np.zeros((n, 3)), np.zeros((n, 3)), np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    descs, ids = [], []
    for k, (where, obj) in enumerate(objects):
        if not isinstance(obj, Mapping):
            raise SceneFormatError(f"{where}: expected an object, got {type(obj).__name__}")
        sizes[k] = _vector(obj.get("size", obj.get("sampled_asset_size")), 3, f"{where}.size")
        if np.any(sizes[k] < 0):
            raise SceneFormatError(f"{where}.size: extents must be >= 0 m, got {sizes[k].tolist()}")
        bottoms[k] = _vector(obj.get("pos"), 3, f"{where}.pos")
        rot = obj.get("rot")
        if isinstance(rot, int | float) and not isinstance(rot, bool):  # a yaw in radians (SceneReVis's reader)
            quats[k] = revis_quat(rot, f"{where}.rot")
        elif rot is not None:
            quats[k] = _vector(rot, 4, f"{where}.rot")
            if np.linalg.norm(quats[k]) < 1e-9:
                raise SceneFormatError(f"{where}.rot: zero quaternion {quats[k].tolist()}")
        descs.append(str(obj.get("desc") or obj.get("object_description") or ""))
        ids.append(str(obj.get("jid") or obj.get("uid") or obj.get("id") or ""))
    # Matrices from the quaternions as written, as the release's own Rotation.from_quat: scaling
    # them first changes the last bits, which flips FCL's contact on touching faces.
    rotations = Rotation.from_quat(quats).as_matrix().reshape(n, 3, 3)
    quats /= np.linalg.norm(quats, axis=1, keepdims=True)
    return RoomLayout(
        bottom[:, [0, 2]].copy(),
        floor_y,
        ceiling_y,
        sizes,
        bottoms,
        quats,
        rotations,
        tuple(descs),
        tuple(ids),
        str(scene.get("room_type") or ""),
    )


def layout_from_scene(scene: Scene, room_id: str | None = None) -> RoomLayout:
    """A :class:`RoomLayout` of one room of a :class:`buildbench.scenes.Scene`.

    ``room_id`` may be omitted when the scene has exactly one room. Objects whose
    ``room_id`` is empty belong to the only room.
    """
    if room_id is None:
        if len(scene.rooms) != 1:
            raise SceneFormatError(f"scene has {len(scene.rooms)} rooms; name the room_id to check")
        room = scene.rooms[0]
    else:
        room = scene.room(room_id)
    objs = [o for o in scene.objects if o.room_id in (room.id, "")]
    ceiling = room.ceiling_y
    if ceiling is None:
        raise SceneFormatError(f"room {room.id!r}: ceiling height unknown; cannot check vertical bounds")
    n = len(objs)
    sizes = np.array([o.size for o in objs], dtype=float).reshape(n, 3)
    quats = np.array([o.rotation_xyzw for o in objs], dtype=float).reshape(n, 4)
    rots = Rotation.from_quat(quats).as_matrix().reshape(n, 3, 3) if n else np.zeros((0, 3, 3))
    centers = np.array([o.center for o in objs], dtype=float).reshape(n, 3)
    bottoms = centers - rots[:, :, 1] * (sizes[:, 1:2] / 2.0)
    return RoomLayout(
        np.asarray(room.vertices, dtype=float),
        room.floor_y,
        float(ceiling),
        sizes,
        bottoms,
        quats,
        rots,
        tuple(o.attributes.get("description", o.category) for o in objs),
        tuple(o.id for o in objs),
        room.room_type,
    )


def _points(value: Any, where: str) -> FloatArray:
    if not isinstance(value, list) or not value:
        raise SceneFormatError(f"{where}: expected a non-empty list of [x, y, z] points")
    return np.array([_vector(p, 3, f"{where}[{i}]") for i, p in enumerate(value)])


def _vector(value: Any, length: int, where: str) -> FloatArray:
    if not isinstance(value, list | tuple) or len(value) != length:
        raise SceneFormatError(f"{where}: expected {length} numbers, got {_short(value)}")
    out = np.empty(length)
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise SceneFormatError(f"{where}: expected {length} finite numbers, got {_short(value)}")
        if not within_bounds(v):
            raise SceneFormatError(f"{where}: {v} exceeds {MAX_COORD_M:g} m")
        out[i] = float(v)
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
