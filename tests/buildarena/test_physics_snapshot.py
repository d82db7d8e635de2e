"""Snapshot of simulated outcomes: speed work on the physics must leave every result bit-identical.

Each case simulates a design on a task (the nine reference designs, the nine negative controls
and seeded variants, so runs that hold, break welds, fly and drive are all covered) and compares
the verdict, indicator, rule metrics, broken-weld texts and a hash of the whole 25 Hz trajectory
with ``data/physics-snapshot.json``. Everything but the trajectory is compared everywhere. The
trajectory's last bits depend on the MuJoCo version and the CPU class (``numeric_platform``:
numpy's and the libraries' kernels differ by instruction set, and a chaotic run amplifies one
ulp), so its hash is kept per class: it must equal one recorded value, and on a class that was
recorded, that class's own.

Regenerate only where the physics changes on purpose (a new profile, a physics fix), never to
make an optimisation pass: ``python tests/buildarena/test_physics_snapshot.py``. On a CPU class
not yet recorded, ``… --add-platform`` adds its trajectory hashes once every other part agrees.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import pytest

from buildbench.numeric_platform import numeric_platform
from buildbench.suites.buildarena import designs, variants
from buildbench.suites.buildarena.check import simulate

SNAPSHOT = Path(__file__).parent / "data" / "physics-snapshot.json"
VARIANT_BASES = ("transport-1", "transport-2", "support-1", "support-2", "support-3", "lift-2", "lift-3")
VARIANT_SEEDS = (3, 7)
_UNTIMED = {"wall_s"}  # the only metric that is not a result


def _cases() -> dict[str, tuple[str, Callable[[], designs.Design]]]:
    """Case name → (task id, design maker)."""
    cases: dict[str, tuple[str, Callable[[], designs.Design]]] = {
        f"reference {task}": (task, designs.REFERENCE[task]) for task in designs.REFERENCE
    }
    cases |= {f"negative {name}": (task, make) for name, (task, make) in designs.NEGATIVE.items()}
    for base in VARIANT_BASES:
        for seed in VARIANT_SEEDS:
            task = variants.draw(base, np.random.default_rng(seed)).id
            cases[f"variant {task}"] = (task, lambda task=task: designs.reference_design(task))
    return cases


CASES = _cases()


def outcome(name: str) -> dict[str, Any]:
    """What the snapshot keeps of one case's simulation."""
    task, make = CASES[name]
    result = simulate(designs.build(make()), task)
    traj = result.trajectory
    digest = hashlib.sha256()
    for part in (traj.time, traj.position, traj.burning, traj.ballast_mass):
        digest.update(np.ascontiguousarray(part).tobytes())
    return {
        "task": task,
        "passed": result.passed,
        "indicator": result.indicator,
        "status": result.status,
        "reason": result.reason,
        "broken": result.broken,
        "metrics": {k: v for k, v in result.metrics.items() if k not in _UNTIMED},
        "trajectory_sha256": digest.hexdigest(),
    }


def _platform() -> str:
    return f"{numeric_platform()} mujoco {mujoco.__version__}"


def _recorded() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text())


@pytest.mark.parametrize("name", list(CASES))
def test_outcome_matches_snapshot(name: str, platform_bits: Callable[..., bool]) -> None:
    recorded = _recorded()
    assert name in recorded["cases"], f"{name} is not in the snapshot; regenerate it (see the module docstring)"
    # A round trip through JSON: tuples become lists, floats keep every bit (repr round-trips).
    got = json.loads(json.dumps(outcome(name)))
    trajectory = got.pop("trajectory_sha256")
    assert got == recorded["cases"][name]
    by_class = {cls: hashes[name] for cls, hashes in recorded["trajectories"].items() if name in hashes}
    platform_bits(by_class, trajectory, f"{name}: trajectory hash", here=_platform())


def test_snapshot_covers_every_case() -> None:
    assert sorted(_recorded()["cases"]) == sorted(CASES)


if __name__ == "__main__":
    import sys

    outcomes = {name: outcome(name) for name in CASES}
    hashes = {name: o.pop("trajectory_sha256") for name, o in outcomes.items()}
    if sys.argv[1:] == ["--add-platform"]:
        snapshot = _recorded()
        if json.loads(json.dumps(outcomes)) != snapshot["cases"]:
            sys.exit("error: outcomes other than the trajectories differ from the snapshot: not a CPU-class difference")
        snapshot["trajectories"][_platform()] = hashes
    else:
        snapshot = {"trajectories": {_platform(): hashes}, "cases": outcomes}
    SNAPSHOT.write_text(json.dumps(snapshot, indent=1) + "\n")
    print(f"wrote {SNAPSHOT} ({len(CASES)} cases, trajectories for {len(snapshot['trajectories'])} CPU classes)")
