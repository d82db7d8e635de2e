"""The MJCF text of a placed machine with its rigid groups, which ``build`` compiles.

MuJoCo parses MJCF in C: writing the model as text and parsing it costs a
third of adding every element through ``MjSpec``'s Python bindings (81
blocks: ~2.5 ms against ~7 ms, measured), and a rebuild after a break writes
the model anew. Each block's own markup (inertial, geoms, wheel disc, sites)
is written once per layout (``Layout.markup``), and so is everything around
the groups' bodies (``Layout.frame``); each group's child bodies once per
group (``Layout.children``); a build adds the group roots' poses.
Numbers are written with ``repr``, which round-trips every float exactly.

What a block becomes: its body carries its mass and inertia and a collider
``collision_gap_m`` smaller than the block (wheels: in thickness only, so a
wheel keeps its rolling radius). A wheel's collider is the ellipsoid
inscribed in its disc: upright it rolls on radius 1 as the cylinder does;
lying flat it rests on one smooth point. With a cylinder (and with a box,
and a convex 24-gon) MuJoCo's contacts made a disc spinning flat at 100 rpm
hop up to 1.5 units high by itself, also with friction off (measured): the
bottom-wheel negative control was launched at 24 units/s and diverged. A Powered Wheel is a hub (the welded body,
``wheel_hub_mass_fraction`` of the mass) carrying the disc on a hinge driven
by a velocity servo. A Water Cannon carries a site whose motor pushes
against its spray and a non-colliding full-size box; a Torch a
non-colliding flame sphere (the heating test measures the distance between
the two). A Winch is a spatial tendon between two sites that may slacken
but not stretch beyond its built length.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from buildbench.suites.buildarena.library.bodies import Body

from .groups import Tree
from .layout import Layout

BALLAST = "Ballast"

ARENA_BASE_BYTES = 16 << 20
ARENA_BYTES_PER_BODY = 32 << 10
"""MuJoCo's arena (contacts, constraints, solver stack) per model: a base plus this much per block.

A braced deck resting on flat ground uses 6.7-8.1 KB per block (measured at 41 to 2,203 blocks);
MuJoCo's own default stopped a legal 2,203-block deck with an out-of-memory error in its first steps.
The arena is allocated once and its pages are touched only as used, so the headroom (about 4x) costs
address space, not memory: 176 MB of it at the 5,000-block limit."""


@dataclass(frozen=True)
class Document:
    """A model's MJCF text and the names its index arrays are read by.

    Attributes:
        text: The MJCF document.
        ropes: ``(tendon name, end block a, end block b)`` per Winch.
        wheels: Wheel block id → its motor's name.
        cannons: Water Cannon block id → its thrust motor's name.
        cargo: Name of the cargo body, or None.
    """

    text: str
    ropes: list[tuple[str, str, str]]
    wheels: dict[str, str]
    cannons: dict[str, str]
    cargo: str | None


def _v(values: Iterable[float]) -> str:
    return " ".join(map(repr, map(float, values)))


def quat(rot: np.ndarray) -> np.ndarray:
    """Unit quaternion ``(w, x, y, z)`` of a rotation matrix."""
    out = np.empty(4)
    mujoco.mju_mat2Quat(out, np.ascontiguousarray(rot, dtype=float).reshape(9))
    return out


def box_inertia(mass: float, full: np.ndarray) -> np.ndarray:
    """Principal moments of a solid box of full size ``full`` (m)."""
    a, b, c = full
    return mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


def _cylinder_inertia(mass: float, radius: float, height: float) -> np.ndarray:
    side = mass * (3 * radius * radius + height * height) / 12.0
    return np.array([side, side, 0.5 * mass * radius * radius])


def _inertial(mass: float, inertia: Iterable[float]) -> str:
    return f'<inertial pos="0 0 0" mass="{mass!r}" diaginertia="{_v(inertia)}"/>'


def torch_display_centre(torch: Body) -> np.ndarray:
    """A torch's displayed centre (real frame, unplaced): the flame sits one unit beyond it (App. E.2).

    The outline box is shifted 0.25 along the pointer from the displayed centre (torch YAML:
    translation [0, 0.25, 0] along ``vec_base``).
    """
    return np.asarray(torch.shape.center) - 0.25 * np.asarray(torch.pointer)


def markup(layout: Layout) -> dict[str, str]:
    """Every block's body content by block id (written on first use, then kept in ``layout.markup``)."""
    if not layout.markup:
        sites = _rope_sites(layout)
        layout.markup.update(
            {body.id: _block(layout, body, "".join(sites.get(body.id, []))) for body in layout.graph.bodies}
        )
    return layout.markup


