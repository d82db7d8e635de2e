"""LEGO-Eval metrics (spec section 6).

* Agreement with labels (Table 1): precision, recall and F1 **macro-averaged over the two
  classes** (valid / invalid; F1 is the mean of the per-class F1s, a class never predicted
  has precision 0) and Cohen's κ = (p_o − p_e) / (1 − p_e), at two levels: *holistic* (one
  label per scene) and *partial* (one per constraint). The constant predictor on balanced
  data gets P 0.25, R 0.5, F1 0.333, κ 0, as SceneEval "Full" in the paper.
* Generator success (Table 3): holistic SR = share of scenes whose every constraint holds;
  partial SR per constraint type and "Avg." = Σ holding / Σ constraints (micro-average).
* Planner quality (Tables 5, 7), against the reference plans of :mod:`.plans`: tool F1
  (per-constraint F1 of the tool-name sets, averaged over constraints), argument F1 (per
  tool call, F1 of the predicted against the reference argument set, averaged over the
  calls of reference tools that take an argument and that the prediction also made: a
  missing or extra tool is tool F1's business), and the exact graph edit distance between
  the tool DAGs (unit costs, nodes labelled by tool name, ``START`` included). An id group
  of ``get_spatial_relation`` compares as its anchor plus the set of the others.
* Ablations (Table 2): relative change of an F1 in percent.

An unknown verdict (None: the evaluator could not judge) is never counted as right or
wrong: it is left out of every mean and counted in ``n_unknown``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import networkx as nx

from buildbench.harness import Task

from .outcome import LegoEvalOutcome
from .task_records import BUCKETS, TYPES, ConstraintVerdict, OutcomeError, holistic, parse_outcome
from .tools.registry import TOOLS


@dataclass(frozen=True)
class Agreement:
    """Macro P/R/F1 and Cohen's κ of binary predictions against labels.

    ``kappa`` is None when chance agreement is 1 (both sides constant and equal), where κ
    is undefined; ``n`` counts judged items, ``n_unknown`` the unjudged ones; ``label_classes``
    how many of the two classes the labels contain (a group with one class has no macro F1:
    tables show it as n/a, see `reportable`).
    """

    f1: float
    precision: float
    recall: float
    kappa: float | None
    n: int
    n_unknown: int = 0
    accuracy: float = 0.0
    label_classes: int = 2

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def reportable(self) -> dict[str, float | None]:
        """F1, recall, precision and κ for a table: None (n/a) for a group whose labels hold one
        class or nothing, where the macro average would count the absent class as 0 and show a
        perfect evaluator at F1 0.5."""
        if self.label_classes < 2:
            return {"f1": None, "recall": None, "precision": None, "kappa": None}
        return {"f1": self.f1, "recall": self.recall, "precision": self.precision, "kappa": self.kappa}


def agreement_from_counts(tt: int, tf: int, ft: int, ff: int, unknown: int = 0) -> Agreement:
    """Agreement from a confusion matrix: ``tf`` = label True, prediction False, etc."""
    n = tt + tf + ft + ff
    if n == 0:
        return Agreement(0.0, 0.0, 0.0, None, 0, unknown, label_classes=0)
    # per class: (hits, predicted as the class, truly the class)
    classes = ((tt, tt + ft, tt + tf), (ff, ff + tf, ff + ft))
    precisions = [hit / pred if pred else 0.0 for hit, pred, _ in classes]
    recalls = [hit / true if true else 0.0 for hit, _, true in classes]
    f1s = [2 * p * r / (p + r) if p + r else 0.0 for p, r in zip(precisions, recalls, strict=True)]
    p_o = (tt + ff) / n
    p_true, p_pred = (tt + tf) / n, (tt + ft) / n
    p_e = p_true * p_pred + (1 - p_true) * (1 - p_pred)
    kappa = None if abs(1 - p_e) < 1e-12 else (p_o - p_e) / (1 - p_e)
    if kappa is not None and abs(kappa) < 1e-12:
        kappa = 0.0  # float noise around exact chance agreement
    label_classes = int(tt + tf > 0) + int(ft + ff > 0)
    return Agreement(sum(f1s) / 2, sum(precisions) / 2, sum(recalls) / 2, kappa, n, unknown, p_o, label_classes)


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


def agreement(labels: Sequence[bool], predictions: Sequence[bool | None]) -> Agreement:
    """Agreement of ``predictions`` with ``labels`` (None predictions left out)."""
    return agreement_from_counts(**confusion(labels, predictions))


# --- per-task scoring -----------------------------------------------------------------------
def _predicted_valid(verdicts: Sequence[ConstraintVerdict], valid: bool | None) -> bool | None:
    # Spec 6.1: an evaluator without a holistic judgment is read as "valid iff every
    # constraint holds".
    return valid if valid is not None else holistic(verdicts)


def score(task: Task, outcome: Mapping[str, Any]) -> dict[str, float | None]:
    """One task's numbers, from which every table can be rebuilt by summing over episodes:
    the holistic prediction (None when unjudged), the constraint count, the verdict counts
    ``partial_holds``/``_fails``/``_unknown`` and per type (``FL_holds``…); for a labelled
    task also the holistic label and hit and the confusion counts ``partial_tt``/``_tf``/
    ``_ft``/``_ff`` (label letter first) overall and per type. With the LLM pipeline's trace
    also the plan sums of :func:`plan_metrics`; with identified constraints (``-o
    constraints=identify``) their verdict counts ``identified_n``/``_holds``/``_fails``.

    Raises:
        tasks.OutcomeError: the outcome does not have the documented shape.
    """
    verdicts, valid = parse_outcome(outcome, task)
    typed = LegoEvalOutcome.from_dict(outcome)
    predicted = _predicted_valid(verdicts, valid)
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
    out.update(_identified_counts(task, typed.identified))
    if raw_labels is None:  # a generator's scene: no labels, only the evaluator's verdicts
        out.update({"valid_label": None, "holistic_correct": None, "partial_accuracy": None})
        return out
    labels = [bool(x) for x in raw_labels]
    out["valid_label"] = float(bool(task.target["valid"]))
    out["holistic_correct"] = None if predicted is None else float(predicted == bool(task.target["valid"]))
    if predicted is None and all(h is None for h in holds) and not typed.scene_error:
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
    return out


Result = tuple[Task, Mapping[str, Any]]


def holistic_agreement(results: Iterable[Result]) -> Agreement:
    """Table 1, holistic: one label per instruction–scene pair."""
    labels, preds = [], []
    for task, outcome in results:
        if task.target.get("labels") is None:
            continue
        verdicts, valid = parse_outcome(outcome, task)
        labels.append(bool(task.target["valid"]))
        preds.append(_predicted_valid(verdicts, valid))
    return agreement(labels, preds)


def partial_agreement(results: Iterable[Result], *, ctype: str | None = None) -> Agreement:
    """Table 1, partial: one label per constraint (optionally of one type)."""
    labels: list[bool] = []
    preds: list[bool | None] = []
    for task, outcome in results:
        if task.target.get("labels") is None:
            continue
        verdicts, _ = parse_outcome(outcome, task)
        for v, lab, c in zip(verdicts, task.target["labels"], task.inputs["constraints"], strict=True):
            if ctype is None or c["type"] == ctype:
                labels.append(bool(lab))
                preds.append(v.holds)
    return agreement(labels, preds)


@dataclass(frozen=True)
class AgreementRow:
    """One evaluator's Table 1 row, plus breakdowns by constraint type and bucket."""

    holistic: Agreement
    partial: Agreement
    partial_by_type: dict[str, Agreement] = field(default_factory=dict)
    holistic_by_bucket: dict[str, Agreement] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"holistic": self.holistic.to_dict(), "partial": self.partial.to_dict(),
                "partial_by_type": {k: v.to_dict() for k, v in self.partial_by_type.items()},
                "holistic_by_bucket": {k: v.to_dict() for k, v in self.holistic_by_bucket.items()}}


