"""The nine BuildArena levels: Transport, Support, Lift × Lv.1–3 (spec 3, ``levels.yaml``).

Task texts are ours; they carry every requirement of the released prompts and reveal no more than
they do (no pass thresholds). ``load_levels`` reads the released ``levels.yaml`` itself, for runs
that want the original wording (``-o levels=FILE``).
Each level also fixes its simulation protocol (released simulation scripts):
duration, ground or terrain, cargo and its mass ramp, and which controls
are pressed. The variants (``variants``) build on these specs and texts; ``tasks.get_task``
serves both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from buildbench.harness.yamlio import parse_yaml
from buildbench.inputs import read_text

from .physics import FireAll, StaticBox

Category = Literal["transport", "support", "lift"]

TERRAIN_HEIGHT = 5.0
"""Support terrains are 30 (east–west) × 20 (north–south) × 5 (high) static boxes (``support_*.blv``)."""
TERRAIN_SIZE = (30.0, 20.0, TERRAIN_HEIGHT)
SUPPORT_RAMP_S = 15.0
"""Support: the cargo's mass ramps up over this many seconds (released Lua script)."""
SUPPORT_FALLEN_Z = 4.0
"""Support: below this height the cargo has fallen into the gap (``sim_support.py``: HEIGHT_THRESHOLD)."""
TRANSPORT_GOAL = 10.0
"""Transport: the goal point is (10, 10) and the rule passes beyond 10 units from the start (``sim_transport.py``)."""
LIFT_PASS_HEIGHT = 30.0
"""Lift Lv.2/3: the rule passes when a tracked block rises above this height (``sim_lift.py``)."""


@dataclass(frozen=True)
class TaskSpec:
    """One task level.

    Attributes:
        id: ``<category>-<level>``, e.g. ``transport-1``.
        category: ``transport``, ``support`` or ``lift``.
        level: 1 (Easy / ``soft``), 2 (Medium) or 3 (Hard).
        text: The task statement models read.
        duration_s: Simulated seconds (released scripts: Transport 30, Support 17, Lift 10 / 30).
        max_substructures: Most sub-structures the text allows.
        cargo_size: Ballast extents (m) or None.
        cargo_mass_max: Mass at the end of the ramp.
        cargo_ramp_s: Ramp duration.
        gap: Support gap width (m), else None.
        fire_all: Lift Lv.2/3: every cannon fires on this schedule.
        ground_boxes: Static boxes on the ground of a Transport task (the kerbs and terraces of
            ``variants``; the nine levels have flat ground).
        bank_width: Support: east–west width of each terrain bank (m).
        bank_rise: Support: how much higher the north bank's top is than the south bank's (m); the
            bridge is released this much higher.
        pass_distance: Transport: the goal point is (d, d) and the rule passes beyond d from the start (m).
        pass_height: Lift Lv.2/3: the rule passes when a tracked block rises above this (m).
    """

    id: str
    category: Category
    level: int
    text: str
    duration_s: float
    max_substructures: int = 1
    cargo_size: tuple[float, float, float] | None = None
    cargo_mass_max: float = 0.0
    cargo_ramp_s: float = 1.0
    gap: float | None = None
    fire_all: FireAll | None = None
    ground_boxes: tuple[StaticBox, ...] = ()
    bank_width: float = TERRAIN_SIZE[0]
    bank_rise: float = 0.0
    pass_distance: float = TRANSPORT_GOAL
    pass_height: float = LIFT_PASS_HEIGHT

    @property
    def level_name(self) -> str:
        """The released code's level name (``soft``, ``medium``, ``hard``)."""
        return ("soft", "medium", "hard")[self.level - 1]


_DRIVE_PROTOCOL = (
    "How it is tested: the machine is set on flat ground with its centre at (x=0, y=0). A controller "
    "writes an open-loop key sequence, a list of [time to press, key, seconds to hold], for the keys "
    "you bind to the powered blocks; it gets three attempts, sees the recorded trajectory after each, "
    "and the best attempt counts. The run lasts 30 seconds."
)
# Scoring lines say no more than the released prompts (no pass threshold): what is measured, not the bar.
_DRIVE_SCORING = (
    "What counts: how closely the {thing} follows the straight line from the start to the goal, "
    "whether the machine stays in one piece, how quickly it gets there, and how few blocks you use."
)
_CARGO_RULES = (
    "The cargo is not part of what you build and does not appear while building; leave it out of your "
    "plan. At the start it is dropped onto the machine from above the start point (x=0, y=0, z=3.5) and "
    "simply rests on it: nothing fastens it."
)


