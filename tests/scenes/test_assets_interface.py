"""The asset layer's public interface: levels, local frame, placement in the world."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.scenes.assets import AssetError, AssetLibrary, ObjectMesh, object_mesh, world_mesh
from buildbench.scenes.model import SceneObject, yaw_quat_xyzw


def _obj(category: str = "bed", size: tuple[float, float, float] = (1.6, 1.0, 2.0), yaw: float = 30.0,
         **attributes: str) -> SceneObject:
    return SceneObject("o-1", category, "", (1.0, 0.5, 2.0), size, yaw_quat_xyzw(yaw), attributes=dict(attributes))


def test_box_level_is_the_objects_box_in_12_triangles() -> None:
    mesh = object_mesh(_obj(), "box")
    assert isinstance(mesh, ObjectMesh) and mesh.source == "box"
    assert mesh.faces.shape == (12, 3) and mesh.face_colors.shape == (12, 4)
    assert np.allclose(mesh.vertices.min(0), [-0.8, -0.5, -1.0]) and np.allclose(mesh.vertices.max(0), [0.8, 0.5, 1.0])
    tm = mesh.to_trimesh()
    assert tm.is_watertight and tm.volume == pytest.approx(1.6 * 1.0 * 2.0)  # outward winding


@pytest.mark.parametrize("level", ["box", "procedural"])
def test_world_mesh_is_rotation_then_centre(level: str) -> None:
    obj = _obj()
    local = object_mesh(obj, level)  # type: ignore[arg-type]
    world = world_mesh(obj, level)  # type: ignore[arg-type]
    assert np.allclose(world.vertices, local.vertices @ obj.rotation.T + np.asarray(obj.center))
    assert np.allclose(np.sort(world.bounds[:, 1]), [0.0, 1.0])
    back = (world.vertices - np.asarray(obj.center)) @ obj.rotation  # the local frame again
    assert np.allclose(back.min(0), [-0.8, -0.5, -1.0]) and np.allclose(back.max(0), [0.8, 0.5, 1.0])


def test_unknown_level_and_mesh_without_folders_are_asset_errors() -> None:
    with pytest.raises(AssetError, match="unknown geometry level 'boxes'"):
        object_mesh(_obj(), "boxes")  # type: ignore[arg-type]
    with pytest.raises(AssetError, match="BUILDBENCH_3DFUTURE_DIR"):
        object_mesh(_obj(), "mesh", library=AssetLibrary())


def test_from_env_refuses_a_folder_that_is_not_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lib = AssetLibrary.from_env(environ={"BUILDBENCH_3DFUTURE_DIR": str(tmp_path)}, cache_dir=tmp_path / "c")
    assert lib.future_dir == tmp_path and lib.objaverse_dir is None and lib.cache_dir == tmp_path / "c"
    with pytest.raises(AssetError, match="BUILDBENCH_OBJAVERSE_DIR=.*not a directory"):
        AssetLibrary.from_env(environ={"BUILDBENCH_OBJAVERSE_DIR": str(tmp_path / "absent")})


@pytest.mark.parametrize("size", [(1.0, float("nan"), 1.0), (1.0, -0.5, 1.0), (float("inf"), 1.0, 1.0)])
@pytest.mark.parametrize("level", ["box", "procedural"])
def test_a_size_that_is_not_finite_and_non_negative_is_an_asset_error(size: tuple[float, float, float],
                                                                       level: str) -> None:
    with pytest.raises(AssetError, match=r"object 'o-1': size .* is not three finite, non-negative numbers"):
        object_mesh(_obj(size=size), level)  # type: ignore[arg-type]


def test_a_zero_extent_box_still_gives_a_mesh_of_its_box() -> None:
    mesh = object_mesh(_obj("painting", size=(1.0, 0.8, 0.0)), "procedural")
    assert np.allclose(mesh.vertices.max(0), [0.5, 0.4, 0.0]) and np.isfinite(mesh.vertices).all()
