"""The validator never crashes: empty, duplicate, non-finite, degenerate and huge member lists."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buildbench.suites.dreamhouse.check import (
    MEMBER_CHECK,
    PAPER_TESTS,
    RELEASED_TESTS,
    ValidatorConfig,
    validate,
)
from buildbench.suites.dreamhouse.check.context import sweep_pairs
from buildbench.suites.dreamhouse.model import Member, Structure


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


def _with(extra: list[Member]) -> Structure:
    return Structure.from_members(BASE + extra)


@pytest.mark.parametrize(("profile", "tests"), [("paper", PAPER_TESTS), ("released", RELEASED_TESTS)])
def test_empty_structure_gets_a_result_for_every_test(profile: str, tests: tuple[str, ...]) -> None:
    report = validate(Structure.from_members([]), profile)
    assert [r.name for r in report.results] == [MEMBER_CHECK, *tests]
    assert not report.passed
    for r in report.results:
        assert r.passed or r.messages, r.name  # every failure says why
    assert report["stability_score"].measured["score"] == 0.0
    json.dumps(report.to_json())


def test_non_finite_and_degenerate_members_are_reported_and_the_rest_still_validated() -> None:
    bad = [
        Member("Stud_nan", [np.nan, 0.089, 2.4], np.eye(4)),
        Member("Stud_inf", [0.038, 0.089, np.inf], np.eye(4)),
        Member("Joist_zero", [0.038, 0.0, 3.0], np.eye(4)),
        Member("Joist_negative", [0.038, -0.235, 3.0], np.eye(4)),
    ]
    moved = np.eye(4)
    moved[:3, 3] = [np.nan, 0, 0]
    bad.append(Member("Rafter_nan_position", [0.038, 0.184, 2.0], moved))
    sheared = np.eye(4)
    sheared[0, 1] = 0.5
    bad.append(Member("Rafter_sheared", [0.038, 0.184, 2.0], sheared))
    for profile in ("paper", "released"):
        report = validate(_with(bad), profile)
        assert report.failed == (MEMBER_CHECK,), report.feedback()
        member = report[MEMBER_CHECK]
        assert member.measured["invalid_geometry"] == 6
        assert set(member.members) == {m.name for m in bad}
        text = "\n".join(member.messages)
        assert "#72 ('Stud_nan') has a non-finite or out-of-range (beyond ±1e+06 m) number" in text
        assert "#74 ('Joist_zero') size (0.038, 0, 3) m must be at least 0.0001 m on every axis" in text
        assert "('Rafter_sheared') transform is not a rotation" in text


def test_duplicate_names_are_reported_once_per_name() -> None:
    dupes = [Member.from_aabb("Stud_front_01", (9, 9, 5), (9.038, 9.089, 7.4)) for _ in range(3)]
    report = validate(_with(dupes))
    member = report[MEMBER_CHECK]
    assert member.measured["duplicate_names"] == 1
    assert member.messages == (
        "name 'Stud_front_01' is used by 4 members (#21, #72, #73, #74); names must be unique",
    )
    assert "load_path" in report.failed  # the copies float at (9, 9): still validated as geometry


def test_bad_names_fail_the_member_check_per_profile() -> None:
    odd = [Member.from_aabb(n, (0, 0, 0), (0.038, 0.089, 0.05)) for n in ("", "   ", "beam_001", "wall_stud")]
    paper = validate(_with(odd))[MEMBER_CHECK]
    released = validate(_with(odd), "released")[MEMBER_CHECK]
    assert paper.measured["problems"] == 4 and released.measured["problems"] == 3  # wall_stud is a Stud there
    assert any("member #72 has an empty name" == m for m in paper.messages)
    strict = validate(_with(odd), "released", ValidatorConfig(strict_names=True))[MEMBER_CHECK]
    assert strict.measured["problems"] == 4


def test_messages_are_capped_but_members_are_all_listed() -> None:
    floating = [Member.from_aabb(f"Rafter_x{k:03d}", (k, 50, 9), (k + 0.038, 51, 9.2)) for k in range(40)]
    r = validate(_with(floating), "paper", ValidatorConfig(max_messages=5))["load_path"]
    assert len(r.messages) == 6 and r.messages[-1] == "… and 35 more"
    assert len(r.members) == 40


def test_a_pile_of_coincident_boxes_gives_a_clear_result() -> None:
    n = 3000
    pile = Structure.from_aabbs(
        [f"Stud_{k}" for k in range(n)], np.zeros((n, 3)), np.tile([0.038, 0.089, 2.4], (n, 1))
    )
    report = validate(pile, "paper", ValidatorConfig(max_contact_pairs=10_000))
    for name in ("load_path", "stability_score", "dual_end_connection"):
        assert not report[name].passed
        assert "contact detection stopped" in report[name].messages[0]
    assert report["standard_lumber"].passed and report[MEMBER_CHECK].passed


@pytest.mark.parametrize("chunk", [2_000_000, 400])  # direct sweep, then blocks of 100 candidates
def test_contact_pairs_match_brute_force(chunk: int) -> None:
    rng = np.random.default_rng(7)
    n = 300
    lo = rng.uniform(0, 5, (n, 3))
    hi = lo + rng.uniform(0.01, 1.0, (n, 3))
    got = sweep_pairs(lo, hi, 0.05, max_pairs=10**6, chunk=chunk, block=100)
    gap = np.maximum(0, np.maximum(lo[:, None], lo[None]) - np.minimum(hi[:, None], hi[None]))
    want = {(i, j) for i, j in zip(*np.nonzero((gap <= 0.05).all(axis=2)), strict=True) if i < j}
    assert {tuple(sorted(p)) for p in zip(got.i.tolist(), got.j.tolist(), strict=True)} == want
    assert len(got.i) == len(want)
    np.testing.assert_allclose(got.gap, gap[got.i, got.j])


def test_dense_scene_is_swept_in_blocks_with_bounded_memory() -> None:
    # 5,000 boxes of 4 m in a 20 m square: over 2 million sweep candidates on every axis.
    rng = np.random.default_rng(7)
    n = 5000
    lo = np.column_stack([rng.uniform(0, 20, n), rng.uniform(0, 20, n), rng.uniform(0, 0.05, n)])
    s = Structure.from_aabbs([f"Post_{k}" for k in range(n)], lo, lo + [4.0, 4.0, 1.0])
    r = validate(s, "paper", ValidatorConfig(max_contact_pairs=2_000_000))
    assert r["load_path"].passed  # every box starts below 0.1 m
    assert r["dual_end_connection"].passed


def test_unknown_profile_or_test_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown validator profile 'ircx'"):
        validate(Structure.from_members([]), "ircx")
    with pytest.raises(ValueError, match="unknown extra test"):
        validate(Structure.from_members([]), config=ValidatorConfig(extra_tests=("gravity",)))


def test_extra_tests_run_after_the_profile() -> None:
    report = validate(
        F.frame(), "paper", ValidatorConfig(extra_tests=("completeness", "point_load", "load_path"))
    )
    assert [r.name for r in report.results][-2:] == ["completeness", "point_load"]
    assert report.passed


def _many_frames(copies: int) -> Structure:
    """``copies`` frames in a row, 1 m apart, built with array operations."""
    base = F.frame()
    pitch = F.FrameSpec().width_x + 1.0
    mats = np.tile(base.matrices, (copies, 1, 1))
    mats[:, 0, 3] += np.repeat(np.arange(copies) * pitch, len(base))
    names = [f"{n}_h{k}" for k in range(copies) for n in base.names]
    return Structure(tuple(names), np.tile(base.sizes_m, (copies, 1)), mats)


def test_100k_members_validate_in_seconds() -> None:
    s = _many_frames(1389)  # 100,008 members
    assert len(s) == 100_008
    t0 = time.perf_counter()
    report = validate(s, "paper")
    elapsed = time.perf_counter() - t0
    # The joists of neighbouring frames are 1.038 m apart at the same level: T3 says so.
    assert report.failed == ("oc_spacing",)
    assert report["oc_spacing"].measured["bad_gaps"] == 1388
    assert elapsed < 60, elapsed


_NAMES = [
    "Sill_1",
    "Joist_1",
    "Stud_1",
    "Rafter_1",
    "Purlin_1",
    "King_1",
    "Post_1",
    "beam",
    "",
    "stud_x",
    "Ridge",
]
_NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(min_value=-5, max_value=20),
    st.sampled_from([0.0, 0.038, 0.089, 0.1, 0.235, 3.0]),
)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@pytest.mark.filterwarnings("error::RuntimeWarning")
@given(
    names=st.lists(st.sampled_from(_NAMES), min_size=0, max_size=25),
    data=st.data(),
)
def test_any_member_list_gets_a_report(names: list[str], data: st.DataObject) -> None:
    n = len(names)
    sizes = np.array(data.draw(st.lists(_NUMBERS, min_size=3 * n, max_size=3 * n)), dtype=float).reshape(n, 3)
    mats = np.tile(np.eye(4), (n, 1, 1))
    mats[:, :3, 3] = np.array(data.draw(st.lists(_NUMBERS, min_size=3 * n, max_size=3 * n))).reshape(n, 3)
    if n and data.draw(st.booleans()):
        mats[0, :3, :3] = np.array(data.draw(st.lists(_NUMBERS, min_size=9, max_size=9))).reshape(3, 3)
    s = Structure(tuple(names), sizes, mats)
    for profile in ("paper", "released"):
        report = validate(s, profile, ValidatorConfig(extra_tests=("completeness", "point_load")))
        assert len(report.results) == 13 if profile == "paper" else len(report.results) == 11
        json.dumps(report.to_json())
        json.dumps(report.to_released_json())
        assert report.summary() and report.feedback()


@pytest.mark.parametrize("profile", ["paper", "released"])
def test_an_empty_structure_passes_no_test(profile: str) -> None:
    # Issue 23: tests with nothing to check passed, so an empty submission scored pass_rate 0.7.
    report = validate(Structure.from_members([]), profile)
    assert not any(r.passed for r in report.results)
    assert all(r.messages for r in report.results)


def test_an_empty_submission_scores_zero_pass_rate() -> None:
    from buildbench.suites.dreamhouse.outcome import DreamHouseOutcome
    from buildbench.suites.dreamhouse.score import structural_metrics

    metrics = structural_metrics(None, Structure.from_members([]), DreamHouseOutcome(profile="paper"))  # type: ignore[arg-type]
    assert metrics["pass_rate"] == 0.0 and metrics["structural_pass"] == 0.0
