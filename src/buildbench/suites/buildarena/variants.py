"""Seeded task variants beyond the nine levels, judged by the same released pass rules.

A variant is one of the varied levels with its own parameters, all of which
its id spells out (``support-3_gap18.5_load2250_bank12_rise0.5``), so
``get_task`` rebuilds it from the id alone and a run's record names the
exact task. Every parameter lives on a grid (``Range``) bounded so that a
variant stays buildable with the six blocks:

* **Transport**: the goal point (g, g), north-east of the start, and with it
  the pass distance g (the released rule: beyond 10 units from the origin,
  the goal (10, 10)); the trajectory metrics follow the line to the goal.
  Lv.1 also varies the ground around the start: square rings of kerbs or
  square terraces climbing away from the start (the terrain model has
  axis-aligned boxes only, so a slope is a staircase); Lv.2/3, the cargo's
  mass on flat ground. Cargo carriers meeting any step in our physics (even
  1 cm: the wheels hit it at their fixed ~10 units/s) break their welds or
  blow up the solver, so uneven ground is kept to Lv.1, where the reference
  vehicle crosses every kerb and terrace.
* **Support** (Lv.1–3): gap width (a band around the released gap of each
  level, so the level's sub-structure limit stays sensible), the cargo's
  mass at the end of its 15 s ramp (the load), the banks' east–west width
  and how much higher the north bank is (at most half a unit: a bridge
  landing tilted across a higher step makes the solver blow up as the cargo
  lands).
* **Lift** (Lv.2/3): a loose payload box dropped onto the rocket before
  the firing starts, and the height a tracked block must rise above (the
  released 30). The released texts never state that height, so a variant's
  text does not either. Lv.1 has no variants: its rule reads only the
  cannons' heating and the machine's own mass, which no scene parameter
  changes.

The goal and the target height are optional in an id: left out, they are the
released 10 and 30, so ``transport-2_mass40`` poses the released goal.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from .levels import (
    LIFT_PASS_HEIGHT,
    TASKS,
    TRANSPORT_GOAL,
    TaskSpec,
    lift_text,
    support_text,
    transport_text,
)
from .physics import StaticBox

VARIED_LEVELS = ("transport-1", "transport-2", "transport-3", "support-1", "support-2", "support-3",
                 "lift-2", "lift-3")
"""The levels that have variants, in the order ``generate`` cycles through them."""

_STREAM = 0x5EED_BA
"""Keeps the variants' random stream apart from other uses of the same seed."""
_DRAWS = 64
"""Random draws for a fresh variant before walking the grid for an unused one."""


@dataclass(frozen=True)
class Range:
    """The allowed values of one parameter: ``lo``, ``lo + step``, …, ``hi``.

    Attributes:
        lo: Smallest value.
        hi: Largest value.
        step: Grid step.
        unit: What the number measures.
    """

    lo: float
    hi: float
    step: float
    unit: str

    @property
    def count(self) -> int:
        """Number of values on the grid."""
        return int(round((self.hi - self.lo) / self.step)) + 1

    def value(self, index: int) -> float:
        """The ``index``-th value, rounded so that ids print it exactly."""
        return round(self.lo + index * self.step, 6)

    def draw(self, rng: np.random.Generator) -> float:
        """A value drawn uniformly from the grid."""
        return self.value(int(rng.integers(0, self.count)))

    def holds(self, value: float) -> bool:
        """Whether ``value`` is one of the grid's values."""
        index = (value - self.lo) / self.step
        return math.isfinite(value) and 0 <= round(index) < self.count and abs(index - round(index)) < 1e-6


CARGO_MASS = Range(20.0, 100.0, 5.0, "Transport Lv.2/3 cargo mass, mass units (released 50)")
KERB_HEIGHT = Range(0.1, 0.4, 0.05, "Transport kerb height, units (wheels are 2 units across)")
KERB_RINGS = Range(1.0, 3.0, 1.0, "Transport kerb rings, at 5, 6.5 and 8 units from the start")
TERRACE_STEP = Range(0.05, 0.15, 0.05, "Transport terrace step, units per unit (six steps from 4 to 9 units)")
GAP = {1: Range(3.0, 8.0, 0.5, "Support Lv.1 gap, units (released 5)"),
       2: Range(8.0, 14.0, 0.5, "Support Lv.2 gap, units (released 10)"),
       3: Range(14.0, 22.0, 0.5, "Support Lv.3 gap, units (released 20)")}
