"""A model sending huge replies cannot grow the run store without end: the replies an episode keeps
are bounded (BUILDBENCH_LIMIT_EPISODE_REPLY_BYTES). Past the bound the next call is refused and the
episode is the agent's scored ``budget`` failure, with every reply it did get stored whole; a run
whose replies stay under it is untouched. The model is a loopback OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio

import pytest

from buildbench.harness import RunConfig, Store, execute_episode, get_suite, is_scored
from buildbench.harness.episode import Episode
from buildbench.llm import (
    Budget,
    BudgetedChat,
    ChatModel,
    ChatRequest,
    ChatResponse,
    Message,
    OpenAIChat,
    RecordReplay,
    RetryPolicy,
    ScriptedChat,
    ScriptedServer,
    ToolCall,
)

RETRY = RetryPolicy(max_attempts=1, base_delay_s=0.01)
REPLY = "x" * 6000  # not a design: the refine protocol gives feedback and asks again


def _episode(model: ChatModel, steps: int = 8) -> Episode:
    # a history window keeps every request small: the request limit never ends this episode
    config = RunConfig(suite="example", agent="llm", protocol="refine", split="demo", limit=1, workers=0,
                       options={"history": 1, "max_steps": steps})
    task = get_suite("example").load_tasks("demo", 0)[0]
    return asyncio.run(execute_episode(config, task, 0, None, model=model))


def _replies(episode: Episode) -> list[str]:
    return [s.action_text or "" for s in episode.steps if s.role == "agent" and s.action_text]


def test_replies_past_the_episode_bound_end_it_as_the_agent_s_scored_budget(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDBENCH_LIMIT_EPISODE_REPLY_BYTES", "15000")
    with ScriptedServer(lambda request: REPLY) as server:
        episode = _episode(OpenAIChat("m", base_url=server.base_url, timeout_s=5, retry=RETRY))
        sent = len(server.requests)
    assert (episode.status, episode.error_kind) == ("budget", "budget"), episode.error
    assert "BUILDBENCH_LIMIT_EPISODE_REPLY_BYTES" in (episode.error or "") and is_scored(episode)
    # the call that crossed the bound was answered and kept whole; the next one never left
    assert sent == 3 and _replies(episode) == [REPLY] * 3
    with Store(tmp_path / "run") as store:
        store.add_episode(episode)
        (kept,) = store.episodes()
    assert (kept.status, kept.error_kind) == ("budget", "budget") and _replies(kept) == [REPLY] * 3


def test_a_replayed_run_ends_where_the_recorded_one_did(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the bound sits outside the recording: a replay is refused at the same call, not a replay_miss
    monkeypatch.setenv("BUILDBENCH_LIMIT_EPISODE_REPLY_BYTES", "15000")
    calls = tmp_path / "calls.jsonl"
    recorded = _episode(RecordReplay(calls, ScriptedChat([REPLY] * 8), mode="record"))
    replayed = _episode(RecordReplay(calls, None, mode="replay", provider="scripted", model="scripted"))
    for episode in (recorded, replayed):
        assert (episode.status, episode.error_kind) == ("budget", "budget"), episode.error
        assert _replies(episode) == [REPLY] * 3
    assert replayed.metrics == recorded.metrics


def test_an_episode_under_the_bound_is_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDBENCH_LIMIT_EPISODE_REPLY_BYTES", "15000")
    with ScriptedServer(lambda request: "y" * 1000) as server:
        episode = _episode(OpenAIChat("m", base_url=server.base_url, timeout_s=5, retry=RETRY), steps=8)
        sent = len(server.requests)
    assert episode.status == "ok" and sent == 8, episode.error


def test_the_default_bound_leaves_a_long_episode_of_large_replies_alone() -> None:
    # 40 replies of 1 MB (far more than an honest model writes) stay under the default
    episode = _episode(ScriptedChat(["z" * 1_000_000] * 40), steps=40)
    assert episode.status == "ok" and len(_replies(episode)) == 40, episode.error


def test_tool_call_arguments_count_and_a_refused_call_never_reaches_the_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDBENCH_LIMIT_EPISODE_REPLY_BYTES", "100")
    call = ToolCall.parse("c1", "place", '{"code": "' + "é" * 60 + '"}')  # 2 bytes each in UTF-8
    inner = ScriptedChat([ChatResponse(tool_calls=(call,)), "never sent"])
    budget = Budget()
    model = BudgetedChat(inner, budget)
    request = ChatRequest((Message.user("task"),))
    assert asyncio.run(model.generate(request)).ok
    assert budget.reply_bytes == len("place") + len(call.raw_arguments.encode("utf-8")) > 100
    refused = asyncio.run(model.generate(request))
    assert refused.error is not None and refused.error.kind == "budget"
    assert "reply budget spent" in refused.error.message and budget.used.requests == 1
