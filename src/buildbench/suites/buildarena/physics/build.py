"""Compile a machine and its scene into a MuJoCo model (written as MJCF by ``mjcf``).

Blocks joined by intact welds form a rigid group: the group's first block
(machine order) is a free body and every other block of the group is a
child body of it, with no joint between them, so the group moves as one
rigid body (MuJoCo gives it six degrees of freedom instead of six per block,
and filters contacts inside it). Each block stays its own body with its own
geoms, mass and inertia, so the per-block loads that the weld forces are
computed from (``stress``) come out of MuJoCo's inverse dynamics. When a
weld breaks and a group falls apart, the simulation rebuilds the model with
the new groups (``rebuild``) and carries every body's pose and velocity
over; a break that leaves every group whole changes the weld analysis only.

A Brace is a weld between its two end blocks anchored midway (it may close
a loop inside a group, which ``stress`` resolves by stiffness). Welded
neighbours never collide (also after their weld broke), nor do blocks whose
bodies already overlap as built (the library only checks its shrunk
colliders).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import mujoco
import numpy as np
from scipy.spatial import cKDTree

from buildbench.suites.buildarena.library.bodies import BodyGraph
from buildbench.suites.buildarena.model import Machine

from .config import PhysicsConfig
from .groups import Group, Tree, WeldAnalysis, same_bodies, spanning_trees, weld_analysis
from .layout import Layout, lay_out, weld_limits
from .mjcf import document
from .scene import Scene


@dataclass(frozen=True)
class BlockBody:
    """Where one block lives in the compiled model.

    Attributes:
        block_id: Block id.
        type: Block type name.
        body: MuJoCo body id whose pose is the block's pose (the disc for wheels).
    """

    block_id: str
    type: str
    body: int


@dataclass(frozen=True)
class Rope:
    """A Winch rope: tendon id and its two end sites and bodies."""

    tendon: int
    sites: tuple[int, int]
    bodies: tuple[int, int]


@dataclass(frozen=True)
class Compiled:
    """A compiled scene and the index arrays the simulation loop needs.

    Attributes:
        model: The MuJoCo model.
        layout: What it was built from (for ``rebuild``).
        intact: Per weld of ``layout.welds``, whether it still holds.
        blocks: Logged blocks in machine order (cargo excluded).
        body_ids: Block id → the body its welds hold (the hub for wheels).
        trees: The rigid groups as spanning trees of blocks.
        analysis: The weld analysis of the groups with welds (None without intact welds).
        weld_break_force: Break force per weld (N).
        weld_break_torque: Break torque per weld (N·m).
        wheel_actuators: Actuator id per wheel block id.
        cannon_actuators: Actuator id per cannon block id.
        heat_pairs: ``(cannon index, hull geom, flame geom)`` for every cannon and torch:
            the cannon's full-size box and the torch's heating sphere, both
            non-colliding geoms used only for ``mj_geomDistance``.
        ropes: The Winch ropes.
        cargo_body: Ballast body id, or -1.
        drag_dofs: Dofs of the free bodies (``drag_of``).
        drag_linear: Linear drag coefficient per dof of ``drag_dofs`` (N·s/m or N·m·s/rad).
        drag_quadratic: Quadratic drag coefficient per dof of ``drag_dofs`` (N·s²/m², 0 for rotations).
    """

    model: mujoco.MjModel
    layout: Layout
    intact: np.ndarray
    blocks: list[BlockBody]
    body_ids: dict[str, int]
    trees: list[Tree]
    analysis: WeldAnalysis | None
    weld_break_force: np.ndarray
    weld_break_torque: np.ndarray
    wheel_actuators: dict[str, int]
    cannon_actuators: dict[str, int]
    heat_pairs: list[tuple[int, int, int]]
    ropes: list[Rope]
    cargo_body: int
    drag_dofs: np.ndarray
    drag_linear: np.ndarray
    drag_quadratic: np.ndarray

    @property
    def groups(self) -> list[Group]:
        """The rigid groups' bodies, one per tree."""
        return [
            Group(
                self.body_ids[tree.order[0]],
                np.array([self.body_ids[b] for b in tree.order], dtype=int),
                np.array(tree.welds, dtype=int),
            )
            for tree in self.trees
        ]

    @property
    def weld_names(self) -> list[str]:
        """Label per weld."""
        return [w.label for w in self.layout.welds]


