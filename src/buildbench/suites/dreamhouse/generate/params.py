"""Generator parameters: the JSON-able config a house is built from (paper §3: "a JSON
configuration defining footprint dimensions, story count, roof pitch, overhang depth").

A house is a set of rectangular *sections* (main body, wings) on the 4 ft planning module;
each section has its own base elevation, story count and roof. All lengths are metres.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from buildbench.harness.errors import ConfigError

from .ids import COMPLEXITIES, ROOF_TYPES, STYLE_NAMES


@dataclass(frozen=True)
class RoofSpec:
    """Roof of one section.

    Attributes:
        kind: ``gable``, ``hip``, ``gambrel`` or ``shed``.
        ridge_axis: World axis the ridge runs along (``x`` or ``y``); rafters run across it.
        pitch: Rise over run of the main planes (gambrel: of the upper planes).
        lower_pitch: Gambrel only: rise over run of the steep lower planes.
        overhang_m: Horizontal eave overhang past the wall.
        rake_m: Gable-end overhang (fly rafters on lookouts); 0 for none.
        ridge_frac: Ridge position across the span (0.5 symmetric; saltbox < 0.5).
        high_side: Shed only: +1 when the high wall is at the far side of the span, -1 near.
        aframe: Rafters bear on plates at the floor deck (no eave walls): the A-frame form.
    """

    kind: str
    ridge_axis: str
    pitch: float
    lower_pitch: float = 0.0
    overhang_m: float = 0.3048
    rake_m: float = 0.0
    ridge_frac: float = 0.5
    high_side: int = 1
    aframe: bool = False


@dataclass(frozen=True)
class SectionSpec:
    """A rectangular section (main body or wing).

    Attributes:
        name: Section name used in member names (``main``, ``wing1``…).
        x0_m, y0_m: Plan corner with the smallest coordinates.
        width_m: Extent along x.
        depth_m: Extent along y.
        z_base_m: Elevation of the sill bottoms (0 on the ground; split levels higher).
        stories: Number of stories (1–3).
        roof: The section's roof.
        joist_axis: World axis the floor joists run along (``x`` or ``y``).
    """

    name: str
    x0_m: float
    y0_m: float
    width_m: float
    depth_m: float
    z_base_m: float
    stories: int
    roof: RoofSpec
    joist_axis: str = "y"

    @property
    def x1_m(self) -> float:
        """Largest x of the section."""
        return self.x0_m + self.width_m

    @property
    def y1_m(self) -> float:
        """Largest y of the section."""
        return self.y0_m + self.depth_m


@dataclass(frozen=True)
class HouseParams:
    """Everything needed to rebuild one house deterministically.

    Attributes:
        task_id: ``<STYLE>_<NN>_<NNNN>``.
        style: Style code.
        config: Archetype configuration (lot-size band) 1–6.
        roof_type: House roof type (the evaluation stratum).
        complexity: ``simple``, ``moderate`` or ``complex``.
        sections: Main body first, then wings.
        openings_per_wall: Mean openings per exterior wall segment of one story.
        interior_walls: Add non-bearing partitions on the top story.
        seed: The ``numpy`` seed material used for details (openings).
    """

    task_id: str
    style: str
    config: int
    roof_type: str
    complexity: str
    sections: tuple[SectionSpec, ...]
    openings_per_wall: float
    interior_walls: bool
    seed: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.style not in STYLE_NAMES:
            raise ConfigError(f"unknown style code {self.style!r}")
        if self.roof_type not in ROOF_TYPES:
            raise ConfigError(f"roof_type {self.roof_type!r} is not one of {', '.join(ROOF_TYPES)}")
        if self.complexity not in COMPLEXITIES:
            raise ConfigError(f"complexity {self.complexity!r} is not one of {', '.join(COMPLEXITIES)}")
        if not self.sections:
            raise ConfigError(f"{self.task_id}: a house needs at least one section")
        if len({s.name for s in self.sections}) != len(self.sections):
            raise ConfigError(f"{self.task_id}: section names must be unique")
        for s in self.sections:
            where = f"{self.task_id}: section {s.name!r}"
            if not 1 <= s.stories <= 3:
                raise ConfigError(f"{where} has {s.stories} stories (allowed 1–3)")
            if not (s.width_m >= MIN_SECTION_M and s.depth_m >= MIN_SECTION_M):
                raise ConfigError(
                    f"{where} is {s.width_m} x {s.depth_m} m; each side must be ≥ {MIN_SECTION_M} m"
                )
            if s.joist_axis not in ("x", "y") or s.roof.ridge_axis not in ("x", "y"):
                raise ConfigError(f"{where}: joist_axis and roof.ridge_axis must be 'x' or 'y'")
            if s.roof.kind not in ROOF_TYPES:
                raise ConfigError(f"{where}: roof kind {s.roof.kind!r} is not one of {', '.join(ROOF_TYPES)}")
            if not (0.0 < s.roof.pitch <= 3.0) or s.roof.overhang_m < 0 or s.roof.rake_m < 0:
                raise ConfigError(f"{where}: roof pitch must be in (0, 3] and overhangs non-negative")
            if s.roof.kind == "gambrel" and not s.roof.lower_pitch > s.roof.pitch:
                raise ConfigError(f"{where}: a gambrel's lower_pitch must exceed its pitch")
            if not 0.2 <= s.roof.ridge_frac <= 0.8:
                raise ConfigError(f"{where}: ridge_frac must be within 0.2–0.8")

    @property
    def stories(self) -> int:
        """Story count of the house (its tallest section)."""
        return max(s.stories for s in self.sections)

    @property
    def wings(self) -> int:
        """Number of sections besides the main body."""
        return len(self.sections) - 1

    @property
    def bounds_m(self) -> tuple[float, float, float, float]:
        """Plan bounds ``(x_min, x_max, y_min, y_max)`` over all sections."""
        return (
            min(s.x0_m for s in self.sections),
            max(s.x1_m for s in self.sections),
            min(s.y0_m for s in self.sections),
            max(s.y1_m for s in self.sections),
        )

    @property
    def footprint_m(self) -> tuple[float, float]:
        """Overall plan extents (x, y), rounded to centimetres as served to agents."""
        x0, x1, y0, y1 = self.bounds_m
        return round(x1 - x0, 2), round(y1 - y0, 2)

    def constraints(self) -> dict[str, Any]:
        """The task constraints in the released server's shape (spec §2.4)."""
        fx, fy = self.footprint_m
        return {
            "footprint_x": fx,
            "footprint_y": fy,
            "stories": self.stories,
            "roof_type": self.roof_type,
            "lot_width": round(fx + LOT_MARGIN_M, 2),
            "lot_depth": round(fy + LOT_MARGIN_M, 2),
            "wings": self.wings,
            "complexity": self.complexity,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (round-trips through :func:`params_from_dict`)."""
        d = asdict(self)
        d["seed"] = list(self.seed)
        return d


#: Smallest section side (one 4 ft planning module).
MIN_SECTION_M = 1.2192
#: Lot = footprint + 2.0 m on each axis (released walkthrough task, spec §2.4 [D]).
LOT_MARGIN_M = 2.0


def params_from_dict(data: dict[str, Any]) -> HouseParams:
    """Rebuild :class:`HouseParams` from :meth:`HouseParams.to_dict` output.

    Raises:
        ConfigError: When a field is missing or has the wrong type.
    """
    try:
        sections = tuple(SectionSpec(**{**s, "roof": RoofSpec(**s["roof"])}) for s in data["sections"])
        return HouseParams(**{**data, "sections": sections, "seed": tuple(data.get("seed", ()))})
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"house params are malformed: {exc}") from exc
