"""Task records and outcomes: the shape every LEGO-Eval piece codes against."""

from __future__ import annotations

import pickle

import pytest

from buildbench.harness import Task
from buildbench.suites.legoeval.constraints import parse
from buildbench.suites.legoeval.tasks import (
    ConstraintSpec,
    OutcomeError,
    Verdict,
    bucket_of,
    holistic,
    make_task,
    parse_outcome,
    spec_for,
    task_constraints,
)


def _task() -> Task:
    specs = [spec_for("c0", "The house has a kitchen.", parse("The house has a kitchen.")),
             spec_for("c1", "There is a bed in the bedroom.", parse("There is a bed in the bedroom.")),
             ConstraintSpec("c2", "The kitchen feels warm.", "MS")]
    return make_task("p-misaligned", instruction="A house.", scene={"rooms": []}, constraints=specs,
                     labels=[True, False, True], pair="p", aligned=False, violated=["c1"])


def test_documented_shape() -> None:
    t = _task()
    assert t.inputs["constraints"][1] == {"id": "c1", "text": "There is a bed in the bedroom.", "type": "OP"}
    assert t.target["valid"] is False and t.target["labels"] == [True, False, True]
    assert t.target["programs"][0] == {"op": "layout", "kind": "room_exists", "room": "kitchen"}
    assert t.target["programs"][2] is None
    assert t.metadata == {"pair": "p", "aligned": False, "n_constraints": 3, "bucket": "2-7",
                          "types": {"FL": 1, "MS": 1, "OS": 0, "OP": 1}, "violated": ["c1"], "source": "generated"}
    assert pickle.loads(pickle.dumps(t)).to_dict() == t.to_dict()
    assert [c.program is None for c in task_constraints(t)] == [False, False, True]


def test_buckets() -> None:
    assert [bucket_of(n) for n in (2, 7, 8, 12, 13, 30)] == ["2-7", "2-7", "8-12", "8-12", ">12", ">12"]


def test_label_count_must_match() -> None:
    with pytest.raises(ValueError, match="2 labels for 3 constraints"):
        make_task("x", instruction="", scene={}, constraints=list(task_constraints(_task())), labels=[True, True],
                  pair="x", aligned=True)


def test_parse_outcome_fills_missing_verdicts_with_unknown() -> None:
    verdicts, valid = parse_outcome({"verdicts": [{"id": "c1", "holds": False}]}, _task())
    assert [v.holds for v in verdicts] == [None, False, None] and valid is None
    assert verdicts[0].explanation == "no verdict"
    with pytest.raises(OutcomeError, match="unknown constraint 'c7'"):
        parse_outcome({"verdicts": [{"id": "c7", "holds": True}]}, _task())


def test_holistic_is_the_and_of_constraints() -> None:
    v = Verdict
    assert holistic([v("a", True), v("b", True)]) is True
    assert holistic([v("a", True), v("b", None)]) is None
    assert holistic([v("a", None), v("b", False)]) is False
    assert holistic([]) is None  # nothing judged is no valid scene (issue 23: never pass on nothing)
