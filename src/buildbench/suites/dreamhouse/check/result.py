"""Result types of the validator and their text/JSON forms (ours and the released harness's)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .config import MEMBER_CHECK, RELEASED_TESTS, TEST_LABELS


@dataclass(frozen=True)
class TestResult:
    """Outcome of one test.

    Attributes:
        name: Test id (``span_limits``…).
        passed: Whether the structure passes it.
        messages: Human-readable lines, each naming members and a measured value vs. its limit.
        members: Names of every member involved in a violation (not capped).
        measured: Key figures (counts, ratios, worst values), JSON-serializable.
    """

    __test__ = False  # a pytest collector must not take this for a test class

    name: str
    passed: bool
    messages: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    measured: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Short human label with the paper's test code."""
        return TEST_LABELS.get(self.name, self.name)

    def to_json(self) -> dict[str, Any]:
        """Our JSON form of this result."""
        return {
            "name": self.name,
            "passed": self.passed,
            "messages": list(self.messages),
            "members": list(self.members),
            "measured": {k: _json_number(v) for k, v in self.measured.items()},
        }


def _json_number(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


@dataclass(frozen=True)
class ValidationReport:
    """All results of one validation run.

    Attributes:
        profile: ``paper`` or ``released``.
        results: The member check first, then each test of the profile in order.
        n_members: Number of members given.
    """

    profile: str
    results: tuple[TestResult, ...]
    n_members: int

    @property
    def passed(self) -> bool:
        """True when every test (including the member check) passes."""
        return all(r.passed for r in self.results)

    @property
    def tests(self) -> tuple[TestResult, ...]:
        """The profile's structural tests (the member check left out)."""
        return tuple(r for r in self.results if r.name != MEMBER_CHECK)

    @property
    def failed(self) -> tuple[str, ...]:
        """Names of the failed results, in order."""
        return tuple(r.name for r in self.results if not r.passed)

    def __getitem__(self, name: str) -> TestResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no test {name!r} in this report; it has {', '.join(r.name for r in self.results)}")

    def to_json(self) -> dict[str, Any]:
        """Our JSON form: profile, overall pass and every result in full."""
        return {
            "profile": self.profile,
            "passed": self.passed,
            "n_members": self.n_members,
            "results": [r.to_json() for r in self.results],
        }

    def to_released_json(self, task_id: str = "") -> dict[str, Any]:
        """The released harness's result dict (spec §2.6).

        ``tests`` holds the 10 public names (a test this profile did not run defaults to
        True, as the released server does); ``pass_rate`` is passed/10. ``all_passed`` also
        requires the member check, whose messages appear under ``member_errors`` on failure.
        """
        ran = {r.name: r for r in self.results}
        tests = {name: (ran[name].passed if name in ran else True) for name in RELEASED_TESTS}
        stab = ran.get("stability_score")
        dual = ran.get("dual_end_connection")
        out: dict[str, Any] = {
            "task_id": task_id,
            "all_passed": all(tests.values()) and self.passed,
            "pass_rate": round(sum(tests.values()) / len(tests), 4),
            "tests": tests,
            "stability_details": {
                "score": round(float(stab.measured.get("score", 0.0)), 4) if stab else 0.0,
                "total_members": int(stab.measured.get("total_members", 0)) if stab else 0,
                "grounded_members": int(stab.measured.get("grounded_members", 0)) if stab else 0,
            },
            "dual_end_details": {
                key: int(dual.measured.get(key, 0)) if dual else 0
                for key in ("rafters_checked", "rafters_failed", "studs_checked", "studs_failed")
            },
        }
        member = ran.get(MEMBER_CHECK)
        if member is not None and not member.passed:
            out["member_errors"] = list(member.messages)
        return out

    def summary(self) -> str:
        """The released quickstart's feedback block (spec §4.6), over this report's tests."""
        tests = self.tests
        if self.passed:
            return f"[SUCCESS] All {len(tests)} structural tests passed."
        lines = [
            "[VALIDATION FAILED]",
            f"  Passed: {sum(r.passed for r in tests)}/{len(tests)}",
            "  Failed tests:",
        ]
        lines += [f"    - {name}" for name in self.failed]
        stab = next((r for r in tests if r.name == "stability_score"), None)
        if stab is not None:
            g, t = int(stab.measured.get("grounded_members", 0)), int(stab.measured.get("total_members", 0))
            lines.append(f"  Stability: {g}/{t} members connected to ground")
        return "\n".join(lines)

    def feedback(self) -> str:
        """The summary followed by every failed result's messages (what an agent is shown)."""
        parts = [self.summary()]
        for r in self.results:
            if not r.passed:
                parts.append(f"{r.label}:")
                parts += [f"  {m}" for m in r.messages]
        return "\n".join(parts)
