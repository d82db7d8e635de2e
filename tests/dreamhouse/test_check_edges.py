"""Hand-computed cases just inside and just outside every threshold of every test."""

from __future__ import annotations

import math
import re

import pytest

from buildbench.harness.errors import ConfigError
from buildbench.suites.dreamhouse.check import TestResult, ValidatorConfig, validate
from buildbench.suites.dreamhouse.check.irc_spans import FLOOR_SPF2, RAFTER_SPF2_LL20, feet_inches_m
from buildbench.suites.dreamhouse.model import Member, Structure

ALL = ("completeness", "point_load")


def box(name: str, lo: tuple[float, float, float], hi: tuple[float, float, float]) -> Member:
    return Member.from_aabb(name, lo, hi)


def run(members: list[Member], test: str, profile: str = "paper", **cfg: object) -> TestResult:
    config = ValidatorConfig(extra_tests=ALL, **cfg)  # type: ignore[arg-type]
    return validate(Structure.from_members(members), profile, config)[test]


# -- T1 load path / T9 stability ------------------------------------------------------------
@pytest.mark.parametrize(("sill_z", "grounded"), [(0.099, True), (0.101, False)])
def test_t1_ground_set_threshold(sill_z: float, grounded: bool) -> None:
    r = run([box("Sill_1", (0, 0, sill_z), (4, 0.14, sill_z + 0.038))], "load_path")
    assert r.passed is grounded
    if not grounded:
        assert r.members == ("Sill_1",) and "z⁻ < 0.1 m" in r.messages[0]


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize(("gap", "ok"), [(0.049, True), (0.051, False)])
def test_t1_contact_tolerance_on_each_axis(axis: int, gap: float, ok: bool) -> None:
    post = box("Post_1", (0, 0, 0), (0.1, 0.1, 2.0))
    lo, hi = [0.0, 0.0, 1.0], [0.1, 0.1, 1.5]
    if axis == 2:
        lo[2], hi[2] = 2.0 + gap, 2.5 + gap
    else:
        lo[axis], hi[axis] = 0.1 + gap, 0.2 + gap
    r = run([post, box("Header_1", tuple(lo), tuple(hi))], "load_path")  # type: ignore[arg-type]
    assert r.passed is ok
    assert r.members == (() if ok else ("Header_1",))


def test_t1_support_propagates_through_a_chain() -> None:
    chain = [box("Sill_1", (0, 0, 0), (1, 1, 0.038))]
    for k in range(1, 30):  # each 0.04 m above the last: connected only through the chain
        z = 0.038 + k * 0.04 + (k - 1) * 0.1
        chain.append(box(f"Stud_{k}", (0, 0, z), (0.1, 0.1, z + 0.1)))
    assert run(chain, "load_path").passed
    chain[15] = box("Stud_15", (5, 5, 2), (5.1, 5.1, 2.1))  # break the chain: 14 members above it float
    r = run(chain, "load_path")
    assert not r.passed and r.measured["unsupported"] == 15


def _grounded_and_floating(n_grounded: int, n_floating: int) -> list[Member]:
    ms = [box("Sill_1", (0, 0, 0), (8, 0.14, 0.15))]  # studs on it start above the ground threshold
    ms += [box(f"Stud_{k}", (k * 0.5, 0, 0.15), (k * 0.5 + 0.038, 0.089, 2.4)) for k in range(n_grounded - 1)]
    ms += [box(f"Rafter_{k}", (k, 5, 5), (k + 0.038, 6, 5.2)) for k in range(n_floating)]
    return ms


@pytest.mark.parametrize(
    ("grounded", "floating", "paper_ok", "released_ok"),
    [(5, 0, True, True), (4, 1, False, True), (3, 1, False, False)],  # Σ = 1.0, 0.8, 0.75
)
def test_t9_stability_thresholds(grounded: int, floating: int, paper_ok: bool, released_ok: bool) -> None:
    ms = _grounded_and_floating(grounded, floating)
    paper = run(ms, "stability_score")
    released = run(ms, "stability_score", "released")
    assert paper.passed is paper_ok and released.passed is released_ok
    assert paper.measured["score"] == pytest.approx(grounded / (grounded + floating))
    assert paper.measured["grounded_members"] == grounded
    if not paper_ok:
        assert "Rafter_0" in paper.messages[0] and "< 1" in paper.messages[0]