def transport_text(level: int, cargo_mass: float = 50.0, ground: str = "", goal: float = TRANSPORT_GOAL) -> str:
    """The Transport statement; ``cargo_mass``, a ``ground`` sentence (terrain) and the goal point (``goal``,
    ``goal``) serve the variants."""
    ground_lines = [ground] if ground else []
    point = f"the point (x={goal:g}, y={goal:g})"
    if level == 1:
        return "\n".join(
            [
                "Build a vehicle as a single sub-structure, with four or more wheels.",
                "It must be able to drive forward and to change direction. The available blocks cannot "
                "turn wheels relative to the body, so ordinary steering is impossible: find another way "
                "to steer.",
                f"Goal: drive from the start (x=0, y=0) on the ground towards {point}, north-east of it.",
                *ground_lines,
                _DRIVE_PROTOCOL,
                _DRIVE_SCORING.format(thing="vehicle"),
            ]
        )
    cargo = "a 2.5 × 2.5 × 1.5 box" if level == 2 else "a 4 × 8 × 1.5 box lying with its long side north–south"
    goal_text = f"to {point}, north-east of it" + (
        "" if level == 2 else ", and then bring it back to the start"
    )
    return "\n".join(
        [
            "Build a machine as a single sub-structure that carries cargo.",
            f"The cargo is {cargo} of {cargo_mass:g} mass units. Goal: move it from the start (x=0, y=0) on "
            f"the ground {goal_text}.",
            *ground_lines,
            _CARGO_RULES,
            _DRIVE_PROTOCOL,
            _DRIVE_SCORING.format(thing="cargo"),
        ]
    )


def support_text(
    level: int, gap: float, bank_width: float = TERRAIN_SIZE[0], bank_rise: float = 0.0, load: float | None = None
) -> str:
    """The Support statement; the variants' banks (width, rise of the north one) and load ramp add sentences.

    Args:
        level: 1–3.
        gap: Gap width (m).
        bank_width: East–west width of each bank (m); the released 30 goes unsaid.
        bank_rise: Height of the north bank's top over the south bank's (m).
        load: Cargo mass at the end of its ramp, said when given (the released prompts give none).
    """
    half = gap / 2
    parts = "one sub-structure" if level == 1 else "at most three sub-structures"
    banks = []
    if bank_width != TERRAIN_SIZE[0]:
        banks.append(f"Each terrain block is only {bank_width:g} units wide east–west, centred on x=0.")
    if bank_rise:
        units = "unit" if bank_rise == 1 else "units"
        banks.append(f"The north terrain block is {bank_rise:g} {units} higher than the south one (its top at "
                     f"z={TERRAIN_HEIGHT + bank_rise:g}); the bridge is released that much higher.")
    ramp = "" if load is None else f", reaching {load:g} mass units after {SUPPORT_RAMP_S:g} seconds,"
    return "\n".join(
        [
            f"Build a bridge from {parts} that spans a gap {gap:g} units wide between two flat, 5-unit-high "
            "terrain blocks, and that holds a 2.5 × 2.5 × 1.5 cargo placed over the middle of the gap.",
            f"The terrain edges run east–west at y={half:g} and y=-{half:g} (x=0, top at z=5), so the gap "
            "runs across the north–south direction and drops 5 units.",
            *banks,
            "How it is tested: the bridge is released just above the terrain tops, centred over the gap "
            "(about x=0, y=0, z=7), and settles under gravity; nothing fastens it to the terrain. The cargo "
            "is then dropped onto it over the centre of the gap and rests on it loosely. Its weight grows "
            f"steadily from almost nothing (no impact){ramp} and the cargo's height is followed: the weight "
            "at which it sinks below the terrain tops is the bridge's maximum load.",
            "A bridge that does not span the gap, or that misses the cargo at the start, scores 0.",
            "What counts: the maximum load (higher is better) and how few blocks you use.",
        ]
    )


def lift_text(level: int, payload: tuple[tuple[float, float, float], float] | None = None) -> str:
    """The Lift statement; ``payload`` (size, mass) adds the variants' loose payload to Lv.2/3."""
    if level == 1:
        return "\n".join(
            [
                "Build one rocket engine, as a single sub-structure, that pushes in a single direction.",
                "How it is tested: the engine stands on the ground at (x=0, y=0, z=0) and its firing key "
                "is held down for the whole run; its vertical push is worked out from how far it rises "
                "between the start and the end of the run.",
                "What counts: the greatest push the engine delivers (higher is better) and how few blocks "
                "you use.",
            ]
        )
    build = (
        "Build a rocket, as a single sub-structure, that takes off from the ground and climbs into the sky."
        if level == 2
        else "Build two sub-structures: one rocket engine that pushes in a single direction, and a simple "
        "chassis onto which copies of the engine are braced so that together they form a symmetric "
        "rocket. The assembled rocket must take off from the ground and climb into the sky."
    )
    carried = []
    if payload is not None:
        (sx, sy, sz), mass = payload
        carried.append(f"It carries a payload: a {sx:g} × {sy:g} × {sz:g} box of {mass:g} mass units, not part of "
                       "what you build, dropped onto the top of the rocket over its centre before the firing "
                       "starts; it rests there loosely and nothing fastens it.")
    return "\n".join(
        [
            build,
            *carried,
            "How it is tested: the rocket stands on the ground at (x=0, y=0, z=0); every firing key is held "
            "down continuously, and the motion of its blocks is recorded.",
            "What counts: the greatest height any block reaches, how little the flight strays sideways "
            "from the vertical line on average, the top speed of any block, and how few blocks you use.",
        ]
    )


