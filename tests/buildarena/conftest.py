"""The released profile's agreement with the original's recorded answers, on any CPU class.

The recordings were made by the original code on one CPU class. Where an answer prints a
number that sits on a rounding edge (0.295 shown as 0.29 or 0.3, a pitch of -0.0 or 0.0) or
decides an overlap of blocks that just touch, its last bits decide the text, and those bits
depend on the CPU class (``buildbench.numeric_platform``: numpy's and OpenBLAS's kernels). On
an AMD AVX2 machine the development recordings agree on 99.5 % of calls instead of all. So each
differential test states its bounds for the recording class; where they fail, the agreement
table recorded for this class must be met exactly (so a change of code still shows), and on a
class never recorded, a floor holds and a warning says the bounds were not checked.

Recording this class's tables: ``BUILDBENCH_RECORD_AGREEMENT=1 pytest -p no:xdist <tests>``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.numeric_platform import numeric_platform

AGREEMENT_BY_CPU = Path(__file__).parent / "data" / "agreement-by-cpu.json"
#: Least share of calls agreeing (normalised text and state) on a CPU class never recorded.
CROSS_CLASS_FLOOR = 0.97


@pytest.fixture()
def released_agreement(platform_bits: Callable[..., bool]) -> Callable[..., None]:
    """``check(name, agreement, bounds)``: ``bounds(agreement)`` asserts the recording class's
    bounds; when it fails, this class's recorded table (or the floor) decides."""

    def check(name: str, agreement: Any, bounds: Callable[[Any], None]) -> None:
        recorded: dict[str, Any] = json.loads(AGREEMENT_BY_CPU.read_text()) if AGREEMENT_BY_CPU.is_file() else {}
        try:
            bounds(agreement)
            return
        except AssertionError as exc:
            failure = exc
        table = agreement.table()
        if os.environ.get("BUILDBENCH_RECORD_AGREEMENT") == "1":
            recorded.setdefault(name, {})[numeric_platform()] = table
            AGREEMENT_BY_CPU.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
            return
        if platform_bits(recorded.get(name, {}), table, f"{name}: agreement per operation on this CPU class"):
            return
        for kind in ("normalized", "state"):
            assert agreement.rate(kind) >= CROSS_CLASS_FLOOR, f"{name}: {kind} below the cross-class floor; {failure}"

    return check
