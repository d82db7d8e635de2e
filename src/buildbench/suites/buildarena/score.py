"""One BuildArena episode's metrics (paper §2.4, spec 3.6): ``score_episode`` rebuilds the final
machine from its history and simulates it on the task (``check.simulate``); the metrics are

* ``passed`` (0/1) — averaged over episodes this is the success rate over
  the n samples of a task (``--samples``, 64 in the paper);
* ``indicator`` — the task's Table 2 indicator (max displacement, max load,
  TWR, max height); 0 for an episode without an approved machine;
* ``parts`` — blocks in the final machine, starting block and connectors
  included; 0 without an approved machine (the paper's Lift Lv.3 0.0 parts
  suggest failed constructions count as 0, spec 3.6 — an inference);
* ``calls`` / ``invalid_calls`` / ``invalid_action_rate`` — library calls
  made and the share that failed (spec 3.6: "share of library calls that
  failed", our reading of the ablation metric); the rate is NaN (n/a) for an
  episode without a call;
* ``fail_<category>`` — failed calls by reason (Fig. 6 categories);
* ``diverged`` (0/1) — every simulation attempt diverged and the blame rule held the machine
  responsible (``check.simulate``): scored as a failure. A divergence the rule does not blame on
  the machine raises ``check.SimulationDiverged``: the episode is unscored (an infrastructure
  fault), never a zero;
* ``sim_limit`` (0/1) — of the scored runs that did not end normally, those MuJoCo's limits or errors
  stopped (``divergence.NO_RETRY``: its arena full, out of memory, a model it could not build, another
  MuJoCo error) rather than a divergence; reports count them apart (``report.physics_rows``);
* ``sim_retries`` — re-simulations with a finer step that the final verdict needed.

The simulation runs under the physics profile the outcome records (``physics``), or the default.

Their aggregation over episodes and samples is :mod:`.metrics`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from buildbench.harness import Task

if TYPE_CHECKING:
    from .outcome import BuildArenaOutcome

#: Failure-reason categories, checked in order against a failed call's text.
#: ``excess_connection`` is our reading of the paper's Fig. 6 label: joining
#: two faces that already touch (the library's "too close" refusal).
FAILURE_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("malformed_call", ("not valid JSON", "arguments must be a JSON object")),
    ("tool_unavailable", ("is not available in this stage",)),
    ("bad_call", ("Unknown operation", "Unexpected parameter", "Missing parameter", "must be a string",
                  "must be a block id", "must be a JSON object", "no tool call")),
    ("overlap", ("overlaps with existing blocks",)),
    ("occupied_face", ("is already occupied",)),
    ("excess_connection", ("too close to each other",)),
    ("missing_face", ("does not have face", "does not have any faces")),
    ("unknown_block", ("not found",)),
    ("control", ("control key", "Key '", "controllable locomotion", "is not available for block",
                 "is out of range")),
    ("unavailable_block_type", ("not available", "can not be used as connectors",
                                "can not be attached to a single face")),
    ("not_started", ("has not been started", "Machine already exists")),
    ("unsupported_operation", ("can not be removed", "can not be twisted", "does not spin",
                               "only available while assembling", "has no starting block")),
    ("out_of_range", ("must be within", "beyond ±", "must be a list of three", "must be a finite",
                      "maximum is")),
)
FAILURE_CATEGORIES: tuple[str, ...] = (*(name for name, _ in FAILURE_PATTERNS), "other")


def failure_category(text: str) -> str:
    """The category of a failed call from the text it returned (``other`` when none matches)."""
    for name, needles in FAILURE_PATTERNS:
        if any(n in text for n in needles):
            return name
    return "other"


def _num(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return 0.0
    return out if math.isfinite(out) else 0.0


def call_metrics(stats: dict[str, Any]) -> dict[str, float]:
    """Call counts, invalid-action rate and failure counts from an outcome's ``stats``."""
    calls = _num(stats.get("calls"))
    invalid = _num(stats.get("invalid_calls"))
    out = {
        "calls": calls,
        "invalid_calls": invalid,
        # No call, no rate: n/a (NaN, left out of every mean) rather than a perfect 0 % that an
        # agent earns by doing nothing (issue 23); the episode itself still fails (``passed`` 0).
        "invalid_action_rate": invalid / calls if calls else math.nan,
    }
    failures = stats.get("failures") or {}
    for name in FAILURE_CATEGORIES:
        out[f"fail_{name}"] = _num(failures.get(name))
    return out


def score_episode(task: Task, outcome: BuildArenaOutcome) -> dict[str, float]:
    """Rebuild and simulate the episode's final machine; never trusts what the env reported.

    Args:
        task: The harness task (its id is the BuildArena task id).
        outcome: ``BuildArenaEnv.outcome()`` (a stored one read back by ``Suite.read_outcome``).
    """
    from .check import SimulationDiverged, simulate
    from .outcome import rebuild_outcome
    from .physics import DEFAULT_CONFIG, PhysicsConfig
    from .physics.divergence import NO_RETRY

    metrics = call_metrics(outcome.stats)
    metrics.update({"passed": 0.0, "indicator": 0.0, "parts": 0.0, "approved": 0.0, "simulated": 0.0})
    machine = rebuild_outcome(outcome)
    if machine is None or not outcome.approved:
        return metrics
    config = DEFAULT_CONFIG if outcome.physics is None else PhysicsConfig.from_record(outcome.physics)
    metrics["approved"] = 1.0
    metrics["parts"] = float(machine.num_blocks)
    try:
        result = simulate(machine, task.id, seed=int(outcome.seed or 0), duration_s=outcome.sim_duration_s,
                          config=config)
    except ValueError:  # no solid block (or one unknown): nothing to simulate, it fails the task
        # MuJoCo's refusals of a model are verdicts of ``simulate``, never this (``simulation.ModelRefused``).
        return metrics
    if not result.scored:
        raise SimulationDiverged(result.reason)
    metrics["simulated"] = 1.0
    metrics["passed"] = float(result.passed)
    metrics["indicator"] = _num(result.indicator)
    metrics["broken_welds"] = _num(result.metrics.get("broken_welds"))
    metrics["diverged"] = float(result.status != "ok")  # only a machine-caused divergence gets this far
    metrics["sim_limit"] = float(result.metrics.get("diverged_reason") in NO_RETRY)
    metrics["sim_retries"] = _num(result.metrics.get("retries"))
    return metrics


def failure_metrics(task: Task) -> dict[str, float]:
    """The metrics of an episode the agent failed by its own output (``AgentFailure``): those of
    an episode without an approved machine."""
    return {"passed": 0.0, "indicator": 0.0, "parts": 0.0, "approved": 0.0, "simulated": 0.0}
