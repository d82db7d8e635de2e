"""Typed values crossing the env boundary: the Record mechanism, and every suite's state and
action records (``<suite>/spaces.py``) against what its env really sends and accepts."""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import Action, Env, RunConfig, execute_episode, get_suite
from buildbench.harness.record import OPTIONAL, Record, field_docs, unit

try:
    import jsonschema
except ImportError:  # the dev extra's; the records are checked without it too
    jsonschema = None

SUITES = ("bimedit", "buildarena", "dreamhouse", "example", "legoeval", "scenerevis")


@dataclass(frozen=True)
class _Leg(Record):
    """A leg.

    Attributes:
        foot_m: Where the foot stands ``[x, z]``,
            metres.
    """

    SUITE = "toy"
    KIND = "action"

    foot_m: list[float]


@dataclass(frozen=True)
class _Table(Record):
    """A table for the tests.

    Attributes:
        top: The top's name.
        height: Height of the top.
        legs: The legs.
        shape: ``round`` or ``square``.
        note: Anything said about it.
    """

    SUITE = "toy"
    KIND = "action"

    top: str
    height: float = field(default=0.75, metadata=unit("m"))
    legs: list[_Leg] = field(default_factory=list)
    shape: str | None = field(default=None, metadata=OPTIONAL)
    note: int | str | None = None


def test_nested_records_are_written_as_dicts_and_read_back() -> None:
    table = _Table("oak", 0.7, [_Leg([0.1, 0.2])], shape="round")
    data = table.to_dict()
    assert data == {"top": "oak", "height": 0.7, "legs": [{"foot_m": [0.1, 0.2]}], "shape": "round", "note": None}
    assert _Table.from_data(data) == table and _Table.from_dict(data) == table
    assert "shape" not in _Table("oak").to_dict()


