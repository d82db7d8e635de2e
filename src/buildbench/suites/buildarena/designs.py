"""Scripted reference designs and negative controls, as library call lists (also the demo).

Each design is a list of ``{"op": ..., "params": {...}}`` calls, exactly
what an agent would send; ``build`` runs them on a fresh workbench.
``REFERENCE`` names the design that passes each task level in our
simulator, ``NEGATIVE`` the controls that must fail; a variant
(``variants``) gets its level's design or control fitted to it
(``reference_design``, ``control_design``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import variants
from .check import SimResult, simulate
from .levels import TASKS
from .library import Workbench
from .library.frames import to_real
from .library.geometry import face_normal, spec_of
from .model import Machine

Call = dict[str, Any]
WOOD = "Small Wooden Block"
WHEEL = "Powered Wheel"
CANNON = "Water Cannon"
TORCH = "Torch"


def _op(op: str, **params: Any) -> Call:
    return {"op": op, "params": params}


class _Ids:
    """Hands out the ids the library will give, so call lists can name blocks before they exist."""

    def __init__(self, first: int = 2) -> None:
        self.next = first

    def take(self) -> int:
        value = self.next
        self.next += 1
        return value


def _spine(calls: list[Call], ids: _Ids, per_side: int) -> tuple[list[int], list[int]]:
    """A north–south beam through the starting block: ``per_side`` blocks north and south of it."""
    north: list[int] = []
    south: list[int] = []
    for face, chain in (("E", north), ("F", south)):
        base = 1
        for _ in range(per_side):
            calls.append(_op("attach_block_to", base_block=base, face=face if base == 1 else "E", new_block=WOOD))
            base = ids.take()
            chain.append(base)
    return north, south


def _face_towards(machine: Machine, block_id: int, direction: tuple[float, float, float]) -> str:
    """The label of the block's face whose outward normal points along ``direction`` (real frame)."""
    block = machine.blocks[str(block_id)]
    for face in spec_of(block).faces:
        if np.allclose(to_real(face_normal(block, face.label)), direction, atol=1e-6):
            return face.label
    raise ValueError(f"block {block_id} has no face towards {direction}")


def _bind(calls: list[Call], block: int, action: str, *keys: str) -> None:
    for key in keys:
        calls.append(_op("change_control_key", block_id=block, action=action, new_key=key))


def _wheels(calls: list[Call], ids: _Ids, east_bases: list[tuple[int, str]], west_bases: list[tuple[int, str]]) -> None:
    """Wheels rolling north on east faces and (flipped) on west faces; differential-steering keys.

    UpArrow drives all wheels forward; LeftArrow turns left (east side
    forward, west side back); RightArrow turns right.
    """
    for base, face in east_bases:
        calls.append(_op("attach_block_to", base_block=base, face=face, new_block=WHEEL))
        wheel = ids.take()
        _bind(calls, wheel, "spinning_forward", "UpArrow", "LeftArrow")
        _bind(calls, wheel, "spinning_backward", "RightArrow")
    for base, face in west_bases:
        calls.append(_op("attach_block_to", base_block=base, face=face, new_block=WHEEL))
        wheel = ids.take()
        calls.append(_op("flip_spin", block_id=wheel))
        _bind(calls, wheel, "spinning_forward", "UpArrow", "RightArrow")
        _bind(calls, wheel, "spinning_backward", "LeftArrow")


def vehicle(wheel_face_east: str = "A", wheel_face_west: str = "B") -> list[Call]:
    """Transport Lv.1: a 5-block spine with four wheels, steered by driving the sides differently.

    The sequence turns right briefly (towards the north-east goal), then drives forward.
    """
    calls = [_op("start", note="four-wheel vehicle with differential steering")]
    ids = _Ids()
    north, south = _spine(calls, ids, 2)
    _wheels(
        calls,
        ids,
        [(north[-1], wheel_face_east), (south[-1], wheel_face_east)],
        [(north[-1], wheel_face_west), (south[-1], wheel_face_west)],
    )
    calls += [
        _op("add_control_sequence", time=0.0, key="RightArrow", hold_for=0.2),
        _op("add_control_sequence", time=0.3, key="UpArrow", hold_for=29.7),
    ]
    return calls


