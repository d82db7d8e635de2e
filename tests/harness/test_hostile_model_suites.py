"""``buildbench run`` of every suite with its model agent against a hostile loopback endpoint: the
model answers with lone surrogates, NUL bytes and a 100,000-bracket tool argument, then its
conversation overflows the context window. Each run exits 0, writes nothing outside its folder,
and its episode is the agent's scored failure with the context window named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from buildbench.harness import Store, is_scored
from buildbench.llm import Fault, ScriptedServer, ServerReply, ServerRequest, ServerToolCall

REPO = Path(__file__).resolve().parents[2]
OVERFLOW = ServerReply(fault=Fault.raw(json.dumps({"error": {
    "message": "This model's maximum context length is 4096 tokens. However, your messages resulted in 9000 tokens.",
    "type": "invalid_request_error", "code": "context_length_exceeded"}}), 400))
TEXT = ServerReply(text="a\x00b \ud800 ```python\nprint('\udfff')\x00\n```")
#: suite: (its model agent, extra options, the hostile turns before the overflow)
SUITES: dict[str, tuple[str, list[str], list[ServerReply]]] = {
    "dreamhouse": ("llm", ["-o", "images=off"], [TEXT]),
    "buildarena": ("llm", [], [TEXT]),
    # a text-only reply ends a BIM-Edit episode: the attack comes as the tool's code
    "bimedit": ("llm", ["-o", "call_timeout_s=30"],
                [ServerReply(tool_calls=(ServerToolCall("execute_ifc_code", {"code": "x = '\ud800'\x00"}),
                                         ServerToolCall("execute_ifc_code", '{"code": ' + "[" * 100_000)))]),
    "scenerevis": ("llm", ["-o", "render=false"], [TEXT]),
    # the llm agent's pipeline asks single prompts; the tool agent holds a conversation
    "legoeval": ("tool-agent", ["-o", "render=false"],
                 [TEXT, ServerReply(tool_calls=(ServerToolCall("get_room_list", '{"x": ' + "[" * 100_000),))]),
}


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("suite", sorted(SUITES))
def test_a_hostile_model_run_is_the_agent_s_scored_failure(suite: str, tmp_path: Path) -> None:
    agent, options, turns = SUITES[suite]

    def reply(request: ServerRequest) -> ServerReply:
        return turns[request.index] if request.index < len(turns) else OVERFLOW

    cwd = tmp_path / "cwd"
    cwd.mkdir()
    run_dir = tmp_path / "run"
    env = {**os.environ, "BUILDBENCH_CACHE": str(tmp_path / "cache")}
    with ScriptedServer(reply) as server:
        done = subprocess.run(
            [sys.executable, "-m", "buildbench", "run", suite, "--agent", agent, "--split", "demo", "--limit", "1",
             "--model", f"vllm:hostile@{server.base_url}", "--run-dir", str(run_dir), "-q",
             "-o", "timeout_s=30", *options],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=280)
        requests = len(server.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and requests == len(turns) + 1, (requests, done.stderr[-2000:])
    assert list(cwd.iterdir()) == []  # nothing written outside the run folder
    (episode,) = Store(run_dir).episodes()
    assert is_scored(episode) and episode.status in ("budget", "failed"), (episode.status, episode.error)
    assert "context window" in (episode.error or ""), episode.error
    said = "".join((s.action_text or "") + json.dumps(s.tool_calls, ensure_ascii=False) for s in episode.steps)
    assert "\ufffd" in said  # what the model said is kept, its surrogates replaced
