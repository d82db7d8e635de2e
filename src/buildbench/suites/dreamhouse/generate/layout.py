"""Style archetypes: task id (+ seed) → :class:`HouseParams`.

Each of the 13 styles has one archetype (paper Fig. 13: canonical massing, section layout
and story count) instantiated over lot sizes, proportions and complexity. The paper gives
no numbers, so the massing rules below are ours [S], chosen from the style names and the
paper's section patterns (Prompt 0: rectangle, L with a side wing, T with a rear wing,
split levels at different ``z_base``). Plans are laid out on the 4 ft module and every
house fits within 6–11 modules (7.3–13.4 m) a side ("from 7 m × 7 m cottages to
14 m × 14 m two-storey colonials", paper §7.2.3).

Complexity adds wings and stories (simple: main body; moderate: one more section or
story; complex: the full archetype), more openings and, for complex, partitions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .frame import MODULE, STORY_H
from .ids import STYLE_CODES, TaskId, complexity_for_index, roof_for_index
from .joists import resolve_joist_axes
from .params import HouseParams, RoofSpec, SectionSpec

#: Mean openings per exterior wall side and story, by complexity [S].
OPENINGS_PER_WALL = {"simple": 1.2, "moderate": 2.0, "complex": 2.8}
#: Split-level offset: half a story (Prompt 0 "sections at different z_base").
SPLIT_Z_M = round(STORY_H / 2.0, 4)


@dataclass(frozen=True)
class _Sec:
    """A section in planning modules before conversion to metres."""

    name: str
    x: int
    y: int
    w: int
    d: int
    stories: int = 1
    z: float = 0.0
    ridge: str = ""  # "" = along the longer side
    shed_high: int = 1
    lean_to: bool = False
    aframe: bool = False
    ridge_frac: float = 0.5


class _Draw:
    """Small helpers over one ``numpy`` generator."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def int(self, lo: int, hi: int) -> int:
        """Uniform integer in ``[lo, hi]`` (inclusive)."""
        return int(self.rng.integers(lo, hi + 1))

    def pick(self, options: tuple[float, ...]) -> float:
        """One of ``options``."""
        return float(options[int(self.rng.integers(0, len(options)))])


def _band(config: int, lo: int, hi: int) -> tuple[int, int]:
    """Sub-range of ``[lo, hi]`` for lot-size band ``config`` (1 smallest … 6 largest)."""
    span = hi - lo
    a = lo + (config - 1) * span // 6
    b = lo + config * span // 6 + (1 if span < 6 else 0)
    return a, min(hi, max(a, b))


def _courtyard(d: _Draw, c: int, cx: str) -> list[_Sec]:
    w, dd, r = d.int(*_band(c, 8, 11)), d.int(8, 10), 3
    north = _Sec("main", 0, dd - r, w, r, 2 if cx == "complex" else 1, ridge="x")
    if cx == "simple":
        return [
            north,
            _Sec("wing1", 0, 0, r, dd - r, ridge="y"),
            _Sec("wing2", w - r, 0, r, dd - r, ridge="y"),
        ]
    return [
        north,
        _Sec("wing1", 0, 0, w, r, ridge="x"),
        _Sec("wing2", 0, r, r, dd - 2 * r, ridge="y"),
        _Sec("wing3", w - r, r, r, dd - 2 * r, ridge="y"),
    ]