def agreement_row(results: Sequence[Result]) -> AgreementRow:
    """Everything Table 1 needs for one evaluator."""
    by_bucket = {b: [r for r in results if r[0].metadata.get("bucket") == b] for b in BUCKETS}
    return AgreementRow(
        holistic=holistic_agreement(results),
        partial=partial_agreement(results),
        partial_by_type={t: partial_agreement(results, ctype=t) for t in TYPES},
        holistic_by_bucket={b: holistic_agreement(rs) for b, rs in by_bucket.items() if rs},
    )


# --- generator success rates (Table 3) ------------------------------------------------------
@dataclass(frozen=True)
class SuccessRates:
    """Holistic SR and partial SR per type and micro-averaged, in [0, 1] (None: nothing judged)."""

    holistic: float | None
    partial: float | None
    by_type: dict[str, float | None]
    by_bucket: dict[str, float | None]
    n_scenes: int
    n_constraints: int
    n_unknown_scenes: int
    n_unknown_constraints: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _rate(hits: int, n: int) -> float | None:
    return hits / n if n else None


def success_rates(results: Iterable[Result]) -> SuccessRates:
    """Table 3: how often generated scenes satisfy their instructions, by an evaluator's
    verdicts (one result per generated scene)."""
    scenes: list[tuple[str, bool | None]] = []
    per_type: dict[str, list[bool]] = {t: [] for t in TYPES}
    unknown_c = 0
    for task, outcome in results:
        verdicts, valid = parse_outcome(outcome, task)
        scenes.append((str(task.metadata.get("bucket", "")), _predicted_valid(verdicts, valid)))
        for v, c in zip(verdicts, task.inputs["constraints"], strict=True):
            if v.holds is None:
                unknown_c += 1
            else:
                per_type.setdefault(str(c["type"]), []).append(v.holds)
    judged = [ok for _, ok in scenes if ok is not None]
    all_c = [h for hs in per_type.values() for h in hs]
    by_bucket = {}
    for b in BUCKETS:
        mine = [ok for bucket, ok in scenes if bucket == b and ok is not None]
        by_bucket[b] = _rate(sum(mine), len(mine))
    return SuccessRates(
        holistic=_rate(sum(judged), len(judged)),
        partial=_rate(sum(all_c), len(all_c)),
        by_type={t: _rate(sum(hs), len(hs)) for t, hs in per_type.items()},
        by_bucket=by_bucket,
        n_scenes=len(scenes),
        n_constraints=len(all_c) + unknown_c,
        n_unknown_scenes=len(scenes) - len(judged),
        n_unknown_constraints=unknown_c,
    )


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


