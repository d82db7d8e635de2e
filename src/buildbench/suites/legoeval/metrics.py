"""LEGO-Eval's aggregate measures (spec section 6), over the episodes :mod:`.score` scored one
by one.

* Agreement with labels (Table 1): precision, recall and F1 **macro-averaged over the two
  classes** (valid / invalid; F1 is the mean of the per-class F1s, a class never predicted
  has precision 0) and Cohen's κ = (p_o − p_e) / (1 − p_e), at two levels: *holistic* (one
  label per scene) and *partial* (one per constraint). The constant predictor on balanced
  data gets P 0.25, R 0.5, F1 0.333, κ 0, as SceneEval "Full" in the paper.
* Generator success (Table 3): holistic SR = share of scenes whose every constraint holds;
  partial SR per constraint type and "Avg." = Σ holding / Σ constraints (micro-average).
* Ablations (Table 2): relative change of an F1 in percent.

The planner measures of one episode's plans (tool F1, argument F1, graph edit distance;
Tables 5, 7) are in :mod:`.score`. An unknown verdict (None: the evaluator could not judge) is
never counted as right or wrong: it is left out of every mean and counted in ``n_unknown``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from buildbench.harness import Task

from .score import confusion, predicted_valid
from .task_records import BUCKETS, TYPES, parse_outcome


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


def agreement(labels: Sequence[bool], predictions: Sequence[bool | None]) -> Agreement:
    """Agreement of ``predictions`` with ``labels`` (None predictions left out)."""
    return agreement_from_counts(**confusion(labels, predictions))


Result = tuple[Task, Mapping[str, Any]]


def holistic_agreement(results: Iterable[Result]) -> Agreement:
    """Table 1, holistic: one label per instruction–scene pair."""
    labels, preds = [], []
    for task, outcome in results:
        if task.target.get("labels") is None:
            continue
        verdicts, valid = parse_outcome(outcome, task)
        labels.append(bool(task.target["valid"]))
        preds.append(predicted_valid(verdicts, valid))
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
        scenes.append((str(task.metadata.get("bucket", "")), predicted_valid(verdicts, valid)))
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


# --- ablations (Table 2) --------------------------------------------------------------------
def relative_change_pct(full: float, ablated: float) -> float | None:
    """``(ablated − full) / full`` in percent (negative: a drop), None when ``full`` is 0."""
    return None if full == 0 else (ablated - full) / full * 100.0


def ablation_deltas(full: AgreementRow, ablated: Mapping[str, AgreementRow]) -> dict[str, dict[str, float | None]]:
    """Table 2: relative change of holistic and partial F1 per disabled tool group."""
    return {name: {"holistic_f1_pct": relative_change_pct(full.holistic.f1, row.holistic.f1),
                   "partial_f1_pct": relative_change_pct(full.partial.f1, row.partial.f1)}
            for name, row in ablated.items()}
