"""Transforms: conventions, round trips, batching and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from buildbench.geometry import (
    apply_to_points,
    apply_to_vectors,
    compose,
    decompose,
    invert_rigid,
    make_transform,
    quat_wxyz_to_xyzw,
    quat_xyzw_to_wxyz,
    rotation_from_euler_xyz,
    rotation_from_quat_wxyz,
    rotation_from_quat_xyzw,
    rotation_to_euler_xyz,
    rotation_to_quat_wxyz,
)

GEOMETRY_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)

angles = st.floats(-np.pi, np.pi)
coords = st.floats(-100, 100)
quats = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(lambda q: np.linalg.norm(q) > 0.1)


def _rx(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rz(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


@GEOMETRY_SETTINGS
@given(x=angles, y=angles, z=angles)
def test_euler_xyz_is_blender_extrinsic(x: float, y: float, z: float) -> None:
    expected = _rz(z) @ _ry(y) @ _rx(x)
    r = rotation_from_euler_xyz([x, y, z])
    np.testing.assert_allclose(r, expected, atol=1e-12)
    np.testing.assert_allclose(rotation_from_euler_xyz(rotation_to_euler_xyz(r)), r, atol=1e-9)


def test_euler_single_axis_quarter_turn() -> None:
    # 90 degrees about z sends x to y.
    np.testing.assert_allclose(rotation_from_euler_xyz([0, 0, np.pi / 2]) @ [1, 0, 0], [0, 1, 0], atol=1e-15)


@GEOMETRY_SETTINGS
@given(q=quats)
def test_quaternion_layouts_round_trip(q: list[float]) -> None:
    xyzw = np.asarray(q)
    wxyz = quat_xyzw_to_wxyz(xyzw)
    assert wxyz[0] == xyzw[3] and list(wxyz[1:]) == list(xyzw[:3])
    np.testing.assert_array_equal(quat_wxyz_to_xyzw(wxyz), xyzw)
    r = rotation_from_quat_xyzw(xyzw)
    np.testing.assert_allclose(rotation_from_quat_wxyz(wxyz), r, atol=1e-12)
    back = rotation_to_quat_wxyz(r)
    assert back[0] >= 0
    np.testing.assert_allclose(rotation_from_quat_wxyz(back), r, atol=1e-12)


def test_quaternion_scalar_first_meaning() -> None:
    # (w, x, y, z) = (cos 45, 0, 0, sin 45) is +90 degrees about z.
    h = np.sqrt(0.5)
    np.testing.assert_allclose(rotation_from_quat_wxyz([h, 0, 0, h]), _rz(np.pi / 2), atol=1e-12)
    np.testing.assert_allclose(rotation_from_quat_xyzw([0, 0, h, h]), _rz(np.pi / 2), atol=1e-12)


def test_zero_quaternion_rejected() -> None:
    with pytest.raises(ValueError, match="quaternion 1 is zero"):
        rotation_from_quat_xyzw([[0, 0, 0, 1], [0, 0, 0, 0]])


@GEOMETRY_SETTINGS
@given(q=quats, t=st.lists(coords, min_size=3, max_size=3), p=st.lists(coords, min_size=3, max_size=3))
def test_invert_compose_and_apply(q: list[float], t: list[float], p: list[float]) -> None:
    rot = Rotation.from_quat(q)
    m = make_transform(t, rot)
    np.testing.assert_allclose(compose(m, invert_rigid(m)), np.eye(4), atol=1e-9)
    np.testing.assert_allclose(invert_rigid(m), np.linalg.inv(m), atol=1e-9)
    np.testing.assert_allclose(apply_to_points(m, p), rot.apply(p) + t, atol=1e-9)
    np.testing.assert_allclose(apply_to_vectors(m, p), rot.apply(p), atol=1e-9)
    np.testing.assert_allclose(apply_to_points(invert_rigid(m), apply_to_points(m, p)), p, atol=1e-9)


def test_batched_apply_matches_loop() -> None:
    rng = np.random.default_rng(3)
    mats = make_transform(rng.normal(size=(5, 3)), Rotation.random(5, random_state=4))
    pts = rng.normal(size=(5, 3))
    paired = apply_to_points(mats, pts)
    every = apply_to_points(mats[:, None], rng.normal(size=(7, 3)))
    assert every.shape == (5, 7, 3)
    for i in range(5):
        np.testing.assert_allclose(paired[i], mats[i, :3, :3] @ pts[i] + mats[i, :3, 3])
    # compose broadcasts a single matrix against a batch
    np.testing.assert_allclose(compose(np.eye(4), mats), mats)


@GEOMETRY_SETTINGS
@given(
    q=quats,
    t=st.lists(coords, min_size=3, max_size=3),
    s=st.lists(st.floats(0.01, 10), min_size=3, max_size=3),
)
def test_decompose_recovers_trs(q: list[float], t: list[float], s: list[float]) -> None:
    rot = Rotation.from_quat(q).as_matrix()
    trs = decompose(make_transform(t, rot, s))
    np.testing.assert_allclose(trs.translation, t, atol=1e-9)
    np.testing.assert_allclose(trs.scale, s, rtol=1e-9)
    np.testing.assert_allclose(trs.rotation, rot, atol=1e-9)


def test_decompose_zero_scale_and_mirror() -> None:
    rot = Rotation.from_euler("xyz", [0.3, -0.2, 1.0]).as_matrix()
    flat = decompose(make_transform([1, 2, 3], rot, [2.0, 0.0, 0.5]))
    np.testing.assert_allclose(flat.scale, [2.0, 0.0, 0.5], atol=1e-12)
    np.testing.assert_allclose(flat.rotation[:, [0, 2]], rot[:, [0, 2]], atol=1e-12)
    assert np.isclose(np.linalg.det(flat.rotation), 1.0)
    mirror = decompose(make_transform(rotation=np.eye(3), scale=[1.0, 1.0, -3.0]))
    np.testing.assert_allclose(mirror.scale, [1.0, 1.0, -3.0])
    np.testing.assert_allclose(mirror.rotation, np.eye(3), atol=1e-12)


def test_decompose_rejects_shear_and_nan() -> None:
    sheared = np.eye(4)
    sheared[0, 1] = 0.5
    with pytest.raises(ValueError, match="sheared"):
        decompose(sheared)
    bad = np.stack([np.eye(4), np.eye(4)])
    bad[1, 0, 3] = np.nan
    with pytest.raises(ValueError, match="transform 1 has non-finite"):
        decompose(bad)


def test_shape_errors_are_clear() -> None:
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 4, 4\)"):
        apply_to_points(np.eye(3), [0, 0, 0])
    with pytest.raises(ValueError, match="points must have shape"):
        apply_to_points(np.eye(4), [0, 0])
    with pytest.raises(ValueError, match="translation"):
        make_transform([1, 2])
    with pytest.raises(ValueError, match="at least one"):
        compose()