def test_t9_released_needs_something_above_the_ground() -> None:
    flat = [box(f"Sill_{k}", (0, k, 0), (4, k + 0.14, 0.038)) for k in range(4)]
    r = run(flat, "stability_score", "released")
    assert not r.passed and "nothing is framed above it" in r.messages[0]
    assert run(flat, "stability_score").passed  # the paper's Σ is 1.0 here


def test_released_load_path_is_roof_to_foundation() -> None:
    sill = box("Sill_1", (0, 0, 0), (4, 0.14, 0.038))
    stud = box("Stud_1", (0, 0, 0.038), (0.038, 0.089, 2.4))
    rafter = box("Rafter_1", (0, 0, 2.4), (0.038, 2.0, 3.0))
    floating_wall = box("Stud_9", (3, 3, 1), (3.038, 3.089, 2))
    assert run([sill, stud, rafter, floating_wall], "load_path", "released").passed
    assert not run([sill, stud, rafter, floating_wall], "load_path").passed  # T1 sees Stud_9
    r = run([sill, stud], "load_path", "released")
    assert not r.passed and "no roof members" in r.messages[0]
    lifted = box("Rafter_1", (0, 0, 2.5), (0.038, 2.0, 3.0))
    r = run([sill, stud, lifted], "load_path", "released")
    assert r.members == ("Rafter_1",)


# -- T2 span limits -------------------------------------------------------------------------
def _joists(length: float, n: int, oc: float = 0.406, depth: float = 0.235) -> list[Member]:
    return [box(f"Joist_{k:03d}", (k * oc, 0, 0), (k * oc + 0.038, length, depth)) for k in range(n)]


def test_t2_allowed_spans_are_the_printed_table_values() -> None:
    assert FLOOR_SPF2.span_m("2x10", 1) == pytest.approx(15 * 0.3048 + 5 * 0.0254)  # 15-5 = 4.699 m
    assert RAFTER_SPF2_LL20.span_m("2x8", 1) == pytest.approx(feet_inches_m("14-10"))
    assert FLOOR_SPF2.spacings_m == pytest.approx((0.3048, 0.4064, 0.6096))


@pytest.mark.parametrize(("slack", "ok"), [(-0.005, True), (0.005, False)])
def test_t2_joist_at_16_in(slack: float, ok: bool) -> None:
    limit = 1.03 * feet_inches_m("15-5")  # 2x10 at 406 mm o.c.
    r = run(_joists(limit + slack, 3), "span_limits")
    assert r.passed is ok
    if not ok:
        assert re.fullmatch(
            r"Span: Joist_00\d clear span 4\.84 m > 1\.03 × 4\.70 m allowed for 38×235 at 406 mm o\.c\.",
            r.messages[0],
        )


@pytest.mark.parametrize(("slack", "ok"), [(-0.005, True), (0.005, False)])
def test_t2_lone_joist_is_checked_in_the_widest_column(slack: float, ok: bool) -> None:
    limit = 1.03 * feet_inches_m("12-7")  # 2x10, 24 in column
    r = run(_joists(limit + slack, 1), "span_limits")
    assert r.passed is ok


def test_t2_table_column_follows_measured_spacing() -> None:
    length = 1.03 * feet_inches_m("12-7") + 0.2  # over the 24 in span, under the 16 in span
    assert run(_joists(length, 3, oc=0.406), "span_limits").passed
    assert run(_joists(length, 3, oc=0.455), "span_limits").passed  # within 0.05 of 16 in
    assert not run(_joists(length, 3, oc=0.458), "span_limits").passed  # needs the 24 in column


def test_t2_untabulated_section_fails_with_a_reason() -> None:
    r = run(_joists(2.0, 1, depth=0.089), "span_limits")  # 2x4 joist: not in R502.3.1(2)
    assert not r.passed and "38×89 mm has no allowable joist span" in r.messages[0]


def _rafter(name: str, plan_m: float, x: float = 0.0) -> Member:
    pitch = math.radians(30)
    length = plan_m / math.cos(pitch)
    return Member.box(name, (0.038, length, 0.184), (x, plan_m / 2, 3.0), (pitch, 0, 0))


@pytest.mark.parametrize(("slack", "ok"), [(-0.005, True), (0.005, False)])
def test_t2_rafter_span_is_the_horizontal_projection(slack: float, ok: bool) -> None:
    limit = 1.03 * feet_inches_m("14-10")  # 2x8 rafter, 24 in column (lone rafter)
    r = run([_rafter("Rafter_1", limit + slack)], "span_limits")
    assert r.passed is ok


