"""Mesh-level physics (buildbench.scenes.mesh_physics): known answers against the released
definitions (FCL contacts, seeded surface sampling with the > 1 % rule, voxel overlaps) and
agreement with trimesh's CollisionManager and sample_surface on the same meshes."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
import trimesh

from buildbench.scenes.mesh_physics import (
    fill_prism,
    fill_voxels,
    mesh_contacts,
    outside_shares,
    room_prism,
    sample_surface,
    solid_mesh,
    voxel_loss,
)

I3 = np.eye(3)


def _box(size: tuple[float, float, float], offset: tuple[float, float, float] = (0.0, 0.0, 0.0)):
    half = np.asarray(size, dtype=float) / 2
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float) * half
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]], dtype=np.int64)
    return corners + np.asarray(offset, dtype=float), faces


def _union(*parts):
    vertices, faces, count = [], [], 0
    for v, f in parts:
        vertices.append(v)
        faces.append(f + count)
        count += len(v)
    return np.vstack(vertices), np.vstack(faces)


def _table():
    """A 1.2 x 0.75 x 0.8 table: a 4 cm top on four 5 cm legs inset 2 cm (no shared vertices)."""
    legs = [_box((0.05, 0.71, 0.05), (sx * 0.555, -0.02, sz * 0.355)) for sx in (-1, 1) for sz in (-1, 1)]
    return _union(_box((1.2, 0.04, 0.8), (0.0, 0.355, 0.0)), *legs)


def _depths(meshes, centers):
    contacts = mesh_contacts(meshes, np.stack([I3] * len(meshes)), np.asarray(centers, dtype=float))
    return {(c.a, c.b): c.depth_m for c in contacts}


@pytest.mark.parametrize(("overlap", "over_1cm"), [(0.02, True), (0.005, False)])
def test_interpenetrating_meshes_report_their_depth(overlap: float, over_1cm: bool) -> None:
    cabinet = solid_mesh(*_box((0.8, 1.0, 0.5)))
    assert cabinet.convex  # one FCL contact, the minimum penetration depth
    depths = _depths([cabinet, cabinet], [[0, 0, 0], [0.8 - overlap, 0, 0]])
    assert depths[(0, 1)] == pytest.approx(overlap, abs=1e-9)  # any depth: the reward's rule
    assert bool(depths[(0, 1)] > 0.01) is over_1cm  # the evaluation's 1 cm rule
    assert _depths([cabinet, cabinet], [[0, 0, 0], [0.81, 0, 0]]) == {}


def test_non_convex_meshes_report_triangle_pair_depths() -> None:
    # FCL's depth for a BVH pair is per crossing triangle pair, not the minimum translation
    # distance: two tables whose 4 cm tops overlap by 2 cm report the tops' thickness.
    table = solid_mesh(*_table())
    assert not table.convex
    depths = _depths([table, table], [[0, 0, 0], [1.18, 0, 0]])
    assert depths[(0, 1)] == pytest.approx(0.04, abs=1e-9)
    assert _depths([table, table], [[0, 0, 0], [1.21, 0, 0]]) == {}


def test_a_stool_under_a_table_top_is_free_but_its_box_is_not() -> None:
    table = solid_mesh(*_table())
    stool = solid_mesh(*_box((0.4, 0.45, 0.4)))
    hull = solid_mesh(*_box((1.2, 0.75, 0.8)))
    assert hull.convex and stool.convex
    under = [[0, 0, 0], [0.1, -0.15, 0.0]]  # between the legs, below the top
    assert _depths([table, stool], under) == {}
    assert _depths([hull, stool], under)[(0, 1)] > 0.1


def test_contacts_agree_with_trimesh_collision_manager() -> None:
    rng = np.random.default_rng(3)
    meshes = [solid_mesh(*_table()), solid_mesh(*_box((0.5, 0.9, 0.5))), solid_mesh(*_box((2.0, 0.5, 1.6)))] * 4
    yaws = rng.uniform(0, 2 * np.pi, len(meshes))
    rots = np.array([[[np.cos(t), 0, np.sin(t)], [0, 1, 0], [-np.sin(t), 0, np.cos(t)]] for t in yaws])
    centers = np.column_stack([rng.uniform(-1.5, 1.5, len(meshes)), rng.uniform(0, 0.2, len(meshes)),
                               rng.uniform(-1.5, 1.5, len(meshes))])
    ours = {(c.a, c.b): c.depth_m for c in mesh_contacts(meshes, rots, centers)}
    manager = trimesh.collision.CollisionManager()
    for i, m in enumerate(meshes):
        manager.add_object(str(i), trimesh.Trimesh(m.vertices @ rots[i].T + centers[i], m.faces))
    _, data = manager.in_collision_internal(return_data=True)
    theirs: dict[tuple[int, int], list[float]] = {}
    for contact in data:
        a, b = sorted(int(n) for n in contact.names)
        theirs.setdefault((a, b), []).append(contact.depth)
    counts = {(c.a, c.b): len(c.depths) for c in mesh_contacts(meshes, rots, centers)}
    assert len(ours) > 10 and set(ours) == set(theirs)
    assert counts == {pair: len(d) for pair, d in theirs.items()}
    # Our models sit in their own frame under a transform, the manager's in world
    # coordinates: EPA's depth for a convex mesh against a triangle can differ a little.
    close = [pair for pair, depth in ours.items() if depth == pytest.approx(max(theirs[pair]), abs=1e-6)]
    assert len(close) >= len(ours) - 1
    assert all((depth > 0.01) == (max(theirs[pair]) > 0.01) for pair, depth in ours.items())


def test_surface_samples_are_trimeshs_for_the_same_seed() -> None:
    vertices, faces = _table()
    for seed in (0, 7):
        ours = sample_surface(vertices, faces, 500, np.random.default_rng(seed))
        theirs, _ = trimesh.sample.sample_surface(trimesh.Trimesh(vertices, faces, process=False), 500,
                                                  seed=np.random.default_rng(seed))
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
    mesh = solid_mesh(vertices, faces)
    assert np.array_equal(mesh.samples(500, 1), mesh.samples(500, 1))
    assert not np.array_equal(mesh.samples(500, 1), mesh.samples(500, 2))


@pytest.mark.parametrize(("outside", "over_1pct"), [(0.02, True), (0.005, False)])
def test_a_tile_partly_outside_the_room(outside: float, over_1pct: bool) -> None:
    tile = solid_mesh(*_box((1.0, 1e-4, 1.0)))  # the surface is (almost) all top and bottom
    floor = shapely.box(-2.0, -2.0, 2.0, 2.0).buffer(0.001)
    center = np.array([[2.0 + 0.001 - 0.5 + outside, 0.05, 0.0]])
    share = outside_shares([tile], I3[None], center, floor, (-0.001, 2.601))[0]
    assert share == pytest.approx(outside, abs=0.007)  # 500 samples: about 0.3 % standard error
    assert bool(share > 0.01) is over_1pct
    again = outside_shares([tile], I3[None], center, floor, (-0.001, 2.601))[0]
    assert again == share  # seeded: the same points every time


def test_below_the_floor_counts_as_outside() -> None:
    cube = solid_mesh(*_box((1.0, 1.0, 1.0)))
    floor = shapely.box(-2.0, -2.0, 2.0, 2.0)
    share = outside_shares([cube], I3[None], np.array([[0.0, 0.4, 0.0]]), floor, (0.0, 2.6))[0]
    assert share == pytest.approx((1.0 + 4 * 0.1) / 6.0, abs=0.05)  # bottom face and 10 cm strips


def test_voxel_figures_of_overlapping_cubes() -> None:
    cube = solid_mesh(*_box((1.0, 1.0, 1.0)))
    room = fill_voxels(*room_prism(np.array([[-2, -2], [2, -2], [2, 2], [-2, 2]], dtype=float), 0.0, 2.6), 0.05)
    bottoms = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.8, 0.0, -1.0]])
    figures = voxel_loss([cube] * 3, np.stack([I3] * 3), bottoms, room, 0.05)
    assert figures.oob_m3[0] == 0.0 and figures.oob_m3[1] == 0.0
    assert figures.oob_m3[2] == pytest.approx(0.3, abs=0.06)  # 30 cm of a 1 m cube through the wall
    pairs = {(a, b): v for a, b, v in figures.collision_m3}
    # Surface voxelisation marks the voxels of both faces: a 1 m cube fills 21 voxels across,
    # so the cubes share 11 x 21 x 21 voxels of 0.05 m.
    assert pairs == {(0, 1): pytest.approx(11 * 21 * 21 * 0.05**3)}
    assert figures.loss_m3 == pytest.approx(figures.total_oob_m3 + figures.total_collision_m3)


def test_bad_meshes_are_refused() -> None:
    with pytest.raises(ValueError, match="finite"):
        solid_mesh(np.array([[0, 0, np.nan], [1, 0, 0], [0, 1, 0]]), np.array([[0, 1, 2]]))
    with pytest.raises(ValueError, match="indices"):
        solid_mesh(np.zeros((3, 3)), np.array([[0, 1, 3]]))


@pytest.mark.parametrize("seed", range(6))
def test_voxels_are_trimeshs_to_the_voxel(seed: int) -> None:
    # Our face-by-face subdivision against trimesh's own voxelized(pitch).fill() on meshes
    # turned to arbitrary angles (edges of every length, one, two and three long edges).
    rng = np.random.default_rng(seed)
    table = _table()
    rotation = trimesh.transformations.random_rotation_matrix(rng.random(3))[:3, :3]
    vertices = table[0] * rng.uniform(0.5, 2.0, 3) @ rotation.T + rng.uniform(-3, 3, 3)
    ours, origin = fill_voxels(vertices, table[1], 0.05)
    theirs = trimesh.Trimesh(vertices=vertices, faces=table[1], process=False).voxelized(pitch=0.05).fill()
    assert ours.shape == theirs.matrix.shape and (ours == theirs.matrix).all()
    assert np.array_equal(origin, theirs.translation)


@pytest.mark.parametrize("floor", [
    [[-2.0, -1.5], [2.13, -1.5], [2.13, 1.77], [-2.0, 1.77]],
    [[0.0, 0.0], [3.31, 0.0], [3.31, 1.2], [1.46, 1.2], [1.46, 2.9], [0.0, 2.9]],  # an L
    [[0.0, 0.0], [3.0, 0.4], [2.6, 2.5], [0.2, 2.0]],  # walls at angles: voxelised
])
def test_room_voxels_drawn_directly_are_the_voxelised_prisms(floor: list[list[float]]) -> None:
    xz = np.array(floor, dtype=float)
    drawn, origin = fill_prism(xz, 0.013, 2.77, 0.05)
    grid = trimesh.Trimesh(*room_prism(xz, 0.013, 2.77), process=False).voxelized(pitch=0.05).fill()
    assert drawn.shape == grid.matrix.shape and (drawn == grid.matrix).all()
    assert np.array_equal(origin, grid.translation)


def test_a_mesh_too_large_to_voxelise_is_refused() -> None:
    vertices, faces = _box((1.0e4, 1.0, 1.0e4))
    with pytest.raises(ValueError, match="max_voxels"):
        fill_voxels(vertices, faces, 0.05)


def test_a_room_too_large_to_voxelise_is_refused() -> None:
    with pytest.raises(ValueError, match="room voxels"):
        fill_prism(np.array([[0, 0], [5000, 0], [5000, 5000], [0, 5000]], dtype=float), 0.0, 2.6, 0.05)
