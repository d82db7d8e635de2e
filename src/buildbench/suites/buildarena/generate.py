"""BuildArena's task generation (the suite's ``generate`` room): seeded variants of the varied
levels under the released pass rules, and the reference designs fitted to each.

The generator lives in :mod:`.variants` (parameters on bounded grids, ids that spell every
parameter out, ``generate(seed, count)``), the designs fitted to each in :mod:`.designs`; the nine
released levels themselves are data (:mod:`.levels`). This module is where a reader looks for
"how are tasks made" in every suite.
"""

from __future__ import annotations

from .designs import control_design, reference_design
from .variants import (
    VARIED_LEVELS,
    Range,
    Variant,
    every_variant,
    generate,
    parse,
    spec_of,
    variant_spec,
)

__all__ = ["VARIED_LEVELS", "Range", "Variant", "control_design", "every_variant", "generate", "parse",
           "reference_design", "spec_of", "variant_spec"]