def _carrier_deck(raised: bool, note: str) -> tuple[list[Call], _Ids, list[int], dict[int, int], dict[int, int]]:
    """A 3 × 5 deck (spine, east and west rows; ``raised``: a top layer on all 15): calls, ids, the spine and
    the east and west block beside each spine block."""
    calls = [_op("start", note=note)]
    ids = _Ids()
    north, south = _spine(calls, ids, 2)
    spine = [*reversed(south), 1, *north]
    east, west = {}, {}
    for block in spine:
        calls.append(_op("attach_block_to", base_block=block, face="A", new_block=WOOD))
        east[block] = ids.take()
        calls.append(_op("attach_block_to", base_block=block, face="B", new_block=WOOD))
        west[block] = ids.take()
    if raised:
        built = _run(calls, Workbench())
        for block in [*spine, *east.values(), *west.values()]:
            up = _face_towards(built, block, (0.0, 0.0, 1.0))
            calls.append(_op("attach_block_to", base_block=block, face=up, new_block=WOOD))
            ids.take()
    return calls, ids, spine, east, west


def cargo_carrier(raised: bool) -> list[Call]:
    """Transport Lv.2/3: a 3 × 5 deck on four wheels; ``raised`` adds a top layer so a wide cargo clears the wheels."""
    calls, ids, spine, east, west = _carrier_deck(raised, "cargo carrier")
    ends = (spine[0], spine[-1])
    _wheels(calls, ids, [(east[b], "E") for b in ends], [(west[b], "E") for b in ends])
    calls.append(_op("add_control_sequence", time=1.0, key="UpArrow", hold_for=29.0))
    return calls


def bottom_wheel_carrier(raised: bool) -> list[Call]:
    """Negative control of Transport Lv.2/3: the reference carrier's deck with its four wheels under the corner
    blocks, where they spin flat and cannot roll (block description, App. E.2)."""
    calls, ids, spine, east, west = _carrier_deck(raised, "carrier on wheels underneath")
    built = _run(calls, Workbench())
    for block in (east[spine[0]], east[spine[-1]], west[spine[0]], west[spine[-1]]):
        down = _face_towards(built, block, (0.0, 0.0, -1.0))
        calls.append(_op("attach_block_to", base_block=block, face=down, new_block=WHEEL))
        _bind(calls, ids.take(), "spinning_forward", "UpArrow")
    calls.append(_op("add_control_sequence", time=1.0, key="UpArrow", hold_for=29.0))
    return calls


@dataclass(frozen=True)
class Deck:
    """A built deck's calls and block ids.

    Attributes:
        calls: Library calls.
        rows: Block ids of the west, middle and east rows, south to north.
    """

    calls: list[Call]
    rows: dict[str, list[int]]


def deck(per_side: int, braced: bool, brace_every: int = 3) -> Deck:
    """A 3-wide wooden deck ``2·per_side + 1`` blocks long (north–south): three welded beams.

    The middle beam runs through the starting block; each side beam starts
    beside it and is chained north and south on its own faces, so all three
    carry bending. ``braced`` adds diagonal Braces between the faces labelled
    C (top on the northern half, bottom on the southern half) of each side
    beam and the middle beam, every ``brace_every`` blocks, tying the beams
    together in shear.
    """
    calls = [_op("start", note="braced deck bridge" if braced else "deck bridge")]
    ids = _Ids()
    north, south = _spine(calls, ids, per_side)
    rows = {"mid": [*reversed(south), 1, *north]}
    for side, face in (("east", "A"), ("west", "B")):
        calls.append(_op("attach_block_to", base_block=1, face=face, new_block=WOOD))
        centre = ids.take()
        # A block on a side face of the start has B facing north and A facing south (spec 2.9);
        # blocks chained on those keep pointing E outward along the chain.
        chains = []
        for first_face in ("B", "A"):
            chain, base, label = [], centre, first_face
            for _ in range(per_side):
                calls.append(_op("attach_block_to", base_block=base, face=label, new_block=WOOD))
                base, label = ids.take(), "E"
                chain.append(base)
            chains.append(chain)
        rows[side] = [*reversed(chains[1]), centre, *chains[0]]
    if braced:
        for side in ("east", "west"):
            for i in range(0, len(rows["mid"]) - 1, brace_every):
                calls.append(
                    _op("connect_blocks", block_a=rows[side][i], face_a="C", block_b=rows["mid"][i + 1], face_b="C", connector="Brace")
                )
                ids.take()
    return Deck(calls, {k: rows[k] for k in ("west", "mid", "east")})


