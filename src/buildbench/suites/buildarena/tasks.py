"""BuildArena tasks: ``get_task`` serves the nine levels (``levels``) and their seeded variants
(``variants``) by id; ``scene_for`` builds the scene the evaluator places a machine in.

The level specs, texts and constants live in ``levels``; they are re-exported here, where the rest
of the suite has always imported them.
"""

from __future__ import annotations

import numpy as np

from buildbench.suites.buildarena.library.bodies import BodyGraph, body_graph
from buildbench.suites.buildarena.model import Machine

from .levels import (
    LIFT_PASS_HEIGHT,
    MAX_LEVELS_FILE_BYTES,
    SUPPORT_FALLEN_Z,
    SUPPORT_RAMP_S,
    TASKS,
    TERRAIN_HEIGHT,
    TERRAIN_SIZE,
    TRANSPORT_GOAL,
    Category,
    TaskSpec,
    lift_text,
    load_levels,
    support_text,
    transport_text,
)
from .physics import Cargo, Placement, Scene, StaticBox, on_ground, over_gap
from .physics.placement import CARGO_ABOVE_TOP
from .variants import variant_spec

__all__ = [
    "LIFT_PASS_HEIGHT", "MAX_LEVELS_FILE_BYTES", "SUPPORT_FALLEN_Z", "SUPPORT_RAMP_S", "TASKS", "TERRAIN_HEIGHT",
    "TERRAIN_SIZE", "TRANSPORT_GOAL", "Category", "TaskSpec", "get_task", "lift_text", "load_levels", "scene_for",
    "support_text", "terrain_for", "transport_text",
]


def get_task(task_id: str) -> TaskSpec:
    """The task with this id: one of the nine levels or a variant (``variants``, e.g.
    ``support-2_gap12_load2000_bank10_rise0``).

    Raises:
        ValueError: For an unknown id (the message lists the valid ones) or a malformed variant id.
    """
    task = TASKS.get(task_id)
    return variant_spec(task_id) if task is None else task


def terrain_for(gap: float, width: float = TERRAIN_SIZE[0], rise: float = 0.0) -> tuple[StaticBox, ...]:
    """The two Support terrain boxes whose inner edges are ``gap`` apart (``support_*.blv``), ``width``
    wide east–west, the north one ``rise`` higher."""
    offset = gap / 2 + TERRAIN_SIZE[1] / 2
    north = TERRAIN_HEIGHT + rise
    return (
        StaticBox((0.0, offset, north / 2), (width, TERRAIN_SIZE[1], north)),
        StaticBox((0.0, -offset, TERRAIN_HEIGHT / 2), (width, TERRAIN_SIZE[1], TERRAIN_HEIGHT)),
    )


def scene_for(
    task: TaskSpec, machine: Machine, duration_s: float | None = None, graph: BodyGraph | None = None
) -> Scene:
    """The scene the evaluator builds around ``machine`` for ``task``.

    Args:
        task: The task level.
        machine: The machine to place.
        duration_s: Shorter run for callers that need only part of it (default: the task's).
        graph: The machine's body graph when the caller already has it.

    Raises:
        ValueError: When the machine has no solid block.
    """
    graph = body_graph(machine) if graph is None else graph
    if not graph.bodies:
        raise ValueError("the machine has no solid blocks to simulate")
    place = over_gap(graph, task.gap) if task.gap is not None else on_ground(graph)
    if task.bank_rise:
        # Released over the higher bank: the lowest block centre keeps its height above that bank's top.
        lift = np.array([0.0, 0.0, task.bank_rise])
        place = Placement(place.rotation, place.offset + lift, place.top_centre_z + task.bank_rise)
    cargo = None
    if task.cargo_size is not None:
        cargo = Cargo(
            size=task.cargo_size,
            center=(0.0, 0.0, place.top_centre_z + CARGO_ABOVE_TOP),
            mass_start=5.0,
            mass_max=task.cargo_mass_max,
            ramp_s=task.cargo_ramp_s,
        )
    return Scene(
        duration_s=task.duration_s if duration_s is None else min(duration_s, task.duration_s),
        placement_rotation=place.rotation,
        placement_offset=np.asarray(place.offset),
        ground=True,
        terrain=terrain_for(task.gap, task.bank_width, task.bank_rise) if task.gap is not None else task.ground_boxes,
        cargo=cargo,
        fire_all=task.fire_all,
        stop_below_z=SUPPORT_FALLEN_Z if task.category == "support" else None,
    )