@pytest.mark.parametrize(("slack", "ok"), [(-0.01, True), (0.01, False)])
def test_t2_purlin_halves_the_rafter_span(slack: float, ok: bool) -> None:
    plan = 2 * 1.03 * feet_inches_m("14-10") + slack
    rafter = _rafter("Rafter_1", plan)
    lo = Structure.from_members([rafter]).aabb_min_m[0]
    hi = Structure.from_members([rafter]).aabb_max_m[0]
    mid = (lo + hi) / 2
    purlin = box("Purlin_1", (-1, mid[1] - 0.05, hi[2] - 0.1), (1, mid[1] + 0.05, hi[2] + 0.1))
    r = run([rafter, purlin], "span_limits")
    assert r.passed is ok and r.measured["purlin_braced"] == 1
    assert not run([rafter], "span_limits").passed  # without the purlin the full span counts


# -- T3 on-centre spacing -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("oc", "ok"),
    [(0.455, True), (0.457, False), (0.561, True), (0.559, False), (0.659, True), (0.661, False),
     (0.099, True), (0.101, False), (0.0, True)],
)  # fmt: skip
def test_t3_spacing_edges(oc: float, ok: bool) -> None:
    r = run(_joists(3.0, 3, oc=oc), "oc_spacing")
    assert r.passed is ok
    if not ok:
        assert f"{oc:.3f} m apart" in r.messages[0]


def test_t3_groups_by_elevation_direction_and_overlap() -> None:
    a = box("Joist_a", (0, 0, 0), (0.038, 3, 0.235))
    b_high = box("Joist_b", (0.2, 0, 0.5), (0.238, 3, 0.735))  # other elevation
    c_cross = box("Joist_c", (0.3, 0.5, 0), (3.3, 0.538, 0.235))  # other direction
    d_far = box("Joist_d", (0.2, 3.2, 0), (0.238, 6, 0.235))  # same line, no overlap along y
    assert run([a, b_high, c_cross, d_far], "oc_spacing").passed
    e = box("Joist_e", (0.2, 1, 0), (0.238, 4, 0.235))  # overlaps a along y: 0.2 m bay
    r = run([a, e], "oc_spacing")
    assert not r.passed and set(r.members) == {"Joist_a", "Joist_e"}


# -- T4 standard lumber ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("w", "d", "ok"),
    [(0.0479, 0.089, True), (0.0481, 0.089, False), (0.038, 0.1089, True), (0.038, 0.1091, False),
     (0.0281, 0.0691, True), (0.089, 0.089, True), (0.140, 0.140, True), (0.05, 0.10, False)],
)  # fmt: skip
def test_t4_cross_section_tolerances(w: float, d: float, ok: bool) -> None:
    r = run([Member.box("Stud_1", (d, w, 2.4), (0, 0, 1.2), (0, 0, 0.3))], "standard_lumber")
    assert r.passed is ok
    if not ok:
        assert "is not standard lumber" in r.messages[0]


def test_t4_uses_local_sizes_so_a_sloped_rafter_passes() -> None:
    assert run([_rafter("Rafter_1", 3.0)], "standard_lumber").passed


# -- T5 deflection --------------------------------------------------------------------------
def _max_joist_length(b: float, h: float) -> float:
    inertia = b * h**3 / 12
    return (1.08 * 384 * 12e9 * inertia / (360 * 5 * 1900)) ** (1 / 3)


def test_t5_hand_computed_limits() -> None:
    assert _max_joist_length(0.038, 0.235) == pytest.approx(3.91, abs=0.005)  # spec §3.2 table
    assert _max_joist_length(0.038, 0.286) == pytest.approx(4.76, abs=0.005)


@pytest.mark.parametrize(("length", "ok"), [(3.90, True), (3.92, False)])
def test_t5_2x10_edge(length: float, ok: bool) -> None:
    r = run(_joists(length, 1), "deflection")
    assert r.passed is ok
    delta = 5 * 1900 * length**4 / (384 * 12e9 * 0.038 * 0.235**3 / 12)
    assert r.measured["worst_ratio"] == pytest.approx(delta / (1.08 * length / 360))
    if not ok:
        assert f"δ = {delta * 1000:.1f} mm > 1.08 × L/360 = {1.08 * 3.92 / 0.36:.1f} mm" in r.messages[0]


