"""Arrays every test shares, computed once per validation and only when first needed.

Members whose geometry is unusable (non-finite numbers, non-positive sizes, a transform
that is not a rotation) are left out of every geometric test; the member check reports
them. Contact detection is the sort-and-sweep broad phase of ``buildbench.geometry`` over
world AABBs (no all-pairs loop), run once at the largest tolerance any test needs and
filtered per test.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from buildbench.geometry import AABBs, aabb_pairs

from ..model import CATEGORIES, Structure
from ..model.rigid import orthogonality_error
from .config import ValidatorConfig

#: Largest deviation of RᵀR from I accepted as a rotation (the released export rounds to 1e-6).
_ROTATION_TOL = 1e-3


@dataclass(frozen=True)
class Pairs:
    """Unordered member index pairs ``(i, j)``, ``i != j``, with their per-axis AABB gaps (m)."""

    i: np.ndarray
    j: np.ndarray
    gap: np.ndarray  # shape (k, 3): max(0, max(lo) - min(hi)) per axis

    def within(self, tol_m: float) -> Pairs:
        """The pairs whose gap is at most ``tol_m`` on every axis."""
        if self.gap.size == 0 or self.gap.max() <= tol_m:
            return self
        keep = (self.gap <= tol_m).all(axis=1)
        return Pairs(self.i[keep], self.j[keep], self.gap[keep])


class TooManyPairs(Exception):
    """The broad phase found more candidate pairs than the configured cap."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.count = count


