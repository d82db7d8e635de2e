"""The shortcuts of the issue-24 speed work give what the plain computation gives, bit for bit,
including on inputs the generated dataset never holds (the snapshots cover the houses)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from buildbench.suites.dreamhouse.generate import generate_structure
from buildbench.suites.dreamhouse.generate.dataset import _records_table, _table_rows, house_record
from buildbench.suites.dreamhouse.generate.frame import ROOF, WALLS, FrameBuilder, rotation_matrices
from buildbench.suites.dreamhouse.model.rigid import _nearest_rotations, _rigid_rotations, rigid
from buildbench.suites.dreamhouse.model.taxonomy import classify, classify_many


def _rotation(yaw: float, pitch: float) -> np.ndarray:
    cy, sy, cp, sp = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch)
    return np.array([[cy * cp, -sy, -cy * sp], [sy * cp, cy, -sy * sp], [sp, 0.0, cp]])


def _odd_matrices() -> np.ndarray:
    """Identity, rounded and repeated rotations, mirrored, scaled, sheared, zero and NaN transforms."""
    rots = [np.eye(3), np.round(_rotation(0.3, 0.6), 6), np.round(_rotation(0.3, 0.6), 6), _rotation(1.0, -0.2),
            np.diag([-1.0, 1.0, 1.0]), 2.5 * np.eye(3), np.array([[1, 0.5, 0], [0, 1, 0], [0, 0, 1.0]]),
            np.zeros((3, 3)), np.full((3, 3), np.nan), np.eye(3), np.round(0.089 * _rotation(2.0, 0.4), 6)]
    m = np.tile(np.eye(4), (len(rots), 1, 1))
    m[:, :3, :3] = rots
    m[:, :3, 3] = np.arange(3 * len(rots)).reshape(-1, 3)
    return m


def test_nearest_rotations_are_the_polar_factor_matrix_by_matrix() -> None:
    """The fixed-step polar iteration gives ``U Vᵀ`` of the SVD to rounding, a proper rotation
    orthogonal to a few ulps, and each matrix's result alone (the same in any batch)."""
    mats = np.round(np.stack([_rotation(a, b) for a, b in [(0.1, 0.5), (0.7, 0.2), (0.1, 0.5), (2.9, -1.2)]]), 5)
    sheared = np.eye(3)
    sheared[0, 1] = 9.9e-4  # just below _ROUNDING_SHEAR once normalised
    mats = np.concatenate([mats, (sheared / np.linalg.norm(sheared, axis=0))[None]])
    got = _nearest_rotations(mats)
    u, _, vt = np.linalg.svd(mats)
    assert np.abs(got - u @ vt).max() < 1e-14
    assert np.abs(np.einsum("nki,nkj->nij", got, got) - np.eye(3)).max() <= 4 * np.finfo(float).eps
    assert np.allclose(np.linalg.det(got), 1.0)
    assert all(np.array_equal(_nearest_rotations(mats[[i]])[0], got[i]) for i in range(len(mats)))
    assert np.array_equal(got[0], got[2])


def test_rigid_skips_identity_rotations_without_changing_any_matrix() -> None:
    m = _odd_matrices()
    full = m.copy()
    full[:, :3, :3] = _rigid_rotations(m[:, :3, :3])
    assert np.array_equal(rigid(m), full, equal_nan=True)
    assert np.array_equal(rigid(m[[0, 9]]), m[[0, 9]])  # all identity: kept as given
    assert np.array_equal(rigid(m[[3]]), full[[3]])  # none identity


def test_classify_many_matches_classify_name_by_name() -> None:
    names = ["Stud_1", "stud_x", "Wall_Trimmer_2", "", " ", "_Rim", "BeamPost", "Raf_3", "HIP_9", "xx",
             "GableStud_02", "Trimmer", "post", "Plate_a_b", "Foundation", "Rafter", "Ridgeline_1"]
    for strict in (False, True):
        assert classify_many(names, strict=strict) == [classify(n, strict=strict) for n in names]