def test_t5_only_joists_and_aabb_depth() -> None:
    assert run([box("Rim_1", (0, 0, 0), (8, 0.038, 0.235))], "deflection").passed  # rims are not joists
    flat = box("Joist_1", (0, 0, 0), (0.235, 2.0, 0.038))  # laid flat: h = 38 mm
    assert not run([flat], "deflection").passed


# -- T6 roof coverage / T7 gap detection ----------------------------------------------------
def _roof_case(covered_cells: int, end_pad: float = -0.31) -> list[Member]:
    floor = box("Sill_1", (0, 0, 0), (10, 1, 0.038))  # 10 cells of 1 m
    end = covered_cells + end_pad  # rafter plan end; +0.3 m margin reaches covered_cells - 0.01
    return [floor, box("Rafter_1", (0.3, 0.3, 2), (end, 0.7, 3))]


@pytest.mark.parametrize(
    ("cells", "coverage_ok", "gap_ok"), [(6, False, False), (7, True, False), (8, True, True)]
)  # ρ = 0.6, 0.7 (≥ 0.70 passes), 0.8 (γ = 0.2 ≤ 0.20 passes)
def test_t6_t7_thresholds(cells: int, coverage_ok: bool, gap_ok: bool) -> None:
    cov = run(_roof_case(cells), "roof_coverage")
    gap = run(_roof_case(cells), "gap_detection")
    assert cov.passed is coverage_ok and gap.passed is gap_ok
    assert cov.measured["rho"] == pytest.approx(cells / 10)
    assert gap.measured["gamma"] == pytest.approx(1 - cells / 10)


def test_t6_margin_reaches_the_next_cell_only_past_its_line() -> None:
    inside = run(_roof_case(7, end_pad=-0.31), "roof_coverage").measured["covered_cells"]
    across = run(_roof_case(7, end_pad=-0.29), "roof_coverage").measured["covered_cells"]
    assert (inside, across) == (7, 8)


def test_t6_t7_fail_without_a_footprint_and_report_where_gaps_are() -> None:
    r = run([box("Rafter_1", (0, 0, 2), (1, 1, 3))], "roof_coverage")
    assert not r.passed and "no floor or sill members" in r.messages[0]
    g = run(_roof_case(6), "gap_detection")
    assert "within x 6.0–10.0 m, y 0.0–1.0 m" in g.messages[0]


def test_t6_grid_size_cap() -> None:
    far = [box("Sill_1", (0, 0, 0), (1, 1, 0.038)), box("Sill_2", (5000, 5000, 0), (5001, 5001, 0.038))]
    r = run(far, "roof_coverage", max_grid_cells=1_000_000)
    assert not r.passed and "grid cells" in r.messages[0]


# -- T8 cantilever --------------------------------------------------------------------------
def _post(name: str, x: float, y: float, top: float = 1.2) -> Member:
    return box(name, (x, y, 0), (x + 0.089, y + 0.089, top))


@pytest.mark.parametrize(("z", "checked"), [(1.0, False), (1.01, True)])
def test_t8_elevated_threshold(z: float, checked: bool) -> None:
    r = run([box("Sill_1", (0, 0, z), (2, 0.14, z + 0.038))], "cantilever")  # no supports at all
    assert r.passed is not checked and r.measured["elevated_sills"] == int(checked)


@pytest.mark.parametrize(("lateral", "ok"), [(1.49, True), (1.51, False)])
def test_t8_short_sill_needs_a_support_within_reach(lateral: float, ok: bool) -> None:
    sill = box("Sill_1", (0, 0, 1.2), (2.0, 0.14, 1.238))
    post = _post("Post_1", 1.0, 0.14 + lateral)  # plan distance = lateral
    assert run([sill, post], "cantilever").passed is ok


@pytest.mark.parametrize(("spacing", "ok"), [(2.99, True), (3.01, False)])
def test_t8_long_sill_support_spacing(spacing: float, ok: bool) -> None:
    sill = box("Sill_1", (0, 0, 1.2), (6.0, 0.14, 1.238))
    posts = [_post("BeamPost_01", 0.5, 0.0), _post("BeamPost_02", 0.5 + spacing, 0.0)]
    r = run([sill, *posts], "cantilever")
    assert r.passed is ok
    if not ok:
        assert r.messages[0] == (
            "Cantilever: support gap under elevated Sill_1 exceeds 3 m; detected spacing 3.01 m between "
            "BeamPost_01 and BeamPost_02"
        )


