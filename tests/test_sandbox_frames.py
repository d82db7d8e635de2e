"""The one check of a frame's fields (`buildbench.sandbox.field_problem`) that the sandbox's
supervisor reply, its runner's report and the DreamHouse executor's reply all go through."""

from __future__ import annotations

from typing import Any

import pytest

from buildbench.sandbox import field_problem
from buildbench.sandbox._child import checked_report
from buildbench.sandbox._process import _reply_problem
from buildbench.sandbox._protocol import ProtocolError
from buildbench.suites.dreamhouse.executors._base import _reply_problem as executor_reply_problem

FIELDS: dict[str, tuple[type, ...]] = {"name": (str,), "count": (int,), "flag": (bool,), "note": (str, type(None))}


@pytest.mark.parametrize("frame, problem", [
    ({"name": "a", "count": 2, "flag": False, "note": None}, None),
    ({}, None),
    ([1, 2], "an array, not an object"),
    ("x", "a string, not an object"),
    (None, "null, not an object"),
    ({"name": "a", "other": 1}, "an unknown field 'other'"),
    ({"count": True}, "field 'count' is a boolean"),  # a bool is no int here
    ({"count": 1.5}, "field 'count' is a number"),
    ({"flag": 1}, "field 'flag' is a number"),
    ({"name": {"a": 1}}, "field 'name' is an object"),
    ({"name": None}, "field 'name' is null"),
])
def test_field_problem_names_the_first_bad_field(frame: Any, problem: str | None) -> None:
    assert field_problem(frame, FIELDS) == problem


def test_each_reader_names_the_problem_in_its_own_terms() -> None:
    assert _reply_problem({"nonce": "n", "status": "exited", "returncode": True}, "n") == \
        "field 'returncode' is a boolean"
    assert _reply_problem({"nonce": "n", "status": "ok", "extra": 1}, "n") == "an unknown field 'extra'"
    assert _reply_problem({"nonce": "m", "status": "ok"}, "n") == "it does not answer this request (wrong nonce)"
    assert _reply_problem({"nonce": "n", "status": "exited", "returncode": 3}, "n") is None
    with pytest.raises(ProtocolError, match=r"^the runner's report is malformed: field 'status' is null$"):
        checked_report({"status": None}, 100)
    assert checked_report({"status": "ok", "result_json": None, "error": None}, 100) == {"status": "ok"}
    assert executor_reply_problem({"status": "ok", "members": [], "cpu_s": False}, 10) == "field 'cpu_s' is a boolean"
    assert executor_reply_problem({"status": "ok"}, 10) == "no field 'members'"
    assert executor_reply_problem({"status": "ok", "members": [], "over_limit": 11}, 10) is None
    assert executor_reply_problem({"status": "ok", "members": [], "over_limit": 10}, 10) == \
        "'over_limit' 10 with 0 members exported (limit 10)"
