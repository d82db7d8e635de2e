"""Metrics against hand-computed values (spec section 6)."""

from __future__ import annotations

import re

import pytest

from buildbench.harness import Task
from buildbench.suites.legoeval.metrics import (
    ablation_deltas,
    agreement,
    agreement_row,
    holistic_agreement,
    partial_agreement,
    relative_change_pct,
    success_rates,
)
from buildbench.suites.legoeval.outcome import LegoEvalOutcome
from buildbench.suites.legoeval.score import argument_f1, plan_ged, score, set_f1, tool_f1
from buildbench.suites.legoeval.tasks import ConstraintSpec, OutcomeError, make_task, parse_outcome


def test_constant_predictor_on_balanced_data_matches_the_paper() -> None:
    labels = [True] * 130 + [False] * 130
    for constant in (True, False):
        a = agreement(labels, [constant] * 260)
        assert (round(a.f1, 2), a.precision, a.recall, a.kappa) == (0.33, 0.25, 0.5, 0.0)


def test_hand_computed_case_one() -> None:
    # tt=2, tf=1, ft=1, ff=1: per class P=R=F1 2/3 and 1/2; p_o .6, p_e .52
    a = agreement([True, True, True, False, False], [True, False, True, False, True])
    assert a.precision == pytest.approx(7 / 12) and a.recall == pytest.approx(7 / 12)
    assert a.f1 == pytest.approx(7 / 12) and a.kappa == pytest.approx(1 / 6) and a.accuracy == pytest.approx(0.6)


def test_hand_computed_case_two() -> None:
    # tt=2, ft=1, ff=1: valid P 2/3 R 1 F1 .8; invalid P 1 R .5 F1 2/3; p_o .75, p_e .5
    a = agreement([True, True, False, False], [True, True, True, False])
    assert a.precision == pytest.approx(5 / 6) and a.recall == pytest.approx(3 / 4)
    assert a.f1 == pytest.approx((0.8 + 2 / 3) / 2) and a.kappa == pytest.approx(0.5)


def test_perfect_and_inverted() -> None:
    labels = [True, False, True, False]
    assert agreement(labels, labels).kappa == 1.0 and agreement(labels, labels).f1 == 1.0
    inverted = agreement(labels, [not x for x in labels])
    assert inverted.kappa == -1.0 and inverted.f1 == 0.0


def test_unknown_predictions_are_left_out_and_counted() -> None:
    a = agreement([True, False, True, False], [True, False, None, None])
    assert (a.n, a.n_unknown, a.f1, a.kappa) == (2, 2, 1.0, 1.0)
    empty = agreement([True], [None])
    assert empty.n == 0 and empty.kappa is None


def test_kappa_undefined_when_chance_agreement_is_one() -> None:
    assert agreement([True, True], [True, True]).kappa is None


def test_length_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="2 labels but 1 predictions"):
        agreement([True, False], [True])


def test_set_tool_and_argument_f1() -> None:
    assert set_f1([], []) == 1.0 and set_f1(["a"], []) == 0.0
    assert tool_f1([{"a", "b"}, {"c"}], [{"a"}, {"c", "d"}]) == pytest.approx(2 / 3)
    assert argument_f1([["x", "y"], [("a", "b")]], [["x"], [["a", "b"]]]) == pytest.approx((2 / 3 + 1) / 2)
    with pytest.raises(ValueError):
        tool_f1([{"a"}], [])


def _plan(*edges: tuple[str, str]) -> list[dict[str, str]]:
    return [{"from": a, "to": b} for a, b in edges]


def test_graph_edit_distance_on_small_plans() -> None:
    a = _plan(("START", "get_room_list"), ("get_room_list", "get_room_info"))
    b = _plan(("START", "get_room_list"), ("get_room_list", "get_wall_list"))
    c = _plan(("START", "get_room_list"), ("START", "get_object_list"))
    assert plan_ged(a, a) == 0.0
    assert plan_ged(a, b) == 1.0  # one node relabelled
    assert plan_ged([], a) == 5.0  # three nodes and two edges inserted
    assert plan_ged(a, c) == 3.0  # relabel one node, move its edge (delete + insert)
    with pytest.raises(ValueError, match="plan edge 0"):
        plan_ged([{"to": "x"}], a)


def test_relative_change_and_ablation_table() -> None:
    assert relative_change_pct(0.8, 0.6) == pytest.approx(-25.0)
    assert relative_change_pct(0.0, 0.5) is None