def _block(layout: Layout, body: Body, sites: str) -> str:
    cfg = layout.config
    name = escape(body.id)
    shape, mass = body.shape, layout.masses[body.id]
    gap = cfg.collision_gap_m
    if shape.kind == "box":
        a, b, c = (float(x) for x in shape.size)
        half = (0.5 * a, 0.5 * b, 0.5 * c)
        inertia = (
            mass / 12.0 * (b * b + c * c),
            mass / 12.0 * (a * a + c * c),
            mass / 12.0 * (a * a + b * b),
        )
        size = (max(h - 0.5 * gap, 0.5 * h) for h in half)
        collider = f'<geom name="g{name}" type="box" size="{_v(size)}"/>'
    else:
        radius, height = float(shape.size[0]), float(shape.size[2])
        half = (radius, radius, 0.5 * height)
        inertia = tuple(_cylinder_inertia(mass, radius, height))
        half_len = max(0.5 * (height - gap), 0.25 * height)
        collider = f'<geom name="g{name}" type="ellipsoid" size="{_v((radius, radius, half_len))}"/>'
    sensor = _sensor(layout, body, half)
    if body.type == "Water Cannon":
        rot, placed = layout.poses[body.id][1], np.asarray(layout.scene.placement_rotation, dtype=float)
        recoil = _frame_with_z(rot.T @ (placed @ -np.asarray(body.pointer)))
        sites += f'<site name="nozzle{name}" quat="{_v(quat(recoil))}"/>'
    if body.spin_axis is None:
        return _inertial(mass, inertia) + collider + sensor + sites
    share = cfg.wheel_hub_mass_fraction
    rot, placed = layout.poses[body.id][1], np.asarray(layout.scene.placement_rotation, dtype=float)
    # Positive control = rolling the captioned way: angular velocity -spin_axis (see sim docs).
    axis = rot.T @ (placed @ -np.asarray(body.spin_axis))
    disc = (
        f'<body name="disc{name}">{_inertial((1 - share) * mass, [i * (1 - share) for i in inertia])}'
        f'<joint name="spin{name}" type="hinge" axis="{_v(axis)}"/>{collider}{sensor}</body>'
    )
    return _inertial(share * mass, [i * share for i in inertia]) + sites + disc


def _sensor(layout: Layout, body: Body, half: tuple[float, float, float]) -> str:
    """Non-colliding geom for the heating test: a cannon's full box, a torch's flame sphere."""
    flags = 'contype="0" conaffinity="0" group="3"'
    if body.type == "Water Cannon":
        return f'<geom name="hull{escape(body.id)}" type="box" size="{_v(half)}" {flags}/>'
    if body.type == "Torch":
        centre, rot = layout.poses[body.id]
        placed = np.asarray(layout.scene.placement_rotation, dtype=float)
        offset = np.asarray(layout.scene.placement_offset, dtype=float)
        flame = placed @ (torch_display_centre(body) + np.asarray(body.pointer)) + offset
        radius = layout.config.torch_heat_radius
        return (
            f'<geom name="flame{escape(body.id)}" type="sphere" size="{radius!r}" '
            f'pos="{_v(rot.T @ (flame - centre))}" {flags}/>'
        )
    return ""


def _frame_with_z(z: np.ndarray) -> np.ndarray:
    """A rotation whose third column is unit vector ``z``."""
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = helper - (helper @ z) * z
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _ropes(layout: Layout) -> list[tuple[str, tuple[str, np.ndarray], tuple[str, np.ndarray]]]:
    """Per Winch: tendon name and both ends as (block, placed point)."""
    rot = np.asarray(layout.scene.placement_rotation, dtype=float)
    offset = np.asarray(layout.scene.placement_offset, dtype=float)
    return [
        (
            f"rope{link.id}",
            (link.a.block, rot @ link.point_a + offset),
            (link.b.block, rot @ link.point_b + offset),
        )
        for link in layout.graph.links
        if link.type != "Brace"
    ]


def _rope_sites(layout: Layout) -> dict[str, list[str]]:
    sites: dict[str, list[str]] = {}
    for name, *ends in _ropes(layout):
        for k, (block, point) in enumerate(ends):
            centre, rot = layout.poses[block]
            site = f'<site name="{escape(name)}_{k}" pos="{_v(rot.T @ (point - centre))}"/>'
            sites.setdefault(block, []).append(site)
    return sites