def test_frame_batches_name_members_and_find_prefixes_as_the_names_do() -> None:
    frame = generate_structure("CR_03_1018").built.frame
    assert len(set(frame.names)) == len(frame.names)
    for prefix in ("Rafter", "Stud", "Stu", "GableStud", "Sheathing", "R"):
        assert np.array_equal(frame.named(prefix), [n.startswith(prefix) for n in frame.names]), prefix
    with pytest.raises(ValueError, match="must not contain"):
        frame.named("Stud_s1")


def test_parquet_tables_from_member_arrays_equal_the_tables_of_lists() -> None:
    houses = [generate_structure(t) for t in ("CY_01_0000", "AF_02_0033")]
    lists = [house_record(h) for h in houses]
    arrays = [house_record(h, as_lists=False) for h in houses]
    expected = pa.Table.from_pylist(lists)
    ours = _records_table(arrays)
    assert ours.schema == expected.schema and ours.equals(expected)
    # A column of only empty lists is list<null> in from_pylist; the arrays path keeps that type.
    for r in arrays:
        r["skin_names"], r["skin_sizes_m"], r["skin_matrices"] = [], np.zeros(0), np.zeros(0)
    for r in lists:
        r["skin_names"], r["skin_sizes_m"], r["skin_matrices"] = [], [], []
    expected = pa.Table.from_pylist(lists)
    ours = _records_table(arrays)
    assert ours.schema == expected.schema and ours.equals(expected)


def test_table_rows_read_member_arrays_as_the_lists_hold_them() -> None:
    records = [house_record(generate_structure(t)) for t in ("CY_01_0000", "AF_02_0033", "BN_01_0007")]
    table = pa.concat_tables([pa.Table.from_pylist(records[:1]), pa.Table.from_pylist(records[1:])]).slice(1)
    for ours, plain in zip(_table_rows(table), table.to_pylist(), strict=True):
        assert ours.keys() == plain.keys()
        for k, v in plain.items():
            got = ours[k]
            if isinstance(got, np.ndarray):
                assert got.dtype == np.float64 and got.flags.writeable
                assert np.array_equal(got, np.asarray(v, dtype=np.float64)), k
            else:
                assert got == v, k


def test_frame_builder_rotations_and_supports_equal_the_per_member_computation() -> None:
    """Level batches share one rotation and only sloped batches compute theirs; a float zero
    yaw or pitch (-0.0 too) counts as none, an array of zeros as given; parents may be one
    index, a per-member array or an array of one."""
    fb = FrameBuilder()
    centers = np.arange(9, dtype=np.float64).reshape(3, 3)
    fb.add_aabb("Stud", "a", centers, centers + 1.0, phase=WALLS, section="main", story=0)
    fb.add("Rafter", "r", centers, np.ones(3), phase=ROOF, section="main", story=0, parents=np.array([0, 1, 2]),
           yaw=-0.0, pitch=np.array([0.3, -0.0, 0.5]))
    fb.add("Rafter", "s", centers[:2], np.ones(3), phase=ROOF, section="main", story=0, parents=np.array([4]),
           yaw=np.zeros(2), pitch=0.2)
    fb.add("Joist", "j", centers[:1], np.ones(3), phase=ROOF, section="main", story=0, yaw=-0.0, pitch=-0.0)
    fa = fb.finish()
    yaw = np.zeros(9)
    pitch = np.array([0, 0, 0, 0.3, -0.0, 0.5, 0.2, 0.2, 0])
    assert np.array_equal(fa.matrices[:, :3, :3].view(np.int64), rotation_matrices(yaw, pitch).view(np.int64))
    assert fa.parents.tolist() == [-1, -1, -1, 0, 1, 2, 4, 4, -1] and fa.parents.dtype == np.int64
    assert FrameBuilder().finish().matrices.shape == (0, 4, 4)
