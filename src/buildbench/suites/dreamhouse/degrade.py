"""The ``degraded`` calibration agent: the oracle's frame corrupted by ``-o degrade=FRACTION``,
seeded by the episode seed (see :mod:`buildbench.harness.degrade`). It answers plan, step and
build requests like the oracle, so it acts through the env like any agent.

``-o degrade_mode=members`` (default) drops, moves or rotates that fraction of the members: the
structural tests, pass rate and ``topological_fidelity_any`` respond. S and T are defined only
for frames that pass (paper §4), which a frame with members out of place rarely does, so
``degrade_mode=shift`` moves the whole frame instead, rigidly in plan along a seeded direction: every structural test still passes, and S, T, the joint passes
and Table 2 (Atomic passes with S below τ) respond.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from buildbench.harness import Agent, Task
from buildbench.harness.degrade import Corruption, SeededAgent

from .agents import HouseAgent
from .model import Structure
from .options import DreamHouseOptions
from .tasks import ground_truth

#: A moved member's displacement, metres: at least a stud bay, so it leaves its joints.
MOVE_M = (0.4, 1.2)
#: A rotated member turns a quarter about its own centre and thinnest axis (a stud laid flat in
#: its wall's plane). Any other turn would meet a scorer fault: a script's ``matrix_world`` comes
#: back as rotation times size at 6 decimals, so a 38-122 mm axis turned to an irrational
#: direction is more than 1e-5 from a rotation and the scorer's boxes refuse it.
TURN_RAD = np.pi / 2


def degrade_structure(structure: Structure, fraction: float, seed: int) -> tuple[Structure, np.ndarray]:
    """``structure`` with ``fraction`` of its members corrupted: a third each dropped, moved, rotated.

    Returns:
        The corrupted frame and, for each of its members, its index in ``structure``.
    """
    n = len(structure)
    c = Corruption(n, fraction, seed, draws=5)
    kind = np.where(c.mask, np.minimum((c.u[:, 0] * 3).astype(int), 2), -1)  # 0 drop, 1 move, 2 rotate
    mats = structure.matrices.copy()
    direction = c.u[:, 1:4] * 2.0 - 1.0
    direction /= np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), 1e-9)
    moved = kind == 1
    mats[moved, :3, 3] += direction[moved] * (MOVE_M[0] + (MOVE_M[1] - MOVE_M[0]) * c.u[moved, 4:5])
    turned = np.flatnonzero(kind == 2)
    if len(turned):
        thin = np.argmin(structure.sizes_m[turned], axis=1)
        local = np.zeros((len(turned), 3))
        local[np.arange(len(turned)), thin] = np.where(c.u[turned, 1] < 0.5, -TURN_RAD, TURN_RAD)
        mats[turned, :3, :3] = mats[turned, :3, :3] @ np.round(Rotation.from_rotvec(local).as_matrix())
    whole = Structure(structure.names, structure.sizes_m, mats, structure.phases, structure.sections,
                      structure.supported_by, dict(structure.meta))
    kept = np.flatnonzero(kind != 0)
    return whole.subset(kept), kept


#: The shift of ``degrade_mode=shift`` at fraction 1, metres; it grows as the fraction cubed
#: because S falls steeply: a 2 cm shift already moves every thin member's lines (S ≈ 0.2),
#: while T's centroid match needs tens of centimetres.
SHIFT_M = 0.5


def shift_structure(structure: Structure, fraction: float, seed: int) -> Structure:
    """``structure`` moved rigidly in plan by ``SHIFT_M · fraction³`` along a seeded direction."""
    angle = 2.0 * np.pi * np.random.default_rng([int(seed), 0x5F7]).random()
    mats = structure.matrices.copy()
    # math's cos/sin (the C library) rather than numpy's, which picks a kernel by CPU (model/libm.py)
    mats[:, :2, 3] += SHIFT_M * fraction**3 * np.array([math.cos(angle), math.sin(angle)])
    return Structure(structure.names, structure.sizes_m, mats, structure.phases, structure.sections,
                     structure.supported_by, dict(structure.meta))


def degraded(task: Task, model: Any, options: DreamHouseOptions) -> Agent:
    """The oracle with ``-o degrade`` of its frame corrupted as ``-o degrade_mode`` says."""
    house = ground_truth(task)
    fraction, mode = options.degrade, options.degrade_mode

    def build(seed: int) -> Agent:
        if mode == "shift":
            frame, kept = shift_structure(house.structure, fraction, seed), np.arange(len(house.structure))
        else:
            frame, kept = degrade_structure(house.structure, fraction, seed)
        return HouseAgent(house, frame, lot=dict(task.inputs["lot_size"]), collection=str(task.inputs["collection"]),
                          action_format=options.action_format, kept=kept, name="degraded")

    return SeededAgent(build)
