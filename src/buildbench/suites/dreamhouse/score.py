"""Episode metrics: structural pass, per-test pass flags and member counts.

:func:`score` re-validates the final frame from scratch (it trusts nothing the env
reported) and gathers metric groups from :data:`METRICS`, the last of which adds visual
and topological fidelity and the joint pass.
"""

from __future__ import annotations

from collections.abc import Callable

from buildbench.harness import Task
from buildbench.harness.errors import AgentFailure
from buildbench.limits import limit

from .check import validate
from .env import render_call
from .fidelity import fidelity_scores
from .model import PHASES, SUBSYSTEM, Structure
from .outcome import DreamHouseOutcome
from .tasks import has_ground_truth, target_structure

MetricGroup = Callable[[Task, Structure, DreamHouseOutcome], dict[str, float]]


def structural_metrics(task: Task, built: Structure, outcome: DreamHouseOutcome) -> dict[str, float]:
    """``structural_pass`` and ``test_<name>`` for the member check and every test of the profile."""
    report = validate(built, outcome.profile)
    out = {"structural_pass": float(report.passed), "pass_rate": sum(r.passed for r in report.tests) / max(len(report.tests), 1)}
    out.update({f"test_{r.name}": float(r.passed) for r in report.results})
    return out


def count_metrics(task: Task, built: Structure, outcome: DreamHouseOutcome) -> dict[str, float]:
    """Member counts (built, target, per subsystem) and the episode's effort."""
    target_members = float(len(target_structure(task))) if has_ground_truth(task) else float("nan")
    out = {"members": float(len(built)), "target_members": target_members}
    for phase in PHASES:
        out[f"members_{phase}"] = float(sum(1 for c in built.categories if SUBSYSTEM.get(c or "") == phase))
    out["attempts"] = float(outcome.attempts)
    out["invalid_actions"] = float(outcome.invalid_actions)
    out["script_errors"] = float(outcome.script_errors)
    notes = outcome.protocol
    plan = notes.get("plan") or {}
    out["plan_ok"] = float(bool(plan.get("ok")))
    out["retries"] = float(notes.get("retries", 0))
    return out


#: Metric groups, in order; each adds named floats. ``fidelity_scores`` adds visual S,
#: topological T and the joint pass (``fidelity``; NaN S/T for structures that fail).
METRICS: list[MetricGroup] = [structural_metrics, count_metrics, fidelity_scores]


def score(task: Task, outcome: DreamHouseOutcome) -> dict[str, float]:
    """All metrics of one episode's final frame.

    Runs on the process's render thread (:func:`.env.render_call`): fidelity renders, and a
    GL context serves only the thread that made it, which may be the env's.
    """
    return render_call(_score, task, outcome)


def _score(task: Task, outcome: DreamHouseOutcome) -> dict[str, float]:
    members = len(outcome.structure.get("names") or ()) if isinstance(outcome.structure, dict) else 0
    if members > limit("house_members"):  # checked before any test or render runs
        raise AgentFailure(f"task {task.id}: the frame has {members:,} members, over the cap of "
                           f"{limit('house_members'):,} (BUILDBENCH_LIMIT_HOUSE_MEMBERS)")
    built = outcome.built()
    out: dict[str, float] = {}
    for group in METRICS:
        out.update(group(task, built, outcome))
    return out


def failure_metrics(task: Task) -> dict[str, float]:
    """The metrics of an episode the agent failed by its own output (``AgentFailure``): no test
    passed; visual and topological fidelity stay undefined, as for any failing structure."""
    return {"structural_pass": 0.0, "pass_rate": 0.0, "visual_pass": 0.0, "joint_pass": 0.0}