def beam_bridge(per_side: int, braced: bool = True) -> list[Call]:
    """Support Lv.1/2: one braced deck spanning the gap with ``per_side`` blocks each side of the centre."""
    return deck(per_side, braced).calls


def straight_beam(per_side: int) -> list[Call]:
    """A north–south beam of ``2·per_side + 1`` wooden blocks through the starting block."""
    calls = [_op("start", note="straight beam")]
    _spine(calls, _Ids(), per_side)
    return calls


def three_part_bridge(per_side: int, brace_every: int = 3) -> Design:
    """Support Lv.3: three parallel beams (sub-structures A middle, B east, C west) tied by Braces.

    Each beam carries its own bending; diagonal Braces between top faces
    (block ``k`` of the middle beam to block ``k+1`` of a side beam, every
    ``brace_every`` blocks) keep the beams side by side.
    """
    beam = straight_beam(per_side)
    calls = [
        _op("add_machine", machine_id="beam", init_shift=[0, 0, 0]),
        _op("add_machine", machine_id="beam", init_shift=[1, 0, 0]),
        _op("add_machine", machine_id="beam", init_shift=[-1, 0, 0]),
    ]
    # Beam ids: 1 is the centre, 2..per_side+1 run north, the rest run south.
    order = [*range(2 * per_side + 1, per_side + 1, -1), 1, *range(2, per_side + 2)]
    for side in ("B", "C"):
        for k in range(0, len(order) - 1, brace_every):
            calls.append(
                _op("connect_blocks", block_a=f"A_{order[k]}", face_a="C", block_b=f"{side}_{order[k + 1]}", face_b="C", connector="Brace")
            )
    return Design("three-beam bridge", calls, {"beam": beam})


def heated_engine() -> list[Call]:
    """Lift Lv.1: a cannon spraying down from the east face, heated by a torch on the top face (TWR 5.0)."""
    return [
        _op("start", note="heated single-cannon engine"),
        _op("attach_block_to", base_block=1, face="A", new_block=CANNON),
        _op("attach_block_to", base_block=1, face="C", new_block=TORCH),
        _op("twist_block", block_id=3, angle=270),
        _op("change_control_key", block_id=2, action="hold_to_fire", new_key="Alpha1"),
    ]


def unheated_engine() -> list[Call]:
    """Negative control: a cannon on a starting block, no torch (TWR 1.6 / 1.75 ≈ 0.91)."""
    return [
        _op("start", note="unheated cannon"),
        _op("attach_block_to", base_block=1, face="A", new_block=CANNON),
        _op("change_control_key", block_id=2, action="hold_to_fire", new_key="Alpha1"),
    ]


def twin_rocket() -> list[Call]:
    """Lift Lv.2: two heated cannons east and west spraying down, torches placed point-symmetrically."""
    return [
        _op("start", note="symmetric two-cannon rocket"),
        _op("attach_block_to", base_block=1, face="A", new_block=CANNON),
        _op("attach_block_to", base_block=1, face="B", new_block=CANNON),
        _op("attach_block_to", base_block=1, face="E", new_block=TORCH),
        _op("twist_block", block_id=4, angle=270),
        _op("attach_block_to", base_block=1, face="F", new_block=TORCH),
        _op("twist_block", block_id=5, angle=90),
        _op("change_control_key", block_id=2, action="hold_to_fire", new_key="Alpha1"),
        _op("change_control_key", block_id=3, action="hold_to_fire", new_key="Alpha1"),
    ]


def cold_rocket() -> list[Call]:
    """Negative control of Lift Lv.2: the reference rocket without its torches. Two unheated cannons push
    3.2 mass units against the rocket's 3.25 (TWR 0.985): just short of hovering."""
    return [
        _op("start", note="two unheated cannons"),
        _op("attach_block_to", base_block=1, face="A", new_block=CANNON),
        _op("attach_block_to", base_block=1, face="B", new_block=CANNON),
        _op("change_control_key", block_id=2, action="hold_to_fire", new_key="Alpha1"),
        _op("change_control_key", block_id=3, action="hold_to_fire", new_key="Alpha1"),
    ]


