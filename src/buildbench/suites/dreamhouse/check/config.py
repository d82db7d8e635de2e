"""Validator thresholds and profiles.

Every constant carries its provenance: "paper T*" is the paper's appendix §6 (spec §4.2),
"README" the released harness's documentation (spec §4.3), "[S]" our own decision where
the sources leave a gap (each explained where it is used).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from buildbench.harness.errors import ConfigError

from .irc_spans import FLOOR_SPF2, RAFTER_SPF2_LL20, SPAN_TABLES, SpanTable

Profile = Literal["paper", "released"]

#: Input check run before every profile: bad names, duplicate names, unusable geometry.
MEMBER_CHECK = "member_integrity"

#: Paper appendix T1–T10, in order.
PAPER_TESTS: tuple[str, ...] = (
    "load_path", "span_limits", "oc_spacing", "standard_lumber", "deflection",
    "roof_coverage", "gap_detection", "cantilever", "stability_score", "dual_end_connection",
)  # fmt: skip

#: The released harness's 10 public test names, in its order (spec §2.6).
RELEASED_TESTS: tuple[str, ...] = (
    "completeness", "load_path", "span_limits", "deflection", "roof_coverage",
    "gap_detection", "point_load", "cantilever", "stability_score", "dual_end_connection",
)  # fmt: skip

PROFILE_TESTS: dict[str, tuple[str, ...]] = {"paper": PAPER_TESTS, "released": RELEASED_TESTS}

#: Short label and paper code of each test, for feedback text.
TEST_LABELS: dict[str, str] = {
    MEMBER_CHECK: "Members",
    "load_path": "Load path (T1)",
    "span_limits": "Span (T2)",
    "oc_spacing": "O.C. spacing (T3)",
    "standard_lumber": "Std. dimensions (T4)",
    "deflection": "Deflection (T5)",
    "roof_coverage": "Roof coverage (T6)",
    "gap_detection": "Gap detection (T7)",
    "cantilever": "Cantilever (T8)",
    "stability_score": "Stability (T9)",
    "dual_end_connection": "Dual-end (T10)",
    "completeness": "Completeness",
    "point_load": "Point load",
}

#: Paper Λ (T4): actual cross-sections in mm.
STANDARD_LUMBER_MM: tuple[tuple[float, float], ...] = (
    (38, 89), (38, 140), (38, 184), (38, 235), (38, 286), (89, 89), (140, 140),
)  # fmt: skip


@dataclass(frozen=True)
class ValidatorConfig:
    """All thresholds of the validator (lengths in metres unless the name says otherwise)."""

    contact_tol_m: float = 0.05
    """Paper T1 Def. 1: AABB gap tolerance ε of the contact relation."""
    ground_z_m: float = 0.1
    """Paper T1 Def. 2: a member is grounded when its AABB bottom z⁻ < this."""

    span_tol: float = 0.03
    """Paper T2: τ, allowed relative excess over the tabulated span."""
    joist_spans: SpanTable = FLOOR_SPF2
    """Paper T2 𝒯_J; see ``irc_spans`` for the table, species, grade and load."""
    rafter_spans: SpanTable = RAFTER_SPF2_LL20
    """Paper T2 𝒯_R; see ``irc_spans``."""

    spacing_standard_m: tuple[float, ...] = (0.406, 0.610)
    """Paper T3: standard on-centre spacings 𝒮."""
    spacing_tol_m: float = 0.05
    """Paper T3 Def. 4: |s − s*| must be below this."""
    spacing_doubled_m: float = 0.1
    """Paper T3: gaps ≤ this are doubled members and always pass."""
    spacing_elevation_tol_m: float = 0.01
    """[S] T3 grouping: joists whose bottoms differ by at most this share an elevation."""
    spacing_direction_tol_deg: float = 2.0
    """[S] T3 grouping: joists whose plan directions differ by at most this share a direction."""

    lumber_mm: tuple[tuple[float, float], ...] = STANDARD_LUMBER_MM
    """Paper T4: Λ."""
    lumber_width_tol_mm: float = 10.0
    """Paper T4: |d₁ − w*| must be below this."""
    lumber_depth_tol_mm: float = 20.0
    """Paper T4: |d₂ − d*| must be below this."""

    deflection_load_n_per_m: float = 1900.0
    """Paper T5: uniform load w."""
    deflection_modulus_pa: float = 12e9
    """Paper T5: E."""
    deflection_ratio: float = 360.0
    """Paper T5: δ* = L / ratio."""
    deflection_tol: float = 0.08
    """Paper T5: τ_δ."""

    grid_cell_m: float = 1.0
    """Paper T6: plan grid cell size."""
    roof_margin_m: float = 0.3
    """Paper T6: μ, margin added around each rafter's plan projection."""
    coverage_min: float = 0.70
    """Paper T6: ρ must be at least this."""
    gap_max: float = 0.20
    """Paper T7: γ must be at most this."""
    max_grid_cells: int = 4_000_000
    """[S] T6/T7 give a failing result instead of allocating a larger plan grid."""

    elevated_sill_z_m: float = 1.0
    """Paper T8: a sill with z⁻ above this is elevated."""
    cantilever_lateral_m: float = 1.5
    """Paper T8: c_max, lateral reach of a support."""
    cantilever_spacing_m: float = 3.0
    """Paper T8: c_sp, long-sill length and largest support gap."""
    released_cantilever_backspan_ratio: float = 0.25
    """README ``cantilever``: an overhang may reach backspan/4 …"""
    released_cantilever_max_m: float = 0.6096
    """README ``cantilever``: … or 24 in."""

    stability_min_paper: float = 1.0
    """Paper T9: Σ must be at least this."""
    stability_min_released: float = 0.8
    """README ``stability_score``: at least 80% of members connected to the ground."""

    dual_end_min_height_m: float = 0.3
    """Paper T10: only rafters/studs with AABB height ≥ this are checked."""
    dual_end_alpha: float = 0.20
    """Paper T10: α, connection zone fraction of the height."""
    dual_end_tol_m: float = 0.10
    """Paper T10: ε_c, xy overlap and zone intersection tolerance."""
    dual_end_rafters: tuple[str, ...] = ("Rafter", "Hip", "Valley")
    """[S] T10 'rafters': hip and valley rafters (README keywords) are rafters too."""
    dual_end_studs: tuple[str, ...] = ("Stud", "GableStud")
    """[S] T10 'studs': gable-end studs are studs."""

    point_load_categories: tuple[str, ...] = ("Post", "BeamPost", "King", "Trimmer")
    """[S] README ``point_load``: members that carry concentrated loads to what is below."""

    max_coordinate_m: float = 1e6
    """[S] Sizes and coordinates beyond this (1,000 km) are unusable geometry, like NaN."""
    min_size_m: float = 1e-4
    """[S] A box thinner than this (0.1 mm) on any axis is degenerate geometry."""
    max_contact_pairs: int = 5_000_000
    """[S] Contact detection gives up (failing the contact-based tests) when it would hold
    more pairs than this (or sweep more than 20 times as many candidates), which only a
    pile of coincident boxes reaches."""
    max_messages: int = 12
    """Messages kept per test; the rest are counted in a final line."""

    strict_names: bool | None = None
    """Paper naming (case-sensitive prefix, no README aliases); ``None``: the profile decides."""

    extra_tests: tuple[str, ...] = field(default=())
    """Tests run after the profile's own (e.g. ``("completeness", "point_load")`` on ``paper``)."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ValidatorConfig:
        """A config from plain data (a parsed YAML/JSON file); span tables are given by name.

        Raises:
            ConfigError: For an unknown field, an unknown span table or a value of the wrong kind.
        """
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ConfigError(f"unknown validator setting(s) {', '.join(unknown)}; known: {', '.join(known)}")
        values: dict[str, Any] = {}
        for key, raw in data.items():
            default = getattr(cls(), key)
            if isinstance(default, SpanTable):
                if raw not in SPAN_TABLES:
                    raise ConfigError(f"{key}: unknown span table {raw!r}; known: {', '.join(SPAN_TABLES)}")
                values[key] = SPAN_TABLES[raw]
            elif isinstance(default, tuple):
                if not isinstance(raw, list | tuple):
                    raise ConfigError(f"{key}: expected a list, got {raw!r}")
                values[key] = tuple(tuple(v) if isinstance(v, list) else v for v in raw)
            elif isinstance(default, bool) or default is None:
                if raw is not None and not isinstance(raw, bool):
                    raise ConfigError(f"{key}: expected true, false or null, got {raw!r}")
                values[key] = raw
            elif isinstance(raw, bool) or not isinstance(raw, int | float):
                raise ConfigError(f"{key}: expected a number, got {raw!r}")
            else:
                values[key] = type(default)(raw)
        return cls(**values)

    @property
    def search_tol_m(self) -> float:
        """Largest AABB gap any test looks across (sizes the broad phase)."""
        return max(self.contact_tol_m, self.dual_end_tol_m)