@pytest.mark.parametrize(("data", "message"), [
    ({"top": 3}, "toy action: top: expected a string, got int"),
    ({"top": "oak", "height": "tall"}, "toy action: height: expected a number, got str"),
    ({"top": "oak", "height": math.nan}, "toy action: height: expected a finite number, got nan"),
    ({"top": "oak", "height": True}, "toy action: height: expected a number, got bool"),
    ({"top": "oak", "legs": [{"foot_m": [0.0, "x"]}]}, "toy action: legs[0].foot_m[1]: expected a number, got str"),
    ({"top": "oak", "legs": [7]}, "toy action: legs[0]: expected an object, got int"),
    ({"top": "oak", "legs": [{}]}, "toy action: missing key 'legs[0].foot_m'"),
    ({"top": "oak", "colour": "red"}, "toy action: colour: unknown field; fields: top, height, legs, shape, note"),
    ({"top": "oak", "note": 1.5}, "toy action: note: expected an integer or a string or null, got float"),
    ({}, "toy action: missing key 'top'"),
    ({"top": "oak", "bad\nkey": 1}, "toy action: 'bad\\nkey': unknown field; fields: top, height, legs, shape, note"),
    ({"top": "oak", "format": "x/1"}, "toy action: format: unknown field; fields: top, height, legs, shape, note"),
    ("oak", "toy action: expected a JSON object, got str"),
])
def test_bad_data_is_one_line_naming_the_field(data: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        _Table.from_data(data)
    assert str(info.value) == message


def test_from_dict_reads_stored_values_unchecked() -> None:
    assert _Table.from_dict({"top": 3}).top == 3  # the store wrote it; only agent input is checked


def test_the_schema_names_types_descriptions_and_units() -> None:
    schema = _Table.json_schema()
    assert schema["title"] == "_Table" and schema["description"] == "A table for the tests."
    assert schema["required"] == ["top"] and schema["additionalProperties"] is False
    props = schema["properties"]
    assert list(props) == ["top", "height", "legs", "shape", "note"]
    assert props["height"] == {"type": "number", "default": 0.75, "description": "Height of the top.", "x-unit": "m"}
    assert props["shape"]["anyOf"] == [{"type": "string"}, {"type": "null"}] and props["shape"]["x-optional"] is True
    assert props["note"]["anyOf"] == [{"type": "integer"}, {"type": "string"}, {"type": "null"}]
    assert props["legs"]["items"]["title"] == "_Leg"  # a record used once is inlined, else under $defs
    leg = props["legs"]["items"]["properties"]["foot_m"]
    assert leg == {"type": "array", "items": {"type": "number"}, "description": "Where the foot stands ``[x, z]``, metres.",
                   "x-unit": "m"}
    assert field_docs(_Leg) == {"foot_m": "Where the foot stands ``[x, z]``, metres."}


def _env_class(name: str) -> type[Env]:
    suite = get_suite(name)
    task = suite.load_tasks("demo", 0)[0]
    env = suite.make_env(task, suite.parse_options({}))
    env.close()
    return type(env)


@pytest.mark.parametrize("name", SUITES)
def test_every_field_of_every_state_and_action_record_is_documented(name: str) -> None:
    env_class = _env_class(name)
    assert env_class.state_type is not None, f"{name}: Env.state_type is not set"
    for record in (env_class.state_type, env_class.action_type):
        if record is None:
            continue
        schema = record.json_schema()
        json.dumps(schema)
        undocumented = [k for k, p in schema["properties"].items() if not p.get("description")]
        assert not undocumented, f"{record.__name__}: no description for {undocumented}"


@pytest.mark.parametrize("name", SUITES)
def test_a_demo_episodes_states_are_the_suites_state_record(name: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    env_class = _env_class(name)
    state_type = env_class.state_type
    assert state_type is not None
    states: list[dict[str, Any]] = []
    reset, step = env_class.reset, env_class.step

    def recording_reset(self: Env, *args: Any, **kwargs: Any) -> Any:
        result = reset(self, *args, **kwargs)
        states.append(result.observation.state)
        return result

    def recording_step(self: Env, action: Action) -> Any:
        result = step(self, action)
        states.append(result.observation.state)
        return result

    monkeypatch.setattr(env_class, "reset", recording_reset)
    monkeypatch.setattr(env_class, "step", recording_step)
    suite = get_suite(name)
    config = RunConfig(suite=name, agent=suite.default_agent,
                       protocol=suite.default_protocol or next(iter(suite.protocols)), split="demo", limit=1,
                       workers=0)
    episode = asyncio.run(execute_episode(config, suite.load_tasks("demo", 0)[0], 0, tmp_path))
    assert episode.status == "ok", episode.error
    assert len(states) >= 2
    schema = state_type.json_schema()
    for state in states:
        if not state:  # LEGO-Eval's tool answers carry no state
            continue
        stored = json.loads(json.dumps(state, default=lambda o: o.item()))
        typed = state_type.from_data(stored)  # every value has its field's type
        assert typed.to_dict() == stored and list(typed.to_dict()) == list(state)
        if jsonschema is not None:  # and the record's JSON Schema holds what the env really sent
            jsonschema.validate(stored, schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(("name", "data", "message"), [
    ("example", {"blocks": [{"center": [0, 0, 0], "size": "big"}]}, "example action: blocks[0].size: expected a list"),
    ("example", {"blocks": [{"center": [0, 0], "size": [1, 1, 1]}]}, "example action: blocks[0].center: expected at least 3 items, got 2"),
    ("dreamhouse", {"code": 5}, "dreamhouse action: code: expected a string, got int"),
    ("dreamhouse", {"members": [], "code": "x"}, "dreamhouse action: send exactly one of 'code'"),
    ("buildarena", {"op": 7}, "buildarena action: op: expected a string, got int"),
    ("buildarena", {"op": "start", "parms": {}}, "buildarena action: parms: unknown field"),
    ("legoeval", {"tool": "get_room_list", "verdicts": []}, "legoeval action: send exactly one of 'tool'"),
    ("legoeval", {"verdicts": [3]}, "legoeval action: verdicts[0]: expected an object, got int"),
])
def test_a_suites_action_record_refuses_bad_data_in_one_line(name: str, data: Any, message: str) -> None:
    action_type = _env_class(name).action_type
    assert action_type is not None
    with pytest.raises(ValueError) as info:
        action_type.from_data(data)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["bimedit", "scenerevis"])
def test_suites_without_structured_actions_say_so(name: str) -> None:
    assert _env_class(name).action_type is None


def test_the_env_answers_bad_data_with_the_records_line_and_keeps_its_state() -> None:
    suite = get_suite("example")
    task = suite.load_tasks("demo", 0)[0]
    env = suite.make_env(task, suite.parse_options({}))
    env.reset(task, seed=0)
    from buildbench.suites.example.agents import tower_design

    good = env.step(Action(data={"blocks": tower_design(task)}))
    bad = env.step(Action(data={"blocks": [{"center": [0, 0, "up"], "size": [1, 1, 1]}]}))
    assert "example action: blocks[0].center[2]: expected a number, got str" in bad.observation.text
    assert bad.observation.state == good.observation.state


@pytest.mark.parametrize(("name", "state", "action"), [
    ("example", "TowerState", "TowerAction"), ("buildarena", "BuildArenaState", "BuildArenaCall"),
    ("scenerevis", "SceneReVisState", None),
])
def test_gymnasium_describes_the_state_fields_at_reset(name: str, state: str, action: str | None) -> None:
    gymnasium = pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")
    from buildbench.gym import env_id

    env = gymnasium.make(env_id(name), split="demo", seed=0)
    obs, info = env.reset()
    env.close()
    schema = info["state_schema"]
    assert schema["title"] == state and set(json.loads(obs["state"])) <= set(schema["properties"])
    assert all(p["description"] for p in schema["properties"].values())
    assert (info["action_schema"] or {}).get("title") == action