LOAD = Range(750.0, 3000.0, 250.0, "Support cargo mass at the end of its 15 s ramp (released 1500)")
BANK_WIDTH = Range(6.0, 30.0, 2.0, "Support bank width east–west, units (released 30)")
BANK_RISE = Range(0.0, 0.5, 0.25, "Support north bank above the south one, units (released 0)")
PAYLOAD = Range(5.0, 15.0, 1.0, "Lift Lv.2/3 payload mass, mass units")
GOAL = Range(6.0, 20.0, 2.0, "Transport goal point (x = y) and pass distance from the start, units (released 10)")
TARGET_HEIGHT = Range(20.0, 60.0, 5.0, "Lift Lv.2/3 height a tracked block must rise above, units (released 30)")
RELEASED_VALUES = {"goal": TRANSPORT_GOAL, "height": LIFT_PASS_HEIGHT}
"""The optional parameters at their released values, which an id leaves out."""
PAYLOAD_SIZE = (1.5, 1.5, 0.5)
"""The Lift payload box (units): flat, so it rests on a rocket's top."""

KERB_WIDTH = 0.4
KERB_HALF_SIDES = (5.0, 6.5, 8.0)
"""Half-sides of the kerb rings (units): clear of the start, where machines of up to ~8 units across stand."""
TERRACE_FIRST = 4.0
TERRACE_COUNT = 6
GROUND_HALF = 40.0
"""Half-side of the terraces' outer edge (units): beyond any run's reach."""