def test_t8_long_sill_needs_two_supports_and_only_upright_grounded_ones_count() -> None:
    sill = box("Sill_1", (0, 0, 1.2), (3.01, 0.14, 1.238))  # just over c_sp = 3.0 m long
    r = run([sill, _post("Post_1", 1.0, 0.0)], "cantilever")
    assert not r.passed and "needs ≥ 2" in r.messages[0]
    short = box("Sill_1", (0, 0, 1.2), (2.99, 0.14, 1.238))
    assert run([short, _post("Post_1", 1.0, 0.0)], "cantilever").passed
    lying = box("Post_2", (2.0, 0.0, 0.0), (4.0, 0.089, 0.089))  # grounded but flat: not a support
    assert not run([sill, _post("Post_1", 1.0, 0.0), lying], "cantilever").passed


def _cantilevered_joist(second_bearing_x: float, length: float = 5.0) -> list[Member]:
    return [
        box("Joist_1", (0, 0, 0.038), (length, 0.038, 0.273)),
        box("Sill_1", (0, -0.1, 0), (0.14, 0.2, 0.038)),
        box("Sill_2", (second_bearing_x, -0.1, 0), (second_bearing_x + 0.14, 0.2, 0.038)),
    ]


@pytest.mark.parametrize(("x2", "ok"), [(3.93, True), (3.90, False)])
def test_released_cantilever_backspan_quarter(x2: float, ok: bool) -> None:
    # overhang = 5 - (x2 + 0.14); backspan = x2 - 0.14; limit = max(backspan / 4, 0.6096)
    r = run(_cantilevered_joist(x2), "cantilever", "released")
    assert r.passed is ok
    if not ok:
        assert "overhangs its outermost bearing by 0.96 m > 0.94 m" in r.messages[0]


@pytest.mark.parametrize(("length", "ok"), [(1.34, True), (1.36, False)])
def test_released_cantilever_24_in_floor(length: float, ok: bool) -> None:
    # Bearings at 0–0.14 and 0.6–0.74: backspan 0.46 m, so 24 in governs: overhang = length - 0.74.
    assert run(_cantilevered_joist(0.6, length), "cantilever", "released").passed is ok


def test_released_cantilever_ignores_members_resting_on_the_joist() -> None:
    ms = _cantilevered_joist(0.6, 3.0) + [box("SolePlate_1", (2.9, -0.1, 0.273), (3.0, 0.2, 0.311))]
    assert not run(ms, "cantilever", "released").passed  # the plate on top is no bearing


# -- T10 dual-end connection ----------------------------------------------------------------
def _stud(h: float = 2.0, z0: float = 1.0) -> Member:
    return box("Stud_1", (0, 0, z0), (0.038, 0.089, z0 + h))


@pytest.mark.parametrize(("h", "checked"), [(0.301, True), (0.299, False)])
def test_t10_height_threshold(h: float, checked: bool) -> None:
    r = run([_stud(h)], "dual_end_connection")
    assert r.passed is not checked and r.measured["studs_checked"] == int(checked)


@pytest.mark.parametrize(
    ("below_top", "above_bottom", "ok"), [(0.91, 3.09, True), (0.89, 3.09, False), (0.91, 3.11, False)]
)
def test_t10_zone_tolerance(below_top: float, above_bottom: float, ok: bool) -> None:
    plate_lo = box("SolePlate_1", (-1, 0, below_top - 0.038), (1, 0.089, below_top))
    plate_hi = box("TopPlate_1", (-1, 0, above_bottom), (1, 0.089, above_bottom + 0.038))
    r = run([_stud(), plate_lo, plate_hi], "dual_end_connection")
    assert r.passed is ok
    if not ok:
        end = "bottom" if below_top < 0.9 else "top"
        assert f"in its {end} 20% zone" in r.messages[0]


@pytest.mark.parametrize(("dx", "ok"), [(0.09, True), (0.11, False)])
def test_t10_plan_tolerance(dx: float, ok: bool) -> None:
    plate_lo = box("SolePlate_1", (0.038 + dx, 0, 0.962), (1, 0.089, 1.0))
    plate_hi = box("TopPlate_1", (-1, 0, 3.0), (1, 0.089, 3.038))
    assert run([_stud(), plate_lo, plate_hi], "dual_end_connection").passed is ok


