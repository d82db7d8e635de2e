"""Compile a machine and its scene into a MuJoCo model with ``MjSpec``.

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
a loop inside a group, which ``stress`` resolves by stiffness); a Winch is a
rope (a spatial tendon that may slacken but not stretch beyond its built
length). A Powered Wheel is a hub (a welded block) carrying the disc on a
hinge driven by a velocity servo. A Water Cannon carries a site actuator
whose force points against its spray, and a non-colliding full-size box
that the torches' non-colliding flame spheres are tested against. Welded
neighbours never collide (also after their weld broke), nor do blocks whose
bodies already overlap as built (the library only checks its shrunk
colliders); collision boxes are ``collision_gap_m`` smaller than the blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import mujoco
import numpy as np
from scipy.spatial import cKDTree

from buildbench.suites.buildarena.library.bodies import BodyGraph
from buildbench.suites.buildarena.model import Machine

from .config import PhysicsConfig
from .groups import Group, Tree, WeldAnalysis, same_bodies, spanning_trees, weld_analysis
from .layout import Layout, lay_out, weld_limits
from .parts import box_inertia, parts
from .scene import Scene

BALLAST = "Ballast"


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
        groups: The rigid groups' bodies.
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
    """

    model: mujoco.MjModel
    layout: Layout
    intact: np.ndarray
    blocks: list[BlockBody]
    body_ids: dict[str, int]
    trees: list[Tree]
    groups: list[Group]
    analysis: WeldAnalysis | None
    weld_break_force: np.ndarray
    weld_break_torque: np.ndarray
    wheel_actuators: dict[str, int]
    cannon_actuators: dict[str, int]
    heat_pairs: list[tuple[int, int, int]]
    ropes: list[Rope]
    cargo_body: int

    @property
    def weld_names(self) -> list[str]:
        """Label per weld."""
        return [w.label for w in self.layout.welds]


def _quat(rot: np.ndarray) -> list[float]:
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rot, dtype=float).reshape(9))
    return quat.tolist()


def _set_inertial(body: mujoco.MjsBody, mass: float, inertia: list[float]) -> None:
    """Mass and principal moments about the body's origin, along its axes."""
    body.mass, body.inertia, body.explicitinertial = mass, inertia, True
    body.ipos, body.iquat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]


class _Builder:
    def __init__(self, layout: Layout) -> None:
        self.layout, self.scene, self.config = layout, layout.scene, layout.config
        self.rot = np.asarray(layout.scene.placement_rotation, dtype=float)
        self.parts = parts(layout)
        self.spec = mujoco.MjSpec()
        config = layout.config
        opt = self.spec.option
        opt.timestep = config.timestep_s
        opt.gravity = [0.0, 0.0, -config.gravity_mps2]
        opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{config.integrator.upper()}")
        opt.iterations = config.iterations
        # Every geom shares friction and contact softness.
        geom = self.spec.default.geom
        geom.friction = [config.friction, 0.005, 0.0001]
        geom.solref = [config.contact_timeconst_s, 1.0]
        geom.solimp = [*config.contact_solimp, 0.5, 2.0]

    def add_world(self) -> None:
        world = self.spec.worldbody
        if self.scene.ground:
            world.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], name="ground")
        for i, box in enumerate(self.scene.terrain):
            world.add_geom(
                type=mujoco.mjtGeom.mjGEOM_BOX,
                pos=list(box.center),
                size=[0.5 * s for s in box.size],
                name=f"terrain{i}",
            )

    def add_tree(self, tree: Tree, root_pose: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Add a rigid group: its root a free body (at ``root_pose``, world; default as built),
        every other block a jointless child body of the root."""
        layout = self.layout
        r_centre, r_rot = layout.poses[tree.order[0]]
        pos, rot = (r_centre, r_rot) if root_pose is None else root_pose
        root = self.add_block(self.spec.worldbody, tree.order[0], pos, _quat(rot))
        root.add_freejoint()
        others = tree.order[1:]
        if not others:
            return
        centres = (np.array([layout.poses[b][0] for b in others]) - r_centre) @ r_rot
        turns = r_rot.T @ np.array([layout.poses[b][1] for b in others])
        for block, centre, turn in zip(others, centres, turns, strict=True):
            self.add_block(root, block, centre, _quat(turn))

    def add_block(
        self, parent: mujoco.MjsBody, block: str, pos: np.ndarray, quat: list[float]
    ) -> mujoco.MjsBody:
        """Add ``block`` under ``parent`` at ``pos``/``quat`` (parent frame); returns the block's body."""
        part = self.parts[block]
        body = parent.add_body(name=f"b{block}", pos=list(pos), quat=quat)
        _set_inertial(body, part.mass, part.inertia)
        holder = body
        if part.disc is not None:
            holder = body.add_body(name=f"disc{block}")
            holder.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE, axis=part.disc.axis, name=f"spin{block}")
            _set_inertial(holder, part.disc.mass, part.disc.inertia)
        holder.add_geom(**part.collider)
        if part.sensor is not None:
            holder.add_geom(**part.sensor)
        return body


