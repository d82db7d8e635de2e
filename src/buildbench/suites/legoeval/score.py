"""One LEGO-Eval episode's metrics (the suite's scorer): the per-task numbers from which every
table is rebuilt by summing over episodes (:mod:`.metrics` aggregates them into the paper's
tables), with the metrics an outcome leaves undefined (no verdict, no label) left out rather
than stored; and the planner measures of one episode's plans against the reference plans
(Tables 5, 7).

* Planner quality, against the reference plans of :mod:`.plans`: tool F1 (per-constraint F1 of
  the tool-name sets, averaged over constraints), argument F1 (per tool call, F1 of the
  predicted against the reference argument set, averaged over the calls of reference tools
  that take an argument and that the prediction also made: a missing or extra tool is tool
  F1's business), and the exact graph edit distance between the tool DAGs (unit costs, nodes
  labelled by tool name, ``START`` included). An id group of ``get_spatial_relation`` compares
  as its anchor plus the set of the others.

An unknown verdict (None: the evaluator could not judge) is never counted as right or wrong:
it is counted as unknown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx

from buildbench.harness import Task

from .outcome import LegoEvalOutcome
from .task_records import TYPES, OutcomeError, Verdict, holistic, parse_verdicts
from .tools.registry import TOOLS


def predicted_valid(verdicts: Sequence[Verdict], valid: bool | None) -> bool | None:
    """The holistic prediction of an evaluator's verdicts: its own holistic verdict, or, without one,
    "valid iff every constraint holds" (spec 6.1)."""
    return valid if valid is not None else holistic(verdicts)


def score(task: Task, outcome: LegoEvalOutcome) -> dict[str, float]:
    """One episode's numbers, from which every table can be rebuilt by summing over episodes (all
    floats; a number the outcome leaves undefined is left out): the holistic prediction, the
    constraint count, the verdict counts ``partial_holds``/``_fails``/``_unknown`` and per type
    (``FL_holds``…); for a labelled task also the holistic label and hit, the share of judged
    constraints that agree (``partial_accuracy``) and the confusion counts ``partial_tt``/``_tf``/
    ``_ft``/``_ff`` (label letter first) overall and per type. With the LLM pipeline's trace
    also the plan sums of :func:`plan_metrics`; with identified constraints (``-o
    constraints=identify``) their verdict counts ``identified_n``/``_holds``/``_fails``.

    Raises:
        tasks.OutcomeError: the outcome does not have the documented shape.
    """
    verdicts, valid = parse_verdicts(outcome.verdicts, outcome.valid, task)
    predicted = predicted_valid(verdicts, valid)
    holds = [v.holds for v in verdicts]
    types = [str(c["type"]) for c in task.inputs["constraints"]]
    raw_labels = task.target.get("labels")
    out: dict[str, float | None] = {
        "valid_pred": None if predicted is None else float(predicted),
        "n_constraints": float(len(holds)),
        "partial_holds": float(sum(h is True for h in holds)),
        "partial_fails": float(sum(h is False for h in holds)),
        "partial_unknown": float(sum(h is None for h in holds)),
    }
    for t in TYPES:
        out[f"{t}_holds"] = float(sum(h is True for h, ty in zip(holds, types, strict=True) if ty == t))
        out[f"{t}_fails"] = float(sum(h is False for h, ty in zip(holds, types, strict=True) if ty == t))
        out[f"{t}_unknown"] = float(sum(h is None for h, ty in zip(holds, types, strict=True) if ty == t))
    out.update(plan_metrics(task, outcome))
    out.update(_identified_counts(task, outcome.identified))
    if raw_labels is None:  # a generator's scene: no labels, only the evaluator's verdicts
        return _defined(out)
    labels = [bool(x) for x in raw_labels]
    out["valid_label"] = float(bool(task.target["valid"]))
    out["holistic_correct"] = None if predicted is None else float(predicted == bool(task.target["valid"]))
    if predicted is None and all(h is None for h in holds) and not outcome.scene_error:
        # An outcome that judges nothing (no verdict at all) is an empty submission: its holistic
        # verdict counts wrong, as for an agent failure (`score.failure_metrics`), rather than
        # leaving the headline and the RL reward undefined; the per-constraint figures stay n/a
        # and counted as unknown. A partial abstention keeps its unknown holistic verdict, and so
        # does a task whose scene could not be read (the data's fault, not the evaluator's).
        out["holistic_correct"] = 0.0
    counts = confusion(labels, holds)
    out.update({f"partial_{k}": float(v) for k, v in counts.items() if k != "unknown"})
    judged = counts["tt"] + counts["tf"] + counts["ft"] + counts["ff"]
    out["partial_accuracy"] = (counts["tt"] + counts["ff"]) / judged if judged else None
    for t in TYPES:
        mine = [i for i, ty in enumerate(types) if ty == t]
        sub = confusion([labels[i] for i in mine], [holds[i] for i in mine])
        out.update({f"{t}_{k}": float(v) for k, v in sub.items() if k != "unknown"})
    return _defined(out)


def failure_metrics(task: Task) -> dict[str, float]:
    """The metrics of an episode the agent failed by its own output (``AgentFailure``): every
    constraint unjudged and, for a labelled task, the holistic verdict counted wrong."""
    n = float(len(task.inputs.get("constraints") or ()))
    out = {"n_constraints": n, "partial_holds": 0.0, "partial_fails": 0.0, "partial_unknown": n}
    if task.target.get("labels") is not None:
        out.update({"valid_label": float(bool(task.target["valid"])), "holistic_correct": 0.0})
    return out


def _defined(metrics: Mapping[str, float | None]) -> dict[str, float]:
    return {k: v for k, v in metrics.items() if v is not None}


def confusion(labels: Sequence[bool], predictions: Sequence[bool | None]) -> dict[str, int]:
    """``tt``/``tf``/``ft``/``ff`` (label then prediction) and ``unknown`` counts."""
    if len(labels) != len(predictions):
        raise ValueError(f"agreement: {len(labels)} labels but {len(predictions)} predictions")
    out = {"tt": 0, "tf": 0, "ft": 0, "ff": 0, "unknown": 0}
    for t, p in zip(labels, predictions, strict=True):
        if p is None:
            out["unknown"] += 1
        else:
            out[("t" if t else "f") + ("t" if p else "f")] += 1
    return out


# --- planner components (Tables 5, 7) -------------------------------------------------------
def set_f1(predicted: Iterable[Any], truth: Iterable[Any]) -> float:
    """F1 of two sets (both empty: 1; one empty: 0)."""
    p, t = set(predicted), set(truth)
    if not p and not t:
        return 1.0
    hit = len(p & t)
    if not hit:
        return 0.0
    prec, rec = hit / len(p), hit / len(t)
    return 2 * prec * rec / (prec + rec)


def tool_f1(predicted: Sequence[Iterable[str]], truth: Sequence[Iterable[str]]) -> float:
    """Mean over constraints of the F1 between predicted and true tool-name sets."""
    if len(predicted) != len(truth) or not truth:
        raise ValueError(f"tool_f1: {len(predicted)} predicted plans for {len(truth)} true plans")
    return sum(set_f1(p, t) for p, t in zip(predicted, truth, strict=True)) / len(truth)


def _hashable(arg: Any) -> str:
    return json.dumps(arg, sort_keys=True, default=str)


def argument_f1(predicted: Sequence[Sequence[Any]], truth: Sequence[Sequence[Any]]) -> float:
    """Mean over tool calls of the F1 between predicted and true argument sets (an argument
    may be an id or a tuple of ids; tuples compare as wholes)."""
    if len(predicted) != len(truth) or not truth:
        raise ValueError(f"argument_f1: {len(predicted)} predicted calls for {len(truth)} true calls")
    return sum(set_f1(map(_hashable, p), map(_hashable, t))
               for p, t in zip(predicted, truth, strict=True)) / len(truth)


def plan_graph(edges: Iterable[Mapping[str, str]]) -> nx.DiGraph:
    """A tool DAG from ``[{"from": a, "to": b}, …]``; each node is labelled ``tool``."""
    g = nx.DiGraph()
    for i, e in enumerate(edges):
        if not isinstance(e, Mapping) or "from" not in e or "to" not in e:
            raise ValueError(f"plan edge {i}: expected {{'from': …, 'to': …}}, got {e!r}")
        for node in (e["from"], e["to"]):
            g.add_node(node, tool=node)
        g.add_edge(e["from"], e["to"])
    return g


def plan_ged(predicted: Iterable[Mapping[str, str]], truth: Iterable[Mapping[str, str]]) -> float:
    """Exact graph edit distance between two tool plans: unit cost to insert or delete a node
    or an edge and to relabel a node (a node kept under its own tool name is free).

    Solved as a 0/1 program (the F2 formulation of Lerouge et al., 2017) with HiGHS, so the
    answer is exact and the same on every machine; networkx's search on plans of ten tools
    takes seconds and, cut short by a timeout, depends on the machine's speed.
    """
    g1, g2 = plan_graph(predicted), plan_graph(truth)
    return _ged(g1, g2)


def _ged(g1: nx.DiGraph, g2: nx.DiGraph) -> float:
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp

    v1, v2, e1, e2 = list(g1.nodes), list(g2.nodes), list(g1.edges), list(g2.edges)
    everything = len(v1) + len(v2) + len(e1) + len(e2)  # delete all of g1, insert all of g2
    if (sorted(v1), sorted(e1)) == (sorted(v2), sorted(e2)):
        return 0.0
    if not v1 or not v2:
        return float(everything)
    n2, nx_vars = len(v2), len(v1) * len(v2)
    col2 = {v: k for k, v in enumerate(v2)}
    # x[i, k]: node i of g1 becomes node k of g2 (saves a deletion and an insertion, costs a
    # relabel when the tools differ); y[p, q]: edge p becomes edge q (saves two edits).
    cost = np.full(nx_vars + len(e1) * len(e2), -2.0)
    for i, u in enumerate(v1):
        for k, v in enumerate(v2):
            cost[i * n2 + k] = (0.0 if g1.nodes[u]["tool"] == g2.nodes[v]["tool"] else 1.0) - 2.0
    rows: list[np.ndarray] = []
    for i in range(len(v1)):
        row = np.zeros(cost.size)
        row[i * n2:(i + 1) * n2] = 1.0
        rows.append(row)
    for k in range(n2):
        row = np.zeros(cost.size)
        row[k:nx_vars:n2] = 1.0
        rows.append(row)
    index1 = {v: i for i, v in enumerate(v1)}
    for p, (a, b) in enumerate(e1):
        for end, node in ((0, a), (1, b)):
            for k in range(n2):  # edge p maps onto edges at node k only if its end maps to k
                row = np.zeros(cost.size)
                for q, edge in enumerate(e2):
                    if col2[edge[end]] == k:
                        row[nx_vars + p * len(e2) + q] = 1.0
                row[index1[node] * n2 + k] = -1.0
                rows.append(row)
    upper = np.array([1.0] * (len(v1) + n2) + [0.0] * (len(rows) - len(v1) - n2))
    result = milp(cost, constraints=LinearConstraint(np.array(rows), -np.inf, upper),
                  integrality=np.ones(cost.size), bounds=Bounds(0, 1))
    if not result.success:
        raise RuntimeError(f"plan_ged: the edit-distance program failed: {result.message}")
    return float(round(everything + result.fun))


def _arg_key(tool: str, arg: Any) -> str:
    if TOOLS[tool].param_kind == "groups" and isinstance(arg, list | tuple) and arg:
        return _hashable([str(arg[0]), sorted(str(x) for x in arg[1:])])
    return _hashable(arg)


def _argument_f1(tool: str, predicted: Sequence[Any], truth: Sequence[Any]) -> float:
    return set_f1((_arg_key(tool, a) for a in predicted), (_arg_key(tool, a) for a in truth))


@dataclass(frozen=True)
class PlanScore:
    """One constraint's plan against its reference: tool F1, graph edit distance, and the
    argument F1 of each reference call with an argument that the prediction also made."""

    tool_f1: float
    ged: float
    argument_f1: tuple[float, ...]


def score_plan(edges: Sequence[Mapping[str, str]], calls: Sequence[Mapping[str, Any]],
               reference: Mapping[str, Any]) -> PlanScore:
    """Score a predicted plan (its edges and executed calls, as the pipeline's trace holds
    them) against a reference plan."""
    predicted = {str(n) for n in plan_graph(edges).nodes} - {"START"}
    truth = [str(n["tool"]) for n in reference["nodes"]]
    made: dict[str, list[Any]] = {}
    for call in calls:
        made.setdefault(str(call["tool"]), list(call.get("args") or []))
    args = tuple(_argument_f1(t, made[t], list(n["args"])) for n in reference["nodes"]
                 if (t := str(n["tool"])) in made and t in TOOLS and TOOLS[t].family > 0)
    return PlanScore(set_f1(predicted, truth), plan_ged(edges, reference["edges"]), args)


def _trace_steps(task: Task, trace: Any) -> dict[str, Mapping[str, Any]]:
    where = f"task {task.id} outcome.trace"
    if not isinstance(trace, list):
        raise OutcomeError(f"{where}: expected a list, got {type(trace).__name__}")
    steps = {}
    for i, step in enumerate(trace):
        if not isinstance(step, Mapping) or not isinstance(step.get("plan", []), list) \
                or not isinstance(step.get("calls", []), list):
            raise OutcomeError(f"{where}[{i}]: expected an object with 'id', a 'plan' list and a 'calls' list")
        steps[str(step.get("id"))] = step
    return steps


def plan_metrics(task: Task, outcome: LegoEvalOutcome) -> dict[str, float]:
    """Plan sums of one episode, when the outcome carries the pipeline's ``trace``:
    ``plan_constraints`` scored, ``plan_skipped`` (no reference plan: a constraint without a
    program; its planning step failed; or the constraints were identified, not given),
    ``plans_given`` (the plan was the reference, ``-o plans=reference``), ``tool_f1_sum``,
    ``plan_ged_sum``, ``arg_calls``, ``arg_f1_sum`` and their means ``tool_f1``,
    ``plan_ged``, ``argument_f1``. Empty for outcomes without a trace."""
    if outcome.trace is None:
        return {}
    from .plans import task_plans

    steps = _trace_steps(task, outcome.trace)
    ids = [str(c["id"]) for c in task.inputs["constraints"]]
    plans = task_plans(task) if outcome.identified is None else [None] * len(ids)
    scores, given = [], 0
    for cid, reference in zip(ids, plans, strict=True):
        step = steps.get(cid)
        if reference is None or step is None or str(step.get("error") or "").startswith("tool planning"):
            continue
        try:
            scores.append(score_plan(step.get("plan", []), step.get("calls", []), reference))
        except (KeyError, TypeError, ValueError) as exc:
            raise OutcomeError(f"task {task.id} outcome.trace for {cid}: {exc}") from None
        given += step.get("plan_source") == "reference"
    arg_f1s = [f for sc in scores for f in sc.argument_f1]
    out = {"plan_constraints": float(len(scores)), "plan_skipped": float(len(ids) - len(scores)),
           "plans_given": float(given), "tool_f1_sum": sum(sc.tool_f1 for sc in scores),
           "plan_ged_sum": sum(sc.ged for sc in scores), "arg_calls": float(len(arg_f1s)),
           "arg_f1_sum": sum(arg_f1s)}
    if scores:
        out["tool_f1"] = out["tool_f1_sum"] / len(scores)
        out["plan_ged"] = out["plan_ged_sum"] / len(scores)
    if arg_f1s:
        out["argument_f1"] = out["arg_f1_sum"] / len(arg_f1s)
    return out


def _identified_counts(task: Task, raw: Any) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, list) or not all(isinstance(v, Mapping) for v in raw):
        raise OutcomeError(f"task {task.id} outcome.identified: expected a list of verdict objects")
    holds = [v.get("holds") for v in raw]
    return {"identified_n": float(len(holds)), "identified_holds": float(sum(h is True for h in holds)),
            "identified_fails": float(sum(h is False for h in holds))}
