"""OutcomeRecord: a suite's outcome dataclass writes and reads the JSON the store keeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from buildbench.harness.outcome import OPTIONAL, OutcomeRecord


@dataclass
class _Tower(OutcomeRecord):
    FORMAT = "test.tower/1"
    SUITE = "tower"

    height_m: float
    blocks: int = 0
    note: str | None = field(default=None, metadata=OPTIONAL)
    extra: dict[str, Any] = field(default_factory=dict)


def test_the_dict_has_the_format_first_and_leaves_unset_optional_keys_out():
    assert list(_Tower(2.5, 3).to_dict().items()) == [("format", "test.tower/1"), ("height_m", 2.5), ("blocks", 3)]
    assert _Tower(2.5, note="tilted").to_dict()["note"] == "tilted"


def test_unknown_keys_of_a_stored_outcome_survive_the_round_trip():
    stored = {"format": "test.tower/1", "height_m": 1.0, "blocks": 2, "from_a_later_version": [1, 2]}
    typed = _Tower.from_dict(stored)
    assert typed.extra == {"from_a_later_version": [1, 2]} and typed.to_dict() == stored


@pytest.mark.parametrize(("data", "message"), [
    ({"format": "other/1", "height_m": 1.0}, "tower outcome: format 'other/1', expected 'test.tower/1'"),
    ({"format": "test.tower/1"}, "tower outcome: missing key 'height_m'"),
    ([1, 2], "tower outcome: expected a JSON object, got list"),
])
def test_a_foreign_or_incomplete_outcome_is_refused_in_one_line(data, message):
    with pytest.raises(ValueError) as info:
        _Tower.from_dict(data)
    assert str(info.value) == message
