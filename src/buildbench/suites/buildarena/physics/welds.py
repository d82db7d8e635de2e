"""The weld-break test of a tick: weld loads from MuJoCo's inverse dynamics, the welds' response
lag, and a bound that puts the exact analysis off while no weld can break.

After each tick the weld loads come from MuJoCo's inverse dynamics and the groups' frame
analysis (``stress``), pass through the welds' response lag, and every weld over its
threshold breaks (``_WeldResponse.snapped``).

Speed: a tick copies what the analysis reads from MuJoCo (``_Inputs``) and tests a bound
on those copies (a few array operations); the analysis itself runs on the copies later, in
order, only when the bound fails or the welds change (see ``_WeldResponse``), and gives bit
for bit what running it tick by tick gives. The C tick loop runs the same analysis and schedule
(``_welds.c``); every sum is taken in one fixed order (``stress``), so its loads are these, bit
for bit, on any machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TypeAlias

import mujoco
import numpy as np

from .build import Compiled
from .config import PhysicsConfig
from .groups import WeldAnalysis

_Inputs: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray, tuple[tuple[int, np.ndarray], ...]]
"""What the frame analysis of one tick reads from MuJoCo, copied: per node its ``cfrc_int`` row
(world axes), per group its root's ``xmat``, per cannon its thrust (``actuator_force``), and the
rope loads ``(node, (force, torque about its centre) in its group's frame)``."""

_NO_NODES = np.zeros(0, dtype=int)
_ONE_SPAN = ((-1, slice(0, 1)),)


def _rope_loads(compiled: Compiled, data: mujoco.MjData) -> dict[int, np.ndarray]:
    """Rope tension on the rope ends' bodies: body id → (force, torque about its centre), world frame.

    Every sum in numpy's order (never a BLAS dot): the C tick loop repeats it (``_welds.c``).
    """
    loads: dict[int, np.ndarray] = {}
    rows = np.flatnonzero(data.efc_type[: data.nefc] == mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON)
    for rope in compiled.ropes:
        tension = float(data.efc_force[rows[data.efc_id[rows] == rope.tendon]].sum())
        if tension == 0.0:
            continue
        ends = data.site_xpos[list(rope.sites)]
        span = ends[1] - ends[0]
        pull = tension * span / max(float(np.sqrt((span * span).sum())), 1e-9)
        for body, point, force in ((rope.bodies[0], ends[0], pull), (rope.bodies[1], ends[1], -pull)):
            wrench = np.concatenate([force, np.cross(point - data.xipos[body], force)])
            loads[body] = loads.get(body, 0.0) + wrench
    return loads


def _roots(analysis: WeldAnalysis) -> np.ndarray:
    return np.array([root for root, _ in analysis.spans], dtype=int)


def _inputs(compiled: Compiled, analysis: WeldAnalysis, roots: np.ndarray, data: mujoco.MjData) -> _Inputs:
    """The tick's :data:`_Inputs` (``roots``: :func:`_roots` of ``analysis``).

    MuJoCo's inverse dynamics (``mj_rnePostConstraint``) gives, per body, the wrench its
    parent delivers to it and its children (``cfrc_int``): a group's blocks are childless
    children of its root, so that is what the group delivers to each of them (the root's own
    is never needed: no weld lies beyond it). Thrust and rope tension act through an actuator
    and a tendon, which the inverse dynamics does not count as external forces, so they are
    taken beside.
    """
    mujoco.mj_rnePostConstraint(compiled.model, data)
    ropes: tuple[tuple[int, np.ndarray], ...] = ()
    if compiled.ropes:
        rows = []
        for body, wrench in _rope_loads(compiled, data).items():
            node = analysis.node(body)
            if node >= 0:
                rotation = data.xmat[analysis.frame(node)].reshape(3, 3)
                rows.append((node, turned(wrench, rotation[None], _ONE_SPAN, np.empty((2, 3))).reshape(6)))
        ropes = tuple(rows)
    return data.cfrc_int[analysis.bodies], data.xmat[roots], data.actuator_force[analysis.cannon_acts], ropes


class _Work:
    """Buffers of the exact analysis of one ``WeldAnalysis``, kept while it holds (``_WeldResponse._follow``):
    a tick's analysis writes its products into them rather than into new arrays."""

    def __init__(self, analysis: WeldAnalysis) -> None:
        self.blocks = np.empty((2 * analysis.bodies.size, 3))
        self.out = np.empty((analysis.network.welds.size, 6))
        squares = self.out.reshape(-1, 2, 3)
        self.x, self.y, self.z = squares[:, :, 0], squares[:, :, 1], squares[:, :, 2]
        self.total = np.empty((analysis.network.welds.size, 2))


def turned(world: np.ndarray, turns: np.ndarray, spans: WeldAnalysis | tuple[tuple[int, slice], ...],
           out: np.ndarray) -> np.ndarray:
    """The nodes' wrenches in their groups' frames (``spans``: an analysis's, or its ``spans``), as 3-vector rows
    (2 per node) into ``out``: row vectors times the root's rotation, ``(v₀·R₀ + v₁·R₁) + v₂·R₂`` (R's rows;
    the C tick loop's order)."""
    vectors = world.reshape(-1, 3)
    groups = spans.spans if isinstance(spans, WeldAnalysis) else spans
    for (_, nodes), turn in zip(groups, turns, strict=True):
        rows = slice(2 * nodes.start, 2 * nodes.stop)
        v, into, rotation = vectors[rows], out[rows], turn.reshape(3, 3)
        np.multiply(v[:, 0:1], rotation[0], out=into)
        into += v[:, 1:2] * rotation[1]
        into += v[:, 2:3] * rotation[2]
    return out


def _own(analysis: WeldAnalysis, inputs: _Inputs, work: _Work | None = None) -> np.ndarray:
    """Per node of ``analysis``, the wrench its welds deliver to it (``WeldNetwork.own``): a new array, or
    ``work``'s until its next analysis.

    The groups' frame analysis (``stress``) takes them in each group's frame (:func:`turned`). A
    cannon without thrust adds nothing (a zero load would change at most the sign of a zero,
    which no magnitude sees).
    """
    world, turns, thrust, ropes = inputs
    blocks = turned(world, turns, analysis, np.empty((2 * analysis.bodies.size, 3)) if work is None else work.blocks)
    pushed, loads = _NO_NODES, None
    if thrust.size and thrust.any():  # (true for NaN)
        pushed = analysis.cannon_nodes
        loads = np.zeros((pushed.size, 6))
        loads[:, :3] = thrust[:, None] * analysis.cannon_axes
    if ropes:
        extra = {int(k): row for k, row in zip(pushed, loads if loads is not None else [], strict=True)}
        for node, rope in ropes:
            extra[node] = extra.get(node, 0.0) + rope
        pushed, loads = np.array(list(extra), dtype=int), np.array(list(extra.values())).reshape(-1, 6)
    return analysis.network.own(blocks, pushed, loads)


def _magnitudes(analysis: WeldAnalysis, own: np.ndarray, work: _Work | None = None) -> np.ndarray:
    """Force (N) and torque (N·m) magnitudes per row of ``analysis`` from the nodes' wrenches (:func:`_own`),
    shape (n_welds, 2): a new array, or ``work``'s until its next analysis."""
    work = _Work(analysis) if work is None else work
    squares = analysis.network.weld_wrenches(own, work.out)
    np.multiply(squares, squares, out=squares)
    # The sums as ``np.einsum("wki,wki->wk")`` adds the products (the first and the third, then the second;
    # the loads of the recorded runs), in plain ufuncs, which cost less than einsum's parsing.
    total = np.add(work.x, work.z, out=work.total)
    total += work.y
    return np.sqrt(total, out=total)


def weld_loads(compiled: Compiled, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of intact welds with their force (N) and torque about their anchor (N·m)."""
    analysis = compiled.analysis
    if analysis is None:
        return np.zeros(0, dtype=int), np.zeros(0), np.zeros(0)
    loads = _magnitudes(analysis, _own(analysis, _inputs(compiled, analysis, _roots(analysis), data)))
    return analysis.welds, loads[:, 0], loads[:, 1]


_BOUND_MARGIN = 1.0 - 1e-6
"""How far below its limit the bound must keep every weld to skip the exact analysis: far above the
rounding of the analysis and of the lag (relative errors of a few 1e-16 per operation)."""

_BACKOFF_MAX = 64
"""Ticks at most between a failed bound and the next try (the bound costs a little every tick it is tried)."""

_PENDING_FLOATS = 1 << 21
"""At most about this many numbers (16 MB) of put-off ticks' inputs wait for the exact analysis; then it
catches up (as it would later). Each catch-up costs what its ticks cost, while ticks still waiting when the
run ends are never analysed: a 509-block braced deck resting on the ground puts off 814 ticks at most (at 2 MB,
101: it analysed half of 200 ticks). The buffer is one per run (``store``), so its pages cost once."""

_INPUTS_OVERHEAD = 64
"""What the arrays and the tuple of one tick's inputs take beside their numbers, in numbers (8 bytes)."""

_REFER_BELOW = 0.5
"""A tick that fails the bound becomes the reference only while the lagged history of loads (the bound's part
that a new reference leaves) is at most this share of the limits, and at most every other tick skipped:
otherwise the loads are high or restless, and the exact analysis of every tick costs less."""

_ONES = np.ones(3)


@dataclass
class _WeldResponse:
    """Weld loads as the break test reads them: the quasi-static load, smoothed over the welds' response time.

    The frame analysis gives the load that rigid blocks would transmit at
    this instant; a real (or Besiege's springy) weld network needs about a
    natural period to build that load up, so an impact lasting one step
    (a bridge dropped onto its supports, a cargo landing) does not reach
    the welds in full. Each weld's force and torque follow a first-order
    lag with time constant ``config.weld_response_s``; a steady load is
    read in full.

    ``state`` and ``limits`` follow the rows of ``analysis`` (force, torque
    per weld); ``held`` keeps every weld's state across a change of analysis.

    Speed: the exact analysis of a tick is put off while a bound proves that
    no weld can break in it. The analysis is linear, so a weld's load in a
    tick is at most its load ``W`` at a reference tick plus ``a·F + b·T``
    (``WeldNetwork.bounds``; ``F``, ``T`` sum the norms of the nodes' force
    and torque changes since the reference); as a share of its limit, at
    most ``w + c`` with ``w`` the reference's largest ``W``/limit and ``c``
    the change's share (``_change``: each term's largest ratio to its limit).
    The lag is linear and monotone, so since the last exact state ``s0`` a
    weld's state over its limit is at most ``decay·max(s0/limit) + lag(w) +
    lag(c)`` (``lag`` starting from 0, ``decay`` the lag's factor to the
    power of the ticks since; ``w`` and ``c`` taken each tick against the
    reference of that tick). While that stays below ``_BOUND_MARGIN`` the
    ticks' inputs wait in ``pending``; the exact analysis then runs on them in
    order, as it would have tick by tick, when the bound no longer holds,
    before the analysis changes and when too many wait. After a failed bound
    the analysis runs tick by tick for a while (``backoff`` ticks, doubled
    each time the bound fails soon again). ``state`` is then exactly what the
    tick-by-tick analysis gives, and every weld breaks in the same tick.

    The reference is a tick analysed exactly on its own (its weld loads,
    not the lagged state; before any, zero loads): the last of a tick-by-tick
    stretch, or a tick that fails the bound against the reference, which is
    then tested again against itself (its ``c`` is zero; ``_REFER_BELOW``),
    so that a drift of the loads or one jolt does not call for the exact
    analysis of every tick. Loads change little from tick to tick
    while nothing breaks, so their changes bound them far more closely than
    their norms, which add up where the loads cancel.

    The changes are taken on the inputs as copied: a node's wrench change in
    its group's frame (one product per group, as in the analysis); a
    cannon's thrust change ``Δt``, which adds ``|Δt|`` to its force and
    ``|Δt|·|r|`` to its torque (``r`` its lever to the origin); rope loads,
    at their full size at either tick. ``_change`` takes them all as one
    weighted sum of 3-vector norms (the rows of ``changes``, ``weights``).
    """

    gain: float
    held: np.ndarray
    analysis: WeldAnalysis | None = None
    state: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    limits: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    # The put-off ticks' inputs, in order: the first ``pending`` rows of the three arrays (preallocated, ``room``
    # rows, so that the C tick loop of ``native`` can write them too) and their rope loads by row where any.
    pending: int = 0
    pending_world: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 6)))
    pending_turns: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 9)))
    pending_thrust: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    # Per row, each rope-end node's load (node -1: none), ``2·ropes`` slots: as the C loop writes them.
    pending_rope_nodes: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    pending_rope_loads: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 6)))
    store: np.ndarray = field(default_factory=lambda: np.zeros(0))
    roots: np.ndarray = field(default_factory=lambda: _NO_NODES)
    work: _Work | None = None
    reach: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # The reference tick: its nodes' wrenches in their groups' frames (3-vector rows), its thrusts, its largest
    # ``W``/limit and its ropes' share.
    reference: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    reference_thrust: np.ndarray = field(default_factory=lambda: np.zeros(0))
    reference_worst: float = 0.0
    reference_ropes: float = 0.0
    # Rows of the change: the nodes' torques and forces, the cannons' thrusts (first column); and each row's
    # share of the limits per unit of its norm.
    changes: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # The bound since the last exact state: worst ``s0``/limit, the largest ratios per unit of F and T, the
    # decay of ``s0``, and the lagged reference share and change share.
    worst: float = float("inf")
    per_force: float = float("inf")
    per_torque: float = float("inf")
    decay: float = 1.0
    level: float = 0.0
    lag: float = 0.0
    room: int = 0
    skipped: int = 0
    refers: int = 0
    wait: int = 0
    backoff: int = 1

    @classmethod
    def of(cls, n_welds: int, tick_s: float, config: PhysicsConfig) -> _WeldResponse:
        gain = 1.0 - float(np.exp(-tick_s / config.weld_response_s)) if config.weld_response_s > 0 else 1.0
        return cls(gain, np.zeros((n_welds, 2)))

    def _follow(self, compiled: Compiled) -> None:
        """Re-index the state after the welds were regrouped (a break)."""
        if self.analysis is not None:
            self._catch_up()
            self.held[self.analysis.welds] = self.state
        self.analysis = analysis = compiled.analysis
        if analysis is None:
            return
        ids = analysis.welds
        self.state = self.held[ids]
        self.limits = np.column_stack([compiled.weld_break_force[ids], compiled.weld_break_torque[ids]])
        with np.errstate(divide="ignore", invalid="ignore"):  # a zero limit gives inf or NaN: no skipping
            per = analysis.network.bounds / self.limits[:, :, None]
            self.per_force, self.per_torque = float(np.max(per[:, :, 0])), float(np.max(per[:, :, 1]))
            self.roots = _roots(analysis)
            self.work = _Work(analysis)
            ends = 2 * len(compiled.ropes)
            size = analysis.bodies.size * 6 + self.roots.size * 9 + analysis.cannon_nodes.size + 7 * ends + _INPUTS_OVERHEAD
            self.room = _PENDING_FLOATS // size
            # Views of one buffer kept across breaks, so that its pages are faulted in once per run (not after every
            # break); uninitialised: only the rows written are ever touched.
            if self.store.size < _PENDING_FLOATS:
                self.store = np.empty(_PENDING_FLOATS)
            shapes = ((analysis.bodies.size, 6), (self.roots.size, 9), (analysis.cannon_nodes.size,), (ends,),
                      (ends, 6))
            views, start = [], 0
            for shape in shapes:
                stop = start + self.room * math.prod(shape)  # (numpy's prod costs µs per call: one per break)
                views.append(self.store[start:stop].reshape(self.room, *shape))
                start = stop
            self.pending_world, self.pending_turns, self.pending_thrust, nodes_view, self.pending_rope_loads = views
            self.pending_rope_nodes = nodes_view.view(np.int64)
            self.reference = np.zeros((2 * analysis.bodies.size, 3))
            self.reference_thrust = np.zeros(analysis.cannon_nodes.size)
            # A node's lever to its group's origin bounds the torque of a force on it.
            self.reach = analysis.network.reach()
            nodes, cannons = analysis.bodies.size, analysis.cannon_nodes.size
            self.changes = np.zeros((2 * nodes + cannons, 3))
            self.weights = np.concatenate([np.array([self.per_torque, self.per_force] * nodes),
                                           self.per_force + self.per_torque * self.reach[analysis.cannon_nodes]])
        self.wait, self.skipped, self.refers = 0, 0, 0
        self._restart(None, None)

    def _restart(self, inputs: _Inputs | None, magnitudes: np.ndarray | None) -> None:
        """Start the bound from the exact state, with the reference tick's inputs and weld loads (None: zero)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            self.worst = float(np.max(self.state / self.limits, initial=0.0))
        self.decay, self.level, self.lag = 1.0, 0.0, 0.0
        self._refer(inputs, magnitudes)

    def _refer(self, inputs: _Inputs | None, magnitudes: np.ndarray | None) -> None:
        """Make a tick the reference (None: zero loads)."""
        analysis = self.analysis
        assert analysis is not None
        # In place: the C tick loop holds the arrays.
        if inputs is None or magnitudes is None:
            self.reference[...] = 0.0
            self.reference_thrust[...] = 0.0
            self.reference_worst, self.reference_ropes = 0.0, 0.0
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                self.reference_worst = float(np.max(magnitudes / self.limits, initial=0.0))
            self.reference[...] = self._turned(inputs)
            self.reference_thrust[...] = inputs[2]
            self.reference_ropes = self._rope_share(inputs[3])

    def _turned(self, inputs: _Inputs) -> np.ndarray:
        """The nodes' wrenches of ``inputs`` in their groups' frames, as 3-vector rows (the first of ``changes``)."""
        analysis = self.analysis
        assert analysis is not None
        return turned(inputs[0], inputs[1], analysis, self.changes[: 2 * analysis.bodies.size])

    def _rope_share(self, ropes: tuple[tuple[int, np.ndarray], ...]) -> float:
        share = 0.0
        for node, load in ropes:
            pull, twist = float(np.linalg.norm(load[:3])), float(np.linalg.norm(load[3:]))
            share += self.per_force * pull + self.per_torque * (float(self.reach[node]) * pull + twist)
        return share

    def _change(self, inputs: _Inputs) -> float:
        """The largest share of its limit by which a weld's load can differ from the reference's (NaN for NaN)."""
        thrust, ropes, rows = inputs[2], inputs[3], self.changes
        turned = self._turned(inputs)
        np.subtract(turned, self.reference, out=turned)
        if thrust.size:
            np.subtract(thrust, self.reference_thrust, out=rows[turned.shape[0]:, 0])
        np.multiply(rows, rows, out=rows)
        norms = rows @ _ONES
        share = float(np.sqrt(norms, out=norms) @ self.weights) + self.reference_ropes
        return share + self._rope_share(ropes) if ropes else share

    def _lagged(self, change: float) -> tuple[float, float]:
        """The lagged reference share and change share after this tick, with the tick's ``change``."""
        return (self.level + self.gain * (self.reference_worst - self.level),
                self.lag + self.gain * (change - self.lag))

    def _catch_up(self) -> None:
        """Run the exact analysis on the ticks put off, in order."""
        assert self.analysis is not None
        for k in range(self.pending):
            ropes = tuple((int(node), self.pending_rope_loads[k, j])
                          for j, node in enumerate(self.pending_rope_nodes[k].tolist()) if node >= 0)
            inputs = (self.pending_world[k], self.pending_turns[k], self.pending_thrust[k], ropes)
            self._follow_load(self._exact(inputs))
        self.pending = 0

    def _exact(self, inputs: _Inputs) -> np.ndarray:
        """The tick's weld loads (``_magnitudes``), in ``work`` until the next exact analysis."""
        assert self.analysis is not None
        return _magnitudes(self.analysis, _own(self.analysis, inputs, self.work), self.work)

    def _follow_load(self, magnitudes: np.ndarray) -> None:
        """The lag's step towards a tick's weld loads; ``magnitudes`` is used up."""
        # ``state += gain·(loads − state)``, in place: the same operations, in the same order.
        np.subtract(magnitudes, self.state, out=magnitudes)
        np.multiply(magnitudes, self.gain, out=magnitudes)
        self.state += magnitudes

    def _put_off(self, inputs: _Inputs) -> None:
        k = self.pending
        self.pending_world[k], self.pending_turns[k], self.pending_thrust[k] = inputs[:3]
        self.pending_rope_nodes[k] = -1
        for j, (node, load) in enumerate(inputs[3]):
            self.pending_rope_nodes[k, j], self.pending_rope_loads[k, j] = node, load
        self.pending = k + 1

    def prepare(self, compiled: Compiled) -> None:
        """Follow ``compiled``'s analysis (after a break) before a tick reads the state."""
        if compiled.analysis is not self.analysis:
            self._follow(compiled)

    def snapped(self, compiled: Compiled, data: mujoco.MjData, analysed: bool = False) -> list[tuple[int, float, float]]:
        """``(weld index, force N, torque N·m)`` of every intact weld over its threshold (NaN counts as over).

        ``analysed``: the C tick loop (``native``, ``_welds.c``) ran this tick's analysis already.
        """
        self.prepare(compiled)
        analysis = self.analysis
        if analysis is None:
            return []
        if not analysed:
            self._analyse(_inputs(compiled, analysis, self.roots, data))
        held = self.state <= self.limits
        if held.all():
            return []
        over = np.flatnonzero(~held.all(axis=1))
        return [(int(analysis.welds[k]), float(self.state[k, 0]), float(self.state[k, 1])) for k in over]

    def _analyse(self, inputs: _Inputs) -> None:
        """The tick's weld loads into the lagged state, now or put off while the bound holds."""
        gain, restart, magnitudes = self.gain, False, None
        if self.wait:  # the bound failed lately: no bound, the exact analysis as it comes
            self.wait -= 1
            restart = not self.wait
        else:
            decay = self.decay * (1.0 - gain)
            level, lag = self._lagged(self._change(inputs))
            history = decay * self.worst + level
            if not history + lag <= _BOUND_MARGIN and history <= _REFER_BELOW and 2 * self.refers <= self.skipped:
                # Measured from this very tick, only the loads' history can still fail the bound.
                magnitudes = self._exact(inputs).copy()  # kept past the catch-up below
                self._refer(inputs, magnitudes)
                self.refers += 1
                level, lag = self._lagged(self._change(inputs))
            if decay * self.worst + level + lag <= _BOUND_MARGIN and self.pending < self.room:
                self._put_off(inputs)
                self.decay, self.level, self.lag = decay, level, lag
                self.skipped += 1
                return
            self._catch_up()
            # Back off: a bound that failed after few skipped ticks is not tried for twice as long as before.
            self.backoff = 1 if self.skipped >= _BACKOFF_MAX else min(2 * self.backoff, _BACKOFF_MAX)
            self.wait, self.skipped, self.refers = self.backoff, 0, 0
        if magnitudes is None:
            magnitudes = self._exact(inputs)
        if restart:  # the reference's loads, before the lag uses them up
            self._follow_load(magnitudes.copy())
            self._restart(inputs, magnitudes)
        else:
            self._follow_load(magnitudes)