def plan_metrics(task: Task, outcome: Mapping[str, Any]) -> dict[str, float]:
    """Plan sums of one episode, when the outcome carries the pipeline's ``trace``:
    ``plan_constraints`` scored, ``plan_skipped`` (no reference plan: a constraint without a
    program; its planning step failed; or the constraints were identified, not given),
    ``plans_given`` (the plan was the reference, ``-o plans=reference``), ``tool_f1_sum``,
    ``plan_ged_sum``, ``arg_calls``, ``arg_f1_sum`` and their means ``tool_f1``,
    ``plan_ged``, ``argument_f1``. Empty for outcomes without a trace."""
    if "trace" not in outcome:
        return {}
    from .plans import task_plans

    steps = _trace_steps(task, outcome["trace"])
    ids = [str(c["id"]) for c in task.inputs["constraints"]]
    plans = task_plans(task) if "identified" not in outcome else [None] * len(ids)
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


# --- ablations (Table 2) --------------------------------------------------------------------
def relative_change_pct(full: float, ablated: float) -> float | None:
    """``(ablated − full) / full`` in percent (negative: a drop), None when ``full`` is 0."""
    return None if full == 0 else (ablated - full) / full * 100.0


def ablation_deltas(full: AgreementRow, ablated: Mapping[str, AgreementRow]) -> dict[str, dict[str, float | None]]:
    """Table 2: relative change of holistic and partial F1 per disabled tool group."""
    return {name: {"holistic_f1_pct": relative_change_pct(full.holistic.f1, row.holistic.f1),
                   "partial_f1_pct": relative_change_pct(full.partial.f1, row.partial.f1)}
            for name, row in ablated.items()}
