"""What ``mjcf`` keeps or shortcuts for rebuilds writes what the plain computation writes, bit for bit.

``quaternions`` replaces scipy's ``Rotation.from_matrix(...).as_quat(scalar_first=True)`` for the child
bodies' relative rotations (the recorded runs' documents were written with scipy's); the document's
fixed parts (``Layout.frame``) are reused only by the layout they were written for.
"""

from __future__ import annotations

from dataclasses import replace

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import simulation
from buildbench.suites.buildarena.physics.build import rebuild
from buildbench.suites.buildarena.physics.groups import spanning_trees
from buildbench.suites.buildarena.physics.mjcf import document, quaternions


def _scipy(turns: np.ndarray) -> np.ndarray:
    return np.asarray(Rotation.from_matrix(turns).as_quat(scalar_first=True)).reshape(-1, 4)


def _relative(count: int, seed: int) -> np.ndarray:
    """``Aᵀ·B`` of random rotations: orthogonal up to rounding, as a child block's turn relative to its root."""
    a = Rotation.random(count, random_state=seed).as_matrix()
    b = Rotation.random(count, random_state=seed + 1).as_matrix()
    return np.swapaxes(a, 1, 2) @ b


def _right_angles(count: int, seed: int) -> np.ndarray:
    """Products of right-angle turns: exact entries in {-1, 0, 1}, ties between the cases."""
    rng = np.random.default_rng(seed)
    a = Rotation.from_euler("xyz", rng.integers(0, 4, size=(count, 3)) * 90, degrees=True).as_matrix()
    b = Rotation.from_euler("xyz", rng.integers(0, 4, size=(count, 3)) * 90, degrees=True).as_matrix()
    return np.swapaxes(a, 1, 2) @ b


@pytest.mark.parametrize("turns", [_relative(20_000, 3), _right_angles(5_000, 4), _relative(1, 7)],
                         ids=["random", "right-angles", "one"])
def test_quaternions_are_scipys(turns: np.ndarray) -> None:
    assert quaternions(turns).tobytes() == _scipy(turns).tobytes()


def test_quaternions_leave_non_orthogonal_matrices_to_scipy() -> None:
    """Scaled or sheared matrices are orthogonalised by scipy: the same quaternions come out."""
    turns = _relative(50, 11)
    turns[::2] *= 1.001
    turns[1::2, 0, 1] += 1e-9
    assert quaternions(turns).tobytes() == _scipy(turns).tobytes()


def test_quaternions_refuse_a_mirror_as_scipy_does() -> None:
    mirror = np.diag([1.0, 1.0, -1.0])[None]
    with pytest.raises(ValueError, match="determinant"):
        _scipy(mirror)
    with pytest.raises(ValueError, match="determinant"):
        quaternions(mirror)


def test_the_frame_of_a_layout_with_other_exclusions_is_written_anew() -> None:
    """``compile_scene`` copies the layout with the overlapping pairs added: the copy's document excludes them."""
    layout = simulation(designs.build(designs.REFERENCE["support-1"]()), "support-1").compiled.layout
    trees = spanning_trees(layout, np.ones(len(layout.welds), dtype=bool))
    first = document(layout, trees).text
    a, b = layout.never_collide[0]
    extra = (f"disc{a}", f"other{b}")
    copied = replace(layout, never_collide=[*layout.never_collide, extra])  # shares ``frame`` with ``layout``
    text = document(copied, trees).text
    assert f'<exclude body1="{extra[0]}" body2="{extra[1]}"/>' in text
    assert text == document(replace(copied, frame=[], markup={}, children={}), trees).text
    assert document(layout, trees).text == first


def test_a_rebuild_carries_every_joint_over_by_name() -> None:
    """``rebuild`` maps the joints through the blocks (no name lookup per joint): a driving car whose wheel
    falls off gets, joint by joint, the state that carrying it over by name gives (free bodies and hinges)."""
    machine = designs.build(designs.Design("car", designs.vehicle()))
    sim = simulation(machine, "transport-1")
    sim.step(60)
    compiled, data = sim.compiled, sim.data
    wheels = set(compiled.wheel_actuators)
    weld = next(k for k, w in enumerate(compiled.layout.welds) if w.first in wheels or w.second in wheels)
    intact = compiled.intact.copy()
    intact[weld] = False
    new, state = rebuild(compiled, data, intact)
    old, model = compiled.model, new.model
    assert model is not old and np.any(data.qvel[old.jnt_dofadr[old.jnt_type == mujoco.mjtJoint.mjJNT_HINGE]])
    qpos, qvel = np.zeros(model.nq), np.zeros(model.nv)
    for j in range(model.njnt):
        qa, va = model.jnt_qposadr[j], model.jnt_dofadr[j]
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            body = old.body(model.body(int(model.jnt_bodyid[j])).name).id
            velocity = np.zeros(6)
            mujoco.mj_objectVelocity(old, data, mujoco.mjtObj.mjOBJ_BODY, body, velocity, 0)
            qpos[qa : qa + 7] = np.concatenate([data.xpos[body], data.xquat[body]])
            qvel[va : va + 6] = np.concatenate([velocity[3:], data.xmat[body].reshape(3, 3).T @ velocity[:3]])
        else:
            joint = old.joint(model.joint(j).name).id
            qpos[qa], qvel[va] = data.qpos[old.jnt_qposadr[joint]], data.qvel[old.jnt_dofadr[joint]]
    assert model.njnt > int(np.sum(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE))  # hinges are there
    assert state.qpos.tobytes() == qpos.tobytes() and state.qvel.tobytes() == qvel.tobytes()