@dataclass(frozen=True)
class _Spec:
    """A model's spec before compiling, with the names the index arrays are read from."""

    builder: _Builder
    trees: list[Tree]
    cargo: str | None
    ropes: list[tuple[str, str, str]]
    wheels: dict[str, str]
    cannons: dict[str, str]


def _spec(
    layout: Layout, intact: np.ndarray, root_poses: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
) -> _Spec:
    """The spec with one rigid group per connected set of intact welds.

    Args:
        layout: The placed machine.
        intact: Per weld, whether it holds.
        root_poses: Block id → world (centre, rotation) for group roots; default as built.
    """
    builder = _Builder(layout)
    builder.add_world()
    cargo = _add_cargo(builder)
    trees = spanning_trees(layout, intact)
    for tree in trees:
        builder.add_tree(tree, None if root_poses is None else root_poses[tree.order[0]])
    for a, b in layout.never_collide:
        builder.spec.add_exclude(bodyname1=a, bodyname2=b)
    ropes = _add_ropes(builder)
    wheels, cannons = _add_actuators(builder)
    return _Spec(builder, trees, cargo, ropes, wheels, cannons)


def _compile(layout: Layout, intact: np.ndarray, spec: _Spec, model: mujoco.MjModel) -> Compiled:
    """Index the compiled ``model`` of ``spec``."""
    trees, ropes, cargo_name = spec.trees, spec.ropes, spec.cargo
    wheel_acts, cannon_acts = spec.wheels, spec.cannons
    limits = np.array([weld_limits(layout.config, w) for w in layout.welds]).reshape(-1, 2)
    cannons = [b.id for b in layout.graph.bodies if b.type == "Water Cannon"]
    torches = [b.id for b in layout.graph.bodies if b.type == "Torch"]
    cannon_ids = {k: model.actuator(v).id for k, v in cannon_acts.items()}
    body_ids = {b.id: model.body(f"b{b.id}").id for b in layout.graph.bodies}
    return Compiled(
        model=model,
        layout=layout,
        intact=np.asarray(intact, dtype=bool).copy(),
        blocks=[
            BlockBody(b.id, b.type, model.body(f"disc{b.id}" if b.spin_axis is not None else f"b{b.id}").id)
            for b in layout.graph.bodies
        ],
        body_ids=body_ids,
        trees=trees,
        groups=_groups(trees, body_ids),
        analysis=weld_analysis(layout, trees, body_ids, cannon_ids),
        weld_break_force=limits[:, 0],
        weld_break_torque=limits[:, 1],
        wheel_actuators={k: model.actuator(v).id for k, v in wheel_acts.items()},
        cannon_actuators=cannon_ids,
        heat_pairs=[
            (i, model.geom(f"hull{c}").id, model.geom(f"flame{t}").id)
            for i, c in enumerate(cannons)
            for t in torches
        ],
        ropes=[
            Rope(
                model.tendon(name).id,
                (model.site(f"{name}_0").id, model.site(f"{name}_1").id),
                (model.body(f"b{a}").id, model.body(f"b{b}").id),
            )
            for name, a, b in ropes
        ],
        cargo_body=-1 if cargo_name is None else model.body(cargo_name).id,
    )


def _groups(trees: list[Tree], body_ids: dict[str, int]) -> list[Group]:
    return [
        Group(
            body_ids[tree.order[0]],
            np.array([body_ids[b] for b in tree.order], dtype=int),
            np.array(tree.welds, dtype=int),
        )
        for tree in trees
    ]


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
    spec = _spec(layout, intact)
    model = spec.builder.spec.compile()
    overlapping = _overlapping_pairs(layout, model)
    if overlapping:
        for a, b in overlapping:
            spec.builder.spec.add_exclude(bodyname1=a, bodyname2=b)
        layout = replace(layout, never_collide=[*layout.never_collide, *overlapping])
        model = spec.builder.spec.compile()
    return _compile(layout, intact, spec, model)


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
            groups=_groups(trees, compiled.body_ids),
            analysis=weld_analysis(compiled.layout, trees, compiled.body_ids, cannon_ids),
        ), data
    old = compiled.model
    roots: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for block in compiled.layout.graph.bodies:
        b = old.body(f"b{block.id}").id
        roots[block.id] = (data.xpos[b].copy(), data.xmat[b].reshape(3, 3).copy())
    spec = _spec(compiled.layout, intact, roots)
    new = _compile(compiled.layout, intact, spec, spec.builder.spec.compile())
    model = new.model
    state = mujoco.MjData(model)
    state.time = data.time
    state.ctrl[:] = data.ctrl
    velocity = np.zeros(6)
    for j in range(model.njnt):
        name = model.joint(j).name
        qa, va = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            body = int(model.jnt_bodyid[j])
            b_old = old.body(model.body(body).name).id
            mujoco.mj_objectVelocity(old, data, mujoco.mjtObj.mjOBJ_BODY, b_old, velocity, 0)
            state.qpos[qa : qa + 3] = data.xpos[b_old]
            state.qpos[qa + 3 : qa + 7] = data.xquat[b_old]
            state.qvel[va : va + 3] = velocity[3:]
            state.qvel[va + 3 : va + 6] = data.xmat[b_old].reshape(3, 3).T @ velocity[:3]
        else:
            j_old = old.joint(name).id
            state.qpos[qa] = data.qpos[old.jnt_qposadr[j_old]]
            state.qvel[va] = data.qvel[old.jnt_dofadr[j_old]]
    mujoco.mj_forward(model, state)
    return new, state


