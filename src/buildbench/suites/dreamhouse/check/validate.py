"""The validator's entry point: run a profile's tests on a structure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ..model import Structure
from .cantilever import check_cantilever, check_cantilever_released
from .completeness import check_completeness
from .config import PROFILE_TESTS, TEST_LABELS, ValidatorConfig
from .context import Context
from .deflection import check_deflection
from .dual_end import check_dual_end
from .integrity import check_members
from .load_path import check_load_path, check_load_path_released
from .lumber import check_standard_lumber
from .point_load import check_point_load
from .result import TestResult, ValidationReport
from .roof_grid import check_gap_detection, check_roof_coverage
from .spacing import check_spacing
from .span_limits import check_span_limits
from .stability import check_stability

#: Each test under each profile. The two profiles differ only where the README gives other
#: semantics (spec §4.2–4.3): load path, stability threshold and cantilever rule.
_PAPER: dict[str, Callable[[Context], TestResult]] = {
    "load_path": check_load_path,
    "span_limits": check_span_limits,
    "oc_spacing": check_spacing,
    "standard_lumber": check_standard_lumber,
    "deflection": check_deflection,
    "roof_coverage": check_roof_coverage,
    "gap_detection": check_gap_detection,
    "cantilever": check_cantilever,
    "stability_score": lambda ctx: check_stability(ctx, released=False),
    "dual_end_connection": check_dual_end,
    "completeness": check_completeness,
    "point_load": check_point_load,
}
_RELEASED: dict[str, Callable[[Context], TestResult]] = {
    **_PAPER,
    "load_path": check_load_path_released,
    "cantilever": check_cantilever_released,
    "stability_score": lambda ctx: check_stability(ctx, released=True),
}
_CHECKS = {"paper": _PAPER, "released": _RELEASED}
#: The validator profiles.
PROFILES: tuple[str, ...] = tuple(_CHECKS)
NOTHING_TO_CHECK = "no members: there is nothing to check, so the test cannot pass"


def validate(
    structure: Structure, profile: str = "paper", config: ValidatorConfig | None = None
) -> ValidationReport:
    """Validate a structure: the member check, then every test of the profile.

    Args:
        structure: The members to check (any content: empty, NaN, duplicates…).
        profile: ``"paper"`` (appendix T1–T10) or ``"released"`` (the harness's 10 tests).
        config: Thresholds; defaults are the paper's and the README's values.

    Returns:
        A report with one result per test; it never raises for any member content.

    Raises:
        ValueError: For an unknown profile or an unknown name in ``config.extra_tests``.
    """
    return validate_profiles(structure, (profile,), config)[profile]


def validate_profiles(
    structure: Structure, profiles: Sequence[str] = PROFILES, config: ValidatorConfig | None = None
) -> dict[str, ValidationReport]:
    """:func:`validate` under each of ``profiles``, by profile name.

    The profiles share one :class:`Context`: what the tests derive from the structure
    (contacts, supports, groups) depends on the structure and ``config`` only, so it is
    computed once (validating a house under both profiles costs ~40 % less); each report is
    the one :func:`validate` gives.

    Raises:
        ValueError: As :func:`validate`.
    """
    unknown_profiles = [p for p in profiles if p not in _CHECKS]
    if unknown_profiles:
        raise ValueError(f"unknown validator profile {unknown_profiles[0]!r}; use one of: {', '.join(_CHECKS)}")
    cfg = config or ValidatorConfig()
    unknown = [t for t in cfg.extra_tests if t not in TEST_LABELS or t == "member_integrity"]
    if unknown:
        raise ValueError(f"unknown extra test(s) {', '.join(unknown)}; known: {', '.join(_PAPER)}")
    ctx = Context(structure, cfg)
    return {profile: _report(ctx, profile) for profile in profiles}


def _report(ctx: Context, profile: str) -> ValidationReport:
    cfg, structure = ctx.cfg, ctx.s
    strict = (profile == "paper") if cfg.strict_names is None else cfg.strict_names
    results = [check_members(ctx, strict_names=strict)]
    names = PROFILE_TESTS[profile] + tuple(t for t in cfg.extra_tests if t not in PROFILE_TESTS[profile])
    checks = _CHECKS[profile]
    results += [_result(ctx, checks[name]) for name in names]
    if len(structure) == 0:
        # A test with nothing to check must not pass: an empty submission would otherwise
        # score pass_rate 0.7 on tests that only look for faults among members.
        results = [r if not r.passed else replace(r, passed=False, messages=(NOTHING_TO_CHECK,))
                   for r in results]
    return ValidationReport(profile=profile, results=tuple(results), n_members=len(structure))


def _result(ctx: Context, check: Callable[[Context], TestResult]) -> TestResult:
    """``check(ctx)``, run once per context: a test both profiles share (most of them) reads
    only the context, so the second profile gets the same result (its own ``measured`` dict)."""
    key = ("result", check)
    if key in ctx.memo:
        done: TestResult = ctx.memo[key]  # type: ignore[assignment]
        return replace(done, measured=dict(done.measured))
    result = ctx.memo[key] = check(ctx)
    return result