_ORTHOGONAL = 1e-12
"""How far from the identity ``R·Rᵀ`` may be for :func:`quaternions` to convert ``R`` itself: scipy converts
such a matrix as it is (its test: ``isclose(R·Rᵀ, I, atol=1e-12)``, a looser one on the diagonal)."""


def quaternions(turns: np.ndarray) -> np.ndarray:
    """Unit quaternions ``(w, x, y, z)`` of rotation matrices ``turns`` (n, 3, 3), bit for bit those of scipy's
    ``Rotation.from_matrix(turns).as_quat(scalar_first=True)``, which the recorded runs' child bodies were
    written with.

    The conversion picks, per matrix, the largest of the diagonal and the trace (the first of equals) and
    takes the quaternion's components from that case's sums (Markley 2008), then divides them by their norm,
    each operation in scipy's order. A rebuild converts a few dozen matrices, where scipy's call costs
    ~0.1 ms (input checks and dispatch). Matrices farther from orthogonal than ``_ORTHOGONAL``,
    or not right-handed, go to scipy itself (it orthogonalises or refuses them).
    """
    turns = np.asarray(turns, dtype=float).reshape(-1, 3, 3)
    gram = turns @ np.swapaxes(turns, 1, 2)
    if not (np.abs(gram - np.eye(3)).max(initial=0.0) <= _ORTHOGONAL and (np.linalg.det(turns) > 0).all()):
        return np.asarray(Rotation.from_matrix(turns).as_quat(scalar_first=True)).reshape(-1, 4)
    # Python floats are the same IEEE doubles with the same correctly rounded +, -, *, / and sqrt: per matrix
    # this costs less than numpy's per-call overhead on a few dozen.
    out = []
    for m00, m01, m02, m10, m11, m12, m20, m21, m22 in turns.reshape(-1, 9).tolist():
        trace = m00 + m11 + m22
        choice = (m00, m11, m22, trace)
        case = choice.index(max(choice))  # the first of equals, as argmax
        if case == 0:
            x, y, z, w = 1 - trace + 2 * m00, m10 + m01, m20 + m02, m21 - m12
        elif case == 1:
            x, y, z, w = m10 + m01, 1 - trace + 2 * m11, m21 + m12, m02 - m20
        elif case == 2:
            x, y, z, w = m20 + m02, m21 + m12, 1 - trace + 2 * m22, m10 - m01
        else:
            x, y, z, w = m21 - m12, m02 - m20, m10 - m01, 1 + trace
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        out.append((w / norm, x / norm, y / norm, z / norm))
    return np.array(out).reshape(-1, 4)


def _write_children(layout: Layout, trees: list[Tree]) -> None:
    """Write the child bodies of every group of ``trees`` not yet in ``layout.children``: a group's blocks but
    its root, placed in the root's frame as built.

    They depend on the group's blocks alone (not on where the group is now), so they are written once
    per group: a rebuild after a break writes only the groups that changed (their relative rotations in one
    :func:`quaternions` call).
    """
    blocks = markup(layout)
    pending = []
    for tree in trees:
        key = tuple(tree.order)
        if key in layout.children:
            continue
        others = tree.order[1:]
        if not others:
            layout.children[key] = ""
            continue
        r_centre, r_rot = layout.poses[tree.order[0]]
        centres = (np.array([layout.poses[b][0] for b in others]) - r_centre) @ r_rot
        pending.append((key, others, centres.tolist(), r_rot.T @ np.array([layout.poses[b][1] for b in others])))
    if not pending:
        return
    quats = quaternions(np.concatenate([turns for *_, turns in pending])).tolist()
    start = 0
    for key, others, centres, _ in pending:
        # Python floats from ``tolist``: each ``!r`` is ``_v``'s text, written without its per-number calls.
        layout.children[key] = "".join(
            f'<body name="b{escape(block)}" pos="{x!r} {y!r} {z!r}" quat="{w!r} {i!r} {j!r} {k!r}">'
            f"{blocks[block]}</body>"
            for block, (x, y, z), (w, i, j, k) in zip(others, centres, quats[start : start + len(others)], strict=True)
        )
        start += len(others)


@dataclass(frozen=True)
class _Frame:
    """The parts of a layout's document that no break changes: everything before the groups' bodies (options,
    ground, terrain, cargo) and after them (excluded pairs, ropes, motors), with the names they define."""

    head: str
    tail: str
    ropes: list[tuple[str, str, str]]
    wheels: dict[str, str]
    cannons: dict[str, str]
    cargo: str | None
    excluded: list[tuple[str, str]]


