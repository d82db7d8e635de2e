"""Batched member accumulation: the generator emits members in arrays, not one by one.

Every framing routine adds a *batch* (all studs of a wall, all joists of a bay…) with
numpy arrays of centres and sizes; :meth:`FrameBuilder.finish` turns the batches into the
parallel arrays of a :class:`~buildbench.suites.dreamhouse.model.Structure` with one
vectorised rotation build. Axis-aligned members carry their world extents as local sizes
and an identity rotation; sloped members (rafters) carry local sizes ``(length, thickness,
depth)`` along their own axis and a yaw/pitch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import NamedTuple

import numpy as np

from buildbench.suites.dreamhouse.model import Structure, libm

#: Thickness of dimension lumber, metres (nominal 2x = 1.5 in = 38 mm; paper appendix T4).
T2X = 0.038
#: Actual depths of 2x4 … 2x12 in metres (paper appendix T4: 89, 140, 184, 235, 286 mm).
D2X4, D2X6, D2X8, D2X10, D2X12 = 0.089, 0.140, 0.184, 0.235, 0.286
#: Post sections (4x4 = 89 mm, 6x6 = 140 mm square; paper appendix T4).
POST4, POST6 = 0.089, 0.140
#: On-centre spacings (paper §3.1: 16 in studs/joists, 24 in rafters), exact inch values.
OC16, OC24 = 0.4064, 0.6096
#: Planning module: footprints are whole multiples of 4 ft (3 x 16 in = 2 x 24 in), so the
#: 16 in and 24 in layouts line up in every section (the example task is 24 ft x 36 ft,
#: 7.32 m x 10.97 m; released walkthrough).
MODULE = 1.2192
#: Story height floor to floor (paper Prompt 0 Part 2: stories at 0.3, 3.0, 5.7 m).
STORY_H = 2.7
#: Floor frame depth: 2x6 sill flat + 2x10 rim/joist (spec §2.1 [D]: 0.038 + 0.235 ≈ 0.3 m).
FLOOR_DEPTH = T2X + D2X10
#: Wall height between floor decks: story height less the next floor's joist depth.
WALL_H = STORY_H - D2X10
#: Stud length: wall height less a sole plate and a doubled top plate.
STUD_H = WALL_H - 3 * T2X

#: A scalar or a 1-D array that broadcasts against the other arguments of a batch.
Num = float | np.ndarray

PHASE_CODES: tuple[str, ...] = ("foundation", "floor", "walls", "roof")
FOUNDATION, FLOOR, WALLS, ROOF = range(4)


class _Batch(NamedTuple):
    # A plain tuple: a house adds ~150 batches, and a dataclass's __init__ cost more than
    # the numpy work of a small batch.
    stem: str
    first: int  # number of the batch's first member within its stem
    k: int
    # centres and sizes, or (aabb) the world corners lo and hi, each (k, 3): the corners of
    # all batches become centres and sizes in one pass in FrameBuilder.finish
    a: np.ndarray
    b: np.ndarray
    aabb: bool
    yaw: np.ndarray | float
    pitch: np.ndarray | float
    phase: int
    section: str
    story: int
    parents: np.ndarray  # (k,) int64


@dataclass(frozen=True)
class FrameArrays:
    """Finished members as parallel arrays.

    Attributes:
        names: Unique member names.
        sizes_m: Local box sizes (metres), shape ``(n, 3)``.
        matrices: World transforms, shape ``(n, 4, 4)``.
        phase_codes: Index into :data:`PHASE_CODES` per member.
        sections: Section name per member.
        stories: Story index (0 = ground) per member; roof members carry the top story.
        parents: Index of the member each one bears on, ``-1`` for the ground.
        stems: Name stem and member count of each batch, in order (members are named
            ``{stem}_{i:03d}``).
    """

    names: tuple[str, ...]
    sizes_m: np.ndarray
    matrices: np.ndarray
    phase_codes: np.ndarray
    sections: tuple[str, ...]
    stories: np.ndarray
    parents: np.ndarray
    stems: tuple[tuple[str, int], ...] = ()

    def named(self, prefix: str) -> np.ndarray:
        """Mask of the members whose name starts with ``prefix`` (which holds no ``_``).

        Decided per batch: a name is its stem, ``_`` and a number, so a prefix without
        ``_`` starts the name exactly when it starts the stem.
        """
        if "_" in prefix:
            raise ValueError(f"FrameArrays.named: prefix {prefix!r} must not contain '_'")
        counts = [k for _, k in self.stems]
        if sum(counts) != len(self.names):  # arrays made without their batches
            return np.array([n.startswith(prefix) for n in self.names], dtype=bool)
        return np.repeat(np.array([stem.startswith(prefix) for stem, _ in self.stems], dtype=bool), counts)

    def to_structure(self, meta: dict[str, object]) -> Structure:
        """The frame as a validator-ready :class:`Structure` with phase/section/support annotations."""
        phases = tuple(map(PHASE_CODES.__getitem__, self.phase_codes.tolist()))
        # Parent -1 (the ground) picks the last entry: no support.
        bears_on: list[tuple[str, ...]] = list(zip(self.names))
        bears_on.append(())
        supported = tuple(map(bears_on.__getitem__, self.parents.tolist()))
        return Structure(self.names, self.sizes_m, self.matrices, phases, self.sections, supported, meta=meta)


def rows(*values: Num) -> int:
    """Common length of scalars and 1-D arrays that broadcast together (0 if any array is empty)."""
    k = 1
    for v in values:
        # A plain loop: this runs for every batch, where a list of lengths cost more.
        if type(v) is np.ndarray and v.ndim:
            n = v.shape[0]
            if n == 0:
                return 0
            k = max(k, n)
    return k


def rotation_matrices(yaw: np.ndarray, pitch: np.ndarray) -> np.ndarray:
    """Rotations ``Rz(yaw) @ Ry(-pitch)``: the local +x axis rises by ``pitch`` towards heading ``yaw``.

    Args:
        yaw: Heading of the local x axis in the plan, radians from +x, shape ``(n,)``.
        pitch: Elevation of the local x axis above the horizontal, radians, shape ``(n,)``.

    Returns:
        Rotation matrices of shape ``(n, 3, 3)``.
    """
    # libm, not np.sin/np.cos: numpy's kernel (SVML on AVX-512) would make the bits depend on the CPU.
    (cy, sy), (cp, sp) = libm.cos_sin(yaw), libm.cos_sin(pitch)
    rot = np.empty((len(yaw), 3, 3))
    rot[:, 0, 0], rot[:, 0, 1], rot[:, 0, 2] = cy * cp, -sy, -cy * sp
    rot[:, 1, 0], rot[:, 1, 1], rot[:, 1, 2] = sy * cp, cy, -sy * sp
    rot[:, 2, 0], rot[:, 2, 1], rot[:, 2, 2] = sp, 0.0, cp
    return rot


@dataclass
class FrameBuilder:
    """Collects member batches in construction order and numbers them."""

    _batches: list[_Batch] = field(default_factory=list)
    _count: int = 0
    _stems: dict[str, int] = field(default_factory=dict)
    _sloped: list[int] = field(default_factory=list)  # batches with a yaw or pitch

    def add(
        self,
        prefix: str,
        tag: str,
        centers: np.ndarray,
        sizes: np.ndarray,
        *,
        phase: int,
        section: str,
        story: int,
        parents: np.ndarray | int = -1,
        yaw: np.ndarray | float = 0.0,
        pitch: np.ndarray | float = 0.0,
    ) -> np.ndarray:
        """Add ``k`` members named ``{prefix}_{section}_{tag}_{i:03d}``; return their indices.

        Numbering continues across batches with the same stem, so names stay unique.

        Args:
            prefix: Taxonomy prefix (``Stud``, ``Joist``…), which decides the category.
            tag: Where the batch sits (``s1_front``); keeps names unique and readable.
            centers: Box centres, metres, shape ``(k, 3)``.
            sizes: Local sizes, metres, shape ``(k, 3)`` (or ``(3,)`` for all).
            phase: Phase code (:data:`FOUNDATION` … :data:`ROOF`).
            section: Section name.
            story: Story index (0 = ground floor).
            parents: Supporting member index per member (or one for all); ``-1`` = ground.
            yaw: Plan heading of the local x axis (radians), scalar or ``(k,)``.
            pitch: Slope of the local x axis (radians), scalar or ``(k,)``.
        """
        centers = _corners(centers)
        sizes = np.asarray(sizes, dtype=np.float64)
        if sizes.shape != centers.shape:
            sizes = np.broadcast_to(sizes, centers.shape)
        return self._append(prefix, tag, centers, sizes, False, phase, section, story, parents, yaw, pitch)

    def add_aabb(
        self,
        prefix: str,
        tag: str,
        lo: np.ndarray,
        hi: np.ndarray,
        *,
        phase: int,
        section: str,
        story: int,
        parents: Num = -1,
    ) -> np.ndarray:
        """Add axis-aligned members spanning world corners ``lo`` … ``hi`` (each ``(k, 3)``)."""
        lo, hi = _corners(lo), _corners(hi)
        if lo.shape != hi.shape:
            lo, hi = np.broadcast_arrays(lo, hi)
        return self._append(prefix, tag, lo, hi, True, phase, section, story, parents, 0.0, 0.0)

    def _append(
        self, prefix: str, tag: str, a: np.ndarray, b: np.ndarray, aabb: bool, phase: int, section: str,
        story: int, parents: Num, yaw: np.ndarray | float, pitch: np.ndarray | float,
    ) -> np.ndarray:  # fmt: skip
        k = len(a)
        if k == 0:
            return np.zeros(0, dtype=np.int64)
        stem = f"{prefix}_{section}_{tag}" if tag else f"{prefix}_{section}"
        first = self._stems.get(stem, 0)
        self._stems[stem] = first + k
        if type(parents) is not np.ndarray or parents.shape != (k,):
            parents = np.full(k, parents, dtype=np.int64)
        if type(yaw) is not float or yaw or type(pitch) is not float or pitch:
            self._sloped.append(len(self._batches))
        self._batches.append(_Batch(stem, first, k, a, b, aabb, yaw, pitch, phase, section, story, parents))
        start = self._count
        self._count += k
        return np.arange(start, start + k)

    def finish(self) -> FrameArrays:
        """All batches as one set of arrays, transforms built in one vectorised pass."""
        b = self._batches
        n = self._count
        if not b:
            return _no_members()
        stems, _, counts, a_parts, b_parts, aabbs, _, _, phase, sections, story, parents = zip(*b, strict=True)
        a, c = np.concatenate(a_parts), np.concatenate(b_parts)
        aabb = np.repeat(np.array(aabbs, dtype=bool), counts)[:, None]
        mats = np.zeros((n, 4, 4))
        # Level members (most) all get the rotation of yaw = pitch = 0 (signed zeros included);
        # only the members of sloped batches need their own.
        mats[:, :3, :3] = _LEVEL
        if self._sloped:
            ends = np.cumsum(counts).tolist()
            rows = np.concatenate([np.arange(ends[i] - b[i].k, ends[i]) for i in self._sloped])
            yaw, pitch = np.zeros(len(rows)), np.zeros(len(rows))
            at = 0
            for i in self._sloped:
                x = b[i]
                # As for level batches, a float zero (-0.0 too) leaves the +0.0 in place.
                if not isinstance(x.yaw, float) or x.yaw:
                    yaw[at : at + x.k] = x.yaw
                if not isinstance(x.pitch, float) or x.pitch:
                    pitch[at : at + x.k] = x.pitch
                at += x.k
            mats[rows, :3, :3] = rotation_matrices(yaw, pitch)
        mats[:, :3, 3] = np.where(aabb, (a + c) / 2.0, a)
        mats[:, 3, 3] = 1.0
        return FrameArrays(
            names=tuple(chain.from_iterable(map(x.stem.__add__, _numbers(x.first, x.k)) for x in b)),
            sizes_m=np.where(aabb, c - a, c),
            matrices=mats,
            phase_codes=np.repeat(np.array(phase, dtype=np.int8), counts),
            sections=tuple(chain.from_iterable(map(repeat, sections, counts))),
            stories=np.repeat(np.array(story, dtype=np.int8), counts),
            parents=np.concatenate(parents).astype(np.int64, copy=False),
            stems=tuple(zip(stems, counts, strict=True)),
        )


_F64 = np.dtype(np.float64)
_LEVEL = rotation_matrices(np.zeros(1), np.zeros(1))[0]


def _corners(v: np.ndarray) -> np.ndarray:
    """``v`` as a float64 ``(k, 3)`` array (no copy when it already is one)."""
    if type(v) is np.ndarray and v.dtype is _F64 and v.ndim == 2 and v.shape[1] == 3:
        return v
    return np.asarray(v, dtype=np.float64).reshape(-1, 3)


def _no_members() -> FrameArrays:
    zeros = np.zeros(0, dtype=np.int8)
    return FrameArrays((), np.zeros((0, 3)), np.zeros((0, 4, 4)), zeros, (), zeros, np.zeros(0, dtype=np.int64))


_NUMBERS: list[str] = []


def _numbers(first: int, k: int) -> list[str]:
    """Name suffixes ``_{i:03d}`` for ``i`` in ``first + 1 … first + k`` (made once, reused)."""
    while len(_NUMBERS) < first + k:
        _NUMBERS.append(f"_{len(_NUMBERS) + 1:03d}")
    return _NUMBERS[first : first + k]
