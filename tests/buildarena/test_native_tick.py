"""The C tick loop (``physics/native``, ``_tick.c``) gives the Python loop's runs bit for bit: every task's
reference design, a machine whose welds break (the model rebuilt), a run that diverges and is retried,
a rocket with cannons and torches, and a run stepped in pieces; and each run says which loop ran it."""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np
import pytest

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import simulation
from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.model import Machine
from buildbench.suites.buildarena.physics import (
    DEFAULT_CONFIG,
    PhysicsConfig,
    RunOutput,
    Scene,
    StaticBox,
    build,
    native,
)
from buildbench.suites.buildarena.physics.simulation import Simulation
from buildbench.suites.buildarena.tasks import TASKS

_LOADED = native._loaded()
needs_kernel = pytest.mark.skipif(isinstance(_LOADED, str), reason=f"no C tick loop here: {_LOADED}")


def _run(machine: Machine, task_id: str, loop: str, monkeypatch: pytest.MonkeyPatch,
         config: PhysicsConfig = DEFAULT_CONFIG, duration_s: float | None = None) -> RunOutput:
    monkeypatch.setenv("BUILDBENCH_NATIVE", "1" if loop == "native" else "0")
    out = simulation(machine, task_id, config=config, duration_s=duration_s).run()
    assert out.tick_loop == ("native" if loop == "native" else "python: BUILDBENCH_NATIVE=0")
    return out


def _assert_same(ours: RunOutput, theirs: RunOutput) -> None:
    for name in ("time", "position", "burning", "ballast_mass"):
        a, b = getattr(ours.trajectory, name), getattr(theirs.trajectory, name)
        assert a.shape == b.shape and a.tobytes() == b.tobytes(), name
    assert ours.broken == theirs.broken  # labels, times, forces and torques, exactly
    assert (ours.steps, ours.diverged_at_s, ours.diverged_reason, ours.timestep_s, ours.retries) == \
        (theirs.steps, theirs.diverged_at_s, theirs.diverged_reason, theirs.timestep_s, theirs.retries)


