"""A machine placed in a scene: its blocks' poses and masses, its welds, the pairs that never collide.

Everything here holds for the whole run; which welds still hold does not
change it. ``build`` compiles a layout into a MuJoCo model, ``groups``
splits it into rigid groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from buildbench.suites.buildarena.library.bodies import BodyGraph, body_graph
from buildbench.suites.buildarena.model import Machine

from .config import PhysicsConfig
from .scene import Scene
from .stress import WeldNetwork


@dataclass(frozen=True)
class Weld:
    """One breakable joint of the machine (an attachment or a Brace).

    Attributes:
        first: Block id of the base (attachment) or first end (Brace).
        second: Block id of the attached block or second end.
        anchor: Anchor point in the placed frame as built (m): the base
            face centre, or midway between a Brace's two faces.
        label: ``child->base.face`` or ``brace <id>``.
        brace: Whether it is a Brace.
    """

    first: str
    second: str
    anchor: np.ndarray
    label: str
    brace: bool


@dataclass(frozen=True)
class Layout:
    """Everything about a machine in a scene that does not change when welds break.

    Attributes:
        scene: The scene.
        config: Physics settings.
        graph: Bodies, attachments and links of the machine.
        poses: Block id → (centre, rotation) in the placed frame as built.
        welds: Every weld, attachments first (graph order), then Braces.
        masses: Block id → mass, its share of connector masses included.
        never_collide: Body-name pairs excluded from collision: welded
            neighbours, a wheel's disc and the block on the other side of its
            hub's weld, and blocks that overlap as built.
        networks: Weld analyses already prepared, by group (blocks, welds):
            a rebuild after a break prepares only the groups that changed.
        markup: Each block's MJCF body content by block id, written on
            first use (``mjcf.markup``).
        children: The MJCF bodies of a group's blocks but its root, by the
            group's blocks (root first), written on first use (``mjcf``).
        frame: The parts of the MJCF document that no break changes (``mjcf._frame``),
            written on first use: empty, or that one entry.
    """

    scene: Scene
    config: PhysicsConfig
    graph: BodyGraph
    poses: dict[str, tuple[np.ndarray, np.ndarray]]
    welds: list[Weld]
    masses: dict[str, float]
    never_collide: list[tuple[str, str]] = field(default_factory=list)
    networks: dict[tuple[tuple[str, ...], tuple[int, ...]], WeldNetwork | None] = field(default_factory=dict)
    markup: dict[str, str] = field(default_factory=dict)
    children: dict[tuple[str, ...], str] = field(default_factory=dict)
    frame: list[Any] = field(default_factory=list)


def _connector_shares(graph: BodyGraph) -> dict[str, float]:
    """Connector masses split equally onto their two end blocks (connectors have no body of their own)."""
    extra: dict[str, float] = {}
    for link in graph.links:
        for ref in (link.a, link.b):
            extra[ref.block] = extra.get(ref.block, 0.0) + 0.5 * link.mass
    return extra


def lay_out(machine: Machine, scene: Scene, config: PhysicsConfig, graph: BodyGraph | None = None) -> Layout:
    """Place ``machine`` in ``scene`` and list its welds and never-colliding pairs.

    ``graph`` is the machine's body graph when the caller already has it.

    Raises:
        ValueError: When the machine has no solid block.
    """
    graph = body_graph(machine) if graph is None else graph
    if not graph.bodies:
        raise ValueError("the machine has no solid blocks to simulate")
    rot = np.asarray(scene.placement_rotation, dtype=float)
    offset = np.asarray(scene.placement_offset, dtype=float)

    def place(point: np.ndarray) -> np.ndarray:
        return rot @ np.asarray(point, dtype=float) + offset

    poses = {b.id: (place(b.shape.center), rot @ b.shape.rotation) for b in graph.bodies}
    welds = [
        Weld(j.base, j.child, place(j.point), f"{j.child}->{j.base}.{j.base_face}", False)
        for j in graph.joints
    ]
    welds += [
        Weld(
            link.a.block,
            link.b.block,
            0.5 * (place(link.point_a) + place(link.point_b)),
            f"brace {link.id}",
            True,
        )
        for link in graph.links
        if link.type == "Brace"
    ]
    wheels = {b.id for b in graph.bodies if b.spin_axis is not None}
    pairs = []
    for joint in graph.joints:
        pairs.append((f"b{joint.child}", f"b{joint.base}"))
        # A wheel's disc is a child of its hub: exclude it from the block on the other side too.
        for wheel, other in ((joint.child, joint.base), (joint.base, joint.child)):
            if wheel in wheels:
                pairs.append((f"disc{wheel}", f"b{other}"))
    shares = _connector_shares(graph)
    masses = {b.id: b.mass + shares.get(b.id, 0.0) for b in graph.bodies}
    return Layout(scene, config, graph, poses, welds, masses, pairs)


def weld_limits(config: PhysicsConfig, weld: Weld) -> tuple[float, float]:
    """Break force (N) and torque (N·m) of ``weld``."""
    if weld.brace:
        return config.brace_break_force_n, config.brace_break_torque_nm
    return config.weld_break_force_n, config.weld_break_torque_nm
