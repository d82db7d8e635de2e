"""Compile a machine and its scene into a MuJoCo model with ``MjSpec``.

One free body per block (real frame, z up; body frame = the block's
outline shape frame, so inertia is diagonal and centred); one breakable
weld per attachment anchored at the shared face centre; a Brace is a weld
between its two end blocks anchored midway; a Winch is a rope (a spatial
tendon that may slacken but not stretch beyond its built length). A
Powered Wheel is a hub (welded, breakable) carrying the disc on a hinge
driven by a velocity servo. A Water Cannon carries a site actuator whose
force points against its spray. Welded neighbours do not collide.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from buildbench.suites.buildarena.library.bodies import Body, BodyGraph, body_graph
from buildbench.suites.buildarena.library.frames import matrix_to_quat
from buildbench.suites.buildarena.model import Machine

from .config import PhysicsConfig
from .scene import Scene

BALLAST = "Ballast"


@dataclass(frozen=True)
class BlockBody:
    """Where one block lives in the compiled model.

    Attributes:
        block_id: Block id.
        type: Block type name.
        body: MuJoCo body id whose pose is the block's pose (the disc for wheels).
        half_size: Half extents of the outline box in body frame (cylinders: r, r, h/2).
    """

    block_id: str
    type: str
    body: int
    half_size: np.ndarray


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
        cannon_bodies: Body id per cannon (in ``cannon_actuators`` order).
        cannon_half: Half extents of each cannon box (n, 3).
        torch_bodies: Body id per torch.
        torch_flame_local: Flame centre of each torch in its body frame (n, 3).
        cargo_body: Ballast body id, or -1.
        bodies_total_mass: Machine mass as simulated (mass units).
    """

    model: mujoco.MjModel
    blocks: list[BlockBody]
    weld_break_force: np.ndarray
    weld_break_torque: np.ndarray
    weld_names: list[str]
    wheel_actuators: dict[str, int]
    cannon_actuators: dict[str, int]
    cannon_bodies: np.ndarray
    cannon_half: np.ndarray
    torch_bodies: np.ndarray
    torch_flame_local: np.ndarray
    cargo_body: int
    bodies_total_mass: float


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

    def add_world(self) -> None:
        world = self.spec.worldbody
        if self.scene.ground:
            world.add_geom(
                type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], friction=self.friction(), name="ground"
            )
        for i, box in enumerate(self.scene.terrain):
            world.add_geom(
                type=mujoco.mjtGeom.mjGEOM_BOX,
                pos=list(box.center),
                size=[0.5 * s for s in box.size],
                friction=self.friction(),
                name=f"terrain{i}",
            )

    def add_block(self, body: Body, extra_mass: float) -> tuple[str, np.ndarray]:
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
            geom = dict(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(half))
        else:
            radius, height = shape.size[0], shape.size[2]
            half = np.array([radius, radius, 0.5 * height])
            inertia = _cyl_inertia(mass, radius, height)
            geom = dict(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[radius, 0.5 * height, 0])
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
        holder.add_geom(friction=self.friction(), density=0, name=f"g{body.id}", **geom)
        self.anchor_body[body.id] = name
        return holder.name, half

    def add_weld(self, a: str, b: str, point_world: np.ndarray, force: float, torque: float, label: str) -> None:
        """Weld block ``a`` to block ``b`` at ``point_world`` (placed frame)."""
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
            solref=[self.config.weld_timeconst_s, self.config.weld_dampratio],
        )
        self.weld_force.append(force)
        self.weld_torque.append(torque)
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
    blocks: list[tuple[Body, str, np.ndarray]] = []
    for body in graph.bodies:
        pose_name, half = builder.add_block(body, extra.get(body.id, 0.0))
        blocks.append((body, pose_name, half))
    spec = builder.spec
    for joint in graph.joints:
        builder.add_weld(
            joint.child,
            joint.base,
            builder.place(joint.point),
            config.weld_break_force_n,
            config.weld_break_torque_nm,
            f"{joint.child}->{joint.base}.{joint.base_face}",
        )
        spec.add_exclude(bodyname1=builder.anchor_body[joint.child], bodyname2=builder.anchor_body[joint.base])
        for wheel in (joint.child, joint.base):
            disc = f"disc{wheel}"
            other = joint.base if wheel == joint.child else joint.child
            if any(b.id == wheel and b.spin_axis is not None for b in graph.bodies):
                spec.add_exclude(bodyname1=disc, bodyname2=builder.anchor_body[other])
    for link in graph.links:
        pa, pb = builder.place(link.point_a), builder.place(link.point_b)
        if link.type == "Brace":
            builder.add_weld(
                link.a.block,
                link.b.block,
                0.5 * (pa + pb),
                config.brace_break_force_n,
                config.brace_break_torque_nm,
                f"brace {link.id}",
            )
            continue
        _add_rope(builder, link.id, link.a.block, pa, link.b.block, pb)
    wheel_acts, cannon_acts = _add_actuators(builder, graph)
    cargo_body_name = _add_cargo(builder)
    model = spec.compile()
    names = {body.id: pose for body, pose, _ in blocks}
    cannons = [b for b in graph.bodies if b.type == "Water Cannon"]
    torches = [b for b in graph.bodies if b.type == "Torch"]
    flames = []
    for torch in torches:
        centre, rot = builder.poses[torch.id]
        display = builder.place(torch_display_centre(torch))
        flame = display + builder.rot @ np.asarray(torch.pointer)
        flames.append(rot.T @ (flame - centre))
    half_by_id = {body.id: half for body, _, half in blocks}
    return Compiled(
        model=model,
        blocks=[
            BlockBody(body.id, body.type, model.body(pose).id, half) for body, pose, half in blocks
        ],
        weld_break_force=np.array(builder.weld_force),
        weld_break_torque=np.array(builder.weld_torque),
        weld_names=builder.weld_names,
        wheel_actuators={k: model.actuator(v).id for k, v in wheel_acts.items()},
        cannon_actuators={k: model.actuator(v).id for k, v in cannon_acts.items()},
        cannon_bodies=np.array([model.body(names[c.id]).id for c in cannons], dtype=int),
        cannon_half=np.array([half_by_id[c.id] for c in cannons]).reshape(-1, 3),
        torch_bodies=np.array([model.body(names[t.id]).id for t in torches], dtype=int),
        torch_flame_local=np.array(flames).reshape(-1, 3),
        cargo_body=-1 if cargo_body_name is None else model.body(cargo_body_name).id,
        bodies_total_mass=float(sum(b.mass for b in graph.bodies) + sum(lk.mass for lk in graph.links)),
    )


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
    body.add_geom(
        type=mujoco.mjtGeom.mjGEOM_BOX, size=list(0.5 * full), friction=builder.friction(), density=0
    )
    return BALLAST
