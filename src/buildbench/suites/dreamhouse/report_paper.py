"""What DreamHouse's report tables share: the paper's published numbers, the episode labels
(model, condition, protocol) and a Table 1 cell mean.

:mod:`.report` and :mod:`.report_extra` both build on this module (``report`` re-exports
these names), so neither imports the other back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, get_args

from buildbench.harness import Episode, is_scored
from buildbench.harness.episode_outcome import OutcomeReadError, episode_outcome
from buildbench.harness.run_options import given_run_options
from buildbench.harness.stats import Estimate, bootstrap_interval

from .options import DreamHouseOptions
from .outcome import DreamHouseOutcome
from .views_basis import Condition

#: Paper Table 1 verbatim (spec §6.3): (model, protocol) → Struct F/Fa, Visual F/Fa, Topo F/Fa, Joint F/Fa.
PAPER_TABLE1: dict[tuple[str, str], tuple[float, ...]] = {
    ("GPT-5", "planner-atomic"): (0.792, 0.637, 0.312, 0.287, 0.143, 0.151, 0.035, 0.019),
    ("GPT-5", "planner-reactive"): (0.302, 0.247, 0.293, 0.266, 0.141, 0.143, 0.003, 0.003),
    ("GPT-5", "planner-managed"): (0.333, 0.157, 0.179, 0.175, 0.178, 0.157, 0.008, 0.003),
    ("Claude", "planner-atomic"): (0.716, 0.779, 0.406, 0.377, 0.164, 0.168, 0.071, 0.064),
    ("Claude", "planner-reactive"): (0.428, 0.494, 0.239, 0.245, 0.133, 0.141, 0.003, 0.013),
    ("Claude", "planner-managed"): (0.713, 0.737, 0.278, 0.291, 0.205, 0.190, 0.031, 0.022),
    ("Gemini", "planner-atomic"): (0.454, 0.539, 0.376, 0.394, 0.171, 0.170, 0.031, 0.036),
    ("Gemini", "planner-reactive"): (0.507, 0.376, 0.345, 0.342, 0.160, 0.152, 0.019, 0.013),
    ("Gemini", "planner-managed"): (0.785, 0.737, 0.313, 0.282, 0.232, 0.211, 0.043, 0.026),
}
#: Paper Table 2 verbatim: model → baseline, final, best S, Δ, % tasks improved, structures retained.
PAPER_TABLE2: dict[str, tuple[float, ...]] = {
    "Claude": (0.408, 0.441, 0.461, 0.033, 0.703, 0.685),
    "GPT-5": (0.392, 0.405, 0.425, 0.013, 0.614, 0.781),
    "Gemini": (0.433, 0.443, 0.471, 0.010, 0.561, 0.738),
}
#: Paper Table 5 verbatim (Frame): (model, protocol) → struct, visual S, visual pass, joint.
PAPER_TABLE5: dict[tuple[str, str], tuple[float, ...]] = {
    ("GPT-5", "planner-managed"): (0.333, 0.179, 0.022, 0.008),
    ("GPT-5", "planner-managed-visual"): (0.317, 0.173, 0.030, 0.009),
    ("Claude", "planner-managed"): (0.713, 0.278, 0.043, 0.031),
    ("Claude", "planner-managed-visual"): (0.780, 0.288, 0.122, 0.094),
    ("Gemini", "planner-managed"): (0.785, 0.313, 0.054, 0.043),
    ("Gemini", "planner-managed-visual"): (0.740, 0.311, 0.133, 0.089),
}
#: Paper §5 text: T of passed vs failed structures under Planner-Atomic.
PAPER_T_SPLIT: dict[str, tuple[float, float]] = {
    "Claude": (0.164, 0.149), "Gemini": (0.171, 0.175), "GPT-5": (0.143, 0.131),
}
#: Marks a row of published numbers (after the model name).
PAPER_MARK = "*"
#: The condition of an episode that stored no outcome (its env never gave one) and whose run's
#: options are not known either (episodes handed over without their run): counted apart from
#: Frame and Facade instead of being guessed into either.
NO_OUTCOME = "no outcome"
#: Short protocol labels for the tables.
PROTOCOL_LABELS: dict[str, str] = {
    "planner-atomic": "atomic", "planner-reactive": "reactive", "planner-managed": "managed",
    "planner-managed-visual": "managed+v", "iterative-refinement": "refine",
}  # fmt: skip
#: Metrics averaged only over structurally passed episodes (paper §4).
PASSED_ONLY = frozenset({"visual_fidelity", "topological_fidelity"})

Labeller = Callable[[Episode], str]


def model_of(episode: Episode) -> str:
    """The episode's model label: ``metadata["model"]`` when set (see :func:`.report.runs_summary`), else its agent."""
    return str(episode.metadata.get("model") or episode.agent)