_KEYS = {
    "transport": {"mass": CARGO_MASS},
    "support": {"gap": GAP[1], "load": LOAD, "bank": BANK_WIDTH, "rise": BANK_RISE},
    "lift": {"payload": PAYLOAD},
}
_OPTIONAL_KEYS = {"transport": {"goal": GOAL}, "support": {}, "lift": {"height": TARGET_HEIGHT}}
_GROUND_FORMS: tuple[list[str], ...] = ([], ["kerb", "rings"], ["terrace"])
"""Transport Lv.1's ground: flat (a goal variant), kerb rings, or terraces."""
_TOKEN = re.compile(r"([a-z]+)(\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Variant:
    """A varied level and its parameters (keys as in the id, values on their grids).

    Attributes:
        base: The level varied, e.g. ``support-3``.
        params: Parameter values by key, in id order.
    """

    base: str
    params: tuple[tuple[str, float], ...]

    @property
    def id(self) -> str:
        """The task id: the base level, then ``_<key><value>`` per parameter."""
        return "_".join([self.base, *(f"{key}{value:g}" for key, value in self.params)])

    def get(self, key: str) -> float | None:
        """The value of ``key``, or None when the variant does not set it."""
        return dict(self.params).get(key)

    def value(self, key: str) -> float:
        """The value of a parameter every variant of its level sets.

        Raises:
            KeyError: When the variant does not set ``key``.
        """
        return dict(self.params)[key]


def ranges_of(base: str) -> dict[str, Range]:
    """The parameters of a varied level and their ranges (the optional ones last)."""
    return {**_required_ranges(base), **optional_ranges(base)}


def _required_ranges(base: str) -> dict[str, Range]:
    if base == "transport-1":
        return {"kerb": KERB_HEIGHT, "rings": KERB_RINGS, "terrace": TERRACE_STEP}
    category, level = TASKS[base].category, TASKS[base].level
    return {**_KEYS[category], "gap": GAP[level]} if category == "support" else dict(_KEYS[category])


def optional_ranges(base: str) -> dict[str, Range]:
    """The parameters of ``base`` that an id leaves out at their released value (``RELEASED_VALUES``)."""
    return dict(_OPTIONAL_KEYS[TASKS[base].category])


def _optional_params(base: str, values: tuple[float, ...]) -> list[tuple[str, float]]:
    """The optional parameters of ``base`` with ``values``, less those at their released value."""
    pairs = zip(optional_ranges(base), values, strict=True)
    return [(key, value) for key, value in pairs if value != RELEASED_VALUES[key]]


def draw(base: str, rng: np.random.Generator) -> Variant:
    """One variant of ``base`` with every parameter drawn from its grid (Transport Lv.1: flat ground, kerbs
    or terraces, even odds), the optional ones last."""
    if base != "transport-1":
        params = [(key, r.draw(rng)) for key, r in _required_ranges(base).items()]
    else:
        form = _GROUND_FORMS[int(rng.integers(0, len(_GROUND_FORMS)))]
        params = [(key, _required_ranges(base)[key].draw(rng)) for key in form]
    optional = tuple(r.draw(rng) for r in optional_ranges(base).values())
    return Variant(base, (*params, *_optional_params(base, optional)))


def same_as_level(variant: Variant) -> bool:
    """Whether ``variant`` poses exactly its level's released task (e.g. Transport Lv.2 with 50 units)."""
    spec, level = spec_of(variant), TASKS[variant.base]
    return replace(spec, id=level.id, text=level.text) == level


def every_variant(base: str) -> Iterator[Variant]:
    """All variants of ``base`` in grid order (its released task excluded)."""
    ranges = _required_ranges(base)
    if base == "transport-1":
        grids: list[list[tuple[str, float]]] = [[]]
        grids += [[("kerb", k), ("rings", r)] for k in _grid(KERB_HEIGHT) for r in _grid(KERB_RINGS)]
        grids += [[("terrace", t)] for t in _grid(TERRACE_STEP)]
    else:
        grids = [list(zip(ranges, values, strict=True)) for values in itertools.product(*map(_grid, ranges.values()))]
    optional = list(itertools.product(*map(_grid, optional_ranges(base).values())))
    for params in grids:
        for values in optional:
            variant = Variant(base, (*params, *_optional_params(base, values)))
            if not same_as_level(variant):
                yield variant


def _grid(limits: Range) -> list[float]:
    return [limits.value(i) for i in range(limits.count)]


@cache
def _grid_order(base: str) -> tuple[tuple[str, Variant], ...]:
    """``every_variant(base)`` with its ids, built once: a long list walks it at every fallback draw."""
    return tuple((v.id, v) for v in every_variant(base))


def _fresh(base: str, seed: int, index: int, seen: set[str], cursor: dict[str, int]) -> Variant | None:
    """A variant of ``base`` not in ``seen``: drawn at random, or once draws keep repeating (a small grid
    nearly used up), the first unused one in grid order; None when every one is used.

    ``cursor[base]`` is where that grid-order search starts: ``seen`` only grows, so everything before the
    last first-unused variant stays used and the search never needs to look there again."""
    for attempt in range(_DRAWS):
        variant = draw(base, np.random.default_rng([_STREAM, seed, index, attempt]))
        if variant.id not in seen and not same_as_level(variant):
            return variant
    order, at = _grid_order(base), cursor.get(base, 0)
    while at < len(order) and order[at][0] in seen:
        at += 1
    cursor[base] = at
    return order[at][1] if at < len(order) else None


def generate(seed: int, count: int) -> list[Variant]:
    """``count`` distinct variants, none the released task itself, cycling through ``VARIED_LEVELS`` (a level
    whose grid is used up drops out of the cycle); the same seed gives the same list, and a longer list
    starts with the shorter one.

    Raises:
        ValueError: For a negative count, or more than all the distinct variants there are.
    """
    if count < 0:
        raise ValueError(f"variant count must be at least 0, got {count}")
    out: list[Variant] = []
    seen: set[str] = set()
    cursor: dict[str, int] = {}
    live = list(VARIED_LEVELS)
    turn = 0
    while len(out) < count:
        if not live:
            raise ValueError(f"asked for {count} variants; only {len(out)} distinct ones exist")
        base = live[turn % len(live)]
        variant = _fresh(base, seed, len(out), seen, cursor)
        if variant is None:
            live.remove(base)  # the next level takes this turn
            continue
        seen.add(variant.id)
        out.append(variant)
        turn += 1
    return out


def parse(task_id: str) -> Variant:
    """The variant a task id names.

    Raises:
        ValueError: One line naming the id and what is wrong: an unvaried base level, an unknown,
            repeated, missing or out-of-range parameter, or a non-canonical spelling.
    """
    base, *tokens = task_id.split("_")
    if base not in VARIED_LEVELS:
        raise ValueError(f"unknown task {task_id!r}; valid tasks: {', '.join(TASKS)}, or a variant of "
                         f"{', '.join(VARIED_LEVELS)} such as {generate(0, 1)[0].id}")
    ranges = ranges_of(base)
    params: list[tuple[str, float]] = []
    for token in tokens:
        match = _TOKEN.fullmatch(token)
        if match is None or match[1] not in ranges:
            raise ValueError(f"task {task_id!r}: {token!r} is not a parameter of {base} "
                             f"(parameters: {', '.join(ranges)})")
        key, value = match[1], float(match[2])
        limits = ranges[key]
        if not limits.holds(value):
            raise ValueError(f"task {task_id!r}: {key} {value:g} is outside {limits.lo:g}–{limits.hi:g} "
                             f"in steps of {limits.step:g} ({limits.unit})")
        value = limits.value(round((value - limits.lo) / limits.step))
        if RELEASED_VALUES.get(key) != value:  # an optional parameter at its released value goes unsaid
            params.append((key, value))
    variant = Variant(base, tuple(params))
    _check_keys(variant, task_id)
    if variant.id != task_id:
        raise ValueError(f"task {task_id!r}: write it as {variant.id!r}")
    return variant


def _check_keys(variant: Variant, task_id: str) -> None:
    keys = [key for key, _ in variant.params]
    optional = list(optional_ranges(variant.base))
    # Each level has at most one optional parameter, and it comes last.
    required = keys[:-1] if keys and keys[-1] in optional else keys
    then = "".join(f", then {key} unless it is {RELEASED_VALUES[key]:g}" for key in optional)
    if variant.base == "transport-1":
        if required not in _GROUND_FORMS:
            raise ValueError(f"task {task_id!r}: transport-1 takes kerb then rings, terrace alone or neither{then}")
    elif required != list(_required_ranges(variant.base)):
        names = list(_required_ranges(variant.base))
        order = " in that order" if len(names) > 1 else ""
        raise ValueError(f"task {task_id!r}: {variant.base} takes {', '.join(names)}{order}{then}")


def kerb_rings(height: float, rings: int) -> tuple[StaticBox, ...]:
    """Square rings of kerbs centred on the start, ``height`` high, at the first ``rings`` half-sides."""
    boxes: list[StaticBox] = []
    for half in KERB_HALF_SIDES[:rings]:
        long_side = 2 * half + KERB_WIDTH
        for sign in (1.0, -1.0):
            boxes.append(StaticBox((0.0, sign * half, height / 2), (long_side, KERB_WIDTH, height)))
            boxes.append(StaticBox((sign * half, 0.0, height / 2), (KERB_WIDTH, long_side, height)))
    return tuple(boxes)


def terraces(step: float) -> tuple[StaticBox, ...]:
    """Square terraces around the start: the ground steps up by ``step`` at 4, 5, … 9 units out in x or y."""
    boxes: list[StaticBox] = []
    for k in range(TERRACE_COUNT):
        inner, height = TERRACE_FIRST + k, step * (k + 1)
        depth, middle = GROUND_HALF - inner, (GROUND_HALF + inner) / 2
        for sign in (1.0, -1.0):
            boxes.append(StaticBox((0.0, sign * middle, height / 2), (2 * GROUND_HALF, depth, height)))
            boxes.append(StaticBox((sign * middle, 0.0, height / 2), (depth, 2 * inner, height)))
    return tuple(boxes)


def _ground_sentence(variant: Variant) -> str:
    kerb, terrace = variant.get("kerb"), variant.get("terrace")
    if kerb is not None:
        rings = int(variant.value("rings"))
        at = ", ".join(f"{h:g}" for h in KERB_HALF_SIDES[:rings])
        rings_text = "a square ring of kerbs" if rings == 1 else f"{rings} square rings of kerbs"
        return (f"The ground is not clear: {rings_text}, {kerb:g} units high and {KERB_WIDTH:g} wide, "
                f"{'surrounds' if rings == 1 else 'surround'} the start at {at} units from it along x and y, "
                "so every way out crosses them.")
    if terrace is not None:
        top = terrace * TERRACE_COUNT
        return (f"The ground is not flat: beyond {TERRACE_FIRST:g} units from the start along x or y it climbs "
                f"in square terraces, one step of {terrace:g} units every unit, up to {top:g} units high from "
                f"{TERRACE_FIRST + TERRACE_COUNT - 1:g} units out, and is level beyond.")
    return ""


def spec_of(variant: Variant) -> TaskSpec:
    """The task spec of a variant: its level's spec with the parameters applied and the text rewritten."""
    base = TASKS[variant.base]
    if base.category == "transport":
        mass = variant.get("mass") or base.cargo_mass_max  # Lv.1 carries nothing
        goal = variant.get("goal") or base.pass_distance
        kerb, terrace = variant.get("kerb"), variant.get("terrace")
        boxes = (kerb_rings(kerb, int(variant.value("rings"))) if kerb is not None
                 else terraces(terrace) if terrace is not None else ())
        text = transport_text(base.level, mass, _ground_sentence(variant), goal)
        return replace(base, id=variant.id, text=text, cargo_mass_max=mass, ground_boxes=boxes, pass_distance=goal)
    if base.category == "support":
        gap, load, width, rise = (variant.value(k) for k in ("gap", "load", "bank", "rise"))
        return replace(base, id=variant.id, text=support_text(base.level, gap, width, rise, load),
                       gap=gap, cargo_mass_max=load, bank_width=width, bank_rise=rise)
    payload = variant.value("payload")
    # The released Lift texts never state the target height, so neither does a variant's.
    return replace(base, id=variant.id, text=lift_text(base.level, (PAYLOAD_SIZE, payload)),
                   cargo_size=PAYLOAD_SIZE, cargo_mass_max=payload, cargo_ramp_s=1.0,
                   pass_height=variant.get("height") or base.pass_height)


def variant_spec(task_id: str) -> TaskSpec:
    """The spec of the variant ``task_id`` names (``parse`` then ``spec_of``).

    Raises:
        ValueError: As :func:`parse`.
    """
    return spec_of(parse(task_id))


def level_of(task_id: str) -> str:
    """The level a task id poses: the id itself for the nine, the varied level for a variant.

    Raises:
        ValueError: As :func:`parse`, for an id that is neither.
    """
    return task_id if task_id in TASKS else parse(task_id).base