OVERLAP_TOLERANCE_M = 1e-3
"""Blocks whose bodies already interpenetrate by more than this when built never collide."""


def _overlapping_pairs(layout: Layout, model: mujoco.MjModel) -> list[tuple[str, str]]:
    """Pairs of block bodies whose colliders overlap in the built pose.

    The library accepts a block when its shrunk (×0.8) collider is clear
    (spec 2.2), so full-size bodies of neighbours may overlap, e.g. a torch
    whose flame nozzle reaches into the cannon it heats. Such built-in
    overlaps are parts of one rigid assembly, not collisions: they are
    excluded, as welded neighbours are (MuJoCo does not collide blocks of one
    rigid group anyway, so this matters once a weld between them breaks).
    """
    data = mujoco.MjData(model)
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


def _add_ropes(builder: _Builder) -> list[tuple[str, str, str]]:
    """A spatial tendon per Winch; returns ``(tendon name, end block a, end block b)``."""
    ropes = []
    layout = builder.layout
    rot, offset = builder.rot, np.asarray(builder.scene.placement_offset, dtype=float)
    for link in layout.graph.links:
        if link.type == "Brace":
            continue
        ends = ((link.a.block, rot @ link.point_a + offset), (link.b.block, rot @ link.point_b + offset))
        name = f"rope{link.id}"
        for k, (block, point) in enumerate(ends):
            centre, brot = layout.poses[block]
            builder.spec.body(f"b{block}").add_site(name=f"{name}_{k}", pos=list(brot.T @ (point - centre)))
        length = float(np.linalg.norm(ends[0][1] - ends[1][1]))
        tendon = builder.spec.add_tendon(
            name=name,
            limited=True,
            range=[0.0, length],
            solref_limit=[builder.config.winch_stiffness_timeconst_s, 1.0],
        )
        for k in range(2):
            tendon.wrap_site(f"{name}_{k}")
        ropes.append((name, link.a.block, link.b.block))
    return ropes


def _add_actuators(builder: _Builder) -> tuple[dict[str, str], dict[str, str]]:
    cfg = builder.config
    wheels: dict[str, str] = {}
    cannons: dict[str, str] = {}
    for body in builder.layout.graph.bodies:
        if body.spin_axis is not None:
            act = builder.spec.add_actuator(
                name=f"motor{body.id}", target=f"spin{body.id}", trntype=mujoco.mjtTrn.mjTRN_JOINT
            )
            act.set_to_velocity(kv=cfg.wheel_gain_nms)
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [-cfg.wheel_max_torque_nm, cfg.wheel_max_torque_nm]
            wheels[body.id] = act.name
        elif body.type == "Water Cannon":
            rot = builder.layout.poses[body.id][1]
            recoil_world = builder.rot @ -np.asarray(body.pointer)
            site_rot = _frame_with_z(rot.T @ recoil_world)
            builder.spec.body(f"b{body.id}").add_site(name=f"nozzle{body.id}", quat=_quat(site_rot))
            act = builder.spec.add_actuator(
                name=f"thrust{body.id}",
                target=f"nozzle{body.id}",
                trntype=mujoco.mjtTrn.mjTRN_SITE,
                gear=[0, 0, 1, 0, 0, 0],
            )
            act.set_to_motor()
            cannons[body.id] = act.name
    return wheels, cannons


def _frame_with_z(z: np.ndarray) -> np.ndarray:
    """A rotation whose third column is unit vector ``z``."""
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = helper - (helper @ z) * z
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _add_cargo(builder: _Builder) -> str | None:
    cargo = builder.scene.cargo
    if cargo is None:
        return None
    mass = float(cargo.mass(0.0))
    full = np.array(cargo.size)
    body = builder.spec.worldbody.add_body(name=BALLAST, pos=list(cargo.center))
    body.add_freejoint()
    _set_inertial(body, mass, box_inertia(mass, full).tolist())
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(0.5 * full))
    return BALLAST
