"""A model-backed agent end to end: the real OpenAI SDK over HTTP to a scripted model on
127.0.0.1, through the runner and store; then the same run replayed with no server."""

from __future__ import annotations

import json
import re

import pytest

from buildbench.harness import RunConfig, Runner, Store
from buildbench.llm import Fault, ScriptedServer, ServerReply, ServerToolCall
from buildbench.suites.example.agents import tower_design
from buildbench.suites.example.generate import make_task


def _task_from_prompt(text: str):
    seed, index = (int(x) for x in re.search(r"task (\d+)/(\d+)", text).groups())
    return make_task(index, seed)


def _blocks_for(request) -> list[dict]:
    first_user = next(m for m in request.messages if m["role"] == "user")
    content = first_user["content"]
    text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    target = float(re.search(r"at least ([0-9.]+) m", text).group(1))
    half = float(re.search(r"<= ([0-9.]+) m", text).group(1))
    # The scripted "model" designs from what the prompt says, like a model would.
    fake = type("T", (), {"inputs": {"target_height_m": target, "lot_half_width_m": half, "max_blocks": 40}})
    return tower_design(fake)


def text_model(request):
    return "```json\n" + json.dumps({"blocks": _blocks_for(request)}) + "\n```"


def tool_model(request):
    return ServerReply(tool_calls=(ServerToolCall("submit_blocks", {"blocks": _blocks_for(request)}),))


def _config(model_url: str, **kw):
    base = dict(suite="example", agent="llm", protocol="refine", split="demo", seed=1,
                model=f"vllm:scripted@{model_url}", concurrency=4)
    base.update(kw)
    return RunConfig(**base)


@pytest.mark.parametrize("reply,options", [(text_model, {}), (tool_model, {"tools": True})])
def test_model_agent_solves_tasks_over_http(tmp_path, reply, options):
    with ScriptedServer(reply) as server:
        result = Runner(_config(server.base_url, options=options), tmp_path).run()
        assert len(server.requests) == 6
    assert result.summary["status"] == {"ok": 6}
    assert result.summary["metrics"]["passed"] == 1.0
    with Store(tmp_path) as store:
        ep = next(store.episodes())
    assert ep.usage["requests"] == 1 and ep.usage["input_tokens"] > 0
    if options:
        assert ep.steps[0].tool_calls[0]["name"] == "submit_blocks"


def test_feedback_reaches_the_model_and_history_is_kept(tmp_path):
    def reply(request):
        if len(request.messages) < 4:  # first attempt: a floating tower
            blocks = _blocks_for(request)
            for b in blocks[1:]:
                b["center"][2] += 0.2
            return json.dumps({"blocks": blocks})
        assert "no path of support" in request.messages[-1]["content"]
        return text_model(request)

    with ScriptedServer(reply) as server:
        result = Runner(_config(server.base_url, limit=2), tmp_path).run()
    assert result.summary["metrics"]["passed"] == 1.0
    assert result.summary["metrics"]["attempts"] == 2.0


def test_api_errors_end_the_episode_with_a_status(tmp_path):
    with ScriptedServer(lambda r: ServerReply(fault=Fault.server_error(503))) as server:
        result = Runner(_config(server.base_url, limit=2, options={"max_retries": 1}), tmp_path).run()
    assert result.summary["status"] == {"api_error": 2}


def test_budget_refusal_is_a_status(tmp_path):
    def floating(request):
        return json.dumps({"blocks": [{"center": [0, 0, 5], "size": [1, 1, 1]}]})

    with ScriptedServer(floating) as server:
        result = Runner(_config(server.base_url, limit=2, options={"max_requests": 2, "max_steps": 5}),
                        tmp_path).run()
        assert len(server.requests) == 4
    assert result.summary["status"] == {"budget": 2}


def test_record_then_replay_without_server_is_identical(tmp_path):
    cache = tmp_path / "calls.jsonl"
    with ScriptedServer(text_model) as server:
        url = server.base_url
        Runner(_config(url, record=str(cache)), tmp_path / "live").run()
    replay = Runner(_config(url, replay=str(cache)), tmp_path / "replay").run()
    assert replay.summary["status"] == {"ok": 6}
    with Store(tmp_path / "live") as a, Store(tmp_path / "replay") as b:
        live = [(e.task_id, e.outcome, [s.action_text for s in e.steps]) for e in a.episodes()]
        again = [(e.task_id, e.outcome, [s.action_text for s in e.steps]) for e in b.episodes()]
    assert live == again
