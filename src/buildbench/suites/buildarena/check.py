"""The BuildArena verifier: simulate a machine on a task and apply the released pass rules.

Pass rules and indicators are those of the released analysers
(``analyze/sim_transport.py``, ``sim_support.py``, ``sim_lift.py``; spec
3.3–3.5), applied to our 25 Hz trajectory. They are pure functions of the
trajectory so they can be tested on synthetic logs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .analysis import lift_metrics, transport_metrics
from .levels import LIFT_PASS_HEIGHT, SUPPORT_FALLEN_Z, TRANSPORT_GOAL, TaskSpec
from .library.bodies import body_graph
from .model import STARTING_BLOCK, ControlEntry, Machine, load_catalogue
from .physics import DEFAULT_CONFIG, PhysicsConfig, Simulation, Trajectory
from .physics.divergence import LIMITS, NO_RETRY
from .physics.simulation import ModelRefused
from .tasks import get_task, scene_for

TRANSPORT_DISTANCE = TRANSPORT_GOAL
"""Transport passes beyond this horizontal distance from the origin (``sim_transport.py``; a variant's
``TaskSpec.pass_distance`` replaces it)."""
TRANSPORT_MIN_WHEELS = 4
"""Transport Lv.1 needs at least this many Powered Wheels."""
LAUNCH_HEIGHT = 20.0
"""Anti-hack filter: a target starting higher than this fails (Transport) / a cargo starting higher fails (Support) /
a tracked block starting this high or higher fails with indicator 0 (Lift Lv.2/3: ours; the released analyser computes
the start height there but does not use it, so a loose piece placed 1e6 units up scored a height of 1e6)."""
ONE_PIECE_STD = 1.0
"""Transport ``one_piece`` flag: every wheel-to-wheel distance varies by at most this std over the run."""
SUPPORT_HEIGHT = SUPPORT_FALLEN_Z
"""Support: the cargo has fallen once its height is below this (terrain tops are at 5)."""
SUPPORT_HOLD_S = 2.0
"""Support passes when the cargo spends at least this long at or above ``SUPPORT_HEIGHT``."""
SUPPORT_HACK_HEIGHT = 5.0
"""Support ``hacked`` flag: the cargo never went below this."""
LIFT_TWR = 1.0
"""Lift Lv.1 passes with a thrust-to-weight ratio above this."""
LIFT_HEIGHT = LIFT_PASS_HEIGHT
"""Lift Lv.2/3 pass: some tracked block rises above this (a variant's ``TaskSpec.pass_height`` replaces it)."""
LIFT_CLIMB = 5.0
"""Lift Lv.2/3 pass: max height in (7, 12] s exceeds max height in (2, 7] s by more than this."""
LIFT_TRACKED = 4
"""Lift Lv.2/3: with more non-starting blocks than this, that many are tracked at random (seeded)."""
HEATED_THRUST = 1.6 * 8.6
"""Thrust of a heated cannon in mass units (``sim_lift.py`` uses 13.76)."""
BLAME_WINDOW_S = 1.0
"""The blame rule of a run that diverged under every step tried (``diverged``): the machine caused the
divergence when one of its welds broke within this many seconds before it (or a connector is longer than
``LINK_SPAN``)."""

LINK_SPAN = 100.0
"""The blame rule's other half: a Brace or Winch longer than this (units) makes the machine the cause of a
divergence. A connector keeps its small mass at any length (``Link.mass``), so a long one is a massless rod
(or rope) levering whole sub-structures against each other across the arena; the solver cannot hold that (a
1,500-unit brace between two small sub-structures passes ``max_speed_mps`` within 0.1 s, with no weld broken,
under every step tried), and no task needs one: its widest gap is 20 units."""

OK = "ok"
DIVERGED = "diverged"
"""Statuses of a simulation: judged, or every attempt diverged (``simulate``)."""
STOPPED = "the simulation stopped"
"""How the reason of a run that MuJoCo's limits or errors stopped (``divergence.NO_RETRY``) begins; the
reason of one that diverged begins "the simulation diverged" (reports tell them apart by it)."""


class SimulationDiverged(RuntimeError):
    """A run diverged under every step tried and the blame rule does not hold the machine responsible: an
    infrastructure fault. The scorer raises it, so the episode is unscored (``error``, counted in reports
    as ``diverged``), never scored as a failure."""


@dataclass(frozen=True)
class Verdict:
    """A pass rule's answer.

    Attributes:
        passed: Whether the task level is solved.
        indicator: The Table 2 indicator (distance, load, TWR or height).
        metrics: Every number the rule looked at, plus flags.
        reason: One sentence saying why it passed or failed.
    """

    passed: bool
    indicator: float
    metrics: dict[str, Any]
    reason: str


@dataclass(frozen=True)
class SimResult:
    """The outcome of simulating one machine on one task.

    Attributes:
        passed: Whether the task level is solved.
        indicator: Table 2 indicator.
        metrics: Rule metrics, flags, broken welds and run statistics (``physics`` and
            ``physics_sha256`` name the profile it ran with).
        trajectory: The 25 Hz log.
        reason: Why it passed or failed.
        broken: The welds that broke, as text.
        status: ``ok``, or ``diverged`` when every attempt diverged (see ``simulate``).
        machine_caused: For a diverged run: whether the blame rule holds the machine responsible (then it
            is judged a failure); otherwise the run is an infrastructure fault and must not be scored.
    """

    passed: bool
    indicator: float
    metrics: dict[str, Any]
    trajectory: Trajectory
    reason: str
    broken: list[str] = field(default_factory=list)
    status: str = OK
    machine_caused: bool = False

    @property
    def scored(self) -> bool:
        """Whether the verdict may be scored: judged, or diverged by the machine's own doing."""
        return self.status == OK or self.machine_caused


def _count(machine: Machine, type_name: str) -> int:
    return sum(1 for b in machine.blocks.values() if b.type == type_name)


def _starting_id(traj: Trajectory) -> str:
    ids = traj.ids_of_type(STARTING_BLOCK)
    return ids[0] if ids else traj.ids[0]


def check_transport(traj: Trajectory, level: int, wheels: int, pass_distance: float = TRANSPORT_DISTANCE) -> Verdict:
    """Transport rule: max horizontal distance from the origin > ``pass_distance`` (Lv.1 also ≥ 4 wheels), no
    launch; the trajectory metrics follow the line to the goal point (``pass_distance``, ``pass_distance``)."""
    target = "Ballast" if "Ballast" in traj.ids else _starting_id(traj)
    path = traj.series(target)
    distance = float(np.max(np.hypot(path[:, 0], path[:, 1])))
    start_height = float(np.max(path[:2, 2]))
    wheel_ids = traj.ids_of_type("Powered Wheel")
    one_piece = True
    if len(wheel_ids) >= 2:
        pos = np.stack([traj.series(w) for w in wheel_ids], axis=1)
        i, j = np.triu_indices(len(wheel_ids), k=1)
        dist = np.linalg.norm(pos[:, i] - pos[:, j], axis=2)
        one_piece = bool(np.all(dist.std(axis=0) <= ONE_PIECE_STD))
    enough_wheels = level != 1 or wheels >= TRANSPORT_MIN_WHEELS
    passed = distance > pass_distance and enough_wheels and start_height < LAUNCH_HEIGHT
    metrics = {
        "max_transport_distance": distance,
        "initial_max_height": start_height,
        "wheels": wheels,
        "target": target,
        "one_piece": one_piece,
        "hacked": passed and (wheels == 0 or start_height > LAUNCH_HEIGHT),
        **transport_metrics(traj, target, (pass_distance, pass_distance, 0.0)),
    }
    if passed:
        reason = f"{target} got {distance:.2f} units from the origin (> {pass_distance:g})"
    elif not enough_wheels:
        reason = f"only {wheels} powered wheels; Lv.1 needs at least {TRANSPORT_MIN_WHEELS}"
    elif start_height >= LAUNCH_HEIGHT:
        reason = f"{target} started {start_height:.1f} units high (launch filter: < {LAUNCH_HEIGHT:g})"
    else:
        reason = f"{target} got only {distance:.2f} units from the origin (needs > {pass_distance:g})"
    return Verdict(passed, distance, metrics, reason)


def check_support(traj: Trajectory) -> Verdict:
    """Support rule: the cargo spends ≥ 2 s at height ≥ 4.0; max load = the mass logged at (or, logs being
    aligned, before) the first sample below it.

    Args:
        traj: The log.
    """
    z = traj.series("Ballast")[:, 2]
    mass = traj.ballast_mass
    # Each interval counts when the sample that ends it is at or above the threshold (released analyser).
    hold = float(np.sum(np.diff(traj.time)[z[1:] >= SUPPORT_HEIGHT]))
    start_height = float(z[0])
    below = np.flatnonzero(z < SUPPORT_HEIGHT)
    if below.size:
        first = int(below[0])
        load = float(mass[first])  # the last mass logged at or before the first sample below the threshold
        fell_at: float | None = float(traj.time[first])
    else:
        load = float(mass.max())
        fell_at = None
    passed = hold >= SUPPORT_HOLD_S and start_height <= LAUNCH_HEIGHT
    metrics = {
        "hold_time_above_s": hold,
        "initial_height": start_height,
        "fell_at_s": fell_at,
        "max_load_raw": load,
        "hacked": below.size == 0 and float(z.min()) > SUPPORT_HACK_HEIGHT,
    }
    indicator = load if passed else 0.0
    if passed:
        reason = (
            f"cargo held {hold:.2f} s above {SUPPORT_HEIGHT:g}; "
            + (f"fell at {fell_at:.2f} s carrying {load:.1f}" if fell_at is not None else f"never fell ({load:.1f})")
        )
    elif start_height > LAUNCH_HEIGHT:
        reason = f"cargo started {start_height:.1f} units high (filter: ≤ {LAUNCH_HEIGHT:g})"
    else:
        reason = f"cargo held only {hold:.2f} s above {SUPPORT_HEIGHT:g} (needs ≥ {SUPPORT_HOLD_S:g} s)"
    return Verdict(passed, indicator, metrics, reason)


def thrust_to_weight(traj: Trajectory, total_mass: float) -> tuple[float, int, int]:
    """Released TWR: ``(13.76·heated + 1.6·unheated) / total mass``; heated = ever logged burning."""
    ever = traj.burning.any(axis=0) if traj.burning.size else np.zeros(len(traj.cannon_ids), dtype=bool)
    n_hot = int(ever.sum())
    n_cold = len(traj.cannon_ids) - n_hot
    return (HEATED_THRUST * n_hot + 1.6 * n_cold) / total_mass, n_hot, n_cold


def check_lift_engine(traj: Trajectory, total_mass: float) -> Verdict:
    """Lift Lv.1 rule: TWR > 1 from the cannons' heating status."""
    twr, hot, cold = thrust_to_weight(traj, total_mass)
    metrics = {"twr": twr, "heated_cannons": hot, "unheated_cannons": cold, "total_mass": total_mass}
    passed = twr > LIFT_TWR
    reason = f"TWR {twr:.3f} ({hot} heated, {cold} unheated cannons, mass {total_mass:g}) " + (
        f"> {LIFT_TWR:g}" if passed else f"≤ {LIFT_TWR:g}"
    )
    return Verdict(passed, twr, metrics, reason)


def tracked_ids(traj: Trajectory, seed: int) -> list[str]:
    """Lift Lv.2/3 tracked blocks: the starting block plus all other blocks, or 4 of them drawn with ``seed``."""
    start = _starting_id(traj)
    others = [i for i in traj.ids if i not in (start, "Ballast")]
    if len(others) > LIFT_TRACKED:
        rng = np.random.default_rng(seed)
        others = [others[k] for k in sorted(rng.choice(len(others), LIFT_TRACKED, replace=False))]
    return [start, *others]


def _window_max(t: np.ndarray, z: np.ndarray, lo: float, hi: float) -> float | None:
    sel = (t > lo) & (t <= hi)
    return float(z[sel].max()) if sel.any() else None


def check_lift_flight(traj: Trajectory, total_mass: float, seed: int, pass_height: float = LIFT_HEIGHT) -> Verdict:
    """Lift Lv.2/3 rule: max tracked height > ``pass_height`` and (max z in (7,12] s − max z in (2,7] s) > 5
    (``elevation_change`` None where the run has no sample in one of those windows)."""
    ids = tracked_ids(traj, seed)
    z = np.stack([traj.series(i)[:, 2] for i in ids], axis=1).max(axis=1)
    height = float(z.max())
    early, late = _window_max(traj.time, z, 2.0, 7.0), _window_max(traj.time, z, 7.0, 12.0)
    # A run that ended before 12 s (a divergence, a shorter duration) has no climb to measure: None, not -inf.
    climb = None if early is None or late is None else late - early
    twr, _, _ = thrust_to_weight(traj, total_mass)
    start_height = float(z[:2].max())
    launched = start_height >= LAUNCH_HEIGHT
    passed = height > pass_height and climb is not None and climb > LIFT_CLIMB and not launched
    metrics = {
        "max_height": height,
        "elevation_change": climb,
        "initial_max_height": start_height,
        "tracked": ids,
        "twr": twr,
        "hacked": passed and twr < LIFT_TWR,
        **lift_metrics(traj, ids),
    }
    if launched:
        reason = f"a tracked block started {start_height:.1f} units high (launch filter: < {LAUNCH_HEIGHT:g})"
    elif passed:
        reason = f"reached {height:.1f} (> {pass_height:g}) still climbing ({climb:.1f} > {LIFT_CLIMB:g})"
    elif height <= pass_height:
        reason = f"highest tracked block reached only {height:.2f} (needs > {pass_height:g})"
    elif climb is None:
        reason = (f"reached {height:.1f} but the run ended at {float(traj.time[-1]):.2f} s, before its climb "
                  "(max height in (7, 12] s against (2, 7] s) could be measured")
    else:
        reason = f"stopped climbing: elevation change {climb:.2f} between 2–7 s and 7–12 s (needs > {LIFT_CLIMB:g})"
    return Verdict(passed, 0.0 if launched else height, metrics, reason)


def substructures(machine: Machine) -> list[str]:
    """The sub-structures of ``machine`` as the task texts count them: the saved machines its assembly places, each
    once however often it is placed (Lift Lv.3's two engines are one sub-structure: "a single rocket engine + a simple
    chassis"); a placement whose machine is not known counts on its own. A machine that is no assembly is one.
    An assembly placed inside another counts as the one saved machine it is."""
    if not machine.is_assembly:
        return ["(the machine)"]
    named = {s.machine_id: None for s in machine.substructures.values() if s.machine_id}
    unnamed = [f"sub-structure {s.letter}" for s in machine.substructures.values() if not s.machine_id]
    return [*named, *unnamed]


def judge(task: TaskSpec, machine: Machine, traj: Trajectory, seed: int = 0) -> Verdict:
    """Apply ``task``'s pass rule to a trajectory of ``machine``; a machine of more sub-structures than the task
    allows (``TaskSpec.max_substructures``, the released prompts' "Use only one sub-structure" / "no more than 3")
    fails with indicator 0, whatever it did: the released code leaves that limit to the prompt, so a machine that
    broke it was scored like any other."""
    if task.category == "transport":
        verdict = check_transport(traj, task.level, _count(machine, "Powered Wheel"), task.pass_distance)
    elif task.category == "support":
        verdict = check_support(traj)
    elif task.level == 1:
        verdict = check_lift_engine(traj, machine.mass)
    else:
        verdict = check_lift_flight(traj, machine.mass, seed, task.pass_height)
    subs = substructures(machine)
    metrics = {**verdict.metrics, "substructures": len(subs)}
    placed = len(machine.substructures) if machine.is_assembly else 1
    if len(subs) > task.max_substructures:
        allowed = "one sub-structure" if task.max_substructures == 1 else f"at most {task.max_substructures}"
        broken = f"the machine has {len(subs)} sub-structures ({', '.join(subs)}); {task.id} allows {allowed}"
    elif task.max_substructures == 1 and placed > 1:
        # The released workflow assembles only a plan of several sub-structures: one sub-structure is one machine.
        broken = f"the machine places its sub-structure {placed} times; {task.id} allows one sub-structure, unassembled"
    else:
        return Verdict(verdict.passed, verdict.indicator, metrics, verdict.reason)
    return Verdict(False, 0.0, metrics, f"{broken} (the run: {verdict.reason})")


def _longest_link(machine: Machine) -> tuple[str, float] | None:
    """The machine's longest Brace or Winch (its label and length) when longer than ``LINK_SPAN``, else None."""
    links = body_graph(machine).links
    if not links:
        return None
    lengths = [float(np.linalg.norm(k.point_b - k.point_a)) for k in links]
    longest = int(np.argmax(lengths))
    link = links[longest]
    return (f"{link.type} {link.id}", lengths[longest]) if lengths[longest] > LINK_SPAN else None


def simulation(
    machine: Machine,
    task_id: str,
    *,
    control: list[ControlEntry] | None = None,
    config: PhysicsConfig = DEFAULT_CONFIG,
    duration_s: float | None = None,
) -> Simulation:
    """``machine`` placed in task ``task_id``'s scene as a steppable :class:`Simulation`
    (what :func:`simulate` runs to the end and judges; RL code may step it tick by tick).

    Args:
        machine: A machine built with the library.
        task_id: ``transport-1`` … ``lift-3`` or a variant id (``variants``).
        control: Timed key presses for Transport; default the machine's own control
            sequence. Other tasks press keys on their own protocol.
        config: Physics settings.
        duration_s: Stop early; default the task's duration.

    Raises:
        ValueError: For an unknown task or a machine without solid blocks.
        ModelRefused: MuJoCo could not build the machine's model (``simulate`` judges that run).
    """
    task = get_task(task_id)
    catalogue = load_catalogue()
    unknown = sorted({b.type for b in machine.blocks.values() if b.type not in catalogue.specs})
    if unknown:
        raise ValueError(f"machine has unknown block types: {', '.join(unknown)}")
    if task.category != "transport":
        # Only Transport runs a control sequence; Lift Lv.1 never fires and Lv.2/3 fire every
        # cannon on the task's schedule (released simulation scripts, spec 3.5).
        control = []
    graph = body_graph(machine)
    return Simulation(machine, scene_for(task, machine, duration_s, graph), control, config, graph)


def simulate(
    machine: Machine,
    task_id: str,
    *,
    seed: int = 0,
    control: list[ControlEntry] | None = None,
    config: PhysicsConfig = DEFAULT_CONFIG,
    duration_s: float | None = None,
) -> SimResult:
    """Simulate ``machine`` on task ``task_id`` and judge it.

    A run that diverges is simulated again with a finer step (``Simulation.run``); when every attempt
    diverged the result has the status ``diverged``, and the blame rule decides what it means: the
    machine caused the divergence when one of its welds broke within ``BLAME_WINDOW_S`` before it (the
    blow-up is in the collision of its broken pieces, which Besiege too flings about) or when one of its
    connectors is longer than ``LINK_SPAN``; then it is a failure of the machine (not passed, indicator 0). Otherwise it is an infrastructure fault:
    ``scored`` is false and the scorer raises :class:`SimulationDiverged`.

    A run that hit a MuJoCo limit (``divergence.LIMITS``: its arena full, contacts or constraints
    dropped, or out of arena memory) is not retried and is always the machine's failure: the arena
    grows with the machine's blocks (``mjcf``), so a machine that needs more is an output too big, as
    one past the scorer's limits is. Any other MuJoCo error stops the run as ``mujoco``, not retried,
    under the blame rule. The verdict names the reason, when, and what MuJoCo reported. So does a model
    MuJoCo could not build at all (``simulation.ModelRefused``: out of memory compiling it, or its arena
    too big to allocate): a run stopped at 0 s, never a machine with nothing to simulate.

    Args:
        machine: A machine built with the library.
        task_id: ``transport-1`` … ``lift-3`` or a variant id (``variants``).
        seed: Chooses the tracked blocks of Lift Lv.2/3 (the physics itself is deterministic).
        control: As :func:`simulation`.
        config: Physics settings.
        duration_s: Stop early (for callers that need only the start of a run); default the task's.

    Raises:
        ValueError: For an unknown task or a machine without solid blocks.
    """
    task = get_task(task_id)
    try:
        run = simulation(machine, task_id, control=control, config=config, duration_s=duration_s).run()
    except ModelRefused as refused:
        run = refused.output
    traj = run.trajectory
    diverged = run.diverged_at_s is not None
    end = run.diverged_at_s if run.diverged_at_s is not None else math.inf
    limit = run.diverged_reason in LIMITS
    # Up to the end of the tick it diverged in: a blow-up that snaps welds ends the run in that tick.
    broke = any(end - BLAME_WINDOW_S <= b.time_s <= end + 1.0 / config.control_hz + config.timestep_s
                for b in run.broken)
    span = _longest_link(machine) if diverged and not (limit or broke) else None
    machine_caused = diverged and (limit or broke or span is not None)
    if traj.time.size < 2:
        verdict = Verdict(False, 0.0, {}, "the run ended before its first two samples")
    else:
        verdict = judge(task, machine, traj, seed)
    if diverged:
        steps = [f"{dt:g} s" for dt, _, _ in run.retries] + [f"{run.timestep_s:g} s"]
        tried = f"with steps of {', '.join(steps[:-1])} and {steps[-1]}" if run.retries else f"with a step of {steps[-1]}"
        if limit:
            blame = "the machine needs more than the arena its blocks get: its failure"
        elif broke:
            blame = f"the machine caused it: a weld broke within {BLAME_WINDOW_S:g} s before"
        elif span is not None:
            blame = (f"the machine caused it: its {span[0]} spans {span[1]:,.0f} units (a connector longer than "
                     f"{LINK_SPAN:g} levers its parts beyond what the solver holds)")
        else:
            blame = "an infrastructure fault, not scored"
        what = f" ({run.diverged_detail})" if run.diverged_detail else ""
        verdict = Verdict(
            False,
            0.0,
            verdict.metrics,
            f"{STOPPED if run.diverged_reason in NO_RETRY else 'the simulation diverged'} ({run.diverged_reason}) "
            f"at {run.diverged_at_s:.2f} s {tried}{what}; "
            f"{blame} (up to there: {verdict.reason})",
        )
    metrics = dict(verdict.metrics)
    metrics.update(
        {
            "task": task.id,
            "parts": machine.num_blocks,
            "broken_welds": len(run.broken),
            "first_break_s": run.broken[0].time_s if run.broken else None,
            "simulated_s": float(traj.time[-1]) if traj.time.size else 0.0,
            "status": DIVERGED if diverged else OK,
            "diverged_at_s": run.diverged_at_s,
            "diverged_reason": run.diverged_reason,
            "machine_caused": machine_caused if diverged else None,
            "retries": len(run.retries),
            "timestep_s": run.timestep_s,
            "physics": config.profile_name,
            "physics_sha256": config.sha256,
            "wall_s": run.wall_s,
            "steps": run.steps,
        }
    )
    if run.diverged_detail is not None:  # what MuJoCo reported (a limit, an error)
        metrics["diverged_detail"] = run.diverged_detail
    return SimResult(
        verdict.passed,
        verdict.indicator,
        metrics,
        traj,
        verdict.reason,
        [f"{b.label} at {b.time_s:.3f} s (F={b.force_n:.0f} N, T={b.torque_nm:.0f} N·m)" for b in run.broken],
        DIVERGED if diverged else OK,
        machine_caused,
    )