@pytest.mark.parametrize(("z0", "bottom"), [(1.48, True), (1.52, False)])
def test_t10_zone_extent_alpha(z0: float, bottom: bool) -> None:
    # Stud z 1–3: bottom zone 1–1.4 (+0.1 tolerance), top zone 2.6–3.0 (−0.1): a block at z0…z0+1.
    block = box("Header_1", (0, 0, z0), (0.038, 0.089, z0 + 1.0))
    top = box("TopPlate_1", (-1, 0, 3.0), (1, 0.089, 3.038))
    r = run([_stud(), block, top], "dual_end_connection")
    assert r.passed is bottom


def test_t10_rafters_and_studs_are_counted_separately() -> None:
    ms = [_stud(), _rafter("Rafter_1", 2.0, x=5.0), _rafter("Rafter_2", 2.0, x=8.0)]
    r = run(ms, "dual_end_connection")
    assert dict(r.measured) == {
        "rafters_checked": 2,
        "rafters_failed": 2,
        "studs_checked": 1,
        "studs_failed": 1,
    }
    assert "free end (hinge failure)" in r.messages[1]


# -- completeness and point load ------------------------------------------------------------
def test_completeness_needs_all_four_subsystems() -> None:
    ms = [
        box("Sill_1", (0, 0, 0), (1, 1, 1)),
        box("Joist_1", (0, 0, 0), (1, 1, 1)),
        box("Stud_1", (0, 0, 0), (1, 1, 1)),
    ]
    r = run(ms, "completeness")
    assert not r.passed and r.messages == (
        "Completeness: no roof members (present: foundation, floor, walls)",
    )
    assert run([*ms, box("Raf_1", (0, 0, 0), (1, 1, 1))], "completeness").passed  # README alias counts


@pytest.mark.parametrize(("gap", "ok"), [(0.04, True), (0.06, False)])
def test_point_load_bearing_gap(gap: float, ok: bool) -> None:
    plate = box("SolePlate_1", (0, 0, 0.3), (2, 0.089, 0.338))
    king = box("King_1", (1, 0, 0.338 + gap), (1.038, 0.089, 2.7))
    assert run([plate, king], "point_load").passed is ok


@pytest.mark.parametrize(("offset", "ok"), [(0.04, True), (0.06, False)])
def test_point_load_footprint_centre_must_be_over_the_support(offset: float, ok: bool) -> None:
    beam = box("CenterBeam_1", (0, 0, 1.0), (2, 0.089, 1.235))
    post = box(
        "Post_1", (2 + offset - 0.0445, 0, 1.235), (2 + offset + 0.0445, 0.089, 2.4)
    )  # centre past the end
    assert run([beam, post], "point_load").passed is ok


def test_point_load_grounded_posts_need_nothing_below() -> None:
    assert run([_post("BeamPost_1", 0, 0)], "point_load").passed
    r = run([box("Post_1", (0, 0, 0.5), (0.089, 0.089, 2))], "point_load")
    assert not r.passed and r.members == ("Post_1",)


# -- config ---------------------------------------------------------------------------------
def test_span_table_is_selectable_by_name() -> None:
    # 2x10 at 16 in: SPF No. 2 allows 15-5, DF-L No. 2 allows 15-7; a span between the two.
    length = 1.03 * (feet_inches_m("15-5") + feet_inches_m("15-7")) / 2
    assert not run(_joists(length, 3), "span_limits").passed
    cfg = ValidatorConfig.from_mapping(
        {"joist_spans": "irc2018-R502.3.1(2)-DFL2-40/10", "extra_tests": ["point_load"]}
    )
    assert validate(Structure.from_members(_joists(length, 3)), "paper", cfg)["span_limits"].passed
    assert cfg.extra_tests == ("point_load",)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"spam": 1}, "unknown validator setting"),
        ({"joist_spans": "2x10"}, "unknown span table '2x10'"),
        ({"contact_tol_m": "wide"}, "contact_tol_m: expected a number"),
        ({"max_messages": True}, "max_messages: expected a number"),
        ({"strict_names": "yes"}, "strict_names: expected true, false or null"),
        ({"spacing_standard_m": 0.4}, "spacing_standard_m: expected a list"),
    ],
)
def test_config_from_mapping_rejects_bad_values(data: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ValidatorConfig.from_mapping(data)


def test_config_from_mapping_converts_lists() -> None:
    cfg = ValidatorConfig.from_mapping(
        {"lumber_mm": [[38, 89]], "stability_min_paper": 1, "strict_names": None}
    )
    assert cfg.lumber_mm == ((38, 89),) and cfg.stability_min_paper == 1.0 and cfg.strict_names is None