def _task(tid: str, labels: list[bool], types: list[str]) -> Task:
    from buildbench.suites.legoeval.constraints import parse

    texts = {"FL": "The house has a kitchen.", "MS": "The floor of the kitchen is wood.",
             "OS": "The sofa is red.", "OP": "There is a bed in the bedroom."}
    specs = [ConstraintSpec(f"c{i}", texts[t], t, parse(texts[t])) for i, t in enumerate(types)]
    return make_task(tid, instruction="x", scene={}, constraints=specs, labels=labels, pair=tid,
                     aligned=all(labels))


def _outcome(holds: list[bool | None], valid: bool | None = None) -> dict:
    return {"verdicts": [{"id": f"c{i}", "holds": h, "explanation": ""} for i, h in enumerate(holds)],
            "valid": valid}


def test_score_and_tables_from_results() -> None:
    t1 = _task("a", [True, True, False], ["FL", "OP", "OP"])
    t2 = _task("b", [True, True], ["MS", "OS"])
    results = [(t1, _outcome([True, None, False])), (t2, _outcome([True, False]))]
    s1 = score(t1, LegoEvalOutcome.from_dict(results[0][1]))
    assert s1["valid_pred"] == 0.0 and s1["holistic_correct"] == 1.0  # derived: one constraint fails
    assert (s1["partial_tt"], s1["partial_ff"], s1["partial_unknown"]) == (1.0, 1.0, 1.0)
    assert s1["OP_unknown"] == 1.0 and s1["partial_accuracy"] == 1.0
    h = holistic_agreement(results)
    assert h.n == 2 and h.accuracy == 0.5  # t2 is valid but judged invalid
    p = partial_agreement(results)
    assert (p.n, p.n_unknown) == (4, 1)
    assert partial_agreement(results, ctype="OS").accuracy == 0.0
    row = agreement_row(results)
    assert set(row.partial_by_type) == {"FL", "MS", "OS", "OP"} and "2-7" in row.holistic_by_bucket
    assert ablation_deltas(row, {"w/o M": row})["w/o M"]["holistic_f1_pct"] == 0.0


def test_unknown_holistic_verdicts_stay_out() -> None:
    t = _task("a", [True, True], ["FL", "OP"])
    s = score(t, LegoEvalOutcome.from_dict(_outcome([True, None])))
    assert "valid_pred" not in s and "holistic_correct" not in s
    assert holistic_agreement([(t, _outcome([True, None]))]).n_unknown == 1


def test_success_rates_are_micro_averaged() -> None:
    t1 = _task("a", [True] * 3, ["FL", "OP", "OP"])
    t2 = _task("b", [True] * 2, ["FL", "MS"])
    sr = success_rates([(t1, _outcome([True, True, False])), (t2, _outcome([True, True]))])
    assert sr.holistic == 0.5
    assert sr.by_type == {"FL": 1.0, "MS": 1.0, "OS": None, "OP": 0.5}
    assert sr.partial == pytest.approx(4 / 5)  # not the mean of the type columns
    assert sr.by_bucket["2-7"] == 0.5 and sr.n_constraints == 5


def test_malformed_outcomes_name_the_field() -> None:
    t = _task("a", [True], ["FL"])
    for bad, where in [([], "outcome: expected an object"), ({"valid": "yes"}, "outcome.valid:"),
                       ({"verdicts": {}}, "outcome.verdicts:"),
                       ({"verdicts": [{"id": "c9", "holds": True}]}, "outcome.verdicts[0].id:"),
                       ({"verdicts": [{"id": "c0", "holds": "no"}]}, "outcome.verdicts[0].holds:")]:
        with pytest.raises(OutcomeError) as info:  # an untrusted outcome: a prediction file, an action
            parse_outcome(bad, t)
        assert str(info.value).startswith(f"task a {where}")
        if isinstance(bad, dict):  # a stored outcome is read back unchecked; the scorer checks it
            with pytest.raises(OutcomeError, match=rf"^task a {re.escape(where)}"):
                score(t, LegoEvalOutcome.from_dict(bad))


def test_single_class_groups_report_na_not_half() -> None:
    # Issue 23: a perfect evaluator on a type whose labels are all "holds" showed F1 0.500 (the
    # absent class counted as 0) while Table 1 showed 1.000.
    perfect = agreement([True, True, True], [True, True, True])
    assert perfect.label_classes == 1
    assert perfect.reportable() == {"f1": None, "recall": None, "precision": None, "kappa": None}
    assert agreement([], []).reportable()["f1"] is None
    both = agreement([True, False], [True, False])
    assert both.reportable()["f1"] == 1.0
