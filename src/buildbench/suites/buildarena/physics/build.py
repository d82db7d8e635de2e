"""Compile a machine and its scene into a MuJoCo model with ``MjSpec``.

One free body per block (real frame, z up; body frame = the block's
outline shape frame, so inertia is diagonal and centred); one breakable
weld per attachment anchored at the shared face centre; a Brace is a weld
between its two end blocks anchored midway; a Winch is a rope (a spatial
tendon that may slacken but not stretch beyond its built length). A
Powered Wheel is a hub (welded, breakable) carrying the disc on a hinge
driven by a velocity servo. A Water Cannon carries a site actuator whose
force points against its spray, and a non-colliding full-size box that
the torches' non-colliding flame spheres are tested against. Welded
neighbours do not collide, nor do blocks whose bodies already overlap as
built (the library only checks its shrunk colliders); collision boxes are
``collision_gap_m`` smaller than the blocks.

Bodies are added cargo first, then blocks in the order ``ordering`` picks
to keep the solver's sparse factor small; ``Compiled.blocks`` (and so the
log) stays in machine order.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from buildbench.suites.buildarena.library.bodies import Body, BodyGraph, body_graph
from buildbench.suites.buildarena.library.frames import matrix_to_quat
from buildbench.suites.buildarena.model import Machine

from .config import PhysicsConfig
from .ordering import body_order
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
class Compiled:
    """A compiled scene and the index arrays the simulation loop needs.

    Attributes:
        model: The MuJoCo model.
        blocks: Logged blocks in machine order (cargo excluded).
        weld_break_force: Break force per equality id (N).
        weld_break_torque: Break torque per equality id (N·m).
        weld_names: ``child->base`` (or connector id) per equality id, for reports.
        wheel_actuators: Actuator id per wheel block id.
        cannon_actuators: Actuator id per cannon block id.
        heat_pairs: ``(cannon index, hull geom, flame geom)`` for every cannon and torch:
            the cannon's full-size box and the torch's heating sphere, both
            non-colliding geoms used only for ``mj_geomDistance``.
        cargo_body: Ballast body id, or -1.
    """

    model: mujoco.MjModel
    blocks: list[BlockBody]
    weld_break_force: np.ndarray
    weld_break_torque: np.ndarray
    weld_names: list[str]
    wheel_actuators: dict[str, int]
    cannon_actuators: dict[str, int]
    heat_pairs: list[tuple[int, int, int]]
    cargo_body: int


def _box_inertia(mass: float, full: np.ndarray) -> np.ndarray:
    a, b, c = full
    return mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


def _cyl_inertia(mass: float, radius: float, height: float) -> np.ndarray:
    side = mass * (3 * radius * radius + height * height) / 12.0
    return np.array([side, side, 0.5 * mass * radius * radius])


def _quat(rot: np.ndarray) -> list[float]:
    return list(matrix_to_quat(rot))


def _extra_masses(graph: BodyGraph) -> dict[str, float]:
    """Connector masses split equally onto their two end blocks (connectors have no body of their own)."""
    extra: dict[str, float] = {}
    for link in graph.links:
        for ref in (link.a, link.b):
            extra[ref.block] = extra.get(ref.block, 0.0) + 0.5 * link.mass
    return extra


class _Builder:
    def __init__(self, scene: Scene, config: PhysicsConfig) -> None:
        self.scene, self.config = scene, config
        self.spec = mujoco.MjSpec()
        self.rot = np.asarray(scene.placement_rotation, dtype=float)
        self.offset = np.asarray(scene.placement_offset, dtype=float)
        self.poses: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.anchor_body: dict[str, str] = {}
        self.weld_force: list[float] = []
        self.weld_torque: list[float] = []
        self.weld_names: list[str] = []
        opt = self.spec.option
        opt.timestep = config.timestep_s
        opt.gravity = [0.0, 0.0, -config.gravity_mps2]
        opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{config.integrator.upper()}")
        opt.iterations = config.iterations

    def place(self, point: np.ndarray) -> np.ndarray:
        return self.rot @ np.asarray(point, dtype=float) + self.offset

    def friction(self) -> list[float]:
        return [self.config.friction, 0.005, 0.0001]

    def contact(self) -> dict[str, object]:
        """Geom attributes shared by every collider (friction and contact softness)."""
        cfg = self.config
        return {
            "friction": self.friction(),
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

    def add_block(self, body: Body, extra_mass: float) -> str:
        shape = body.shape
        rot = self.rot @ shape.rotation
        centre = self.place(shape.center)
        mass = body.mass + extra_mass
        name = f"b{body.id}"
        is_wheel = body.spin_axis is not None
        b = self.spec.worldbody.add_body(name=name, pos=list(centre), quat=_quat(rot))
        b.add_freejoint()
        self.poses[body.id] = (centre, rot)
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
        if is_wheel:
            hub_mass = self.config.wheel_hub_mass_fraction * mass
            b.mass, b.inertia = hub_mass, list(inertia * self.config.wheel_hub_mass_fraction)
            b.ipos, b.iquat, b.explicitinertial = [0, 0, 0], [1, 0, 0, 0], True
            holder = b.add_body(name=f"disc{body.id}")
            mass -= hub_mass
            inertia = inertia * (1 - self.config.wheel_hub_mass_fraction)
            # Positive control = rolling the captioned way: angular velocity -spin_axis (see sim docs).
            axis_local = rot.T @ (self.rot @ -np.asarray(body.spin_axis))
            holder.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE, axis=list(axis_local), name=f"spin{body.id}")
        holder.mass, holder.inertia = mass, list(inertia)
        holder.ipos, holder.iquat, holder.explicitinertial = [0, 0, 0], [1, 0, 0, 0], True
        holder.add_geom(density=0, name=f"g{body.id}", **geom, **self.contact())
        self._add_heat_geom(body, holder, centre, rot, half)
        self.anchor_body[body.id] = name
        return holder.name

    def _add_heat_geom(
        self, body: Body, holder: mujoco.MjsBody, centre: np.ndarray, rot: np.ndarray, half: np.ndarray
    ) -> None:
        """Non-colliding geoms for the heating test: a cannon's full box, a torch's flame sphere."""
        sensor = {"contype": 0, "conaffinity": 0, "group": 3, "density": 0}
        if body.type == "Water Cannon":
            holder.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(half), name=f"hull{body.id}", **sensor)
        elif body.type == "Torch":
            flame = self.place(torch_display_centre(body)) + self.rot @ np.asarray(body.pointer)
            holder.add_geom(
                type=mujoco.mjtGeom.mjGEOM_SPHERE,
                size=[self.config.torch_heat_radius, 0, 0],
                pos=list(rot.T @ (flame - centre)),
                name=f"flame{body.id}",
                **sensor,
            )

    def add_weld(self, a: str, b: str, point_world: np.ndarray, label: str, brace: bool = False) -> None:
        """Weld block ``a`` to block ``b`` at ``point_world`` (placed frame); braces use their own settings."""
        cfg = self.config
        timeconst = cfg.brace_timeconst_s if brace else cfg.weld_timeconst_s
        solimp = cfg.brace_solimp if brace else cfg.weld_solimp
        centre, rot = self.poses[b]
        anchor = rot.T @ (point_world - centre)
        data = np.zeros(12)
        data[0:3] = anchor
        data[10] = 1.0  # torquescale; relpose (data[3:10]) zero = taken from the built pose
        self.spec.add_equality(
            type=mujoco.mjtEq.mjEQ_WELD,
            objtype=mujoco.mjtObj.mjOBJ_BODY,
            name1=self.anchor_body[a],
            name2=self.anchor_body[b],
            data=list(data),
            solref=[timeconst, cfg.weld_dampratio],
            solimp=[*solimp, 0.5, 2.0],
        )
        self.weld_force.append(cfg.brace_break_force_n if brace else cfg.weld_break_force_n)
        self.weld_torque.append(cfg.brace_break_torque_nm if brace else cfg.weld_break_torque_nm)
        self.weld_names.append(label)


def compile_scene(machine: Machine, scene: Scene, config: PhysicsConfig) -> Compiled:
    """Build and compile the MuJoCo model of ``machine`` in ``scene``.

    Raises:
        ValueError: When the machine has no solid block.
    """
    graph = body_graph(machine)
    if not graph.bodies:
        raise ValueError("the machine has no solid blocks to simulate")
    builder = _Builder(scene, config)
    builder.add_world()
    extra = _extra_masses(graph)
    # The cargo touches many blocks: as the first body it is eliminated last and adds no fill-in
    # to the solver's factor; the blocks follow in fill-reducing order (``ordering``). The log
    # keeps machine order.
    cargo_body_name = _add_cargo(builder)
    poses = {}
    for i in body_order(graph):
        body = graph.bodies[i]
        poses[body.id] = builder.add_block(body, extra.get(body.id, 0.0))
    blocks = [(body, poses[body.id]) for body in graph.bodies]
    spec = builder.spec
    wheels = {b.id for b in graph.bodies if b.spin_axis is not None}
    for joint in graph.joints:
        builder.add_weld(
            joint.child,
            joint.base,
            builder.place(joint.point),
            f"{joint.child}->{joint.base}.{joint.base_face}",
        )
        spec.add_exclude(
            bodyname1=builder.anchor_body[joint.child], bodyname2=builder.anchor_body[joint.base]
        )
        # A wheel's disc is a child of its hub: exclude it from the block on the other side too.
        for wheel, other in ((joint.child, joint.base), (joint.base, joint.child)):
            if wheel in wheels:
                spec.add_exclude(bodyname1=f"disc{wheel}", bodyname2=builder.anchor_body[other])
    for link in graph.links:
        pa, pb = builder.place(link.point_a), builder.place(link.point_b)
        if link.type == "Brace":
            builder.add_weld(
                link.a.block,
                link.b.block,
                0.5 * (pa + pb),
                f"brace {link.id}",
                brace=True,
            )
            continue
        _add_rope(builder, link.id, link.a.block, pa, link.b.block, pb)
    wheel_acts, cannon_acts = _add_actuators(builder, graph)
    model = spec.compile()
    overlapping = _overlapping_pairs(model, cargo_body_name)
    if overlapping:
        for a, b in overlapping:
            spec.add_exclude(bodyname1=a, bodyname2=b)
        model = spec.compile()
    cannons = [b.id for b in graph.bodies if b.type == "Water Cannon"]
    torches = [b.id for b in graph.bodies if b.type == "Torch"]
    heat_pairs = [
        (i, model.geom(f"hull{c}").id, model.geom(f"flame{t}").id)
        for i, c in enumerate(cannons)
        for t in torches
    ]
    return Compiled(
        model=model,
        blocks=[BlockBody(body.id, body.type, model.body(pose).id) for body, pose in blocks],
        weld_break_force=np.array(builder.weld_force),
        weld_break_torque=np.array(builder.weld_torque),
        weld_names=builder.weld_names,
        wheel_actuators={k: model.actuator(v).id for k, v in wheel_acts.items()},
        cannon_actuators={k: model.actuator(v).id for k, v in cannon_acts.items()},
        heat_pairs=heat_pairs,
        cargo_body=-1 if cargo_body_name is None else model.body(cargo_body_name).id,
    )


OVERLAP_TOLERANCE_M = 1e-3
"""Blocks whose bodies already interpenetrate by more than this when built never collide."""


def _overlapping_pairs(model: mujoco.MjModel, cargo: str | None) -> list[tuple[str, str]]:
    """Pairs of machine bodies that overlap in the built pose.

    The library accepts a block when its shrunk (×0.8) collider is clear
    (spec 2.2), so full-size bodies of neighbours may overlap, e.g. a torch
    whose flame nozzle reaches into the cannon it heats. Such built-in
    overlaps are parts of one rigid assembly, not collisions: they are
    excluded, as welded neighbours are.
    """
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    pairs: set[tuple[str, str]] = set()
    for contact in data.contact[: data.ncon]:
        if contact.dist >= -OVERLAP_TOLERANCE_M:
            continue
        b1, b2 = (int(model.geom_bodyid[g]) for g in contact.geom)
        names = sorted((model.body(b1).name, model.body(b2).name))
        if 0 in (b1, b2) or cargo in names:
            continue
        pairs.add((names[0], names[1]))
    return sorted(pairs)


def torch_display_centre(torch: Body) -> np.ndarray:
    """A torch's displayed centre (real frame, unplaced): the flame sits one unit beyond it (App. E.2).

    The outline box is shifted 0.25 along the pointer from the displayed centre (torch YAML:
    translation [0, 0.25, 0] along ``vec_base``).
    """
    return np.asarray(torch.shape.center) - 0.25 * np.asarray(torch.pointer)


def _add_rope(builder: _Builder, link_id: str, a: str, pa: np.ndarray, b: str, pb: np.ndarray) -> None:
    sites = []
    for block, point in ((a, pa), (b, pb)):
        centre, rot = builder.poses[block]
        body = builder.spec.body(builder.anchor_body[block])
        name = f"rope{link_id}_{len(sites)}"
        body.add_site(name=name, pos=list(rot.T @ (point - centre)))
        sites.append(name)
    length = float(np.linalg.norm(pa - pb))
    tendon = builder.spec.add_tendon(
        name=f"rope{link_id}",
        limited=True,
        range=[0.0, length],
        solref_limit=[builder.config.winch_stiffness_timeconst_s, 1.0],
    )
    for site in sites:
        tendon.wrap_site(site)


def _add_actuators(builder: _Builder, graph: BodyGraph) -> tuple[dict[str, str], dict[str, str]]:
    cfg = builder.config
    wheels: dict[str, str] = {}
    cannons: dict[str, str] = {}
    for body in graph.bodies:
        if body.spin_axis is not None:
            act = builder.spec.add_actuator(
                name=f"motor{body.id}", target=f"spin{body.id}", trntype=mujoco.mjtTrn.mjTRN_JOINT
            )
            act.set_to_velocity(kv=cfg.wheel_gain_nms)
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [-cfg.wheel_max_torque_nm, cfg.wheel_max_torque_nm]
            wheels[body.id] = act.name
        elif body.type == "Water Cannon":
            centre, rot = builder.poses[body.id]
            recoil_world = builder.rot @ -np.asarray(body.pointer)
            site_rot = _frame_with_z(rot.T @ recoil_world)
            holder = builder.spec.body(builder.anchor_body[body.id])
            holder.add_site(name=f"nozzle{body.id}", pos=[0, 0, 0], quat=_quat(site_rot))
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
