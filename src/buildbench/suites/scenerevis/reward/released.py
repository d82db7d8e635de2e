"""R_support by the released rules (``_calculate_support_reward`` of the released RL environment).

:mod:`..check.support` departs from these rules on purpose (see there); the released mode's reward
(``-o address=jid``) uses these, so its R_support is the released one
(``tests/scenerevis/test_original_agreement_scoring.py`` compares it with recorded answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..check.layout import scene_objects
from ..check.support import (
    CARRIER_WORDS,
    CEILING_MIN_SHARE,
    CEILING_WORDS,
    FLOOR_WORDS,
    SUPPORT_TOLERANCE_M,
    SURFACE_MAX_HEIGHT_M,
    SURFACE_MIN_AREA_M2,
    SURFACE_WORDS,
    WALL_TOLERANCE_M,
    WALL_WORDS,
)

#: The release's support classes: substring keywords tried ceiling → wall → surface → floor
#: (:mod:`..check.support` lists the same words, less the bare "frame" and plus "ceiling fan").
RELEASED_SUPPORT_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ceiling", tuple(w for w in CEILING_WORDS if w != "ceiling fan")),
    ("wall", (*WALL_WORDS, "frame")),
    ("surface", SURFACE_WORDS),
    ("floor", FLOOR_WORDS),
)


def released_support_kind(desc: str) -> str:
    """The release's support class of a description; "floor" when no keyword occurs anywhere in
    it (the release then asks its judge model, and answers "floor" when it cannot)."""
    text = desc.lower()
    return next((kind for kind, words in RELEASED_SUPPORT_WORDS if any(w in text for w in words)), "floor")


def released_support_reward(scene: Mapping[str, Any]) -> float:
    """R_support as the release computes it (``_calculate_support_reward``): unrotated boxes
    ``pos ± size / 2``; floor and ceiling heights of the *first* bound vertices; the ceiling
    rule ``0.8 · ceiling_y ≤ top ≤ ceiling_y + 0.05``; "near a wall" within 0.15 m of the
    floor's bounding rectangle; 0 for a room without objects."""
    inner = scene.get("room_envelope")
    envelope: Mapping[str, Any] = inner if isinstance(inner, Mapping) else scene
    bottom, top = np.asarray(envelope["bounds_bottom"], float), np.asarray(envelope["bounds_top"], float)
    floor_y, ceiling_y = bottom[0][1], top[0][1]
    objects = [o for _, o in scene_objects(scene)]
    if not objects:
        return 0.0
    pos = np.array([o["pos"] for o in objects], float)
    size = np.array([o["size"] for o in objects], float)
    descs = [str(o.get("desc", "")).lower() for o in objects]
    lo, hi = pos - size / 2, pos + size / 2
    carriers = [i for i, d in enumerate(descs) if any(w in d for w in CARRIER_WORDS)
                or (size[i, 1] < SURFACE_MAX_HEIGHT_M and size[i, 0] * size[i, 2] > SURFACE_MIN_AREA_M2)]
    unsupported = 0
    for i, desc in enumerate(descs):
        kind, base, cap = released_support_kind(desc), pos[i, 1], pos[i, 1] + size[i, 1]
        if kind == "floor":
            ok = abs(base - floor_y) < SUPPORT_TOLERANCE_M
        elif kind == "surface":
            ok = any(abs(base - (pos[j, 1] + size[j, 1])) < SUPPORT_TOLERANCE_M
                     and not (hi[i, 0] < lo[j, 0] or lo[i, 0] > hi[j, 0])
                     and not (hi[i, 2] < lo[j, 2] or lo[i, 2] > hi[j, 2]) for j in carriers)
        elif kind == "ceiling":
            ok = CEILING_MIN_SHARE * ceiling_y <= cap <= ceiling_y + SUPPORT_TOLERANCE_M
        else:
            ok = bool(min(abs(pos[i, 0] - bottom[:, 0].min()), abs(pos[i, 0] - bottom[:, 0].max()),
                          abs(pos[i, 2] - bottom[:, 2].min()), abs(pos[i, 2] - bottom[:, 2].max()))
                      < WALL_TOLERANCE_M)
        unsupported += not ok
    rate_pct = 100.0 * unsupported / len(objects)
    if rate_pct == 0:
        return 1.0
    return 1.0 - rate_pct / 10.0 if rate_pct <= 10 else -(rate_pct - 10.0) / 90.0
