"""Compile a machine and its scene into a MuJoCo model with ``MjSpec``.

Blocks joined by intact welds form a rigid group: the group's first block
(machine order) is a free body and every other block is a child body of the
block it is welded to, with no joint between them, so the group moves as one
rigid body (MuJoCo gives it six degrees of freedom instead of six per block,
and filters contacts inside it). Each block stays its own body with its own
geoms, mass and inertia, so the per-block loads that the weld forces are
computed from (``stress``) come out of MuJoCo's inverse dynamics. When a
weld breaks, the simulation rebuilds the model with the new groups
(``rebuild``) and carries every body's pose and velocity over.

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

from buildbench.suites.buildarena.library.bodies import Body
from buildbench.suites.buildarena.library.frames import matrix_to_quat
from buildbench.suites.buildarena.model import Machine

from .config import PhysicsConfig
from .groups import Group, network, spanning_trees, thrusters
from .layout import Layout, lay_out, weld_limits
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
        groups: The rigid groups.
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
    groups: list[Group]
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


def _box_inertia(mass: float, full: np.ndarray) -> np.ndarray:
    a, b, c = full
    return mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


def _cyl_inertia(mass: float, radius: float, height: float) -> np.ndarray:
    side = mass * (3 * radius * radius + height * height) / 12.0
    return np.array([side, side, 0.5 * mass * radius * radius])


def _quat(rot: np.ndarray) -> list[float]:
    return list(matrix_to_quat(rot))


class _Builder:
    def __init__(self, layout: Layout) -> None:
        self.layout, self.scene, self.config = layout, layout.scene, layout.config
        self.rot = np.asarray(layout.scene.placement_rotation, dtype=float)
        self.spec = mujoco.MjSpec()
        config = layout.config
        opt = self.spec.option
        opt.timestep = config.timestep_s
        opt.gravity = [0.0, 0.0, -config.gravity_mps2]
        opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{config.integrator.upper()}")
        opt.iterations = config.iterations

    def contact(self) -> dict[str, object]:
        """Geom attributes shared by every collider (friction and contact softness)."""
        cfg = self.config
        return {
            "friction": [cfg.friction, 0.005, 0.0001],
            "solref": [cfg.contact_timeconst_s, 1.0],
            "solimp": [*cfg.contact_solimp, 0.5, 2.0],
        }

    def add_world(self) -> None:
        world = self.spec.worldbody
        if self.scene.ground:
            world.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], name="ground", **self.contact())
        for i, box in enumerate(self.scene.terrain):
            world.add_geom(
                type=mujoco.mjtGeom.mjGEOM_BOX,
                pos=list(box.center),
                size=[0.5 * s for s in box.size],
                **self.contact(),
                name=f"terrain{i}",
            )

    def add_block(
        self,
        parent: mujoco.MjsBody,
        body: Body,
        pos: np.ndarray,
        rot: np.ndarray,
        free: bool,
    ) -> mujoco.MjsBody:
        """Add ``body`` under ``parent`` at ``pos``/``rot`` (parent frame); returns the block's body."""
        shape = body.shape
        mass = self.layout.masses[body.id]
        b = parent.add_body(name=f"b{body.id}", pos=list(pos), quat=_quat(rot))
        if free:
            b.add_freejoint()
        if shape.kind == "box":
            full = np.array(shape.size)
            half = 0.5 * full
            inertia = _box_inertia(mass, full)
            gap = 0.5 * self.config.collision_gap_m
            geom = dict(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(np.maximum(half - gap, 0.5 * half)))
        else:
            radius, height = shape.size[0], shape.size[2]
            half = np.array([radius, radius, 0.5 * height])
            inertia = _cyl_inertia(mass, radius, height)
            half_len = max(0.5 * (height - self.config.collision_gap_m), 0.25 * height)
            geom = dict(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[radius, half_len, 0])
        holder = b
        if body.spin_axis is not None:
            hub_mass = self.config.wheel_hub_mass_fraction * mass
            b.mass, b.inertia = hub_mass, list(inertia * self.config.wheel_hub_mass_fraction)
            b.ipos, b.iquat, b.explicitinertial = [0, 0, 0], [1, 0, 0, 0], True
            holder = b.add_body(name=f"disc{body.id}")
            mass -= hub_mass
            inertia = inertia * (1 - self.config.wheel_hub_mass_fraction)
            # Positive control = rolling the captioned way: angular velocity -spin_axis (see sim docs).
            built_rot = self.layout.poses[body.id][1]
            axis_local = built_rot.T @ (self.rot @ -np.asarray(body.spin_axis))
            holder.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE, axis=list(axis_local), name=f"spin{body.id}")
        holder.mass, holder.inertia = mass, list(inertia)
        holder.ipos, holder.iquat, holder.explicitinertial = [0, 0, 0], [1, 0, 0, 0], True
        holder.add_geom(density=0, name=f"g{body.id}", **geom, **self.contact())
        self._add_heat_geom(body, holder, half)
        return b

    def _add_heat_geom(self, body: Body, holder: mujoco.MjsBody, half: np.ndarray) -> None:
        """Non-colliding geoms for the heating test: a cannon's full box, a torch's flame sphere."""
        sensor = {"contype": 0, "conaffinity": 0, "group": 3, "density": 0}
        if body.type == "Water Cannon":
            holder.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(half), name=f"hull{body.id}", **sensor)
        elif body.type == "Torch":
            centre, rot = self.layout.poses[body.id]
            offset = np.asarray(self.scene.placement_offset, dtype=float)
            flame = self.rot @ (torch_display_centre(body) + np.asarray(body.pointer)) + offset
            holder.add_geom(
                type=mujoco.mjtGeom.mjGEOM_SPHERE,
                size=[self.config.torch_heat_radius, 0, 0],
                pos=list(rot.T @ (flame - centre)),
                name=f"flame{body.id}",
                **sensor,
            )


