"""A hand-built code-compliant frame passes everything; each single fault fails exactly its test.

Also: the released harness's fixtures (a submission, pass/fail results) against our report
formats.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from buildbench.suites.dreamhouse.check import RELEASED_TESTS, ValidatorConfig, validate
from buildbench.suites.dreamhouse.model import Structure, load_structure

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "dreamhouse"


def _frames() -> ModuleType:
    name = "dreamhouse_check_frames"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("check_frames.py"))
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


F = _frames()
BASE = F.build_frame()
WIDE_SPEC = F.FrameSpec(bays=8, depth_y=4.5, joist_mm=(38, 286), joist_oc=0.61)  # 2x12 at 24 in
WIDE = F.build_frame(WIDE_SPEC)
ROOF = [m.name for m in BASE if m.name.startswith(("Rafter", "Ridge"))]

#: fault → (structure, failed tests under paper, failed tests under released)
FAULTS: dict[str, tuple[Structure, set[str], set[str]]] = {
    "missing top plate": (
        F.without(BASE, "TopPlate_front"),
        {"dual_end_connection"},
        {"dual_end_connection"},
    ),
    "floating stud": (
        F.replaced(BASE, "Stud_front_05", (0, 0, 0.2), (0, 0, 0)),
        {"dual_end_connection"},
        {"dual_end_connection"},
    ),
    "over-spanned 2x12 joist": (
        F.replaced(WIDE, "Joist_004", (0, 0, 0), (0, 0.2, 0)),  # 4.62 m > 1.03 × 14-7
        {"span_limits"},
        {"span_limits"},
    ),
    "over-long 2x10 joist": (
        F.replaced(BASE, "Joist_006", (0, 0, 0), (0, 0.45, 0)),  # 3.97 m > 3.91 m deflection limit
        {"deflection"},
        {"deflection"},
    ),
    "shifted joist": (F.replaced(BASE, "Joist_006", (0.1, 0, 0), (0.1, 0, 0)), {"oc_spacing"}, set()),
    "non-standard stud": (
        F.replaced(BASE, "Stud_front_03", (0, 0, 0), (0, 0, 0), size_m=(0.05, 0.1, 2.4)),
        {"standard_lumber"},
        set(),
    ),
    "no roof": (
        F.without(BASE, *ROOF),
        {"roof_coverage", "gap_detection"},
        {"completeness", "load_path", "roof_coverage", "gap_detection"},
    ),
    "floating rafter": (
        F.moved(BASE, "Rafter_front_03", (0, 0, 3.0)),
        {"load_path", "stability_score", "dual_end_connection"},
        {"load_path", "dual_end_connection"},
    ),
    "elevated sill missing a post": (F.without(BASE, "BeamPost_01"), {"cantilever"}, set()),
    "lower-case name": (F.renamed(BASE, "Stud_front_02", "stud_front_02"), {"member_integrity"}, set()),
    "untyped name": (
        F.renamed(BASE, "Stud_front_02", "beam_001"),
        {"member_integrity"},
        {"member_integrity"},
    ),
    "duplicate name": (
        F.renamed(BASE, "Stud_front_02", "Stud_front_01"),
        {"member_integrity"},
        {"member_integrity"},
    ),
}


@pytest.mark.parametrize("profile", ["paper", "released"])
@pytest.mark.parametrize("frame", [BASE, WIDE], ids=["2x10@16in", "2x12@24in"])
def test_compliant_frame_passes_every_test(frame: list, profile: str) -> None:
    report = validate(
        Structure.from_members(frame), profile, ValidatorConfig(extra_tests=("completeness", "point_load"))
    )
    assert report.passed, report.feedback()
    assert len(report.results) == 11 + (2 if profile == "paper" else 0)
    assert report.summary() == f"[SUCCESS] All {len(report.tests)} structural tests passed."


def test_frame_exercises_every_test() -> None:
    """The compliant frame is no vacuous pass: every test has members to check."""
    r = validate(F.frame(), "paper", ValidatorConfig(extra_tests=("point_load",)))
    assert r["span_limits"].measured["joists"] == 13 and r["span_limits"].measured["rafters"] == 18
    assert r["oc_spacing"].measured["gaps"] == 12
    assert r["deflection"].measured["joists"] == 13
    assert r["roof_coverage"].measured["footprint_cells"] == 20
    assert r["cantilever"].measured["elevated_sills"] == 1
    assert r["dual_end_connection"].measured["studs_checked"] == 26
    assert r["point_load"].measured["posts"] == 3


@pytest.mark.parametrize("fault", list(FAULTS))
def test_single_fault_fails_exactly_its_test(fault: str) -> None:
    structure, paper, released = FAULTS[fault]
    got_paper = validate(structure, "paper")
    got_released = validate(structure, "released")
    assert set(got_paper.failed) == paper, got_paper.feedback()
    assert set(got_released.failed) == released, got_released.feedback()
    for name in got_paper.failed:  # every failure explains itself and names members where it can
        assert got_paper[name].messages


def test_fault_messages_name_members_and_values() -> None:
    span = validate(FAULTS["over-spanned 2x12 joist"][0])["span_limits"]
    assert span.messages == (
        "Span: Joist_004 clear span 4.62 m > 1.03 × 4.45 m allowed for 38×286 at 610 mm o.c.",
    )
    assert span.members == ("Joist_004",)
    post = validate(FAULTS["elevated sill missing a post"][0])["cantilever"]
    assert post.messages == (
        "Cantilever: support gap under elevated Sill_loft exceeds 3 m; detected spacing 3.60 m between "
        "BeamPost_00 and BeamPost_02",
    )
    stud = validate(FAULTS["floating stud"][0])["dual_end_connection"]
    assert stud.members == ("Stud_front_05",) and "floating column" in stud.messages[0]


def test_validation_is_deterministic() -> None:
    s = FAULTS["floating rafter"][0]
    assert validate(s).to_json() == validate(s).to_json()
    assert validate(s, "released").to_released_json("X") == validate(s, "released").to_released_json("X")


def test_tiled_frames_for_the_benchmark_pass() -> None:
    big = F.tiled(1548)
    assert len(big) == 1548
    assert validate(big).passed and validate(big, "released").passed


# -- report formats -------------------------------------------------------------------------
def test_released_json_has_the_released_shape() -> None:
    report = validate(FAULTS["no roof"][0], "released")
    out = report.to_released_json("AF_01_0018")
    assert list(out["tests"]) == list(RELEASED_TESTS)
    assert out["pass_rate"] == 0.6 and out["all_passed"] is False
    assert out["tests"]["roof_coverage"] is False and out["tests"]["span_limits"] is True
    assert out["stability_details"] == {"score": 1.0, "total_members": 53, "grounded_members": 53}
    assert out["dual_end_details"] == {
        "rafters_checked": 0,
        "rafters_failed": 0,
        "studs_checked": 26,
        "studs_failed": 0,
    }
    json.dumps(out)
    assert json.loads(json.dumps(report.to_json()))["profile"] == "released"


@pytest.mark.parametrize("name", ["7_result_pass.json", "7_result_fail.json"])
def test_released_result_fixtures_have_our_keys(name: str) -> None:
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"released fixture {path} not present")
    theirs = json.loads(path.read_text())["results"]
    ours = validate(F.frame(), "released").to_released_json(theirs["task_id"])
    assert set(ours) == set(theirs)
    assert list(ours["tests"]) == list(theirs["tests"])
    assert set(ours["stability_details"]) == set(theirs["stability_details"])
    assert set(ours["dual_end_details"]) == set(theirs["dual_end_details"])
    assert theirs["pass_rate"] == sum(theirs["tests"].values()) / 10  # the rule we implement


def test_summary_has_the_released_quickstart_format() -> None:
    report = validate(FAULTS["floating rafter"][0], "released")
    assert report.summary() == "\n".join(
        [
            "[VALIDATION FAILED]",
            "  Passed: 8/10",
            "  Failed tests:",
            "    - load_path",
            "    - dual_end_connection",
            "  Stability: 71/72 members connected to ground",
        ]
    )
    feedback = report.feedback()
    assert "Dual-end (T10):\n  Dual-end: rafter Rafter_front_03" in feedback


def test_released_submission_fixture_validates() -> None:
    path = SHARED / "4_submission.json"
    if not path.exists():
        pytest.skip(f"released fixture {path} not present")
    s = load_structure(path)
    paper = validate(s, "paper")
    released = validate(s, "released")
    # Two grounded sills and a stud hovering 0.143 m above them with nothing on top.
    assert set(paper.failed) == {
        "load_path",
        "roof_coverage",
        "gap_detection",
        "stability_score",
        "dual_end_connection",
    }
    assert paper["load_path"].members == ("Stud_01",)
    assert set(released.failed) == {
        "completeness", "load_path", "roof_coverage", "gap_detection", "stability_score", "dual_end_connection",
    }  # fmt: skip
    assert released.to_released_json("AF_01_0018")["stability_details"] == {
        "score": 0.6667, "total_members": 3, "grounded_members": 2,
    }  # fmt: skip


def test_released_stub_smoke_test_expectation() -> None:
    """README smoke test: four sill plates score 5/10, failing exactly these five (spec §4.3)."""
    s = F.without(BASE, *[m.name for m in BASE if not m.name.startswith("Sill_") or m.name == "Sill_loft"])
    assert len(s) == 4
    report = validate(s, "released")
    assert set(report.failed) == {
        "completeness",
        "load_path",
        "roof_coverage",
        "gap_detection",
        "stability_score",
    }
    assert report.to_released_json()["pass_rate"] == 0.5