def _cruciform(d: _Draw, c: int, cx: str) -> list[_Sec]:
    # Two opposite arms leave the core as the cross depth, so it must reach 6 modules alone.
    core = d.int(6, 7) if cx == "simple" else d.int(*_band(c, 4, 6))
    arm = d.int(2, min(3, (11 - core) // 2))
    aw = core - 2
    x0 = y0 = arm
    secs = [_Sec("main", x0, y0, core, core, {"simple": 1, "moderate": d.int(1, 2), "complex": 2}[cx])]
    arms = [
        _Sec("wing1", 0, y0 + 1, arm, aw, ridge="x"),
        _Sec("wing2", x0 + core, y0 + 1, arm, aw, ridge="x"),
        _Sec("wing3", x0 + 1, y0 + core, aw, arm, ridge="y"),
        _Sec("wing4", x0 + 1, 0, aw, arm, ridge="y"),
    ]
    return secs + arms[: {"simple": 2, "moderate": 3, "complex": 4}[cx]]


def _colonial(d: _Draw, c: int, cx: str) -> list[_Sec]:
    wings = {"simple": 0, "moderate": 1, "complex": 2}[cx]
    ww = d.int(2, 3) if wings else 0
    w = min(d.int(*_band(c, 7, 10)), 11 - wings * ww)
    dd = d.int(6, 7)
    stories = d.int(2, 3) if cx == "complex" else 2
    secs = [_Sec("main", wings and ww, 0, w, dd, stories, ridge="x")]
    wd = d.int(4, dd - 1) if wings else 0
    if wings >= 1:
        secs.append(_Sec("wing1", ww + w, 1, ww, wd, ridge="y"))
    if wings == 2:
        secs.append(_Sec("wing2", 0, 1, ww, wd, ridge="y"))
    return secs


def _split_level(d: _Draw, c: int, cx: str) -> list[_Sec]:
    a, b = d.int(4, 6), d.int(3, 5)
    a = max(a, 7 - b) if a + b < 7 else a
    dd = d.int(*_band(c, 6, 8))
    secs = [
        _Sec("main", 0, 0, a, dd, 1 if cx == "simple" else 2, ridge="x"),
        _Sec("wing1", a, 0, b, dd - d.int(0, 1), 1, z=SPLIT_Z_M, ridge="x"),
    ]
    if cx == "complex":
        secs.append(_Sec("wing2", 0, dd, a, d.int(2, 3), ridge="y"))
    return secs


def _barn(d: _Draw, c: int, cx: str) -> list[_Sec]:
    span, length = d.int(6, 8), d.int(*_band(c, 7, 11))
    secs = [_Sec("main", 0, 0, span, length, 1 if cx == "simple" else 2, ridge="y")]
    if cx == "complex":
        lw = min(d.int(2, 3), 11 - span)
        secs.append(_Sec("wing1", span, 1, lw, length - 2, ridge="y", shed_high=-1, lean_to=True))
    return secs


def _ranch(d: _Draw, c: int, cx: str) -> list[_Sec]:
    w, dd = d.int(*_band(c, 9, 11)), d.int(6, 8)
    secs = [_Sec("main", 0, 0, w, dd, ridge="x")]
    if cx != "simple":
        ww = d.int(3, 4)
        secs.append(_Sec("wing1", w - ww, dd, ww, min(d.int(2, 4), 11 - dd), ridge="y"))
    if cx == "complex":
        secs.append(_Sec("wing2", 0, dd, d.int(3, 4), min(d.int(2, 4), 11 - dd), ridge="y"))
    return secs


def _townhouse(d: _Draw, c: int, cx: str) -> list[_Sec]:
    dd = d.int(*_band(c, 8, 10))
    secs = [_Sec("main", 0, 0, 6, dd, 3 if cx == "complex" else 2, ridge="y")]
    if cx != "simple":
        secs.append(
            _Sec("wing1", 0, dd, 6, min(d.int(1, 2), 11 - dd) or 1, ridge="x", shed_high=-1, lean_to=True)
        )
    return secs


def _z_plan(d: _Draw, c: int, cx: str) -> list[_Sec]:
    a, b, total = d.int(*_band(c, 3, 5)), d.int(3, 4), d.int(7, 9)
    yc = (total - b) // 2
    wl, wr = d.int(2, 3), d.int(2, 3)
    if cx == "simple":
        a = max(a, 6 - wl)  # wing and centre alone must span 6 modules
    secs = [_Sec("main", wl, yc, a, b, 2 if cx == "complex" else 1, ridge="x")]
    d1 = max(yc + 2, d.int(4, 6), 6 if cx == "simple" else 0)
    secs.append(_Sec("wing1", 0, 0, wl, d1, ridge="y"))
    if cx != "simple":
        dr = max(total - (yc + b - 2), d.int(4, 6))
        secs.append(_Sec("wing2", wl + a, total - dr, wr, dr, ridge="y"))
    return secs


def _carriage(d: _Draw, c: int, cx: str) -> list[_Sec]:
    w, dd = d.int(*_band(c, 6, 8)), d.int(6, 7)
    secs = [_Sec("main", 0, 0, w, dd, 2, ridge="x")]
    if cx != "simple":
        secs.append(_Sec("wing1", w, 0, d.int(2, 3), d.int(4, dd), 2 if cx == "complex" else 1, ridge="y"))
    return secs


def _farmhouse(d: _Draw, c: int, cx: str) -> list[_Sec]:
    w, dd = d.int(*_band(c, 7, 9)), d.int(6, 7)
    secs = [_Sec("main", 0, 0, w, dd, 1 if cx == "simple" else 2, ridge="x")]
    if cx != "simple":
        rw = d.int(3, 4)
        secs.append(_Sec("wing1", (w - rw) // 2, dd, rw, d.int(2, 3), ridge="y"))
    if cx == "complex":
        sw = min(d.int(2, 3), 11 - w)
        secs.append(_Sec("wing2", w, 0, sw, d.int(3, 4), ridge="x"))
    return secs


def _saltbox(d: _Draw, c: int, cx: str) -> list[_Sec]:
    w, dd = d.int(*_band(c, 7, 9)), d.int(6, 7)
    frac = d.pick((0.375, 0.4))
    secs = [_Sec("main", 0, 0, w, dd, 2, ridge="x", ridge_frac=frac)]
    if cx != "simple":
        secs.append(_Sec("wing1", 1, dd, w - 2, min(2, 11 - dd), ridge="x", shed_high=-1, lean_to=True))
    if cx == "complex":
        secs.append(_Sec("wing2", w, 1, min(d.int(2, 3), 11 - w), d.int(3, dd - 1), ridge="x"))
    return secs


def _shotgun(d: _Draw, c: int, cx: str) -> list[_Sec]:
    dd = d.int(*_band(c, 9, 11))
    if cx == "simple":
        return [_Sec("main", 0, 0, 6, dd, ridge="y")]
    front = d.int(4, dd - 4)
    secs = [_Sec("main", 0, 0, 6, front, ridge="y"), _Sec("wing1", 0, front, 6, dd - front, 2, ridge="y")]
    if cx == "complex":
        secs.append(_Sec("wing2", 6, 1, d.int(2, 3), d.int(3, 4), ridge="x"))
    return secs


def _a_frame(d: _Draw, c: int, cx: str) -> list[_Sec]:
    span, length = d.int(6, 7), d.int(*_band(c, 7, 10))
    wings = {"simple": 0, "moderate": 1, "complex": 2}[cx]
    ww = min(3, (11 - span) // 2) if wings == 2 else 3
    x0 = ww if wings == 2 else 0
    secs = [_Sec("main", x0, 0, span, length, ridge="y", aframe=True)]
    if wings >= 1:
        secs.append(_Sec("wing1", x0 + span, 1, ww, d.int(4, min(5, length - 1)), ridge="x"))
    if wings == 2:
        secs.append(_Sec("wing2", 0, 1, ww, d.int(4, min(5, length - 1)), ridge="x"))
    return secs


_ARCHETYPES: dict[str, Callable[[_Draw, int, str], list[_Sec]]] = {
    "CY": _courtyard, "CR": _cruciform, "COL": _colonial, "SL": _split_level, "BN": _barn,
    "RN": _ranch, "TH": _townhouse, "ZP": _z_plan, "CH": _carriage, "FH": _farmhouse,
    "SB": _saltbox, "SH": _shotgun, "AF": _a_frame,
}  # fmt: skip


def _roof(d: _Draw, sec: _Sec, kind: str, cx: str, style: str) -> RoofSpec:
    axis = sec.ridge or ("x" if sec.w >= sec.d else "y")
    if sec.lean_to:
        kind = "shed"
    overhang = 0.3048 if cx == "simple" else d.pick((0.3048, 0.4572, 0.6096))
    rake = 0.3048 if cx != "simple" and kind in ("gable", "gambrel") and not sec.aframe else 0.0
    if sec.aframe:
        pitch = {"shed": 1.0, "gambrel": 0.75}.get(kind, d.pick((1.5, 1.732, 2.0)))
        return RoofSpec(kind, axis, pitch, lower_pitch=2.75, overhang_m=overhang, aframe=True)
    if kind == "shed":
        pitch = d.pick((0.25, 0.3333))
    elif kind == "gambrel":
        pitch = d.pick((0.4167, 0.5))
    else:
        pitch = d.pick((0.5, 0.5833, 0.6667, 0.75, 1.0 if style in ("COL", "FH", "SB") else 0.8333))
    return RoofSpec(
        kind,
        axis,
        pitch,
        lower_pitch=d.pick((1.5, 1.75)),
        overhang_m=overhang,
        rake_m=rake,
        ridge_frac=sec.ridge_frac if kind == "gable" else 0.5,
        high_side=sec.shed_high,
    )


def sample_params(task: TaskId, seed: int, attempt: int = 0) -> HouseParams | None:
    """Deterministic parameters of one task: the id fixes style, band, roof and complexity;
    ``seed``, the id and ``attempt`` seed every remaining choice.

    Args:
        task: Parsed task id.
        seed: Dataset seed (non-negative).
        attempt: Redraw counter, used when an earlier draw was rejected.

    Returns:
        The house parameters, or None when this draw admits no clean joist layout.
    """
    code_idx = STYLE_CODES.index(task.style)
    material = (int(seed), code_idx, task.config, task.index, attempt)
    rng = np.random.default_rng(np.random.SeedSequence(material))
    d = _Draw(rng)
    roof_type, cx = roof_for_index(task.index), complexity_for_index(task.index)
    secs = _ARCHETYPES[task.style](d, task.config, cx)
    drafted = tuple(
        SectionSpec(
            name=s.name,
            x0_m=round(s.x * MODULE, 4),
            y0_m=round(s.y * MODULE, 4),
            width_m=round(s.w * MODULE, 4),
            depth_m=round(s.d * MODULE, 4),
            z_base_m=s.z,
            stories=s.stories,
            roof=_roof(d, s, roof_type, cx, task.style),
        )
        for s in secs
    )
    sections = resolve_joist_axes(drafted)
    if sections is None:
        return None
    return HouseParams(
        task_id=str(task),
        style=task.style,
        config=task.config,
        roof_type=roof_type,
        complexity=cx,
        sections=sections,
        openings_per_wall=OPENINGS_PER_WALL[cx],
        interior_walls=cx == "complex",
        seed=material,
    )