def _make_tasks() -> dict[str, TaskSpec]:
    tasks: list[TaskSpec] = []
    for level in (1, 2, 3):
        cargo = None if level == 1 else ((2.5, 2.5, 1.5) if level == 2 else (4.0, 8.0, 1.5))
        tasks.append(
            TaskSpec(
                f"transport-{level}",
                "transport",
                level,
                transport_text(level),
                30.0,
                cargo_size=cargo,
                cargo_mass_max=50.0,
                cargo_ramp_s=2.0,
            )
        )
    for level, gap in ((1, 5.0), (2, 10.0), (3, 20.0)):
        tasks.append(
            TaskSpec(
                f"support-{level}",
                "support",
                level,
                support_text(level, gap),
                17.0,
                max_substructures=1 if level == 1 else 3,
                cargo_size=(2.5, 2.5, 1.5),
                cargo_mass_max=1500.0,
                cargo_ramp_s=SUPPORT_RAMP_S,
                gap=gap,
            )
        )
    tasks.append(TaskSpec("lift-1", "lift", 1, lift_text(1), 10.0))
    for level in (2, 3):
        tasks.append(
            TaskSpec(
                f"lift-{level}",
                "lift",
                level,
                lift_text(level),
                30.0,
                max_substructures=1 if level == 2 else 2,
                fire_all=FireAll(start_s=2.0, hold_s=30.0),
            )
        )
    return {t.id: t for t in tasks}


TASKS: dict[str, TaskSpec] = _make_tasks()
"""All nine tasks by id."""


_LEVEL_NUMBER = {"soft": 1, "medium": 2, "hard": 3}
MAX_LEVELS_FILE_BYTES = 1024 * 1024
"""The released ``levels.yaml`` is 12 kB; a file far larger is not one."""


def _yaml_documents(path: Path) -> list[object]:
    """The YAML documents of ``path``; ValueError with one line (file, line, problem) otherwise."""
    try:
        return list(parse_yaml(read_text(path, max_bytes=MAX_LEVELS_FILE_BYTES), all_documents=True))
    except OSError as exc:
        raise ValueError(f"levels file {path}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ValueError(f"levels file {path}: not UTF-8 text") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise ValueError(f"levels file {path}: not valid YAML{where}: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"levels file {path}: not valid YAML: {' '.join(str(exc).split())}") from None


def load_levels(path: str | Path) -> dict[str, str]:
    """Task texts by task id from a released ``levels.yaml`` (documents with ``level``, ``category``, ``task``).

    The file must give each of the nine tasks exactly once, so that a run never mixes the released
    wording with ours.

    Raises:
        ValueError: One line naming the file and the problem: unreadable, too large, not YAML, a
            document that is not one of the nine task levels or has no text, a task given twice or
            missing.
    """
    path = Path(path)
    texts: dict[str, str] = {}
    for number, doc in enumerate((d for d in _yaml_documents(path) if d is not None), start=1):
        where = f"levels file {path}: document {number}"
        if not isinstance(doc, dict):
            raise ValueError(f"{where} is a {type(doc).__name__}, not a mapping with level, category and task")
        text = doc.get("task")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where} has no task text")
        level, category = _LEVEL_NUMBER.get(str(doc.get("level"))), str(doc.get("category"))
        task_id = f"{category}-{level}"
        if level is None or task_id not in TASKS:
            raise ValueError(f"{where} names an unknown task (category {category!r}, level {doc.get('level')!r}; "
                             f"levels: {', '.join(_LEVEL_NUMBER)})")
        if task_id in texts:
            raise ValueError(f"{where} gives task {task_id} a second time")
        texts[task_id] = text.strip()
    missing = [t for t in TASKS if t not in texts]
    if missing:
        raise ValueError(f"levels file {path}: no task text for {', '.join(missing)} (the released file has all nine)")
    return texts
