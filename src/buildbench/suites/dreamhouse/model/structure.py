"""Members and structures: named oriented boxes stored as arrays, and parsing their JSON documents."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from buildbench.geometry import Boxes
from buildbench.harness.errors import BuildbenchError

from .rigid import rigid
from .taxonomy import CATEGORY_CODE, UNKNOWN_CODE, classify, classify_many

#: Identifier and version of our own structure JSON.
FORMAT_ID = "buildbench.dreamhouse.structure"
FORMAT_VERSION = 1


def _as_vec3(value: Any) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64).reshape(-1)
    if arr.shape != (3,):
        raise ValueError(f"expected 3 numbers, got shape {np.shape(value)}")
    return arr


def _as_mat4(value: Any) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (4, 4):
        raise ValueError(f"expected a 4x4 matrix, got shape {arr.shape}")
    return arr


def euler_xyz_matrix(rotation_rad: Sequence[float]) -> np.ndarray:
    """3x3 rotation of Blender's default ``XYZ`` Euler mode (applied X, then Y, then Z)."""
    ax, ay, az = (float(a) for a in rotation_rad)
    cx, sx, cy, sy, cz, sz = (
        math.cos(ax),
        math.sin(ax),
        math.cos(ay),
        math.sin(ay),
        math.cos(az),
        math.sin(az),
    )
    # Rz @ Ry @ Rx multiplied out (each entry one or two products): ``@`` would call BLAS, whose
    # fused multiply-adds depend on the CPU. ``+ 0.0`` makes a zero +0.0 whatever its sign.
    czsy, szsy = cz * sy, sz * sy
    return np.array([
        [cz * cy, czsy * sx - sz * cx, czsy * cx + sz * sx],
        [sz * cy, szsy * sx + cz * cx, szsy * cx - cz * sx],
        [-sy, cy * sx, cy * cx],
    ]) + 0.0  # fmt: skip