def _sweep_axis(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort by lower bound; count, per sorted box, the later boxes starting within it."""
    order = np.argsort(lo, kind="stable")
    end = np.searchsorted(lo[order], hi[order], side="right")
    return order, np.maximum(end - np.arange(lo.size) - 1, 0)


def _gaps(lo: np.ndarray, hi: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, np.maximum(lo[i], lo[j]) - np.minimum(hi[i], hi[j]))


def sweep_pairs(
    lo: np.ndarray, hi: np.ndarray, tol_m: float, max_pairs: int, chunk: int = 2_000_000, block: int = 500_000
) -> Pairs:
    """All pairs of boxes whose AABB gap is at most ``tol_m`` on every axis.

    Every box grows by ``tol_m / 2`` per face, so touching grown boxes are exactly the
    pairs within ``tol_m``. Up to ``chunk`` sweep candidates this is the sort-and-sweep of
    :func:`buildbench.geometry.aabb_pairs`, which holds all candidates at once; beyond that
    (dense scenes of many thousands of boxes) the same sweep runs here over ``block``
    candidates at a time (small blocks stay in cache), keeping only true pairs.

    Raises:
        TooManyPairs: When more than ``max_pairs`` pairs would be held, or the sweep would
            examine more than 20 × ``max_pairs`` candidates.
    """
    empty = np.zeros(0, dtype=np.intp)
    if len(lo) < 2:
        return Pairs(empty, empty, np.zeros((0, 3)))
    g_lo, g_hi = lo - tol_m / 2.0, hi + tol_m / 2.0
    if len(lo) * (len(lo) - 1) // 2 <= chunk:
        # Fewer pairs in all than one chunk (a house of ≤ 2,000 members): no sweep can exceed it.
        order, counts, total = np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp), 0
    else:
        # One axis usually settles it; aabb_pairs then picks its own best axis.
        sweeps = [_sweep_axis(g_lo[:, 0], g_hi[:, 0])]
        if int(sweeps[0][1].sum()) > chunk:
            sweeps += [_sweep_axis(g_lo[:, k], g_hi[:, k]) for k in (1, 2)]
        order, counts = min(sweeps, key=lambda oc: int(oc[1].sum()))
        total = int(counts.sum())
    if total <= chunk:
        pairs = aabb_pairs(AABBs(g_lo, g_hi))
        i, j = pairs[:, 0].astype(np.intp), pairs[:, 1].astype(np.intp)
    elif total > 20 * max_pairs:
        raise TooManyPairs(total)
    else:
        i, j = _blockwise(g_lo, g_hi, order, counts, block, max_pairs)
    gap = _gaps(lo, hi, i, j)
    # Growing by tol/2 can round a gap of exactly tol either way; the gap test decides.
    keep = (gap <= tol_m).all(axis=1)
    return Pairs(i[keep], j[keep], gap[keep])


def _blockwise(
    lo: np.ndarray, hi: np.ndarray, order: np.ndarray, counts: np.ndarray, chunk: int, max_pairs: int
) -> tuple[np.ndarray, np.ndarray]:
    """The sort-and-sweep expansion over sorted boxes, ``chunk`` candidates at a time.

    Candidates are filtered one axis at a time on contiguous per-axis arrays, so most are
    dropped after two 1-D gathers.
    """
    lo_t, hi_t = np.ascontiguousarray(lo.T), np.ascontiguousarray(hi.T)
    csum = np.cumsum(counts)
    out_i: list[np.ndarray] = []
    out_j: list[np.ndarray] = []
    found = 0
    start = 0
    while start < counts.size:
        base = int(csum[start - 1]) if start else 0
        stop = max(int(np.searchsorted(csum, base + chunk, side="right")), start + 1)
        cnt = counts[start:stop]
        a = np.repeat(np.arange(start, stop), cnt)
        b = a + 1 + (np.arange(a.size) - np.repeat(np.cumsum(cnt) - cnt, cnt))
        i, j = order[a], order[b]
        for k in range(3):
            keep = (lo_t[k][i] <= hi_t[k][j]) & (lo_t[k][j] <= hi_t[k][i])
            i, j = i[keep], j[keep]
        out_i.append(i)
        out_j.append(j)
        found += i.size
        if found > max_pairs:
            raise TooManyPairs(found)
        start = stop
    return np.concatenate(out_i), np.concatenate(out_j)


class Context:
    """Derived arrays of one structure under one config (lazily computed, then cached)."""

    def __init__(self, structure: Structure, config: ValidatorConfig) -> None:
        self.s = structure
        self.cfg = config
        self.n = len(structure)
        self.names = structure.names
        self.memo: dict[object, object] = {}  # results shared by several tests (e.g. the roof grid)
        self.pair_overflow = 0  # pairs or candidates counted when contact detection gave up

    # -- geometry validity --------------------------------------------------------------
    @cached_property
    def finite(self) -> np.ndarray:
        """Members whose sizes and matrices are finite numbers within ``max_coordinate_m``."""
        with np.errstate(invalid="ignore"):
            sizes = np.abs(self.s.sizes_m) <= self.cfg.max_coordinate_m
            mats = np.abs(self.s.matrices) <= self.cfg.max_coordinate_m
        return sizes.all(axis=1) & mats.all(axis=(1, 2))

    @cached_property
    def positive(self) -> np.ndarray:
        """Members at least ``min_size_m`` thick on every axis (NaN counts as not)."""
        return np.all(self.s.sizes_m >= self.cfg.min_size_m, axis=1)

    @cached_property
    def rigid(self) -> np.ndarray:
        """Members whose transform is a rotation (+ translation) after scale is stripped."""
        mats = np.where(self.finite[:, None, None], self.s.matrices, np.eye(4))  # judged by `finite`
        rot = mats[:, :3, :3]
        # An identity rotation (most members of a frame) has no error; the product is for the rest.
        moved = ~(rot == np.eye(3)).all(axis=(1, 2))
        err = np.zeros(self.n)
        # A fixed-order sum, not ``@`` (BLAS, whose kernel depends on the CPU): a member's error
        # right at the tolerance is then judged alike on every machine.
        err[moved] = orthogonality_error(rot[moved])
        bottom = np.abs(mats[:, 3, :] - [0.0, 0.0, 0.0, 1.0]).max(axis=1, initial=0.0)
        return (err <= _ROTATION_TOL) & (bottom <= _ROTATION_TOL)

    @cached_property
    def valid(self) -> np.ndarray:
        """Members usable by the geometric tests."""
        return self.finite & self.positive & self.rigid

    # -- categories ---------------------------------------------------------------------
    @cached_property
    def codes(self) -> np.ndarray:
        """Category code per member (lenient naming), shape ``(n,)``."""
        return self.s.category_codes

    def of(self, *categories: str) -> np.ndarray:
        """Mask of valid members whose category is one of ``categories`` (cached per set)."""
        key = ("of", *categories)
        if key not in self.memo:
            # Look-up table indexed by code; the extra last slot takes UNKNOWN_CODE (-1).
            lut = np.zeros(len(CATEGORIES) + 1, dtype=bool)
            lut[[CATEGORIES.index(c) for c in categories]] = True
            self.memo[key] = self.valid & lut[self.codes]
        return self.memo[key]  # type: ignore[return-value]

    # -- boxes --------------------------------------------------------------------------
    @cached_property
    def lo(self) -> np.ndarray:
        """World AABB lower corners; rows of invalid members are 0."""
        return np.where(self.valid[:, None], self.s.aabb_min_m, 0.0)

    @cached_property
    def hi(self) -> np.ndarray:
        """World AABB upper corners; rows of invalid members are 0."""
        return np.where(self.valid[:, None], self.s.aabb_max_m, 0.0)

    @cached_property
    def ext(self) -> np.ndarray:
        """World AABB extents Δx, Δy, Δz."""
        return self.hi - self.lo

    @cached_property
    def local_sorted(self) -> np.ndarray:
        """Local sizes sorted ascending: (thickness, depth, length), metres."""
        return np.sort(np.where(self.valid[:, None], self.s.sizes_m, 0.0), axis=1)

    @cached_property
    def long_dir(self) -> np.ndarray:
        """World unit vector of each member's longest local axis, shape ``(n, 3)``."""
        k = np.argmax(np.where(self.valid[:, None], self.s.sizes_m, 0.0), axis=1)
        rot = np.where(self.valid[:, None, None], self.s.matrices[:, :3, :3], np.eye(3))
        return rot[np.arange(self.n), :, k]

    @cached_property
    def plan_length(self) -> np.ndarray:
        """Horizontal projection of each member's length (IRC spans are horizontal), metres."""
        return self.local_sorted[:, 2] * np.hypot(self.long_dir[:, 0], self.long_dir[:, 1])

    @cached_property
    def grounded(self) -> np.ndarray:
        """Paper T1 Def. 2: valid members with z⁻ below the ground threshold."""
        return self.valid & (self.lo[:, 2] < self.cfg.ground_z_m)

    # -- contacts -----------------------------------------------------------------------
    @cached_property
    def near_pairs(self) -> Pairs | None:
        """Valid pairs within the largest tolerance any test uses; None past the pair cap."""
        idx = np.flatnonzero(self.valid)
        try:
            p = sweep_pairs(self.lo[idx], self.hi[idx], self.cfg.search_tol_m, self.cfg.max_contact_pairs)
        except TooManyPairs as exc:
            self.pair_overflow = exc.count
            return None
        return Pairs(idx[p.i], idx[p.j], p.gap)

    @cached_property
    def contacts(self) -> Pairs | None:
        """Paper T1 Def. 1 contact pairs (gap ≤ ε on every axis); None past the pair cap."""
        near = self.near_pairs
        return None if near is None else near.within(self.cfg.contact_tol_m)

    def overflow_message(self) -> str:
        """Why a contact-based test could not run."""
        return (
            f"contact detection stopped: {self.pair_overflow:,} member pairs to examine exceed the cap "
            f"({self.cfg.max_contact_pairs:,} pairs in contact, 20× that many candidates); too many "
            f"coincident or overlapping boxes"
        )

    @cached_property
    def supported(self) -> np.ndarray | None:
        """Paper T1 Def. 3 σ: valid members connected through contacts to a grounded one."""
        c = self.contacts
        if c is None:
            return None
        # A CSR graph built here (rows by a counting sort) and stored in the dtypes csgraph
        # works in: a COO matrix cost more to convert than the component search itself.
        order = np.argsort(c.i, kind="stable")
        indptr = np.zeros(self.n + 1, dtype=np.int32)
        np.cumsum(np.bincount(c.i, minlength=self.n), out=indptr[1:])
        graph = csr_matrix((np.ones(len(c.i)), c.j[order].astype(np.int32), indptr), shape=(self.n, self.n))
        count, labels = connected_components(graph, directed=False)
        grounded = np.zeros(count, dtype=bool)
        grounded[labels[self.grounded]] = True
        return self.valid & grounded[labels]

    def cap(self, messages: list[str]) -> tuple[str, ...]:
        """Keep the first ``max_messages`` lines and count the rest."""
        k = self.cfg.max_messages
        if len(messages) <= k:
            return tuple(messages)
        return tuple(messages[:k]) + (f"… and {len(messages) - k} more",)
