"""Blocks and faces as the released library modelled them, with their captions.

A face does not store where it is: it asks its owner block's *current* pose
each time. Blocks keep a reference to the face they were attached to, so a
block's displayed Position follows its base face (twists and shifts of the
block itself do not move it, moves of the base do; a removed base keeps its
last pose). Orientations are kept as a quaternion and a matrix, converted as
in ``quat``. Captions print arrays with numpy's own printer, as the original.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import trimesh
import yaml

from . import quat as Q

COLLIDER_SCALE = 0.8
"""Colliders are shrunk about the block's local origin, so touching faces do not overlap."""

MAX_REGULAR_COORDINATE = 1e6
"""Beyond this a posed collider's floating-point shape is no longer the block's (same bound as the default
profile's ``catalogue.MAX_COORDINATE``)."""

_BLOCK_FOLDER = Path(__file__).resolve().parents[2] / "data" / "blocks"


@functools.cache
def block_table() -> dict[str, dict[str, Any]]:
    """The released block YAML files by block name (read-only; copy before changing)."""
    table = {}
    for path in sorted(_BLOCK_FOLDER.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        table[raw["name"]] = raw
    return table


def to_real(v: np.ndarray) -> np.ndarray:
    """Virtual [east, up, north] to real [east, north, up] (a copy)."""
    return v[[0, 2, 1]]


def from_real(r: Any) -> np.ndarray:
    """Real to virtual; indexes the given sequence as the original did (so short lists fail the same way)."""
    return np.array([r[0], r[2], r[1]], dtype=np.float64)


def unit(v: np.ndarray) -> np.ndarray:
    """``v`` scaled to length 1 (a zero vector is returned as is)."""
    length = np.linalg.norm(v)
    return v if length == 0 else v / length


class Orientation:
    """A rotation kept as quaternion and matrix, relative to a block's base vector ``vec_base``."""

    def __init__(self, q: Q.Quat, vec_base: np.ndarray) -> None:
        self.q = q
        self.vec_base = vec_base
        self.matrix = Q.to_matrix(q)

    @classmethod
    def towards(cls, direction: np.ndarray, vec_base: np.ndarray) -> Orientation:
        """The shortest turn of ``vec_base`` onto ``direction``."""
        return cls(Q.shortest_arc(vec_base, unit(np.asarray(direction, dtype=np.float64))), vec_base)

    def turn(self, rot: np.ndarray) -> Orientation:
        """Pre-multiply by ``rot``; the quaternion is re-derived from the new matrix."""
        product = rot @ self.matrix
        self.q = Q.from_matrix(product)
        self.matrix = product
        return self

    @property
    def pointing(self) -> np.ndarray:
        """Where ``vec_base`` points now (virtual), through the quaternion as the original did."""
        return Q.to_matrix(Q.normalized(self.q)) @ self.vec_base


def direction_caption(virtual: np.ndarray) -> str:
    """``<North with 0.0° pitch>``-style wording of a virtual direction."""
    x, y, z = to_real(unit(virtual))
    if abs(x) < 1e-6 and abs(y) < 1e-6:
        if z > 0:
            return "<straight up>"
        if z < 0:
            return "<straight down>"
    azimuth = np.degrees(np.arctan2(x, y)) % 360
    pitch = np.degrees(np.arctan2(z, np.sqrt(x**2 + y**2)))
    if azimuth % 90 <= 1e-6 or abs(azimuth % 90 - 90) <= 1e-6:
        text = ["North", "East", "South", "West"][int(round(azimuth / 90) * 90 // 90) % 4]
    else:
        pattern = ["N {deg:.1f}° E", "E {deg:.1f}° S", "S {deg:.1f}° W", "W {deg:.1f}° N"][int(azimuth // 90) % 4]
        text = pattern.format(deg=azimuth % 90)
    return f"<{text} with {pitch:.1f}° pitch>"


def spin_caption(axis_virtual: np.ndarray) -> str:
    """Rolling direction and camber of a wheel spinning about ``axis_virtual`` (right-hand rule)."""
    axis = to_real(axis_virtual)
    gravity = np.array([0, 0, -1], dtype=np.float64)
    cos_angle = np.clip(np.dot(axis, gravity) / (np.linalg.norm(axis) * np.linalg.norm(gravity)), -1.0, 1.0)
    tilt = 90.0 - np.degrees(np.arccos(cos_angle))
    if abs(tilt) < 60:
        rolling = np.cross(axis, gravity)
        return f"Rolling towards {direction_caption(to_real(rolling))} with {tilt:.0f}° camber"
    sense = "counterclockwise" if axis[2] > 0 else "clockwise"
    return f"Almost horizontal spinning {sense} around with the axis pointing at {direction_caption(axis_virtual)}"


def coordinates(virtual: np.ndarray, precision: int = 2, separator: str = ",") -> str:
    """numpy's ``array2string`` of the real coordinates, small values suppressed."""
    real = to_real(virtual)
    # array2string is the costliest part of a caption, and an assembly's every answer captions the
    # same blocks again: a float vector's text is kept by its exact bytes (so -0.0 and each NaN
    # stay apart), while numpy prints with its default options (which a caller could change).
    if real.dtype == np.float64 and real.ndim == 1 and np.get_printoptions() == _DEFAULT_PRINT:
        return _float_text(real.tobytes(), precision, separator)
    return np.array2string(real, precision=precision, separator=separator, suppress_small=True)


_DEFAULT_PRINT = np.get_printoptions()


@functools.lru_cache(maxsize=65536)
def _float_text(raw: bytes, precision: int, separator: str) -> str:
    values = np.frombuffer(raw, dtype=np.float64)
    return np.array2string(values, precision=precision, separator=separator, suppress_small=True)


def two_decimals(values: np.ndarray) -> str:
    """``[x.xx, y.yy, z.zz]`` (plain Python formatting, so tiny negatives print ``-0.00``)."""
    return "[" + ", ".join(f"{v:.2f}" for v in values) + "]"


class Face:
    """One labelled face of a block; position and normal follow the owner's current pose."""

    def __init__(self, label: str, rel_pos: Any, normal: Any, owner: Part) -> None:
        self.label = label
        self.rel_pos = np.array(rel_pos, dtype=np.float64)
        self.local_normal = np.array(normal, dtype=np.float64)
        self.owner = owner
        self.free = True
        self.partner: Face | None = None
        self.owner_id = owner.local_id
        self.owner_name = owner.name
        self._normal: tuple[bytes, Orientation] | None = None

    @property
    def center(self) -> np.ndarray:
        """Virtual centre of the face."""
        return self.owner.orientation.matrix @ (self.rel_pos * self.owner.shape) + self.owner.position

    @property
    def normal(self) -> Orientation:
        """Orientation whose ``pointing`` is the outward normal (read-only: it is kept for the owner's pose)."""
        # Worked out again only when the owner's matrix changed: each caption asks for it several times.
        pose = self.owner.orientation.matrix.tobytes()
        if self._normal is None or self._normal[0] != pose:
            turned = Orientation.towards(self.local_normal, self.owner.orientation.vec_base).turn(
                self.owner.orientation.matrix)
            self._normal = (pose, turned)
        return self._normal[1]

    def caption(self) -> str:
        """``Face label: X, Face center: [..], Facing towards <..>``."""
        center = coordinates(self.center, precision=3, separator=", ")
        return f"Face label: {self.label}, Face center: {center}, Facing towards {direction_caption(self.normal.pointing)}"


@functools.cache
def _local_collider(name: str) -> trimesh.Trimesh:
    """Block ``name``'s collider in its own frame: pieces joined, moved by root and offset, shrunk."""
    raw = block_table()[name]["collider"]
    if raw["type"] == "box":
        pieces = [trimesh.creation.box(extents=e) for e in raw["extents"]]
    else:
        pieces = [trimesh.creation.cylinder(radius=raw["radius"], height=raw["height"])]
    offset = np.array(raw.get("translation", [0, 0, 0]), dtype=np.float64).reshape(-1)
    mesh = copy.deepcopy(trimesh.util.concatenate(pieces))
    mesh = mesh.apply_translation(np.array(block_table()[name]["root"], dtype=np.float64) + offset)
    return mesh.apply_scale(COLLIDER_SCALE)


def fcl_ready(mesh: trimesh.Trimesh, convex: bool) -> trimesh.Trimesh:
    """``mesh`` (a posed block collider) with its convexity known where it can be reused.

    trimesh hands a convex mesh to FCL as an ``fcl.Convex``, any other as a
    triangle soup. A convex shape stays convex under a pose that keeps it
    finite and in range, so the local shape's answer (``convex``) is reused
    there instead of trimesh's costly test on every posed copy; elsewhere the
    test runs on the posed mesh, as in the released library (``colliders``
    decides which meshes reach FCL at all).
    """
    vertices = mesh.vertices
    if np.isfinite(vertices).all() and np.abs(vertices).max() <= MAX_REGULAR_COORDINATE:
        mesh._cache["is_convex"] = convex
    return mesh


def faces_coincide(a: Face, b: Face) -> bool:
    """Parallel normals and the same centre (the rule that marks a new block's contact face)."""
    parallel = np.isclose(np.linalg.norm(np.cross(a.normal.pointing, b.normal.pointing)), 0)
    return bool(parallel and np.isclose(np.linalg.norm(a.center - b.center), 0))


class Part:
    """A block of the released library (basic, pointer or connector)."""

    def __init__(self, spec: dict[str, Any], local_id: str, anchor: Face | None, note: str | None,
                 locomotion: dict[str, list[str]] | bool | None) -> None:
        self.spec = spec
        self.local_id = local_id
        self.name: str = spec["name"]
        self.kind: str = spec["type"]
        self.note = note
        self.anchor = anchor
        self.shape = np.array(spec["shape"], dtype=np.float64)
        vec_base = np.array(spec["vec_base"], dtype=np.float64)
        self.position = np.array([0, 0, 0], dtype=np.float64)
        self.orientation = Orientation(Q.IDENTITY, vec_base)
        if anchor is not None:
            self.position = anchor.center
            self.orientation = Orientation(anchor.normal.q, np.array(spec["vec_base"], dtype=np.float64))
        self.faces = {label: Face(label, f[0], f[1], self) for label, f in (spec["faces"] or {}).items()}
        self.spin: dict[str, Any] | None = spec.get("spin") or None
        self.flipped = False
        self.locomotion = locomotion
        self.end: Face | None = None
        self.collider = self._collider()

    def _collider(self) -> trimesh.Trimesh:
        mesh = _local_collider(self.name).copy()
        pose = np.eye(4)
        pose[:3, :3] = self.orientation.matrix
        pose[:3, 3] = self.position
        return fcl_ready(mesh.apply_transform(pose), _local_collider(self.name).is_convex)

    def refresh_collider(self) -> None:
        """Rebuild the collider at the current pose."""
        self.collider = self._collider()

    @property
    def is_connector(self) -> bool:
        return self.kind == "connection"

    @property
    def shown_position(self) -> np.ndarray:
        """Virtual 'Position' of captions: the base face centre plus the centre offset along its normal."""
        if self.anchor is None:
            return self.position
        anchor = self.anchor
        real = to_real(anchor.center) + self.spec["center_offset"] * to_real(anchor.normal.pointing)
        return from_real(real)

    def twist(self, angle: Any) -> None:
        """Turn about the base face's current normal by ``angle`` degrees (wrapped to (-180, 180])."""
        wrapped = np.mod(angle, 360)
        if wrapped > 180:
            wrapped -= 360
        if self.anchor is None:
            raise AttributeError("'NoneType' object has no attribute 'normal'")
        axis = unit(self.anchor.normal.pointing)
        self.orientation.turn(Q.to_matrix(Q.from_rotation_vector(np.deg2rad(wrapped) * axis)))
        self.refresh_collider()

    def shift(self, shift_real: Any) -> None:
        """Translate by a real-frame offset."""
        self.position = self.position + from_real(shift_real)
        self.refresh_collider()

    def rotate(self, yaw: Any, pitch: Any, roll: Any) -> None:
        """Turn by the released start rotation (yaw about up, pitch about east, roll about north)."""
        self.orientation.turn(start_rotation(yaw, pitch, roll))
        self.refresh_collider()

    def _header(self, prefix: str | None) -> str:
        label = f"<ID {prefix}_{self.local_id}: {self.name}>" if prefix else f"<ID {self.local_id}: {self.name}>"
        return f"({self.note}) {label}" if self.note else label

    def caption(self, finished: bool, prefix: str | None = None) -> str:
        """What the model reads about this block (free faces unless ``finished``; ``prefix`` a sub-structure's)."""
        if self.is_connector:
            return "\n".join([self._header(prefix), self._connection_line()])
        lines = [self._header(prefix), f"Position: {coordinates(self.shown_position)}"]
        if self.kind == "pointer":
            lines.append(f"Pointing at {direction_caption(self.orientation.pointing)}")
            lines.append(self._pointer_line())
            return "\n".join(lines)
        if self.spin:
            sign = self.spin["rel"] * (1 + (-2 * self.flipped))
            lines.append(spin_caption(sign * self.faces[self.spin["parallel_to"]].normal.pointing))
        free = [face for face in self.faces.values() if face.free]
        if not finished and free:
            lines.append("Attachable Faces:")
            lines.extend(face.caption() for face in free)
        return "\n".join(lines)

    def _connection_line(self) -> str:
        start, end = self.anchor, self.end
        assert start is not None and end is not None
        return (f"Connecting <ID {start.owner_id}: {start.owner_name}> at {to_real(start.center)} and "
                f"<ID {end.owner_id}: {end.owner_name}> at {to_real(end.center)}.\t")

    def _pointer_line(self) -> str:
        centre = to_real(self.shown_position)
        direction = to_real(self.orientation.pointing)
        if self.name == "Torch":
            return f"Heating up a spherical area with radius 0.3 around {two_decimals(direction + centre)}"
        outlet, inlet = centre + direction * 1, centre - direction * 0.75
        return (f"Inlet is at {two_decimals(inlet)}, outlet is at {two_decimals(outlet)}, "
                f"sprays towards {direction_caption(self.orientation.pointing)}")

    def locomotion_caption(self) -> str:
        """Caption without faces plus each action and its keys."""
        assert isinstance(self.locomotion, dict)
        lines = [self.caption(finished=True), "Controllable Locomotion: "]
        lines.extend(f"Action: {action}, Key: {', '.join(keys)}" for action, keys in self.locomotion.items())
        return "\n".join(lines)


def start_rotation(yaw: Any, pitch: Any, roll: Any) -> np.ndarray:
    """The released ``init_rotation`` matrix in the virtual frame: Rx(pitch) · Ry(yaw) · Rz(-roll)."""
    z_angle, y_angle, x_angle = np.radians([-roll, yaw, pitch])
    cz, sz = np.cos(z_angle), np.sin(z_angle)
    cy, sy = np.cos(y_angle), np.sin(y_angle)
    cx, sx = np.cos(x_angle), np.sin(x_angle)
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    return rx @ ry @ rz


@dataclass
class ControlEntry:
    """One timed key press."""

    time: Any
    key: str
    hold_for: Any
