"""A record's one-line error says null where null is a value the field takes: a three-valued
``bool | None`` (LEGO-Eval's "not judged", "derived") and any ``X | None`` written as null; a field
left out of the dict while None (OPTIONAL) names only what to give, its null being "not given"."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from buildbench.harness.record import OPTIONAL, Record
from buildbench.suites.legoeval.spaces import LegoEvalAction, Verdicts


@dataclass(frozen=True)
class _Toy(Record):
    SUITE = "toy"
    KIND = "action"

    holds: bool | None
    count: int | None = None
    marks: list[bool | None] = field(default_factory=list)
    note: str | None = field(default=None, metadata=OPTIONAL)
    derived: bool | None = field(default=None, metadata=OPTIONAL)


@pytest.mark.parametrize("data, message", [
    ({"holds": "yes"}, "holds: expected true, false or null, got str"),
    ({"holds": None, "count": "3"}, "count: expected an integer or null, got str"),
    ({"holds": None, "marks": [True, 1]}, "marks[1]: expected true, false or null, got int"),
    ({"holds": None, "note": 3}, "note: expected a string, got int"),
    ({"holds": None, "derived": "no"}, "derived: expected true, false or null, got str"),
])
def test_null_is_named_where_it_is_a_value(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        _Toy.from_data(data)
    assert str(raised.value) == f"toy action: {message}"


def test_legoeval_verdict_fields_name_null() -> None:
    for record, data, message in (
            (Verdicts, {"verdicts": [{"id": "c0", "holds": 1}]}, "verdicts[0].holds: expected true, false or null"),
            (Verdicts, {"verdicts": [], "valid": "yes"}, "valid: expected true, false or null"),
            (LegoEvalAction, {"valid": "yes"}, "valid: expected true, false or null"),
            (LegoEvalAction, {"identified": [{"id": "x", "holds": "no"}]},
             "identified[0].holds: expected true, false or null")):
        with pytest.raises(ValueError) as raised:
            record.from_data(data)
        assert str(raised.value).startswith(f"legoeval action: {message}, got ")