def condition_of(episode: Episode) -> str:
    """The episode's condition as its outcome records it; for an episode without an outcome (it
    errored or its output was refused) its run's ``-o condition`` (the run's option, known for
    every episode: :mod:`buildbench.harness.run_options`); :data:`NO_OUTCOME` when neither is known.

    Raises:
        OutcomeReadError: The stored outcome, or the run's condition, is not a DreamHouse one.
    """
    outcome = episode_outcome(episode, DreamHouseOutcome)
    if outcome is not None:
        return outcome.condition or "frame"
    options = given_run_options(episode)
    if options is None:
        return NO_OUTCOME
    condition = options.get("condition", _DEFAULT_CONDITION)
    if condition not in _CONDITIONS:
        raise OutcomeReadError(f"episode {episode.task_id!r} sample {episode.sample}: the run's option "
                               f"condition is {str(condition)[:40]!r}, not one of {', '.join(_CONDITIONS)}")
    return str(condition)


_CONDITIONS: tuple[str, ...] = get_args(Condition)
_DEFAULT_CONDITION = DreamHouseOptions.model_fields["condition"].default


def group_values(episodes: Sequence[Episode], key: str) -> tuple[list[float], list[str]]:
    """The values a Table 1 cell averages and their task ids: for S/T those of the structurally
    passed scored episodes, else of the scored episodes that define ``key`` (a task without a
    target frame has no joint pass; an episode without the metric counts 0)."""
    if key in PASSED_ONLY:
        chosen = [ep for ep in episodes
                  if is_scored(ep) and ep.metrics.get("structural_pass") == 1.0 and _finite(ep.metrics.get(key))]
    else:
        chosen = [ep for ep in episodes if is_scored(ep) and _finite(ep.metrics.get(key, 0.0))]
    return [float(ep.metrics.get(key, 0.0)) for ep in chosen], [ep.task_id for ep in chosen]


def group_mean(episodes: Sequence[Episode], key: str) -> float | None:
    """Table 1 cell: rate over the scored episodes, or for S/T the mean over passed ones; None if undefined."""
    values, _ = group_values(episodes, key)
    return sum(values) / len(values) if values else None


def group_span(episodes: Sequence[Episode], key: str) -> str:
    """The 95 % bootstrap interval of `group_mean`'s value, resampling tasks, as ``[low, high]``
    to 3 decimals; ``–`` where there is none (no value, or one task only)."""
    values, tasks = group_values(episodes, key)
    interval = bootstrap_interval(values, tasks)
    if interval.clusters < 2 or not (math.isfinite(interval.low) and math.isfinite(interval.high)):
        return "–"
    return f"[{interval.low:.3f}, {interval.high:.3f}]"


def estimate_cell(values: Sequence[float], tasks: Sequence[str]) -> Estimate | str:
    """A cell that is a mean of ``values`` (a rate where they are 0/1) as an `Estimate` with its
    95 % bootstrap interval resampling ``tasks`` (none with one task), printed to 3 decimals;
    ``–`` without a value."""
    return Estimate.of(bootstrap_interval(values, tasks), digits=3, rounded=False) if values else "–"


def protocol_label(protocol: str) -> str:
    """The short label of a protocol in the tables (the name itself when it has none)."""
    return PROTOCOL_LABELS.get(protocol, protocol)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)