def torch_display_centre(torch: Body) -> np.ndarray:
    """A torch's displayed centre (real frame, unplaced): the flame sits one unit beyond it (App. E.2).

    The outline box is shifted 0.25 along the pointer from the displayed centre (torch YAML:
    translation [0, 0.25, 0] along ``vec_base``).
    """
    return np.asarray(torch.shape.center) - 0.25 * np.asarray(torch.pointer)


def _compile(
    layout: Layout, intact: np.ndarray, root_poses: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
) -> Compiled:
    """Build the model with one rigid group per connected set of intact welds.

    Args:
        layout: The placed machine.
        intact: Per weld, whether it holds.
        root_poses: Block id → world (centre, rotation) for group roots; default as built.
    """
    builder = _Builder(layout)
    builder.add_world()
    bodies = {b.id: b for b in layout.graph.bodies}
    cargo_name = _add_cargo(builder)
    trees = spanning_trees(layout, intact)
    spec_bodies: dict[str, mujoco.MjsBody] = {}
    for tree in trees:
        for block in tree.order:
            centre, rot = layout.poses[block]
            if block in tree.parent:
                p_centre, p_rot = layout.poses[tree.parent[block]]
                holder, pos, rel = (
                    spec_bodies[tree.parent[block]],
                    p_rot.T @ (centre - p_centre),
                    p_rot.T @ rot,
                )
                free = False
            else:
                holder, free = builder.spec.worldbody, True
                pos, rel = (centre, rot) if root_poses is None else root_poses[block]
            spec_bodies[block] = builder.add_block(holder, bodies[block], pos, rel, free)
    for a, b in layout.never_collide:
        builder.spec.add_exclude(bodyname1=a, bodyname2=b)
    ropes = _add_ropes(builder)
    wheel_acts, cannon_acts = _add_actuators(builder)
    model = builder.spec.compile()
    limits = np.array([weld_limits(layout.config, w) for w in layout.welds]).reshape(-1, 2)
    cannons = [b.id for b in layout.graph.bodies if b.type == "Water Cannon"]
    torches = [b.id for b in layout.graph.bodies if b.type == "Torch"]
    cannon_ids = {k: model.actuator(v).id for k, v in cannon_acts.items()}
    groups = [
        Group(
            model.body(f"b{tree.order[0]}").id,
            np.array([model.body(f"b{b}").id for b in tree.order]),
            np.array(tree.welds, dtype=int),
            network(layout, tree),
            *thrusters(layout, tree, cannon_ids),
        )
        for tree in trees
    ]
    return Compiled(
        model=model,
        layout=layout,
        intact=np.asarray(intact, dtype=bool).copy(),
        blocks=[
            BlockBody(b.id, b.type, model.body(f"disc{b.id}" if b.spin_axis is not None else f"b{b.id}").id)
            for b in layout.graph.bodies
        ],
        groups=groups,
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


def compile_scene(machine: Machine, scene: Scene, config: PhysicsConfig) -> Compiled:
    """Build and compile the MuJoCo model of ``machine`` in ``scene`` with every weld intact.

    Raises:
        ValueError: When the machine has no solid block.
    """
    layout = lay_out(machine, scene, config)
    intact = np.ones(len(layout.welds), dtype=bool)
    compiled = _compile(layout, intact)
    overlapping = _overlapping_pairs(compiled)
    if not overlapping:
        return compiled
    return _compile(replace(layout, never_collide=[*layout.never_collide, *overlapping]), intact)


def rebuild(compiled: Compiled, data: mujoco.MjData, intact: np.ndarray) -> tuple[Compiled, mujoco.MjData]:
    """Recompile with only the ``intact`` welds and carry the state over.

    Every block keeps its pose and velocity: each new group's root takes its
    current world pose and velocity, the rest of the group follows rigidly
    (a group's blocks never move relative to each other); wheel hinges, the
    cargo, actuator controls and the clock carry over by name.
    """
    old = compiled.model
    roots: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for block in compiled.layout.graph.bodies:
        b = old.body(f"b{block.id}").id
        roots[block.id] = (data.xpos[b].copy(), data.xmat[b].reshape(3, 3).copy())
    new = _compile(compiled.layout, intact, roots)
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


def _overlapping_pairs(compiled: Compiled) -> list[tuple[str, str]]:
    """Pairs of block bodies whose colliders overlap in the built pose.

    The library accepts a block when its shrunk (×0.8) collider is clear
    (spec 2.2), so full-size bodies of neighbours may overlap, e.g. a torch
    whose flame nozzle reaches into the cannon it heats. Such built-in
    overlaps are parts of one rigid assembly, not collisions: they are
    excluded, as welded neighbours are (MuJoCo does not collide blocks of one
    rigid group anyway, so this matters once a weld between them breaks).
    """
    model = compiled.model
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    geoms = np.array([model.geom(f"g{b.id}").id for b in compiled.layout.graph.bodies], dtype=int)
    reach = 2.0 * float(model.geom_rbound[geoms].max())
    pairs: set[tuple[str, str]] = set()
    for i, j in sorted(cKDTree(data.geom_xpos[geoms]).query_pairs(reach)):
        g1, g2 = int(geoms[i]), int(geoms[j])
        if model.geom_rbound[g1] + model.geom_rbound[g2] < np.linalg.norm(
            data.geom_xpos[g1] - data.geom_xpos[g2]
        ):
            continue
        if mujoco.mj_geomDistance(model, data, g1, g2, 1.0, None) < -OVERLAP_TOLERANCE_M:
            names = sorted(model.body(int(model.geom_bodyid[g])).name for g in (g1, g2))
            pairs.add((names[0], names[1]))
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
            builder.spec.body(f"b{body.id}").add_site(
                name=f"nozzle{body.id}", pos=[0, 0, 0], quat=_quat(site_rot)
            )
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
    body.mass, body.inertia = mass, list(_box_inertia(mass, full))
    body.ipos, body.iquat, body.explicitinertial = [0, 0, 0], [1, 0, 0, 0], True
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(0.5 * full), density=0, **builder.contact())
    return BALLAST
