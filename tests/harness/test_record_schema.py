"""Records' standard JSON Schema (pydantic-generated, checked with ``jsonschema``) and their
pydantic validation: every suite's outcome, state and action record, against the real outcomes
of the behaviour snapshots."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness.outcome import OutcomeRecord
from buildbench.harness.record import OPTIONAL, Record

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (dev extra) is not installed")

SUITES = ("bimedit", "buildarena", "dreamhouse", "example", "legoeval", "scenerevis")
SNAPSHOTS = Path(__file__).parent / "snapshots"


def _records(suite: str, module: str, base: type[Record]) -> list[type[Record]]:
    found = importlib.import_module(f"buildbench.suites.{suite}.{module}")
    return [v for v in vars(found).values()
            if isinstance(v, type) and issubclass(v, base) and v.__module__ == found.__name__]


def _outcome_type(suite: str) -> type[Record]:
    (record,) = _records(suite, "outcome", OutcomeRecord)
    return record


@pytest.mark.parametrize("suite", SUITES)
def test_every_record_schema_is_draft_2020_12(suite: str) -> None:
    records = [_outcome_type(suite), *_records(suite, "spaces", Record)]
    for record in records:
        schema = record.json_schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["title"] == record.__name__ and schema["description"]
        undocumented = [k for k, p in schema["properties"].items() if not p.get("description")]
        assert not undocumented, f"{record.__name__}: no description for {undocumented}"
        assert "extra" not in schema["properties"]
        json.dumps(schema)


def _snapshots() -> list[Path]:
    return sorted(SNAPSHOTS.glob("episode-*.json"))


@pytest.mark.parametrize("path", _snapshots(), ids=lambda p: p.stem)
def test_stored_outcomes_validate_against_their_schema_and_read_back(path: Path) -> None:
    suite = path.stem.split("-")[1]
    record = _outcome_type(suite)
    stored = json.loads(path.read_text())["outcome"]
    jsonschema.validate(stored, record.json_schema(), cls=jsonschema.Draft202012Validator)
    for read in (record.from_dict, record.from_data):  # (snapshots keep keys sorted)
        assert read(stored).to_dict() == stored


def test_every_suite_has_a_snapshot_outcome() -> None:
    assert {p.stem.split("-")[1] for p in _snapshots()} == set(SUITES)


@dataclass(frozen=True)
class _Tagged(OutcomeRecord):
    """A tagged outcome.

    Attributes:
        score: How good.
        note: A remark, absent while None.
        extra: Keys this type does not know.
    """

    FORMAT = "toy.outcome/1"
    SUITE = "toy"

    score: float
    note: str | None = field(default=None, metadata=OPTIONAL)
    extra: dict[str, Any] = field(default_factory=dict)


def test_format_comes_first_is_required_and_checked() -> None:
    schema = _Tagged.json_schema()
    assert list(schema["properties"]) == ["format", "score", "note"]
    assert schema["properties"]["format"]["const"] == "toy.outcome/1"
    assert schema["required"] == ["format", "score"] and schema["additionalProperties"] is True
    stored = _Tagged(0.5).to_dict()
    assert stored == {"format": "toy.outcome/1", "score": 0.5}
    jsonschema.validate(stored, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**stored, "format": "toy.outcome/2"}, schema)
    for read in (_Tagged.from_dict, _Tagged.from_data):
        with pytest.raises(ValueError, match=r"^toy outcome: format 'toy.outcome/2', expected 'toy.outcome/1'$"):
            read({**stored, "format": "toy.outcome/2"})


def test_unknown_keys_are_kept_in_extra_and_written_back() -> None:
    stored = {"format": "toy.outcome/1", "score": 1, "newer": [1, 2], "note": "ok"}
    for read in (_Tagged.from_dict, _Tagged.from_data):
        record = read(stored)
        assert record.extra == {"newer": [1, 2]} and record.note == "ok"
        assert record.to_dict() == {"format": "toy.outcome/1", "score": 1, "note": "ok", "newer": [1, 2]}
    jsonschema.validate(stored, _Tagged.json_schema())


def test_stored_values_are_read_unchecked_but_agent_input_is_checked() -> None:
    odd = {"format": "toy.outcome/1", "score": "high"}  # a run stored by another version
    assert _Tagged.from_dict(odd).score == "high"
    with pytest.raises(ValueError, match=r"^toy outcome: score: expected a number, got str$"):
        _Tagged.from_data(odd)
    with pytest.raises(ValueError, match=r"^toy outcome: note: expected a string, got int$"):
        _Tagged.from_data({"format": "toy.outcome/1", "score": 1.0, "note": 3})


def test_tuples_read_as_lists() -> None:
    from buildbench.suites.example.spaces import TowerAction

    action = TowerAction.from_data({"blocks": ({"center": (0, 0, 0.5), "size": [1, 1, 1]},)})
    assert action.blocks[0].center == [0, 0, 0.5]
    assert action.to_dict() == {"blocks": [{"center": [0, 0, 0.5], "size": [1, 1, 1]}]}


@pytest.mark.parametrize("suite", SUITES)
def test_every_suites_options_schema_is_draft_2020_12_and_holds_its_defaults(suite: str) -> None:
    from buildbench.harness import get_suite

    model = get_suite(suite).options_model()
    schema = model.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    defaults = {name: field.default for name, field in model.model_fields.items()}
    jsonschema.validate(defaults, schema, cls=jsonschema.Draft202012Validator)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"no_such_option": 1}, schema, cls=jsonschema.Draft202012Validator)