def _frame(layout: Layout) -> _Frame:
    """The layout's :class:`_Frame`, written on first use and kept in ``layout.frame``.

    A layout copied with other excluded pairs (``dataclasses.replace``) may share the list: the frame
    is taken only where it was written from this very ``never_collide``.
    """
    if layout.frame and layout.frame[0].excluded is layout.never_collide:
        frame: _Frame = layout.frame[0]
        return frame
    cfg, scene = layout.config, layout.scene
    parts = [
        "<mujoco>",
        '<compiler angle="radian"/>',
        f'<size memory="{ARENA_BASE_BYTES + ARENA_BYTES_PER_BODY * len(layout.graph.bodies)}"/>',
        f'<option timestep="{cfg.timestep_s!r}" gravity="0 0 {-cfg.gravity_mps2!r}" '
        f'integrator="{cfg.integrator}" iterations="{cfg.iterations}"/>',
        f'<default><geom friction="{cfg.friction!r} 0.005 0.0001" solref="{cfg.contact_timeconst_s!r} 1" '
        f'solimp="{_v(cfg.contact_solimp)} 0.5 2"/></default>',
        "<worldbody>",
    ]
    if scene.ground:
        parts.append('<geom name="ground" type="plane" size="0 0 1"/>')
    for i, box in enumerate(scene.terrain):
        parts.append(
            f'<geom name="terrain{i}" type="box" pos="{_v(box.center)}" size="{_v(0.5 * np.array(box.size))}"/>'
        )
    cargo = None
    if scene.cargo is not None:
        cargo, full = BALLAST, np.array(scene.cargo.size)
        mass = float(scene.cargo.mass(0.0))
        parts.append(
            f'<body name="{BALLAST}" pos="{_v(scene.cargo.center)}"><freejoint/>'
            f'{_inertial(mass, box_inertia(mass, full))}<geom type="box" size="{_v(0.5 * full)}"/></body>'
        )
    head = "".join(parts)
    parts = ["</worldbody><contact>"]
    for a, b in layout.never_collide:
        parts.append(f'<exclude body1="{escape(a)}" body2="{escape(b)}"/>')
    parts.append("</contact><tendon>")
    ropes = []
    for name, (a, point_a), (b, point_b) in _ropes(layout):
        length = float(np.linalg.norm(point_a - point_b))
        parts.append(
            f'<spatial name="{escape(name)}" limited="true" range="0 {length!r}" '
            f'solreflimit="{cfg.winch_stiffness_timeconst_s!r} 1">'
            f'<site site="{escape(name)}_0"/><site site="{escape(name)}_1"/></spatial>'
        )
        ropes.append((name, a, b))
    parts.append("</tendon><actuator>")
    wheels: dict[str, str] = {}
    cannons: dict[str, str] = {}
    torque = cfg.wheel_max_torque_nm
    for body in layout.graph.bodies:
        name = escape(body.id)
        if body.spin_axis is not None:
            wheels[body.id] = f"motor{body.id}"
            parts.append(
                f'<velocity name="motor{name}" joint="spin{name}" kv="{cfg.wheel_gain_nms!r}" '
                f'forcelimited="true" forcerange="{-torque!r} {torque!r}"/>'
            )
        elif body.type == "Water Cannon":
            cannons[body.id] = f"thrust{body.id}"
            parts.append(f'<motor name="thrust{name}" site="nozzle{name}" gear="0 0 1 0 0 0"/>')
    parts.append("</actuator></mujoco>")
    frame = _Frame(head, "".join(parts), ropes, wheels, cannons, cargo, layout.never_collide)
    layout.frame[:] = [frame]
    return frame


def document(
    layout: Layout,
    trees: list[Tree],
    root_poses: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> Document:
    """The model with one rigid group per tree: its root a free body, every other block a jointless
    child body of the root.

    Args:
        layout: The placed machine.
        trees: The rigid groups.
        root_poses: Block id → world (centre, rotation) for group roots; default as built.
    """
    frame = _frame(layout)
    blocks = markup(layout)
    _write_children(layout, trees)
    children = layout.children
    parts = [frame.head]
    for tree in trees:
        root = tree.order[0]
        pos, rot = layout.poses[root] if root_poses is None else root_poses[root]
        parts.append(
            f'<body name="b{escape(root)}" pos="{_v(pos)}" quat="{_v(quat(rot))}"><freejoint/>'
            f"{blocks[root]}{children[tuple(tree.order)]}</body>"
        )
    parts.append(frame.tail)
    # The frame's names are shared by every document of the layout: nobody changes them.
    return Document("".join(parts), frame.ropes, frame.wheels, frame.cannons, frame.cargo)