@needs_kernel
@pytest.mark.parametrize("task_id", list(TASKS))
def test_each_reference_design_runs_bit_for_bit_as_in_python(task_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    machine = designs.build(designs.REFERENCE[task_id]())
    _assert_same(_run(machine, task_id, "native", monkeypatch), _run(machine, task_id, "python", monkeypatch))


@needs_kernel
@pytest.mark.parametrize(("task_id", "negative"), [("transport-1", "wheels on bottom faces"),
                                                    ("support-1", "bridge shorter than the gap"),
                                                    ("lift-2", "rocket with cold cannons")])
def test_negative_controls_break_and_fall_as_in_python(task_id: str, negative: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    machine = designs.build(designs.NEGATIVE[negative][1]())
    ours = _run(machine, task_id, "native", monkeypatch, duration_s=6.0)
    _assert_same(ours, _run(machine, task_id, "python", monkeypatch, duration_s=6.0))


@needs_kernel
def test_a_run_that_diverges_is_retried_as_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    # A speed bound the rocket passes after its launch (2 s): every attempt diverges mid-run, the retries
    # with two and four steps per tick, at the same tick either way.
    strict = dataclasses.replace(DEFAULT_CONFIG, max_speed_mps=10.0)
    machine = designs.build(designs.REFERENCE["lift-2"]())
    ours = _run(machine, "lift-2", "native", monkeypatch, strict)
    assert ours.diverged_reason == "speed" and len(ours.retries) == strict.divergence_retries
    assert ours.diverged_at_s is not None and ours.diverged_at_s > 2.0
    _assert_same(ours, _run(machine, "lift-2", "python", monkeypatch, strict))


def winch_catch() -> tuple[Machine, Scene, PhysicsConfig]:
    """A block whose weld snaps at once, caught by a winch rope on a block welded to the start: the rope's pull
    enters that group's weld analysis (test_physics has the same machine)."""
    bench = Workbench()
    for op, params in [("start", {}),
                       ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Small Wooden Block"}),
                       ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Small Wooden Block"}),
                       ("connect_blocks", {"block_a": 3, "face_a": "E", "block_b": 2, "face_b": "C",
                                           "connector": "Winch"})]:
        assert bench.call(op, params).ok
    config = dataclasses.replace(DEFAULT_CONFIG, weld_break_torque_nm=0.5)
    pillar = StaticBox((-1.0, 0.0, -0.5), (3.0, 3.0, 1.0))
    scene = Scene(2.0, np.eye(3), np.array([0.0, 0.0, 0.5 - config.collision_gap_m / 2]), ground=False,
                  terrain=(pillar,))
    return bench.machine, scene, config


@needs_kernel
def test_a_machine_with_a_winch_runs_in_c_as_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    machine, scene, config = winch_catch()
    runs = {}
    for loop in ("native", "python"):
        monkeypatch.setenv("BUILDBENCH_NATIVE", "1" if loop == "native" else "0")
        runs[loop] = Simulation(machine, scene, config=config).run()
    assert runs["native"].tick_loop == "native"
    assert "3->1.A" in [b.label for b in runs["native"].broken]
    _assert_same(runs["native"], runs["python"])


@needs_kernel
@pytest.mark.parametrize(("task_id", "machine"), [
    ("lift-3", lambda: designs.build(designs.REFERENCE["lift-3"]())),
    ("transport-1", lambda: designs.build(designs.NEGATIVE["wheels on bottom faces"][1]())),
])
def test_stepping_in_pieces_through_the_kernel_gives_the_run(task_id: str, machine: Callable[[], Machine],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    built = machine()
    whole = _run(built, task_id, "native", monkeypatch, duration_s=4.0)
    sim = simulation(built, task_id, duration_s=4.0)
    sizes = iter([0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89] * 20)
    while not sim.done:
        sim.step(next(sizes))
    pieces = sim.output()
    assert pieces.tick_loop == "native"
    _assert_same(pieces, whole)
    assert np.array_equal(sim.state().position, simulation(built, task_id, duration_s=4.0).step(sim.n_ticks).position)


def test_the_python_loop_runs_when_asked_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDBENCH_NATIVE", "0")
    sim = simulation(designs.build(designs.REFERENCE["lift-1"]()), "lift-1", duration_s=0.5)
    assert sim.tick_loop == "python: BUILDBENCH_NATIVE=0" and sim.run().tick_loop == sim.tick_loop
    monkeypatch.delenv("BUILDBENCH_NATIVE")
    expected = _LOADED if isinstance(_LOADED, str) else "native"
    assert simulation(designs.build(designs.REFERENCE["lift-1"]()), "lift-1", duration_s=0.5).tick_loop == expected


def test_a_copy_of_a_simulation_runs_on_by_itself() -> None:
    # A branch for RL: the copy gets its own model, data and C loop, and both go on as one run would.
    machine = designs.build(designs.NEGATIVE["wheels on bottom faces"][1]())
    whole = simulation(machine, "transport-1", duration_s=3.0).run()
    sim = simulation(machine, "transport-1", duration_s=3.0)
    sim.step(120)
    branch = copy.deepcopy(sim)
    _assert_same(branch.run(), whole)
    _assert_same(sim.run(), whole)


class _SmallArena:
    """``mujoco`` for ``build``, but its models get ``memory`` bytes of arena: too few for a loaded bridge."""

    def __init__(self, memory: str) -> None:
        self.memory = memory

    def __getattr__(self, name: str) -> object:
        return getattr(mujoco, name)

    @property
    def MjModel(self) -> object:  # noqa: N802 (mujoco's name)
        memory = self.memory

        class Model:
            @staticmethod
            def from_xml_string(text: str) -> mujoco.MjModel:
                return mujoco.MjModel.from_xml_string(re.sub(r'<size memory="\d+"/>', f'<size memory="{memory}"/>',
                                                             text, count=1))
        return Model


@needs_kernel
def test_a_mujoco_error_in_the_kernel_is_raised_as_the_bindings_raise_it(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    # MuJoCo's default for an error is to end the process; in the C loop it is MuJoCo's FatalError, at the same
    # tick as in the Python loop, and the process goes on: the simulation ends the run there, naming it
    # (``test_mujoco_limits``). The working directory is the test's own folder, not the checkout.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(build, "mujoco", _SmallArena("40K"))
    machine = designs.build(designs.REFERENCE["support-1"]())
    where = []
    for loop in ("native", "python"):
        monkeypatch.setenv("BUILDBENCH_NATIVE", "1" if loop == "native" else "0")
        sim = simulation(machine, "support-1")
        out = sim.run()
        assert "MuJoCo: mj_stackAlloc: out of memory" in str(out.diverged_detail) and out.retries == []
        where.append((out.diverged_detail, out.diverged_at_s, sim.state().tick, sim.tick_loop == "native"))
    assert where[0][:3] == where[1][:3] and where[0][2] > 0 and [w[3] for w in where] == [True, False]