def chassis() -> list[Call]:
    """Lift Lv.3 chassis: a starting block with one wooden block east and one west."""
    return [
        _op("start", note="rocket chassis"),
        _op("attach_block_to", base_block=1, face="A", new_block=WOOD),
        _op("attach_block_to", base_block=1, face="B", new_block=WOOD),
    ]


def braced_rocket() -> Design:
    """Lift Lv.3: the chassis (A) with two balanced engines (B east, C west) braced to its top faces.

    The engine is the two-cannon heated unit of Lift Lv.2, whose thrust
    passes through its own centre of mass, so a Brace (a compliant link in
    our physics) need not hold it straight. Braces run from each chassis
    block's top face to the engine's top face 3.5 units away.
    """
    return Design(
        "braced twin-engine rocket",
        [
            _op("add_machine", machine_id="chassis"),
            _op("add_machine", machine_id="engine", init_shift=[4.5, 0, 0]),
            _op("add_machine", machine_id="engine", init_shift=[-4.5, 0, 0]),
            _op("connect_blocks", block_a="A_2", face_a="C", block_b="B_1", face_b="C", connector="Brace"),
            _op("connect_blocks", block_a="A_3", face_a="C", block_b="C_1", face_b="C", connector="Brace"),
        ],
        {"chassis": chassis(), "engine": twin_rocket()},
    )


def cold_braced_rocket() -> Design:
    """Negative control of Lift Lv.3: the reference assembly with engines that have no torches (TWR 6.4 / 8.35):
    unheated cannons never reach steam thrust."""
    reference = braced_rocket()
    return Design("braced rocket with cold engines", reference.calls, {"chassis": chassis(), "engine": cold_rocket()})


@dataclass(frozen=True)
class Design:
    """A named design.

    Attributes:
        name: Short name.
        calls: Library calls that build it.
        saved: Designs it assembles, by machine id (for ``add_machine``).
    """

    name: str
    calls: list[Call]
    saved: dict[str, list[Call]] | None = None


def build(design: Design) -> Machine:
    """Run a design's calls on a fresh workbench (an assembly when it has saved parts).

    Raises:
        RuntimeError: When a call fails (the message quotes the library's answer).
    """
    saved = {k: _run(v, Workbench()) for k, v in (design.saved or {}).items()}
    bench = Workbench(machine=Machine(is_assembly=bool(saved)), saved=saved)
    return _run(design.calls, bench)


def _run(calls: list[Call], bench: Workbench) -> Machine:
    for i, call in enumerate(calls):
        outcome = bench.call(call["op"], call["params"])
        if not outcome.ok:
            raise RuntimeError(f"design call {i} {call['op']} failed: {outcome.text}")
    return bench.machine


class _References(Mapping[str, Callable[[], Design]]):
    """The nine levels' reference designs; a variant id (``variants``) also finds one, its level's design
    fitted to the variant. Iterating lists the nine."""

    def __init__(self, levels: dict[str, Callable[[], Design]]) -> None:
        self.levels = levels

    def __getitem__(self, task_id: str) -> Callable[[], Design]:
        if task_id in self.levels:
            return self.levels[task_id]
        reference_design(task_id)  # KeyError when the id names no variant
        return functools.partial(reference_design, task_id)

    def __iter__(self) -> Iterator[str]:
        return iter(self.levels)

    def __len__(self) -> int:
        return len(self.levels)


REFERENCE: Mapping[str, Callable[[], Design]] = _References({
    "transport-1": lambda: Design("vehicle", vehicle()),
    "transport-2": lambda: Design("cargo carrier", cargo_carrier(raised=False)),
    "transport-3": lambda: Design("raised cargo carrier", cargo_carrier(raised=True)),
    "support-1": lambda: Design("braced beam, gap 5", beam_bridge(5)),
    "support-2": lambda: three_part_bridge(8),
    "support-3": lambda: three_part_bridge(13),
    "lift-1": lambda: Design("heated engine", heated_engine()),
    "lift-2": lambda: Design("twin rocket", twin_rocket()),
    "lift-3": braced_rocket,
})


def bottom_wheel_vehicle() -> list[Call]:
    """Negative control: four wheels on bottom faces spin flat and cannot roll (block description)."""
    calls = [_op("start", note="wheels underneath")]
    ids = _Ids()
    north, south = _spine(calls, ids, 4)
    spine_built = _run(calls, Workbench())
    for block in (north[1], north[3], south[1], south[3]):
        down = _face_towards(spine_built, block, (0.0, 0.0, -1.0))
        calls.append(_op("attach_block_to", base_block=block, face=down, new_block=WHEEL))
        _bind(calls, ids.take(), "spinning_forward", "UpArrow")
    calls.append(_op("add_control_sequence", time=0.0, key="UpArrow", hold_for=30.0))
    return calls


