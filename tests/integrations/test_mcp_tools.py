"""The MCP server's own tools: each input schema is its argument record's JSON Schema (draft
2020-12) and the arguments are read through the same record, a bad one in one line."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (dev extra) is not installed")

from buildbench.harness.errors import ConfigError  # noqa: E402
from buildbench.integrations.mcp_server import (  # noqa: E402
    FIXED_TOOLS,
    Call,
    Observe,
    StartEpisode,
    Submit,
    _arguments,
)


def test_each_fixed_tools_schema_is_its_records() -> None:
    records = {"start_episode": StartEpisode, "submit": Submit, "observe": Observe, "finish": None, "call": Call}
    assert [t.name for t in FIXED_TOOLS] == list(records)
    for tool in FIXED_TOOLS:
        jsonschema.Draft202012Validator.check_schema(tool.inputSchema)
        assert tool.inputSchema["type"] == "object" and tool.description == tool.inputSchema["description"]
        record = records[tool.name]
        if record is not None:
            assert tool.inputSchema == record.json_schema()
    call = next(t for t in FIXED_TOOLS if t.name == "call").inputSchema
    jsonschema.validate({"tool": "submit_blocks", "arguments": {"blocks": []}}, call)


@pytest.mark.parametrize(("record", "arguments", "message"), [
    (Submit, {}, "mcp submit: missing key 'text'"),
    (StartEpisode, {"task": 3}, "mcp start_episode: task: expected a string or null, got int"),
    (Call, {"tool": "x", "arguments": [1]}, "mcp call: arguments: expected an object, got list"),
    (Observe, {"verbose": True}, "mcp observe: verbose: unknown field; fields: (none)"),
])
def test_bad_arguments_are_one_config_error_line(record: Any, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        _arguments(record, arguments)
    assert str(info.value) == message


def test_good_arguments_read_typed() -> None:
    assert _arguments(StartEpisode, {}).task is None
    assert _arguments(Call, {"tool": "t"}) == Call("t", {})
