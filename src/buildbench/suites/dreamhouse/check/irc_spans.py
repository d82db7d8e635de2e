"""Allowable spans from IRC span tables, as data (paper appendix T2: 𝒯_J and 𝒯_R).

The paper cites the IRC 2018 but names no table, species, grade or load (spec §4.2). We
tabulate, in feet-inches as printed, the rows we need from:

* **Table R502.3.1(2)** — floor joist spans for common lumber species, residential living
  areas, live load 40 psf, dead load 10 psf, L/Δ = 360. Rows: spruce-pine-fir No. 2 (our
  default) and Douglas fir-larch No. 2. Columns 12, 16 and 24 in o.c.
* **Table R802.4.1(1)** — rafter spans, roof live load 20 psf, ceiling not attached to
  rafters (L/Δ = 180), dead load 10 psf; spruce-pine-fir No. 2; 16 and 24 in o.c. Spans
  are horizontal projections.
* **Table R802.4.1(5)** — the same for ground snow load 50 psf (selectable).

These rows read the same in the 2015, 2018 and 2021 editions. They were cross-checked
against the beam formula they derive from (bending with Fb·C_F·C_r and L/360 deflection
with E = 1.4e6 psi for SPF): each joist value agrees within a few per cent. Verify against
the printed code before relying on them for design.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

_INCH_M = 0.0254
_FOOT_M = 0.3048

#: Actual sizes (mm) of the nominal dimension lumber the tables cover.
NOMINAL_MM: Mapping[str, tuple[int, int]] = {
    "2x4": (38, 89),
    "2x6": (38, 140),
    "2x8": (38, 184),
    "2x10": (38, 235),
    "2x12": (38, 286),
}


def feet_inches_m(text: str) -> float:
    """Metres from a span printed as ``"15-5"`` (feet-inches)."""
    feet, inches = text.split("-")
    return int(feet) * _FOOT_M + int(inches) * _INCH_M


@dataclass(frozen=True)
class SpanTable:
    """One IRC span table row set: nominal size × o.c. spacing → allowable span.

    Attributes:
        name: Short id used in config and messages.
        source: Table, species/grade and load case, as cited.
        spacings_in: Column spacings in inches, ascending.
        spans_ft_in: Nominal size → spans as printed (feet-inches), one per column.
    """

    name: str
    source: str
    spacings_in: tuple[float, ...]
    spans_ft_in: Mapping[str, tuple[str, ...]]

    @property
    def spacings_m(self) -> tuple[float, ...]:
        """Column spacings in metres."""
        return tuple(s * _INCH_M for s in self.spacings_in)

    def span_m(self, nominal: str, column: int) -> float:
        """Allowable span in metres for ``nominal`` (e.g. ``"2x10"``) in spacing column ``column``."""
        return feet_inches_m(self.spans_ft_in[nominal][column])


FLOOR_SPF2 = SpanTable(
    name="irc2018-R502.3.1(2)-SPF2-40/10",
    source="IRC 2018 Table R502.3.1(2), spruce-pine-fir No. 2, 40 psf live / 10 psf dead, L/360",
    spacings_in=(12.0, 16.0, 24.0),
    spans_ft_in={
        "2x6": ("10-3", "9-4", "8-1"),
        "2x8": ("13-6", "12-3", "10-3"),
        "2x10": ("17-3", "15-5", "12-7"),
        "2x12": ("20-7", "17-10", "14-7"),
    },
)

FLOOR_DFL2 = SpanTable(
    name="irc2018-R502.3.1(2)-DFL2-40/10",
    source="IRC 2018 Table R502.3.1(2), Douglas fir-larch No. 2, 40 psf live / 10 psf dead, L/360",
    spacings_in=(12.0, 16.0, 24.0),
    spans_ft_in={
        "2x6": ("10-9", "9-9", "8-3"),
        "2x8": ("14-2", "12-9", "10-5"),
        "2x10": ("18-0", "15-7", "12-9"),
        "2x12": ("20-11", "18-1", "14-9"),
    },
)

RAFTER_SPF2_LL20 = SpanTable(
    name="irc2018-R802.4.1(1)-SPF2-LL20",
    source="IRC 2018 Table R802.4.1(1), spruce-pine-fir No. 2, roof live 20 psf / dead 10 psf, "
    "ceiling not attached (L/180), horizontal projection",
    spacings_in=(16.0, 24.0),
    spans_ft_in={
        "2x6": ("14-4", "11-9"),
        "2x8": ("18-2", "14-10"),
        "2x10": ("22-3", "18-2"),
        "2x12": ("25-9", "21-0"),
    },
)

RAFTER_SPF2_SNOW50 = SpanTable(
    name="irc2018-R802.4.1(5)-SPF2-snow50",
    source="IRC 2018 Table R802.4.1(5), spruce-pine-fir No. 2, ground snow 50 psf / dead 10 psf, "
    "ceiling not attached, horizontal projection",
    spacings_in=(16.0, 24.0),
    spans_ft_in={
        "2x6": ("9-9", "7-11"),
        "2x8": ("12-4", "10-1"),
        "2x10": ("15-1", "12-4"),
        "2x12": ("17-6", "14-3"),
    },
)

#: Every table by name, for config files.
SPAN_TABLES: Mapping[str, SpanTable] = {
    t.name: t for t in (FLOOR_SPF2, FLOOR_DFL2, RAFTER_SPF2_LL20, RAFTER_SPF2_SNOW50)
}
