"""A rebuild after a weld break gives what the plain computation gives, bit for bit.

``build.rebuild`` keeps what does not change between rebuilds (each group's child bodies as MJCF in
``Layout.children``, the document's fixed parts in ``Layout.frame``, one scratch ``MjData`` per model,
ids by ``mj_name2id``, the stacked ``beyond`` filled in directly) and carries the joints over through the
blocks rather than by name. Here every rebuild of the Support reference designs (the designs whose welds
break) is recomputed the plain way, from a layout with no caches, a fresh ``MjData`` and MuJoCo's
named accessors, and every numeric array of the model, the carried-over state and the weld analysis
must be equal byte for byte.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import mujoco
import numpy as np
import pytest

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import simulation
from buildbench.suites.buildarena.physics import build
from buildbench.suites.buildarena.physics import simulation as simulation_module
from buildbench.suites.buildarena.physics.build import Compiled
from buildbench.suites.buildarena.physics.groups import spanning_trees, weld_analysis
from buildbench.suites.buildarena.physics.mjcf import BALLAST, document
from buildbench.suites.buildarena.physics.stress import stack

# The module-scoped fixtures (the captured rebuilds) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("buildarena-rebuild-identity")

TASKS = ("support-1", "support-2", "support-3")

# With a dense constraint Jacobian MuJoCo leaves its sparse index arrays unwritten (their bytes differ
# between two runs of the same code), so they are compared only for a sparse Jacobian.
_SPARSE_ONLY = frozenset({"efc_J_colind", "efc_J_rowadr", "efc_J_rownnz", "efc_J_rowsuper"})

Captured = tuple[Compiled, mujoco.MjData, np.ndarray]


def _capture(task: str) -> list[Captured]:
    """The arguments of every rebuild in ``task``'s reference run."""
    calls: list[Captured] = []
    real = build.rebuild

    def record(compiled: Compiled, data: mujoco.MjData, intact: np.ndarray) -> Any:
        calls.append((compiled, copy.deepcopy(data), np.array(intact, copy=True)))
        return real(compiled, data, intact)

    patch = pytest.MonkeyPatch()
    patch.setattr(simulation_module, "rebuild", record)
    try:
        simulation(designs.build(designs.REFERENCE[task]()), task).run()
    finally:
        patch.undo()
    return calls


@pytest.fixture(scope="module")
def rebuilds() -> dict[str, list[Captured]]:
    return {task: _capture(task) for task in TASKS}


def _arrays(obj: Any, skip: frozenset[str] = frozenset()) -> dict[str, tuple[str, Any, bytes]]:
    """Every numeric array and number of ``obj`` by name: ``(dtype, shape, bytes)``."""
    out = {}
    for name in dir(obj):
        if name.startswith("_") or name in skip:
            continue
        value = getattr(obj, name)
        if isinstance(value, np.ndarray):
            out[name] = (value.dtype.str, value.shape, value.tobytes())
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = (type(value).__name__, (), repr(value).encode())
    return out


def _plain(compiled: Compiled, data: mujoco.MjData, intact: np.ndarray) -> tuple[str, mujoco.MjModel, mujoco.MjData]:
    """The rebuilt model and state computed without any cache or shortcut."""
    layout = replace(compiled.layout, networks={}, markup={}, children={}, frame=[])
    trees = spanning_trees(layout, intact)
    roots = {}
    for tree in trees:
        body = compiled.model.body(f"b{tree.order[0]}").id
        roots[tree.order[0]] = (data.xpos[body].copy(), data.xmat[body].reshape(3, 3).copy())
    text = document(layout, trees, roots).text
    old, model = compiled.model, mujoco.MjModel.from_xml_string(text)
    state = mujoco.MjData(model)
    state.time = data.time
    state.ctrl[:] = data.ctrl
    velocity = np.zeros(6)
    for j in range(model.njnt):
        qa, va = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            b_old = old.body(model.body(int(model.jnt_bodyid[j])).name).id
            mujoco.mj_objectVelocity(old, data, mujoco.mjtObj.mjOBJ_BODY, b_old, velocity, 0)
            state.qpos[qa : qa + 3] = data.xpos[b_old]
            state.qpos[qa + 3 : qa + 7] = data.xquat[b_old]
            state.qvel[va : va + 3] = velocity[3:]
            state.qvel[va + 3 : va + 6] = data.xmat[b_old].reshape(3, 3).T @ velocity[:3]
        else:
            j_old = old.joint(model.joint(j).name).id
            state.qpos[qa] = data.qpos[old.jnt_qposadr[j_old]]
            state.qvel[va] = data.qvel[old.jnt_dofadr[j_old]]
    mujoco.mj_forward(model, state)
    return text, model, state


