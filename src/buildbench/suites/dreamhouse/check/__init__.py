"""DreamHouse structural validator: the paper's appendix tests T1–T10 plus the released
harness's ``completeness`` and ``point_load``, under a ``paper`` or ``released`` profile.

One module per test (``load_path`` T1, ``span_limits`` T2 with data in ``irc_spans``,
``spacing`` T3, ``lumber`` T4, ``deflection`` T5, ``roof_grid`` T6/T7, ``cantilever`` T8,
``stability`` T9, ``dual_end`` T10, ``completeness``, ``point_load``), the member check
(``integrity``), shared arrays and contact detection (``context``), thresholds and
profiles (``config``), result types and their text/JSON forms (``result``), and the
entry point (``validate``).

Example:
    >>> from buildbench.suites.dreamhouse.model import Member, Structure
    >>> from buildbench.suites.dreamhouse.check import validate
    >>> s = Structure.from_members([Member.from_aabb("Sill_01", (0, 0, 0), (4, 0.14, 0.038))])
    >>> report = validate(s)
    >>> report["load_path"].passed, report["roof_coverage"].passed
    (True, False)
"""

from .config import (
    MEMBER_CHECK,
    PAPER_TESTS,
    PROFILE_TESTS,
    RELEASED_TESTS,
    TEST_LABELS,
    Profile,
    ValidatorConfig,
)
from .irc_spans import SPAN_TABLES, SpanTable
from .result import TestResult, ValidationReport
from .validate import validate, validate_profiles

__all__ = [
    "MEMBER_CHECK",
    "PAPER_TESTS",
    "PROFILE_TESTS",
    "RELEASED_TESTS",
    "SPAN_TABLES",
    "TEST_LABELS",
    "Profile",
    "SpanTable",
    "TestResult",
    "ValidationReport",
    "ValidatorConfig",
    "validate",
    "validate_profiles",
]
