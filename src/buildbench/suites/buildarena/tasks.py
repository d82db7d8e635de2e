"""BuildArena tasks: ``get_task`` serves the nine levels (``levels``) and their seeded variants
(``variants``) by id; ``scene_for`` builds the scene the evaluator places a machine in.

The level specs, texts and constants live in ``levels``; they are re-exported here, where the rest
of the suite has always imported them.
"""

from __future__ import annotations

import numpy as np

from buildbench.harness.task import Task
from buildbench.harness.task_files import TaskShapeError, require_fields
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
    "support_text", "terrain_for", "transport_text", "validate_task",
]


def get_task(task_id: str) -> TaskSpec:
    """The task with this id: one of the nine levels or a variant (``variants``, e.g.
    ``support-2_gap12_load2000_bank10_rise0``).

    Raises:
        ValueError: For an unknown id (the message lists the valid ones) or a malformed variant id.
    """
    task = TASKS.get(task_id)
    return variant_spec(task_id) if task is None else task


_record_shape = require_fields(
    inputs={"text": "string", "category": "string", "level": "integer>=1"},
    optional={"inputs.max_substructures": "integer>=1", "target.duration_s": "number>0"})


def validate_task(task: Task) -> None:
    """The check of a task record from a user's file (``--tasks``): the fields' types and ranges,
    a task id this suite knows (a level or a variant), and fields that agree with it. The id
    fixes the task (category, level, sub-structure limit, simulated time): a record that says
    otherwise would be run as the id says, its change silently dropped, so it is refused.

    Raises:
        TaskShapeError: Naming the first bad field.
        ValueError: For an unknown or malformed task id.
    """
    _record_shape(task)
    spec = get_task(task.id)
    fixed = {"inputs.category": spec.category, "inputs.level": spec.level,
             "inputs.max_substructures": spec.max_substructures, "target.duration_s": spec.duration_s}
    for path, value in fixed.items():
        part, name = path.split(".")
        given = getattr(task, part).get(name, value)
        if given != value:
            raise TaskShapeError(path, f"{given!r} disagrees with task {task.id}, whose value is {value!r} "
                                       "(a BuildArena task is fixed by its id)")


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