def _indices_by_accessor(compiled: Compiled) -> dict[str, Any]:
    model, layout = compiled.model, compiled.layout
    bodies = layout.graph.bodies
    return {
        "body_ids": {b.id: model.body(f"b{b.id}").id for b in bodies},
        "blocks": [model.body(f"disc{b.id}" if b.spin_axis is not None else f"b{b.id}").id for b in bodies],
        "wheels": {k: model.actuator(f"motor{k}").id for k in compiled.wheel_actuators},
        "cannons": {k: model.actuator(f"thrust{k}").id for k in compiled.cannon_actuators},
        "heat": [
            (i, model.geom(f"hull{c.id}").id, model.geom(f"flame{t.id}").id)
            for i, c in enumerate(b for b in bodies if b.type == "Water Cannon")
            for t in (b for b in bodies if b.type == "Torch")
        ],
        "cargo": model.body(BALLAST).id if compiled.cargo_body >= 0 else -1,
    }


def _indices(compiled: Compiled) -> dict[str, Any]:
    return {
        "body_ids": compiled.body_ids,
        "blocks": [b.body for b in compiled.blocks],
        "wheels": compiled.wheel_actuators,
        "cannons": compiled.cannon_actuators,
        "heat": compiled.heat_pairs,
        "cargo": compiled.cargo_body,
    }


def _skip(model: mujoco.MjModel) -> frozenset[str]:
    return frozenset() if mujoco.mj_isSparse(model) else _SPARSE_ONLY


@pytest.mark.parametrize("task", TASKS)
def test_rebuild_equals_the_plain_compilation(rebuilds: dict[str, list[Captured]], task: str) -> None:
    recompiled = 0
    for compiled, data, intact in rebuilds[task]:
        new, state = build.rebuild(compiled, data, intact)
        if new.model is compiled.model:
            continue
        recompiled += 1
        trees = spanning_trees(compiled.layout, intact)
        text, model, plain_state = _plain(compiled, data, intact)
        roots = {}
        for tree in trees:
            body = compiled.body_ids[tree.order[0]]
            roots[tree.order[0]] = (data.xpos[body].copy(), data.xmat[body].reshape(3, 3).copy())
        assert document(compiled.layout, trees, roots).text == text
        assert _arrays(new.model) == _arrays(model)
        assert _arrays(new.model.opt) == _arrays(model.opt)
        assert _arrays(state, _skip(model)) == _arrays(plain_state, _skip(model))
        assert _indices(new) == _indices_by_accessor(new)
        fresh = replace(compiled.layout, networks={}, markup={}, children={}, frame=[])
        dofs = build.drag_of(model, fresh.config)
        for ours, theirs in zip((new.drag_dofs, new.drag_linear, new.drag_quadratic), dofs, strict=True):
            assert ours.tobytes() == theirs.tobytes()
        analysis = weld_analysis(fresh, trees, new.body_ids, new.cannon_actuators)
        assert (new.analysis is None) == (analysis is None)
        if analysis is not None and new.analysis is not None:
            assert _arrays(new.analysis) == _arrays(analysis)
            assert _arrays(new.analysis.network) == _arrays(analysis.network)
    assert recompiled, f"{task}'s reference run no longer splits a group: this test checks nothing there"


@pytest.mark.parametrize("task", ["transport-1", "lift-1", *TASKS])
def test_compiled_ids_are_the_named_ones(task: str) -> None:
    """Wheels (transport-1), a cannon heated by a torch (lift-1), cargo and bridges (support)."""
    compiled = simulation(designs.build(designs.REFERENCE[task]()), task).compiled
    assert _indices(compiled) == _indices_by_accessor(compiled)
    assert compiled.wheel_actuators or compiled.heat_pairs or compiled.cargo_body >= 0


@pytest.mark.parametrize("task", TASKS)
def test_stacked_networks_analyse_each_group_bit_for_bit(rebuilds: dict[str, list[Captured]], task: str) -> None:
    """The groups stacked after a break give each group's weld wrenches exactly as its own network does."""
    layout = rebuilds[task][0][0].layout
    networks = [net for net in layout.networks.values() if net is not None]
    assert len(networks) > 1
    rng = np.random.default_rng(5)
    for count in range(1, len(networks) + 1):
        parts = networks[:count]
        owns = [rng.normal(size=(net.nodes, 6)) * 10.0 ** rng.uniform(-3, 3, size=(net.nodes, 1)) for net in parts]
        stacked = stack(parts).weld_wrenches(np.concatenate(owns))
        alone = [net.weld_wrenches(own) for net, own in zip(parts, owns, strict=True)]
        expected = np.concatenate([rows[: net.tree_rows] for rows, net in zip(alone, parts, strict=True)]
                                  + [rows[net.tree_rows :] for rows, net in zip(alone, parts, strict=True)])
        assert stacked.tobytes() == expected.tobytes()