NEGATIVE: dict[str, tuple[str, Callable[[], Design]]] = {
    "wheels on bottom faces": ("transport-1", lambda: Design("bottom wheels", bottom_wheel_vehicle())),
    "carrier on bottom wheels": ("transport-2", lambda: Design("carrier on bottom wheels",
                                                               bottom_wheel_carrier(raised=False))),
    "raised carrier on bottom wheels": ("transport-3", lambda: Design("raised carrier on bottom wheels",
                                                                      bottom_wheel_carrier(raised=True))),
    "bridge shorter than the gap": ("support-1", lambda: Design("short deck", beam_bridge(2))),
    "three beams shorter than the gap": ("support-2", lambda: _short_three_beams("support-2")),
    "three beams shorter than the wide gap": ("support-3", lambda: _short_three_beams("support-3")),
    "unheated cannon": ("lift-1", lambda: Design("unheated cannon", unheated_engine())),
    "rocket with cold cannons": ("lift-2", lambda: Design("cold rocket", cold_rocket())),
    "braced rocket with cold engines": ("lift-3", cold_braced_rocket),
}
"""Negative controls, one per level: name → (task they must fail, design). Each is close to the level's
reference and fails for the physical reason its name gives (the suite README lists them)."""


def _short_three_beams(level: str) -> Design:
    gap = TASKS[level].gap
    assert gap is not None  # every Support level has a gap
    return three_part_bridge(short_deck_span(gap))


def support_span(gap: float) -> int:
    """Blocks each side of a reference bridge's centre for ``gap``: the released designs' 5, 8 and 13 blocks
    for gaps 5, 10 and 20 (three blocks beyond the half gap, so each end rests about three units on a bank)."""
    return math.floor(gap / 2) + 3


def reference_design(task_id: str) -> Design:
    """The reference design for a variant: the level's own, with Support bridges lengthened to the gap.

    Raises:
        KeyError: When ``task_id`` names no variant (so that ``REFERENCE`` reads as a mapping).
    """
    try:
        variant = variants.parse(task_id)
    except ValueError:
        raise KeyError(task_id) from None
    spec = variants.spec_of(variant)
    if spec.category != "support" or spec.gap is None:
        return REFERENCE[variant.base]()
    per_side = support_span(spec.gap)
    if spec.level == 1:
        return Design(f"braced beam, gap {spec.gap:g}", beam_bridge(per_side))
    return three_part_bridge(per_side)


def short_deck_span(gap: float) -> int:
    """Blocks each side of the centre of the Support negative control's deck for ``gap``: the released
    control's 2 at gap 5: the most for which its ``2·n + 1`` blocks are no longer than the gap."""
    return math.floor((gap - 1) / 2)


def control_design(task_id: str, name: str) -> Design:
    """Negative control ``name`` of ``NEGATIVE`` for ``task_id``, one of its level's variants: the
    level's own control, with the Support short deck kept no longer than the variant's gap.

    Raises:
        ValueError: An unknown control, or one that targets another level.
    """
    if name not in NEGATIVE:
        raise ValueError(f"unknown negative control {name!r}; controls: {', '.join(NEGATIVE)}")
    level, make = NEGATIVE[name]
    if variants.level_of(task_id) != level:
        raise ValueError(f"negative control {name!r} targets task {level!r} and its variants, not {task_id!r}")
    spec = TASKS.get(task_id) or variants.variant_spec(task_id)
    if spec.category == "support" and spec.gap is not None and spec.id != level:
        span = short_deck_span(spec.gap)
        if spec.level == 1:
            return Design(f"short deck, gap {spec.gap:g}", beam_bridge(span))
        beams = three_part_bridge(span)
        return Design(f"three short beams, gap {spec.gap:g}", beams.calls, beams.saved)
    return make()


def run_reference(task_id: str, seed: int = 0) -> SimResult:
    """Build the reference design of ``task_id`` and simulate it (the demo; picklable for process pools)."""
    return simulate(build(REFERENCE[task_id]()), task_id, seed=seed)
