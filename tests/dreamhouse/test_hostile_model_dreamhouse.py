"""DreamHouse member actions a hostile model writes: each out-of-range field is one problem line in
its own unit (a rotation in radians, not metres)."""

from __future__ import annotations

import pytest

from buildbench.suites.dreamhouse.actions import ActionError, parse_member


@pytest.mark.parametrize(("field", "value", "said"), [
    ("dimensions", [1e308, 1, 1], "'dimensions' entries are limited to 100 m"),
    ("location", [1e300, 0, 0], "'location' entries are limited to 1000 m"),
    ("rotation_euler", [1e300, 0, 0], "'rotation_euler' entries are limited to 1000 rad"),
])
def test_an_out_of_range_field_is_named_in_its_unit(field: str, value: list[float], said: str) -> None:
    member = {"name": "Stud_1", "dimensions": [0.04, 0.09, 2.4], "location": [0, 0, 1.2], field: value}
    with pytest.raises(ActionError, match=said):
        parse_member(member, "members[0] (Stud_1)")