def _rotate(rot: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``R p`` for each matrix of ``rot`` ``(n, 3, 3)`` and its points ``(n, k, 3)``, shape ``(n, k, 3)``.

    Summed in a fixed order, the one numpy's einsum takes on x86 (first + last, then middle), so
    the bits stay what they were there; einsum's order and its use of fused multiply-adds come
    from its vector code, which may differ on another architecture (ARM's baseline has FMA).
    """
    p0, p1, p2 = (rot[:, None, :, j] * points[:, :, None, j] for j in range(3))
    return (p0 + p2) + p1


class StructureFormatError(BuildbenchError):
    """A structure file or member entry is malformed (missing field, wrong shape, not a number)."""


@dataclass(frozen=True, eq=False)
class Member:
    """One framing member: a named oriented box.

    Attributes:
        name: Unique member name; its prefix gives the category (``Joist_014``).
        size_m: Full local box sizes (x, y, z) in metres, shape ``(3,)``.
        matrix_world: 4x4 world transform (rotation + translation, metres) of the box centre.
        phase: Construction phase annotation (``foundation|floor|walls|roof``), if known.
        section: Section annotation (``main``, ``wing_left``…), if known.
        supported_by: Names of the members this one bears on (parent/support edges).
    """

    name: str
    size_m: np.ndarray
    matrix_world: np.ndarray = field(default_factory=lambda: np.eye(4))
    phase: str | None = None
    section: str | None = None
    supported_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "size_m", _as_vec3(self.size_m))
        object.__setattr__(self, "matrix_world", _as_mat4(self.matrix_world))
        object.__setattr__(self, "supported_by", tuple(self.supported_by))

    @classmethod
    def box(
        cls,
        name: str,
        size_m: Sequence[float],
        center_m: Sequence[float],
        rotation_euler_rad: Sequence[float] = (0.0, 0.0, 0.0),
        **annotations: Any,
    ) -> Member:
        """A member from its sizes, centre and Blender XYZ Euler rotation (radians)."""
        mat = np.eye(4)
        mat[:3, :3] = euler_xyz_matrix(rotation_euler_rad)
        mat[:3, 3] = _as_vec3(center_m)
        return cls(name, np.asarray(size_m, dtype=np.float64), mat, **annotations)

    @classmethod
    def from_aabb(cls, name: str, lo_m: Sequence[float], hi_m: Sequence[float], **annotations: Any) -> Member:
        """An axis-aligned member spanning world corners ``lo_m`` to ``hi_m``."""
        lo, hi = _as_vec3(lo_m), _as_vec3(hi_m)
        return cls.box(name, hi - lo, (lo + hi) / 2.0, **annotations)

    @property
    def category(self) -> str | None:
        """Category from the name (lenient match; see :func:`classify`)."""
        return classify(self.name)

    @property
    def location_m(self) -> np.ndarray:
        """World position of the box centre, metres."""
        return self.matrix_world[:3, 3].copy()


#: Category code by category, ``None`` (no category) included.
_CODE_OF: dict[str | None, int] = {None: UNKNOWN_CODE}
_CODE_OF.update(CATEGORY_CODE)


@dataclass(frozen=True, eq=False)
class Structure:
    """An ordered collection of members stored as arrays.

    Build it with :meth:`from_members`, :meth:`from_arrays` or the JSON readers. Arrays may
    hold any float (NaN, zero sizes); the validator reports such members.

    Attributes:
        names: Member names, length n.
        sizes_m: Full local sizes in metres, shape ``(n, 3)``.
        matrices: World transforms, shape ``(n, 4, 4)``; scale is folded into ``sizes_m``.
        phases: Phase annotation per member (or ``None``).
        sections: Section annotation per member (or ``None``).
        supported_by: Parent/support edges per member (names).
        meta: Free structure-level data (task id, style, footprint…), JSON-serializable.
    """

    names: tuple[str, ...]
    sizes_m: np.ndarray
    matrices: np.ndarray
    phases: tuple[str | None, ...] = ()
    sections: tuple[str | None, ...] = ()
    supported_by: tuple[tuple[str, ...], ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.names)
        sizes = np.asarray(self.sizes_m, dtype=np.float64)
        mats = np.asarray(self.matrices, dtype=np.float64)
        if sizes.size != 3 * n or mats.size != 16 * n:
            raise ValueError(
                f"Structure of {n} members needs sizes_m of shape ({n}, 3) and matrices of shape "
                f"({n}, 4, 4), got {sizes.shape} and {mats.shape}"
            )
        sizes, mats = sizes.reshape(n, 3), mats.reshape(n, 4, 4)
        object.__setattr__(self, "names", tuple(map(str, self.names)))
        object.__setattr__(self, "sizes_m", sizes)
        object.__setattr__(self, "matrices", rigid(mats))
        for attr, blank in (("phases", None), ("sections", None), ("supported_by", ())):
            val = tuple(getattr(self, attr)) or (blank,) * n
            if len(val) != n:
                raise ValueError(f"Structure.{attr} has {len(val)} entries for {n} members")
            object.__setattr__(self, attr, val)

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_members(cls, members: Iterable[Member], meta: Mapping[str, Any] | None = None) -> Structure:
        """Pack a member list into arrays (order kept)."""
        ms = list(members)
        return cls(
            names=tuple(m.name for m in ms),
            sizes_m=np.array([m.size_m for m in ms]).reshape(len(ms), 3),
            matrices=np.array([m.matrix_world for m in ms]).reshape(len(ms), 4, 4),
            phases=tuple(m.phase for m in ms),
            sections=tuple(m.section for m in ms),
            supported_by=tuple(m.supported_by for m in ms),
            meta=dict(meta or {}),
        )

    @classmethod
    def from_arrays(
        cls,
        names: Sequence[str],
        sizes_m: np.ndarray,
        matrices: np.ndarray,
        meta: Mapping[str, Any] | None = None,
    ) -> Structure:
        """A structure from parallel arrays (no annotations)."""
        return cls(tuple(names), sizes_m, matrices, meta=dict(meta or {}))

    @classmethod
    def from_aabbs(cls, names: Sequence[str], lo_m: np.ndarray, hi_m: np.ndarray) -> Structure:
        """Axis-aligned members from world corner arrays of shape ``(n, 3)``."""
        lo, hi = np.asarray(lo_m, dtype=np.float64), np.asarray(hi_m, dtype=np.float64)
        mats = np.tile(np.eye(4), (len(names), 1, 1))
        mats[:, :3, 3] = (lo + hi) / 2.0
        return cls(tuple(names), hi - lo, mats)

    # -- access -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i: int) -> Member:
        return Member(
            self.names[i], self.sizes_m[i], self.matrices[i],
            phase=self.phases[i], section=self.sections[i], supported_by=self.supported_by[i],
        )  # fmt: skip

    def members(self) -> list[Member]:
        """The members as objects (slow path; the validator uses the arrays)."""
        return [self[i] for i in range(len(self))]

    def subset(self, index: Sequence[int] | np.ndarray) -> Structure:
        """A new structure with the members at ``index`` (ints or a boolean mask), in that order."""
        idx = np.arange(len(self))[np.asarray(index)] if len(self) else np.zeros(0, dtype=int)
        pick = [int(i) for i in idx]
        return Structure(
            names=tuple(self.names[i] for i in pick),
            sizes_m=self.sizes_m[idx],
            matrices=self.matrices[idx],
            phases=tuple(self.phases[i] for i in pick),
            sections=tuple(self.sections[i] for i in pick),
            supported_by=tuple(self.supported_by[i] for i in pick),
            meta=dict(self.meta),
        )

    def concat(self, other: Structure) -> Structure:
        """Members of ``self`` followed by those of ``other`` (meta of ``self``)."""
        return Structure(
            names=self.names + other.names,
            sizes_m=np.concatenate([self.sizes_m, other.sizes_m]),
            matrices=np.concatenate([self.matrices, other.matrices]),
            phases=self.phases + other.phases,
            sections=self.sections + other.sections,
            supported_by=self.supported_by + other.supported_by,
            meta=dict(self.meta),
        )

    # -- derived ------------------------------------------------------------------------
    @cached_property
    def categories(self) -> tuple[str | None, ...]:
        """Lenient category per member (see :func:`classify`); ``None`` when unknown."""
        return tuple(classify_many(self.names))

    @cached_property
    def category_codes(self) -> np.ndarray:
        """Index into :data:`CATEGORIES` per member, :data:`UNKNOWN_CODE` when unknown; shape ``(n,)``."""
        return np.array(list(map(_CODE_OF.__getitem__, self.categories)), dtype=np.int16)

    @cached_property
    def centers_m(self) -> np.ndarray:
        """World box centres, shape ``(n, 3)``."""
        return self.matrices[:, :3, 3].copy()

    @cached_property
    def half_extents_world_m(self) -> np.ndarray:
        """Half sizes of the world AABBs, shape ``(n, 3)``: ``|R| @ (size / 2)``.

        Any stored numbers are allowed (NaN, huge): those rows come out NaN or inf, silently.
        """
        with np.errstate(all="ignore"):
            return _rotate(np.abs(self.matrices[:, :3, :3]), self.sizes_m[:, None, :] / 2.0)[:, 0, :]

    @cached_property
    def aabb_min_m(self) -> np.ndarray:
        """World AABB lower corners, shape ``(n, 3)``."""
        with np.errstate(all="ignore"):
            return self.centers_m - self.half_extents_world_m

    @cached_property
    def aabb_max_m(self) -> np.ndarray:
        """World AABB upper corners, shape ``(n, 3)``."""
        with np.errstate(all="ignore"):
            return self.centers_m + self.half_extents_world_m

    def corners_world_m(self) -> np.ndarray:
        """The 8 world corners of every box in Blender ``bound_box`` order, shape ``(n, 8, 3)``."""
        signs = np.array(
            [
                [-1, -1, -1],
                [-1, -1, 1],
                [-1, 1, 1],
                [-1, 1, -1],
                [1, -1, -1],
                [1, -1, 1],
                [1, 1, 1],
                [1, 1, -1],
            ],
            dtype=np.float64,
        )
        local = signs[None, :, :] * (self.sizes_m[:, None, :] / 2.0)
        return _rotate(self.matrices[:, :3, :3], local) + self.centers_m[:, None, :]

    # -- geometry ------------------------------------------------------------------------
    def to_boxes(self) -> Boxes:
        """The members as :class:`buildbench.geometry.Boxes` (same order).

        Raises:
            ValueError: When a member has non-finite or negative sizes or a non-rotation
                transform (the message names its index); validate first to see them all.
        """
        return Boxes(self.centers_m, self.sizes_m / 2.0, self.matrices[:, :3, :3])

    @classmethod
    def from_boxes(
        cls, boxes: Boxes, names: Sequence[str], meta: Mapping[str, Any] | None = None
    ) -> Structure:
        """Members named ``names`` from a batch of oriented boxes."""
        if len(names) != len(boxes):
            raise ValueError(f"Structure.from_boxes: {len(names)} names for {len(boxes)} boxes")
        mats = np.tile(np.eye(4), (len(boxes), 1, 1))
        mats[:, :3, :3] = boxes.rotations
        mats[:, :3, 3] = boxes.centers
        return cls(tuple(names), boxes.half_extents * 2.0, mats, meta=dict(meta or {}))

    # -- JSON ---------------------------------------------------------------------------
    def to_submission(self) -> dict[str, Any]:
        """The released harness's submission dict (spec §2.2), values rounded to 6 decimals."""
        corners = np.round(self.corners_world_m(), 6)
        return {
            "members": [
                {
                    "name": self.names[i],
                    "location": np.round(self.centers_m[i], 6).tolist(),
                    "dimensions": np.round(self.sizes_m[i], 6).tolist(),
                    "bbox_world_corners": corners[i].tolist(),
                    "matrix_world": np.round(self.matrices[i], 6).tolist(),
                }
                for i in range(len(self))
            ]
        }

    def to_json_dict(self) -> dict[str, Any]:
        """Our own lossless JSON form (annotations and meta included)."""
        members = []
        for i in range(len(self)):
            entry: dict[str, Any] = {
                "name": self.names[i],
                "size_m": self.sizes_m[i].tolist(),
                "matrix_world": self.matrices[i].tolist(),
            }
            if self.phases[i] is not None:
                entry["phase"] = self.phases[i]
            if self.sections[i] is not None:
                entry["section"] = self.sections[i]
            if self.supported_by[i]:
                entry["supported_by"] = list(self.supported_by[i])
            members.append(entry)
        return {"format": FORMAT_ID, "version": FORMAT_VERSION, "meta": self.meta, "members": members}

    def save(self, path: str | Path, *, released: bool = False) -> None:
        """Write our JSON form, or the released submission form when ``released``."""
        doc = self.to_submission() if released else self.to_json_dict()
        Path(path).write_text(json.dumps(doc, indent=1, allow_nan=True))

