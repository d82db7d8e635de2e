"""A hostile agent's BuildArena designs against the physics: built through the library calls an agent sends, each
is simulated on the task it attacks and must end in an explainable verdict: positions and indicators finite,
speeds bounded, a blow-up named as a divergence and scored as the machine's failure, never a pass by explosion
and never an unscored episode of the agent's making; the same design twice gives the same verdict and
trajectory, bit for bit, in the C loop and the Python loop.

What each case found (physics-audit, session 11) is in its expectation; the designs that made the physics decide
were long connectors: a blow-up with no weld broken left unscored (now the machine's failure, ``check.LINK_SPAN``)
and one that snapped welds hidden from the energy test (now caught in its tick)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from buildbench.harness import Task
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import DIVERGED, OK, SimResult, simulate
from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.model import Machine
from buildbench.suites.buildarena.outcome import BuildArenaOutcome, history_list
from buildbench.suites.buildarena.physics import DEFAULT_CONFIG
from buildbench.suites.buildarena.score import score_episode

Call = dict[str, Any]
WOOD, WHEEL, CANNON, TORCH = "Small Wooden Block", "Powered Wheel", "Water Cannon", "Torch"
MAX_LOGGED_SPEED = 120.0
"""Fastest a logged block may move between two samples (units/s): a heated rocket tops out near 60-85 (the
sideways rocket here: 84), a wheel at 10.5, a fall at 31 (drag); anything faster in a judged run is an
explosion the divergence tests missed."""


def _op(op: str, **params: Any) -> Call:
    return {"op": op, "params": params}


def _chain(n: int, face: str, base: int = 1, first: int = 2) -> list[Call]:
    """``n`` wooden blocks in a row from ``base``'s ``face`` (each new block's far face is E)."""
    calls = [_op("attach_block_to", base_block=base, face=face, new_block=WOOD)]
    calls += [_op("attach_block_to", base_block=i, face="E", new_block=WOOD) for i in range(first, first + n - 1)]
    return calls


def _wheels(n: int, face_of: Callable[[int], tuple[str, ...]]) -> list[Call]:
    """A north beam of ``n`` blocks with wheels on ``face_of(block)`` of every other block, all driven forward
    on UpArrow, held for the whole run."""
    calls = [_op("start"), *_chain(n, "E")]
    wheel = n + 2
    for block in range(1, n + 2, 2):
        for face in face_of(block):
            calls.append(_op("attach_block_to", base_block=block, face=face, new_block=WHEEL))
            calls.append(_op("change_control_key", block_id=wheel, action="spinning_forward", new_key="UpArrow"))
            wheel += 1
    return [*calls, _op("add_control_sequence", time=0.0, key="UpArrow", hold_for=100.0)]


def _rocket(cannon_twist: float | None) -> list[Call]:
    """The Lift reference rocket (two heated cannons) with both cannons twisted by ``cannon_twist``."""
    calls = list(designs.REFERENCE["lift-2"]().calls)
    if cannon_twist is not None:
        calls += [_op("twist_block", block_id=b, angle=cannon_twist) for b in (2, 3)]
    return calls


def _churn(k: int) -> list[Call]:
    """A block attached, roped to the starting block and removed again, ``k`` times (its Winch stays, one end
    gone), then the block attached for good."""
    calls, block = [_op("start"), *_chain(3, "E")], 5
    for _ in range(k):
        calls += [_op("attach_block_to", base_block=4, face="E", new_block=WOOD),
                  _op("connect_blocks", block_a=1, face_a="A", block_b=block, face_b="A", connector="Winch"),
                  _op("remove_block", block_id=block)]
        block += 2
    return [*calls, _op("attach_block_to", base_block=4, face="E", new_block=WOOD)]


def _pair(shift: list[float], *links: tuple[str, str, str, str, str]) -> designs.Design:
    """Two copies of a two-block machine, the second ``shift`` away, joined by ``links`` (a, face, b, face, type)."""
    calls = [_op("add_machine", machine_id="s"), _op("add_machine", machine_id="s", init_shift=shift)]
    calls += [_op("connect_blocks", block_a=a, face_a=fa, block_b=b, face_b=fb, connector=kind)
              for a, fa, b, fb, kind in links]
    return designs.Design("pair", calls, {"s": [_op("start"), *_chain(1, "E")]})


def _tether(n: int) -> designs.Design:
    """The Lift rocket roped (Winch) by its starting block to the starting block of an ``n``-block beam."""
    calls = [_op("add_machine", machine_id="anchor"), _op("add_machine", machine_id="engine", init_shift=[0, 0, 3]),
             _op("connect_blocks", block_a="A_1", face_a="C", block_b="B_1", face_b="D", connector="Winch")]
    return designs.Design("tether", calls, {"anchor": [_op("start"), *_chain(n, "E")],
                                            "engine": list(designs.REFERENCE["lift-2"]().calls)})


def _machine(design: list[Call] | designs.Design) -> Machine:
    return designs.build(design if isinstance(design, designs.Design) else designs.Design("hostile", design))


def _digest(result: SimResult) -> str:
    traj = result.trajectory
    blob = b"".join(np.ascontiguousarray(a).tobytes() for a in (traj.time, traj.position, traj.burning,
                                                                 traj.ballast_mass))
    return hashlib.sha256(blob + result.reason.encode() + "".join(result.broken).encode()).hexdigest()


def _explainable(result: SimResult) -> None:
    """Finite, bounded, judged (or diverged as the machine's own failure): never the physics deciding."""
    position = result.trajectory.position
    assert np.isfinite(position).all() and np.isfinite(result.indicator)
    assert all(np.isfinite(v) for v in result.metrics.values() if isinstance(v, float))
    if len(result.trajectory.time) > 1:
        step = np.diff(result.trajectory.time)[:, None]
        speed = np.linalg.norm(np.diff(position, axis=0), axis=2) / step
        assert float(speed.max()) < MAX_LOGGED_SPEED
    assert result.scored
    if result.status == DIVERGED:
        assert result.machine_caused and not result.passed and result.indicator == 0.0


# (name, design, task, duration s, passes): what each hostile design got, by the released rules.
CASES: list[tuple[str, Callable[[], list[Call] | designs.Design], str, float, bool]] = [
    # Every wheel driven at full speed: it drives, nothing flies off.
    ("wheels on both sides of a beam", lambda: _wheels(20, lambda b: ("A", "B")), "transport-3", 4.0, False),
    # Wheels under the beam, axes vertical, spinning against the ground: friction, no energy from nowhere.
    ("wheels drilling the ground", lambda: _wheels(6, lambda b: ("D",)), "transport-1", 6.0, False),
    # Heated thrust pressing the rocket into the ground for the whole burn: no penetration, no launch.
    ("rocket firing into the ground", lambda: _rocket(180.0), "lift-2", 6.0, False),
    ("rocket firing sideways", lambda: _rocket(90.0), "lift-3", 6.0, False),
    # Lift Lv.1 judges the heated cannons alone (released rule: the run never fires), whichever way they point.
    ("engine pointing into the ground", lambda: _rocket(180.0), "lift-1", 2.0, True),
    # 100 winches left with one end on a removed block: not simulated, nothing to pull.
    ("attach, rope and remove 100 times", lambda: _churn(100), "support-1", 3.0, False),
    # A winch and a brace from a block to itself, and a winch between two blocks of one rigid piece.
    ("connectors looped on one block", lambda: [
        _op("start"), *_chain(1, "E"),
        _op("connect_blocks", block_a=2, face_a="A", block_b=2, face_b="B", connector="Winch"),
        _op("connect_blocks", block_a=1, face_a="A", block_b=1, face_b="B", connector="Brace"),
        _op("connect_blocks", block_a=1, face_a="C", block_b=2, face_b="C", connector="Winch")],
     "support-2", 3.0, False),
    # Two sub-structures 0.02 apart, joined by a 0.02 winch and a 0.02 brace.
    ("connectors 0.02 long", lambda: _pair([0, 0, 1.02], ("A_1", "C", "B_1", "D", "Winch"),
                                           ("A_2", "C", "B_2", "D", "Brace")), "transport-2", 3.0, False),
    # Sub-structures a million units apart, loose: each simulated where it is, heights finite.
    ("sub-structures 1e6 apart", lambda: _pair([0, 0, 1e6]), "lift-3", 3.0, False),
    # The starting block shifted by 1e6 and turned by a million degrees: placed on the ground like any other.
    ("start 1e6 away, turned 1e6 degrees", lambda: [_op("start", init_rotation=[1e6, -1e6, 123.456],
                                                        init_shift=[-1e6, 1e6, -1e6]), *_chain(1, "E")],
     "transport-2", 3.0, False),
    # A rocket roped to a 20-block beam: the rope tears the beam's starting block off and the rocket lifts it,
    # a real lift (the beam's welds break under the rope's pull, the rocket climbs past 30). Two sub-structures:
    # Lv.3 (Lv.2 allows one).
    ("rocket on a rope to a beam", lambda: _tether(20), "lift-3", 12.0, True),
    # A 200-block tower falls over and breaks up; the cargo starts far above the launch filter.
    ("200-block tower", lambda: [_op("start"), *_chain(200, "C")], "support-1", 3.0, False),
    ("200-block beam", lambda: [_op("start"), *_chain(200, "E")], "transport-2", 3.0, False),
    # An L of two 30-block arms closed by a 42-unit brace and a rope: breaks up over the widest gap.
    ("braced and roped L", lambda: [
        _op("start"), *_chain(30, "E"), *_chain(30, "C", base=1, first=32),
        _op("connect_blocks", block_a=31, face_a="C", block_b=61, face_b="E", connector="Brace"),
        _op("connect_blocks", block_a=30, face_a="C", block_b=60, face_b="A", connector="Winch")],
     "support-3", 3.0, False),
]


@pytest.mark.parametrize(("name", "design", "task", "duration", "passes"), CASES, ids=[c[0] for c in CASES])
def test_a_hostile_design_gets_an_explainable_verdict(name: str, design: Callable[[], list[Call] | designs.Design],
                                                     task: str, duration: float, passes: bool) -> None:
    machine = _machine(design())
    result = simulate(machine, task, duration_s=duration)
    _explainable(result)
    assert result.status == OK, result.reason
    assert result.passed == passes, result.reason


def test_a_piece_placed_high_scores_no_height() -> None:
    """Lift Lv.2/3's indicator is the highest tracked block: a loose copy placed 1e6 units up scored 1e6 though it
    only fell. A tracked block that starts at or above the launch filter fails the run with indicator 0."""
    result = simulate(_machine(_pair([0, 0, 1e6])), "lift-3", duration_s=1.0)
    assert not result.passed and result.indicator == 0.0
    assert result.metrics["max_height"] > 1e6 and result.metrics["initial_max_height"] > 1e6
    assert "launch filter" in result.reason
    calm = simulate(_machine(designs.REFERENCE["lift-3"]()), "lift-3", duration_s=1.0)
    assert calm.metrics["initial_max_height"] < 20.0 and calm.indicator == calm.metrics["max_height"] > 0.0


@pytest.mark.parametrize(("design", "task", "says"), [
    (lambda: _tether(2), "lift-2", "has 2 sub-structures (anchor, engine); lift-2 allows one sub-structure"),
    (lambda: _pair([0, 0, 1e6]), "transport-1", "places its sub-structure 2 times; transport-1 allows one"),
    (lambda: designs.Design("three", [_op("add_machine", machine_id=m, init_shift=[0, 0, 2.0 * k])
                                      for k, m in enumerate("abc")], {m: [_op("start")] for m in "abc"}),
     "lift-3", "has 3 sub-structures (a, b, c); lift-3 allows at most 2"),
], ids=["two on Lv.2", "one placed twice on Lv.1", "three on Lift Lv.3"])
def test_more_sub_structures_than_the_task_allows_fail(design: Callable[[], designs.Design], task: str,
                                                       says: str) -> None:
    """The task texts limit the sub-structures (1 everywhere, Support Lv.2/3 3, Lift Lv.3 2): a machine beyond the
    limit fails with indicator 0 and says why; a sub-structure placed several times counts once where the task
    allows an assembly (Lift Lv.3's two engines), and not at all where it allows one sub-structure."""
    result = simulate(_machine(design()), task, duration_s=1.0)
    assert result.status == OK and not result.passed and result.indicator == 0.0
    assert says in result.reason, result.reason
    braced = simulate(_machine(designs.REFERENCE["lift-3"]()), "lift-3", duration_s=1.0)
    assert braced.metrics["substructures"] == 2 and "sub-structure" not in braced.reason


def test_the_library_refuses_every_overlap_an_agent_tries() -> None:
    bench = Workbench()
    for call in [_op("start"), *_chain(4, "E")]:
        assert bench.call(call["op"], call["params"]).ok
    assert bench.call("attach_block_to", {"base_block": 1, "face": "A", "new_block": WHEEL}).ok
    before = bench.machine.to_json()
    for block, shift in ((3, [0, -0.5, 0]), (5, [0.5, -0.5, -0.5]), (2, [0, 0.5, 0])):
        assert "overlaps" in bench.call("shift_block", {"block_id": block, "shift_real": shift}).text
    # A wheel (radius 0.8) on the next block's side face would cut into the first wheel.
    assert "overlaps" in bench.call("attach_block_to", {"base_block": 2, "face": "A", "new_block": WHEEL}).text
    assert bench.machine.to_json() == before
    sub = Workbench()
    sub.call("start")
    assembly = Workbench(machine=Machine(is_assembly=True), saved={"s": sub.machine})
    assert assembly.call("add_machine", {"machine_id": "s"}).ok
    for shift in ([0.0, 0.0, 0.0], [0.0, 0.3, 0.0], [0.5, 0.5, 0.5]):
        assert "overlaps" in assembly.call("add_machine", {"machine_id": "s", "init_shift": shift}).text
    assert assembly.machine.num_blocks == 1


def test_remove_block_takes_its_connectors_along_but_not_in_the_released_rules() -> None:
    """The released library left a removed block's connectors with one end gone, counted in the parts (a 5-block
    machine of 105 parts after 100 rounds of attach, rope, remove); ours removes them with the block and says so."""
    from buildbench.suites.buildarena.model import Rules

    assert _machine(_churn(100)).num_blocks == 5
    for rules, parts in ((Rules(), 5), (Rules.released(), 6)):
        bench = Workbench(rules=rules)
        for call in _churn(1)[:-1]:
            out = bench.call(call["op"], call["params"])
            assert out.ok, out.text
        assert bench.machine.num_blocks == parts - 1
        if rules.drop_links:
            assert out.text == "You have successfully removed <ID 5: Small Wooden Block> and the connectors on it: " \
                               "<ID 6: Winch>."
        assert bench.call("attach_block_to", {"base_block": 4, "face": "E", "new_block": WOOD}).ok
        assert bench.machine.num_blocks == parts


def test_dangling_winches_change_nothing_in_the_physics() -> None:
    churned = simulate(_machine(_churn(30)), "support-1", duration_s=2.0)
    plain = simulate(_machine([_op("start"), *_chain(4, "E")]), "support-1", duration_s=2.0)
    assert np.array_equal(churned.trajectory.position, plain.trajectory.position)
    assert churned.reason == plain.reason


@pytest.mark.parametrize("shift", [[1500.0, 0, 0], [0, 1500.0, 0], [5e4, 0, 0]])
def test_a_connector_spanning_the_arena_is_the_machines_failure(shift: list[float]) -> None:
    """A brace of 1,500 or 50,000 units between two small sub-structures blew the solver up with no weld
    broken, under every step: an unscored episode of the agent's making until the blame rule named it."""
    design = _pair(shift, ("A_1", "A" if shift[0] else "E", "B_1", "B" if shift[0] else "F", "Brace"))
    machine = _machine(design)
    result = simulate(machine, "transport-1", duration_s=1.0)
    assert result.status == DIVERGED and result.metrics["broken_welds"] == 0
    _explainable(result)
    assert "the machine caused it: its Brace" in result.reason and "spans" in result.reason
    outcome = BuildArenaOutcome(task_id="transport-1", approved=True, final="m", machine=history_list(machine),
                                physics=DEFAULT_CONFIG.record(), sim_duration_s=1.0,
                                machines={k: history_list(_machine(v)) for k, v in (design.saved or {}).items()})
    metrics = score_episode(Task(id="transport-1", suite="buildarena", inputs={}, target={}), outcome)
    assert metrics["simulated"] == 1.0 and metrics["diverged"] == 1.0 and metrics["passed"] == 0.0


def test_a_blow_up_that_snaps_welds_is_caught_in_its_tick() -> None:
    """A 400-unit brace blew up in the tick its welds broke; the rebuild forgot the energy baseline and the
    next test took the exploded state as its own: the machine flew 86 units up at 150 units/s and the run was
    judged. Now the breaking welds run the energy test first and a rebuilt model is measured at once: the
    blow-up is named (a 3,000-unit brace: ``energy``, the welds it snapped blaming the machine) or a finer step
    takes it calmly (400 units)."""
    for length, status in ((400.0, OK), (3000.0, DIVERGED)):
        result = simulate(_machine(_pair([length, 0.0, 0.0], ("A_1", "A", "B_1", "B", "Brace"))), "lift-2",
                          duration_s=3.0)
        _explainable(result)
        assert result.status == status and result.indicator < 1.0, result.reason
    assert result.metrics["diverged_reason"] == "energy" and "a weld broke" in result.reason


@pytest.mark.parametrize("loop", ["1", "0"], ids=["C loop", "Python loop"])
def test_a_blow_up_in_a_light_part_of_a_heavy_machine_is_caught(loop: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 400-unit brace pair of 1.6 mass units next to a 100-block beam (30): the pair flew at 150 units/s, one
    weld snapped, the run judged ``ok``, since its energy per unit of the scene's mass stayed below the bound. The
    per-body test catches it, and the run at a finer step is calm (``_explainable``: no part faster than the
    physics allows)."""
    monkeypatch.setenv("BUILDBENCH_NATIVE", loop)
    beam = [_op("start"), *_chain(100, "E")]
    pair = _pair([400.0, 0.0, 0.0], ("A_1", "A", "B_1", "B", "Brace"))
    design = designs.Design("diluted", [*pair.calls, _op("add_machine", machine_id="beam", init_shift=[200, 10, 0])],
                            {**(pair.saved or {}), "beam": beam})
    result = simulate(_machine(design), "transport-1", duration_s=5.0)
    _explainable(result)
    assert result.status == OK and result.metrics["retries"] >= 1, result.reason


def _heavy_and_light() -> tuple[Any, Any]:
    import mujoco

    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body><freejoint/><geom type="box" size="1 1 1" mass="1000"/></body>'
        '<body pos="5 0 0"><freejoint/><geom type="box" size="1 1 1" mass="1"/></body></worldbody></mujoco>')
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def test_the_energy_test_holds_for_each_free_body() -> None:
    """A light body's jump to 5,000 J/kg is 5 J/kg of the scene's mass: the scene's test alone misses it; a body
    that keeps its speed does not jump, and one that speeds up fourfold from rest but by under the bound passes."""
    import dataclasses

    from buildbench.suites.buildarena.physics.divergence import DivergenceWatch

    model, data = _heavy_and_light()
    watch = DivergenceWatch(dataclasses.replace(DEFAULT_CONFIG, divergence_check_ticks=1))
    data.qvel[6 + 2] = 40.0  # 800 J/kg: under the bound
    assert watch.check(model, data, data.time) is None
    assert watch.energy < 1.0 and watch.bodies.tolist() == [0.0, 800.0]
    assert watch.check(model, data, data.time) is None  # the same speed again: no jump
    data.qvel[6 + 2] = 100.0  # 5,000 J/kg: a jump of 4,200 J/kg, over four times the 800
    assert watch.check(model, data, data.time) == "energy"
    assert watch.energy < 1000.0  # the scene's own test would have passed it


def test_a_rebuilt_model_takes_its_bodies_speeds_as_the_baselines() -> None:
    """After a rebuild (``rebased``) the bodies' energies now are the baselines, not rest."""
    import dataclasses

    from buildbench.suites.buildarena.physics.divergence import DivergenceWatch

    model, data = _heavy_and_light()
    watch = DivergenceWatch(dataclasses.replace(DEFAULT_CONFIG, divergence_check_ticks=1))
    data.qvel[6 + 2] = 100.0
    watch.rebased(model, data)
    assert watch.bodies.tolist() == [0.0, 5000.0]
    assert watch.check(model, data, data.time) is None


def test_the_first_energy_test_measures_from_rest() -> None:
    """A run starts at rest: a blow-up within the first check interval is a jump from zero, not the baseline."""
    import dataclasses

    import mujoco

    from buildbench.suites.buildarena.physics.divergence import DivergenceWatch

    model = mujoco.MjModel.from_xml_string('<mujoco><worldbody><body><freejoint/><geom type="box" size="1 1 1" '
                                           'mass="1"/></body></worldbody></mujoco>')
    data = mujoco.MjData(model)
    data.qvel[2] = 100.0  # 5,000 J/kg, far below max_speed_mps
    mujoco.mj_forward(model, data)
    watch = DivergenceWatch(dataclasses.replace(DEFAULT_CONFIG, divergence_check_ticks=1))
    assert watch.check(model, data, data.time) == "energy"


def test_a_short_brace_that_diverges_is_still_unscored() -> None:
    """The long-connector rule blames only long connectors: a forced divergence of a machine whose braces are
    short stays an infrastructure fault."""
    import dataclasses

    machine = _machine(designs.REFERENCE["lift-3"]())
    strict = dataclasses.replace(DEFAULT_CONFIG, max_speed_mps=20.0)  # the rocket passes 20 units/s
    result = simulate(machine, "lift-3", config=strict)
    assert result.status == DIVERGED and not result.scored and "not scored" in result.reason


@pytest.mark.parametrize(("design", "task", "duration"), [
    (lambda: _rocket(90.0), "lift-2", 8.0),
    (lambda: _tether(20), "lift-2", 8.0),
    (lambda: _wheels(20, lambda b: ("A", "B")), "transport-3", 3.0),
    (lambda: _pair([1500.0, 0, 0], ("A_1", "A", "B_1", "B", "Brace")), "transport-1", 1.0),
    (lambda: _pair([3000.0, 0, 0], ("A_1", "A", "B_1", "B", "Brace")), "lift-2", 1.0),
    (CASES[-1][1], "support-3", 3.0),
], ids=["broken rocket", "tethered rocket", "wheels", "diverging brace", "brace snapping welds", "braced L"])
def test_the_same_design_twice_gives_the_same_run_in_either_loop(
        design: Callable[[], list[Call] | designs.Design], task: str, duration: float,
        monkeypatch: pytest.MonkeyPatch) -> None:
    runs = []
    for loop in ("1", "1", "0"):
        monkeypatch.setenv("BUILDBENCH_NATIVE", loop)
        result = simulate(_machine(design()), task, duration_s=duration)
        runs.append((_digest(result), result.passed, result.indicator, result.status))
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.slow
@pytest.mark.parametrize(("face", "task"), [("C", "lift-2"), ("E", "support-3")])
def test_a_thousand_blocks_in_a_row_stay_explainable(face: str, task: str) -> None:
    result = simulate(_machine([_op("start"), *_chain(1000, face)]), task, duration_s=0.5)
    _explainable(result)
    assert result.status == OK and not result.passed
