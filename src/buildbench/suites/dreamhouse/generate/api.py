"""Public entry points: one house from a task id (or params), the dataset and the split.

Task ids follow the released ``<STYLE>_<NN>_<NNNN>`` form (see :mod:`.ids`). A dataset of
``n`` structures gives each style an equal share (remainder to the styles first in the
paper's Figure 2 order) and numbers each style's structures 0 … share-1; ``NN`` is the
configuration block of that index. The paper-size dataset has 26,543 structures.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from buildbench.harness.errors import BuildbenchError, ConfigError

from ..model import Structure
from .frame import D2X4, PHASE_CODES, T2X, FrameArrays
from .house import BuiltFrame, build_frame
from .ids import (
    PAPER_DATASET_SIZE,
    ROOF_TYPES,
    STYLE_CODES,
    STYLE_NAMES,
    TaskId,
    config_for_index,
)
from .layout import sample_params
from .params import HouseParams
from .skin import Cladding, build_skin
from .walls import opening_heads

#: Member-count range of the paper's dataset (paper §3: 133 to 1,548 members).
MIN_MEMBERS, MAX_MEMBERS = 133, 1548
#: Redraws of a task's free parameters before giving up (never reached in practice).
MAX_ATTEMPTS = 24
#: Size of the stratified evaluation split (paper §4: 1,200 structures per model × protocol).
SPLIT_SIZE = 1200
#: Version of the generator's output; bump it whenever a seed's output changes.
GENERATOR_VERSION = 1


class GenerationError(BuildbenchError):
    """A task could not be turned into a valid house (bad params, or no draw succeeded)."""


@dataclass(frozen=True)
class PhaseStep:
    """One construction step: a contiguous block of members in build order.

    Attributes:
        step: 1-based step number.
        section: Section built in this step.
        phase: ``foundation``, ``floor``, ``walls`` or ``roof``.
        story: Story index (0 = ground floor).
        start: Index of the step's first member in the structure.
        count: Number of members in the step.
    """

    step: int
    section: str
    phase: str
    story: int
    start: int
    count: int


@dataclass(frozen=True)
class PlacedOpening:
    """A door or window rough opening in an exterior wall (world metres).

    Attributes:
        section: Section name.
        story: Story index.
        wall: Wall side (``front``, ``back``, ``left``, ``right``).
        axis: World axis the wall runs along.
        face_m: World coordinate of the wall's outer face on the other axis.
        center_m: Opening centre along the wall.
        width_m: Rough-opening width.
        bottom_m: World z of the opening's bottom (the deck for doors, the rough sill for windows).
        top_m: World z of the opening's head.
        door: True for doors.
    """

    section: str
    story: int
    wall: str
    axis: str
    face_m: float
    center_m: float
    width_m: float
    bottom_m: float
    top_m: float
    door: bool


def _openings(cladding: list[Cladding]) -> tuple[PlacedOpening, ...]:
    out = []
    for c in cladding:
        w = c.line
        if not w.openings:
            continue
        heads, _ = opening_heads(w.openings, w.zf + T2X)
        face = w.t0 if w.side in ("front", "left") else w.t0 + D2X4
        for o, head in zip(w.openings, heads.tolist(), strict=True):
            bottom = w.zf if o.door else head - o.height
            out.append(
                PlacedOpening(
                    w.section, w.story, w.side, w.axis, face, o.center, o.width, bottom, head, o.door
                )
            )
    return tuple(out)


@dataclass(frozen=True)
class GeneratedHouse:
    """A generated ground-truth house.

    Attributes:
        task_id: ``<STYLE>_<NN>_<NNNN>``.
        params: Parameters it was built from.
        structure: The timber frame (phase/section/support annotations on every member).
        phases: Construction steps in build order (foundation → floor → walls … → roof per section).
        openings: Doors and windows of the exterior walls (left open in the skin).
        seed: Dataset seed.
        built: The frame arrays and clad walls the skin is made from.
    """

    task_id: str
    params: HouseParams
    structure: Structure
    phases: tuple[PhaseStep, ...]
    openings: tuple[PlacedOpening, ...]
    seed: int
    built: BuiltFrame = field(repr=False, compare=False)

    @cached_property
    def skin(self) -> Structure:
        """Facade panels (wall sheathing, roofing) for the Facade condition, as boxes.

        Built on first use: validation-only work never pays for it.
        """
        skin = build_skin(self.built.frame, self.built.cladding)
        return skin.to_structure({**self.structure.meta, "skin": True, "n_members": len(skin.names)})

    @cached_property
    def schedule(self) -> dict[str, int]:
        """Member counts per subsystem (the paper's Figure 1 material schedule)."""
        counts = dict.fromkeys(PHASE_CODES, 0)
        for step in self.phases:
            counts[step.phase] += step.count
        return counts

    @property
    def constraints(self) -> dict[str, object]:
        """Task constraints in the released server's shape."""
        return self.params.constraints()

    @property
    def description(self) -> str:
        """One-line task description in the released server's style."""
        c = self.params.constraints()
        return (
            f"Generate a {c['stories']}-story {STYLE_NAMES[self.params.style]} timber frame "
            f"({self.params.complexity}, {c['wings']} wing(s)). Footprint: {c['footprint_x']:.2f}m x "
            f"{c['footprint_y']:.2f}m. Roof type: {self.params.roof_type}."
        )


def _phase_steps(frame: FrameArrays) -> tuple[PhaseStep, ...]:
    # Sections as small integers: comparing a numpy array of strings cost more than the rest.
    code_of = {name: k for k, name in enumerate(dict.fromkeys(frame.sections))}
    sec = np.fromiter(map(code_of.__getitem__, frame.sections), dtype=np.int64, count=len(frame.sections))
    change = np.flatnonzero(
        (sec[1:] != sec[:-1])
        | (frame.phase_codes[1:] != frame.phase_codes[:-1])
        | (frame.stories[1:] != frame.stories[:-1])
    ) + 1
    starts = np.concatenate([[0], change]).tolist()
    ends = [*starts[1:], len(frame.names)]
    return tuple(
        PhaseStep(
            k + 1, frame.sections[a], PHASE_CODES[int(frame.phase_codes[a])], int(frame.stories[a]), a, b - a
        )
        for k, (a, b) in enumerate(zip(starts, ends, strict=True))
    )


def _meta(p: HouseParams, seed: int, n_members: int) -> dict[str, object]:
    return {
        "task_id": p.task_id,
        "style": p.style,
        "style_name": STYLE_NAMES[p.style],
        "config": p.config,
        "roof_type": p.roof_type,
        "complexity": p.complexity,
        "constraints": p.constraints(),
        "n_members": n_members,
        "seed": seed,
        "generator_version": GENERATOR_VERSION,
    }


def build_house(params: HouseParams, seed: int = 0) -> GeneratedHouse:
    """Build a house from explicit parameters (no redraws).

    The parameters are used as given: joist axes are not re-resolved and the member count
    is not checked, so hand-made parameters off the 4 ft module or with overlapping
    sections may produce a frame the validator rejects.

    Raises:
        GenerationError: When the parameters cannot be framed.
    """
    try:
        built = build_frame(params)
    except (ValueError, IndexError) as exc:
        raise GenerationError(f"{params.task_id}: cannot frame these parameters: {exc}") from exc
    frame = built.frame
    meta = _meta(params, seed, len(frame.names))
    return GeneratedHouse(
        task_id=params.task_id,
        params=params,
        structure=frame.to_structure(meta),
        phases=_phase_steps(frame),
        openings=_openings(built.cladding),
        seed=seed,
        built=built,
    )


def generate_structure(task: str | TaskId | HouseParams, seed: int = 0) -> GeneratedHouse:
    """The ground-truth house of a task id (or of explicit parameters).

    A task id fixes style, configuration, roof type and complexity; ``seed`` and the id
    seed the rest. Draws whose joist layout or member count (133–1,548, paper §3) is out
    of bounds are redrawn deterministically, so the same id and seed always give the
    byte-identical house.

    Args:
        task: ``"AF_01_0060"``, a :class:`TaskId`, or :class:`HouseParams`.
        seed: Dataset seed (non-negative integer).

    Raises:
        ConfigError: For a malformed task id or a negative seed.
        GenerationError: When no draw yields a valid house.
    """
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(task, HouseParams):
        return build_house(task, int(seed))
    tid = TaskId.parse(task) if isinstance(task, str) else task
    last = None
    for attempt in range(MAX_ATTEMPTS):
        params = sample_params(tid, int(seed), attempt)
        if params is None:
            continue
        house = build_house(params, int(seed))
        last = len(house.structure)
        if MIN_MEMBERS <= last <= MAX_MEMBERS:
            return house
    raise GenerationError(
        f"{tid}: no valid house in {MAX_ATTEMPTS} draws (last member count: {last}); "
        f"allowed {MIN_MEMBERS}–{MAX_MEMBERS}"
    )


def style_sizes(n: int) -> dict[str, int]:
    """Structures per style in a dataset of ``n``: equal shares, remainder to the first styles."""
    if n < 0:
        raise ConfigError(f"dataset size must be non-negative, got {n}")
    k = len(STYLE_CODES)
    return {code: n // k + (1 if i < n % k else 0) for i, code in enumerate(STYLE_CODES)}


def dataset_task_ids(n: int = PAPER_DATASET_SIZE) -> list[TaskId]:
    """Task ids of a dataset of ``n`` structures, style by style."""
    return [
        TaskId(code, config_for_index(i, size), i)
        for code, size in style_sizes(n).items()
        for i in range(size)
    ]


def iter_dataset(n: int, seed: int = 0) -> Iterator[GeneratedHouse]:
    """Generate the first ``n``-structure dataset lazily, in :func:`dataset_task_ids` order."""
    for tid in dataset_task_ids(n):
        yield generate_structure(tid, seed)


def _spread(m: int, q: int) -> list[int]:
    """``q`` distinct positions spread over ``range(m)`` whose residues mod 3 cycle 0, 1, 2."""
    step = m / q
    return [3 * int(k * step / 3) + k % 3 for k in range(q)]


def default_split(n_dataset: int = PAPER_DATASET_SIZE) -> list[TaskId]:
    """The stratified 1,200-task evaluation split (paper §4), uniform over styles and roofs.

    1,200 over 13 styles × 4 roofs is 23 per cell with 4 left over; those go to one cell
    per roof type, in the four most complex styles (Figure 2 order), so every roof type has
    exactly 300 tasks and every style 92 or 93. Within a cell the tasks are spread over the
    style's index range (so over all six configurations) with complexities in turn.

    Args:
        n_dataset: Size of the dataset the ids index (the paper's 26,543 by default).
    """
    sizes = style_sizes(n_dataset)
    base, extra = divmod(SPLIT_SIZE, len(STYLE_CODES) * len(ROOF_TYPES))
    out: list[TaskId] = []
    for s, code in enumerate(STYLE_CODES):
        size = sizes[code]
        for r in range(len(ROOF_TYPES)):
            quota = base + (1 if s == r and r < extra else 0)
            m = len(range(r, size, len(ROOF_TYPES)))
            if m < 3 * quota:
                raise ConfigError(
                    f"a dataset of {n_dataset} has too few {code} structures for the 1,200 split"
                )
            for j in _spread(m, quota):
                i = r + len(ROOF_TYPES) * j
                out.append(TaskId(code, config_for_index(i, size), i))
    return out
