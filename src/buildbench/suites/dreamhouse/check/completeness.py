"""README ``completeness``: members from all four subsystems are present (spec §4.3)."""

from __future__ import annotations

import numpy as np

from ..model import CATEGORIES, PHASES, SUBSYSTEM
from .context import Context
from .result import TestResult


def check_completeness(ctx: Context) -> TestResult:
    """Pass when valid members of foundation, floor, walls and roof types all exist."""
    codes = np.unique(ctx.codes[ctx.valid & (ctx.codes >= 0)])
    present = {SUBSYSTEM[CATEGORIES[c]] for c in codes}
    missing = [p for p in PHASES if p not in present]
    msgs = []
    if missing:
        have = ", ".join(p for p in PHASES if p in present) or "none"
        msgs.append(f"Completeness: no {', '.join(missing)} members (present: {have})")
    return TestResult(
        name="completeness",
        passed=not missing,
        messages=tuple(msgs),
        measured={f"has_{p}": p in present for p in PHASES},
    )
