"""The deterministic checker: typed constraint programs decided on a scene by the geometric
tools of :mod:`buildbench.scenes` (relations, catalogue attributes, room geometry)."""

from .baselines import BASELINES, always_invalid, always_valid, deterministic
from .evaluate import Check, check, evaluate
from .select import Candidate, candidates, rooms_matching, select

__all__ = [
    "BASELINES",
    "Candidate",
    "Check",
    "always_invalid",
    "always_valid",
    "candidates",
    "check",
    "deterministic",
    "evaluate",
    "rooms_matching",
    "select",
]