def _compile(
    layout: Layout,
    intact: np.ndarray,
    trees: list[Tree],
    root_poses: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> tuple[Compiled, mujoco.MjData]:
    """Compile the model of ``trees`` (group roots at ``root_poses``, default as built) and index it.

    Also returns a data of the model in an unspecified state: making one costs about as much as
    indexing the whole model (its arena), ``mj_resetData`` makes it a fresh one at no cost.
    """
    doc = document(layout, trees, root_poses)
    model = mujoco.MjModel.from_xml_string(doc.text)
    data = mujoco.MjData(model)
    drag_dofs, drag_linear, drag_quadratic = drag_of(model, layout.config, data)
    ropes, cargo_name, wheel_acts, cannon_acts = doc.ropes, doc.cargo, doc.wheels, doc.cannons
    limits = np.array([weld_limits(layout.config, w) for w in layout.welds]).reshape(-1, 2)
    cannons = [b.id for b in layout.graph.bodies if b.type == "Water Cannon"]
    torches = [b.id for b in layout.graph.bodies if b.type == "Torch"]
    body, actuator, geom, site = _ids(model, _BODY), _ids(model, _ACTUATOR), _ids(model, _GEOM), _ids(model, _SITE)
    cannon_ids = {k: actuator(v) for k, v in cannon_acts.items()}
    body_ids = {b.id: body(f"b{b.id}") for b in layout.graph.bodies}
    compiled = Compiled(
        model=model,
        layout=layout,
        intact=np.asarray(intact, dtype=bool).copy(),
        blocks=[
            BlockBody(b.id, b.type, body_ids[b.id] if b.spin_axis is None else body(f"disc{b.id}"))
            for b in layout.graph.bodies
        ],
        body_ids=body_ids,
        trees=trees,
        analysis=weld_analysis(layout, trees, body_ids, cannon_ids),
        weld_break_force=limits[:, 0],
        weld_break_torque=limits[:, 1],
        wheel_actuators={k: actuator(v) for k, v in wheel_acts.items()},
        cannon_actuators=cannon_ids,
        heat_pairs=[(i, geom(f"hull{c}"), geom(f"flame{t}")) for i, c in enumerate(cannons) for t in torches],
        ropes=[
            Rope(
                _ids(model, _TENDON)(name),
                (site(f"{name}_0"), site(f"{name}_1")),
                (body_ids[a], body_ids[b]),
            )
            for name, a, b in ropes
        ],
        cargo_body=-1 if cargo_name is None else body(cargo_name),
        drag_dofs=drag_dofs,
        drag_linear=drag_linear,
        drag_quadratic=drag_quadratic,
    )
    return compiled, data


_BODY, _JOINT, _GEOM = mujoco.mjtObj.mjOBJ_BODY, mujoco.mjtObj.mjOBJ_JOINT, mujoco.mjtObj.mjOBJ_GEOM
_SITE, _TENDON, _ACTUATOR = mujoco.mjtObj.mjOBJ_SITE, mujoco.mjtObj.mjOBJ_TENDON, mujoco.mjtObj.mjOBJ_ACTUATOR


def _ids(model: mujoco.MjModel, kind: mujoco.mjtObj) -> Callable[[str], int]:
    """Name → id of ``kind`` in ``model``, raising KeyError for an unknown name (as ``model.body(name)``).

    ``mj_name2id`` returns the id alone; the named accessors (``model.body(name)``) build a view object
    per call, which cost a tenth of a rebuild at a hundred blocks.
    """

    def find(name: str) -> int:
        found = int(mujoco.mj_name2id(model, kind, name))
        if found < 0:
            raise KeyError(f"no {kind.name[6:].lower()} named {name!r} in the model")
        return found

    return find


def drag_of(
    model: mujoco.MjModel, config: PhysicsConfig, data: mujoco.MjData | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drag of every free body: ``(dofs, linear, quadratic)``, six dofs per body (translation, rotation);
    the force on dof ``dofs[k]`` is ``-(linear[k] + quadratic[k]·s) · qvel[dofs[k]]`` with ``s`` the body's
    speed.

    Per unit of mass the drag decelerates a body by ``linear_drag_per_s·v + quadratic_drag_per_m·|v|·v``
    and its rotation by ``angular_drag_per_s·ω``, whatever the mass, as Unity's ``Rigidbody.drag`` and
    ``angularDrag`` do (``v *= 1 - drag·dt`` per step); as forces that is ``m·(…)`` and ``I·…``, with ``m``
    the body's subtree mass (a rigid group) and ``I`` the mean principal moment of the group about its
    centre of mass (the same about every axis, so the frame of the rotational dofs does not matter). The
    translational dofs of a free joint move the body's origin (the group's first block), not its centre of
    mass: for a group whose origin lies off its centre the drag acts at the origin, which adds a small
    dissipative torque. The simulation applies it explicitly each tick (``qfrc_applied``), stable while
    the deceleration rate stays far below ``1/dt``.

    ``data`` is a data of ``model`` to work in (its state is reset), by default a new one.
    """
    free = np.flatnonzero(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
    dofs = np.zeros(0, dtype=int)
    if not free.size or not (config.linear_drag_per_s or config.angular_drag_per_s or config.quadratic_drag_per_m):
        return dofs, np.zeros(0), np.zeros(0)
    if data is None:
        data = mujoco.MjData(model)
    else:
        mujoco.mj_resetData(model, data)
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    # Trace of every body's inertia about its subtree root's centre of mass (parallel axes: + 2·m·|d|²).
    offset = data.xipos - data.subtree_com[model.body_rootid]
    trace = model.body_inertia.sum(axis=1) + 2.0 * model.body_mass * np.einsum("bi,bi->b", offset, offset)
    group_trace = np.bincount(model.body_rootid, weights=trace, minlength=model.nbody)
    roots = model.jnt_bodyid[free]
    dofs = (model.jnt_dofadr[free][:, None] + np.arange(6)).reshape(-1)
    mass = model.body_subtreemass[roots][:, None]
    angular = config.angular_drag_per_s * group_trace[roots][:, None] / 3.0
    linear = np.hstack([np.repeat(config.linear_drag_per_s * mass, 3, axis=1), np.repeat(angular, 3, axis=1)])
    quadratic = np.hstack([np.repeat(config.quadratic_drag_per_m * mass, 3, axis=1), np.zeros((roots.size, 3))])
    return dofs, linear.reshape(-1), quadratic.reshape(-1)


def compile_scene(
    machine: Machine, scene: Scene, config: PhysicsConfig, graph: BodyGraph | None = None
) -> Compiled:
    """Build and compile the MuJoCo model of ``machine`` in ``scene`` with every weld intact.

    ``graph`` is the machine's body graph when the caller already has it.

    Raises:
        ValueError: When the machine has no solid block.
    """
    layout = lay_out(machine, scene, config, graph)
    intact = np.ones(len(layout.welds), dtype=bool)
    trees = spanning_trees(layout, intact)
    compiled, data = _compile(layout, intact, trees)
    overlapping = _overlapping_pairs(layout, compiled.model, data)
    if not overlapping:
        return compiled
    return _compile(replace(layout, never_collide=[*layout.never_collide, *overlapping], frame=[]), intact, trees)[0]


def rebuild(compiled: Compiled, data: mujoco.MjData, intact: np.ndarray) -> tuple[Compiled, mujoco.MjData]:
    """Recompile with only the ``intact`` welds and carry the state over.

    Every block keeps its pose and velocity: each new group's root takes its
    current world pose and velocity, the rest of the group follows rigidly
    (a group's blocks never move relative to each other); wheel hinges, the
    cargo, actuator controls and the clock carry over by name. When every
    group holds together (other welds still join the two sides of each
    broken one), the model and state stay as they are and only the weld
    analysis changes.
    """
    trees = spanning_trees(compiled.layout, intact)
    if same_bodies(trees, compiled.trees):
        cannon_ids = compiled.cannon_actuators
        return replace(
            compiled,
            intact=np.asarray(intact, dtype=bool).copy(),
            trees=trees,
            analysis=weld_analysis(compiled.layout, trees, compiled.body_ids, cannon_ids),
        ), data
    old = compiled.model
    roots: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for tree in trees:
        b = compiled.body_ids[tree.order[0]]
        roots[tree.order[0]] = (data.xpos[b].copy(), data.xmat[b].reshape(3, 3).copy())
    new, state = _compile(compiled.layout, intact, trees, roots)
    model = new.model
    mujoco.mj_resetData(model, state)
    state.time = data.time
    state.ctrl[:] = data.ctrl
    old_of = _old_bodies(compiled, new)
    # Free joints: the group roots and the cargo, at their bodies' current poses and velocities.
    free = model.jnt_type == mujoco.mjtJoint.mjJNT_FREE
    joints = np.flatnonzero(free)
    olds = old_of[model.jnt_bodyid[joints]]
    if (olds <= 0).any():
        raise AssertionError("rebuild: a free body of the rebuilt model is neither a block's nor the cargo's")
    qa, va = model.jnt_qposadr[joints][:, None], model.jnt_dofadr[joints][:, None]
    state.qpos[qa + _THREE] = data.xpos[olds]
    state.qpos[qa + _FOUR] = data.xquat[olds]
    velocity = np.zeros((joints.size, 6))
    for k, b_old in enumerate(olds.tolist()):
        mujoco.mj_objectVelocity(old, data, mujoco.mjtObj.mjOBJ_BODY, b_old, velocity[k], 0)
        # One matrix-vector product per body, as ever (a stacked product may round otherwise).
        velocity[k, :3] = data.xmat[b_old].reshape(3, 3).T @ velocity[k, :3]
    state.qvel[va + _THREE] = velocity[:, 3:]
    state.qvel[va + 3 + _THREE] = velocity[:, :3]
    # The other joints (wheel hinges): the same joint of the same body in the old model.
    joints = np.flatnonzero(~free)
    if joints.size:
        bodies = model.jnt_bodyid[joints]
        j_old = old.body_jntadr[old_of[bodies]] + (joints - model.body_jntadr[bodies])
        state.qpos[model.jnt_qposadr[joints]] = data.qpos[old.jnt_qposadr[j_old]]
        state.qvel[model.jnt_dofadr[joints]] = data.qvel[old.jnt_dofadr[j_old]]
    mujoco.mj_forward(model, state)
    return new, state


_THREE, _FOUR = np.arange(3), np.arange(3, 7)


def _old_bodies(old: Compiled, new: Compiled) -> np.ndarray:
    """Per body of ``new``'s model, the same body (by name) in ``old``'s, or -1 (the world: 0).

    The blocks' bodies (``b<id>``, a wheel's ``disc<id>``) and the cargo are the bodies with joints; they map
    through the blocks, without a name lookup per joint.
    """
    mapping = np.full(new.model.nbody, -1, dtype=int)
    mapping[0] = 0
    mapping[[new.body_ids[b.block_id] for b in new.blocks]] = [old.body_ids[b.block_id] for b in new.blocks]
    mapping[[b.body for b in new.blocks]] = [b.body for b in old.blocks]
    if new.cargo_body >= 0:
        mapping[new.cargo_body] = old.cargo_body
    return mapping


OVERLAP_TOLERANCE_M = 1e-3
"""Blocks whose bodies already interpenetrate by more than this when built never collide."""


def _overlapping_pairs(layout: Layout, model: mujoco.MjModel, data: mujoco.MjData) -> list[tuple[str, str]]:
    """Pairs of block bodies whose colliders overlap in the built pose.

    The library accepts a block when its shrunk (×0.8) collider is clear
    (spec 2.2), so full-size bodies of neighbours may overlap, e.g. a torch
    whose flame nozzle reaches into the cannon it heats. Such built-in
    overlaps are parts of one rigid assembly, not collisions: they are
    excluded, as welded neighbours are (MuJoCo does not collide blocks of one
    rigid group anyway, so this matters once a weld between them breaks).
    ``data`` is a data of ``model`` to work in (its state is reset).
    """
    mujoco.mj_resetData(model, data)
    mujoco.mj_kinematics(model, data)
    geoms = np.array([model.geom(f"g{b.id}").id for b in layout.graph.bodies], dtype=int)
    owners = [model.body(int(model.geom_bodyid[g])).name for g in geoms]
    excluded = {frozenset(pair) for pair in layout.never_collide}
    centres, radii = data.geom_xpos[geoms], model.geom_rbound[geoms]
    near = cKDTree(centres).query_pairs(2.0 * float(radii.max()), output_type="ndarray").reshape(-1, 2)
    near = near[np.linalg.norm(centres[near[:, 0]] - centres[near[:, 1]], axis=1) <= radii[near].sum(axis=1)]
    pairs: set[tuple[str, str]] = set()
    for i, j in sorted(map(tuple, near.tolist())):
        names = (owners[i], owners[j])
        if frozenset(names) in excluded:
            continue
        if (
            mujoco.mj_geomDistance(model, data, int(geoms[i]), int(geoms[j]), 1.0, None)
            < -OVERLAP_TOLERANCE_M
        ):
            first, second = sorted(names)
            pairs.add((first, second))
    return sorted(pairs)
