"""``buildbench mcp`` with a hostile model as its client: a 40,000-character tool name and a 500 kB
argument that fits no schema come back as one short ``error:`` line each, NUL bytes are the agent's
invalid action with feedback, and the next turn waits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server is optional: the mcp package is not installed")

from .mcp_play import http_server, http_session, mcp_config, run_async  # noqa: E402

CONFIG = mcp_config("example", protocol="refine", options={"tools": True})


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def test_huge_names_and_values_come_back_clipped_and_the_turn_waits(tmp_path: Path) -> None:
    seen: list[Any] = []

    async def session(url: str) -> None:
        async with http_session(url) as s:
            assert not (await s.call_tool("start_episode", {"task": "tower_0000_0000"})).isError
            seen.append(await s.call_tool("call", {"tool": "nope" * 10_000, "arguments": {}}))
            seen.append(await s.call_tool("submit_blocks", {"blocks": "x" * 500_000}))
            seen.append(await s.call_tool("submit", {"text": "a\x00b ```json\n{\"blocks\": [\x00]}\n```"}))
            seen.append(await s.call_tool("observe", {}))

    with http_server(CONFIG, tmp_path / "run") as url:
        run_async(lambda: session(url))
    name, value, nul, waiting = seen
    for refused in (name, value):
        (line,) = _text(refused).splitlines()
        assert refused.isError and line.startswith("error: ") and len(line) < 600, line[:700]
    assert "(40000 characters)" in _text(name) and "is not offered in this turn" in _text(name)
    assert "characters)" in _text(value) and "argument blocks" in _text(value)
    assert not nul.isError and "Invalid action" in _text(nul)  # the agent's own, with feedback
    assert not waiting.isError and not waiting.structuredContent["ended"] and "Invalid action" in _text(waiting)
