"""Object size priors and the programmatic size reward R_size (SceneReVis spec §4.3).

Each object is matched by keyword to a prior range of width (x), height (y) and depth (z)
in metres. A width or height below 50 % of its minimum or above 200 % of its maximum is
a *critical* issue, below 80 % or above 130 % a *minor* one; depth is only checked for
critical issues. When the object's real asset size is known (``retrieved_size``, set by
asset retrieval) the prior is skipped and the written size is compared with it instead:
a relative difference above 100 % on any axis is critical, above 50 % minor.

Score: ≥ 3 critical → −1; 2 → −0.5; 1 → 0; else ≥ 3 minor → 0; 1–2 minor → 0.5; else 1.

Matching picks the *longest* keyword contained in the description ("coffee table" before
"table", "bedside table" before "bed"); the released code took the first entry of its
table that matched, so "bedside table" was judged as a bed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: keyword → ((min, max) width, (min, max) height, (min, max) depth), metres.
SIZE_PRIORS: dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]] = {
    "bed": ((1.2, 2.5), (0.3, 0.8), (1.8, 2.2)),
    "double bed": ((1.4, 2.2), (0.3, 0.8), (1.9, 2.2)),
    "single bed": ((0.9, 1.2), (0.3, 0.8), (1.8, 2.1)),
    "sofa": ((1.5, 3.5), (0.6, 1.2), (0.7, 1.2)),
    "couch": ((1.5, 3.5), (0.6, 1.2), (0.7, 1.2)),
    "chair": ((0.4, 0.7), (0.7, 1.2), (0.4, 0.7)),
    "office chair": ((0.5, 0.8), (0.9, 1.3), (0.5, 0.7)),
    "armchair": ((0.6, 1.0), (0.7, 1.1), (0.6, 1.0)),
    "desk": ((0.8, 2.0), (0.7, 0.85), (0.5, 0.9)),
    "table": ((0.6, 2.5), (0.4, 0.9), (0.6, 1.5)),
    "coffee table": ((0.6, 1.5), (0.3, 0.6), (0.4, 1.0)),
    "dining table": ((0.8, 2.5), (0.7, 0.85), (0.8, 1.5)),
    "nightstand": ((0.35, 0.6), (0.4, 0.7), (0.35, 0.55)),
    "bedside table": ((0.35, 0.6), (0.4, 0.7), (0.35, 0.55)),
    "wardrobe": ((0.8, 2.5), (1.8, 2.5), (0.5, 0.7)),
    "closet": ((0.8, 2.5), (1.8, 2.5), (0.5, 0.7)),
    "cabinet": ((0.4, 1.5), (0.6, 2.2), (0.3, 0.7)),
    "bookshelf": ((0.6, 1.5), (1.2, 2.2), (0.25, 0.45)),
    "bookcase": ((0.6, 1.5), (1.2, 2.2), (0.25, 0.45)),
    "tv stand": ((0.8, 2.0), (0.4, 0.7), (0.35, 0.55)),
    "sideboard": ((1.0, 2.2), (0.7, 1.0), (0.4, 0.6)),
    "treadmill": ((0.7, 1.0), (1.2, 1.6), (1.5, 2.2)),
    "exercise bike": ((0.5, 0.7), (1.0, 1.5), (1.0, 1.5)),
    "weight bench": ((0.5, 0.8), (0.4, 0.6), (1.2, 1.8)),
    "power rack": ((1.0, 1.5), (2.0, 2.5), (1.2, 1.8)),
    "lamp": ((0.15, 0.5), (0.3, 1.8), (0.15, 0.5)),
    "floor lamp": ((0.25, 0.5), (1.2, 1.9), (0.25, 0.5)),
    "tv": ((0.8, 2.0), (0.5, 1.2), (0.05, 0.2)),
    "mirror": ((0.3, 1.5), (0.5, 2.0), (0.02, 0.1)),
    "rug": ((1.0, 4.0), (0.01, 0.05), (1.0, 3.0)),
    "plant": ((0.2, 0.8), (0.3, 2.0), (0.2, 0.8)),
}


@dataclass(frozen=True)
class SizeVerdict:
    """R_size of a scene and the issues behind it."""

    score: float
    critical: int
    minor: int
    issues: tuple[str, ...]


def prior_for(desc: str) -> tuple[str, tuple[tuple[float, float], ...]] | None:
    """The longest keyword of :data:`SIZE_PRIORS` in ``desc`` and its ranges, or None."""
    text = desc.lower()
    hits = [k for k in SIZE_PRIORS if k in text]
    if not hits:
        return None
    key = max(hits, key=len)
    return key, SIZE_PRIORS[key]


def size_reward(objects: Sequence[Mapping[str, Any]]) -> SizeVerdict:
    """R_size over scene objects (dicts with ``desc``, ``size`` and maybe ``retrieved_size``)."""
    critical = minor = 0
    issues: list[str] = []
    for obj in objects:
        desc = str(obj.get("desc") or "")
        size = [float(v) for v in obj.get("size") or (1.0, 1.0, 1.0)]
        real = obj.get("retrieved_size")
        if real is not None:
            c, m = _against_real(size, [float(v) for v in real])
        else:
            c, m = _against_prior(desc, size)
        if c or m:
            issues.append(f"{desc[:40]!r}: {c} critical, {m} minor")
        critical += c
        minor += m
    return SizeVerdict(_score(critical, minor), critical, minor, tuple(issues))


def _against_prior(desc: str, size: list[float]) -> tuple[int, int]:
    found = prior_for(desc)
    if found is None:
        return 0, 0
    ranges = found[1]
    critical = minor = 0
    for axis, (lo, hi) in enumerate(ranges):
        value = size[axis]
        if value < 0.5 * lo or value > 2.0 * hi:
            critical += 1
        elif axis < 2 and (value < 0.8 * lo or value > 1.3 * hi):
            minor += 1
    return critical, minor


def _against_real(size: list[float], real: list[float]) -> tuple[int, int]:
    diff = max(abs(s - r) / max(r, 0.01) for s, r in zip(size, real, strict=True))
    return (1, 0) if diff > 1.0 else (0, 1) if diff > 0.5 else (0, 0)


def _score(critical: int, minor: int) -> float:
    if critical >= 3:
        return -1.0
    if critical == 2:
        return -0.5
    if critical == 1:
        return 0.0
    if minor >= 3:
        return 0.0
    return 0.5 if minor else 1.0
