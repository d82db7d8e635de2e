"""LEGO-Eval's model pipeline against a model whose later prompt overflows the context window: the
prompts after the first are built from its answers, so the overflow is its scored doing; on the very
first prompt it is an unscored API error."""

from __future__ import annotations

import asyncio

import pytest

from buildbench.harness import RunConfig, execute_episode, get_suite, is_scored
from buildbench.llm import ApiError, ChatResponse, ScriptedChat

OVERFLOW = ChatResponse(error=ApiError("context_length", "m: HTTP 400: the request is over the model's context "
                                       "window", 400, 1))


@pytest.mark.parametrize(("replies", "status", "kind"), [
    ([OVERFLOW], "api_error", "api_error"),
    (["not what was asked", OVERFLOW], "budget", "context_length"),
])
def test_a_context_overflow_after_an_answer_is_the_agent_s(replies, status, kind) -> None:
    config = RunConfig(suite="legoeval", agent="llm", protocol="evaluate", split="demo", limit=1, workers=0,
                       options={"render": False})
    task = get_suite("legoeval").load_tasks("demo", 0)[0]
    episode = asyncio.run(execute_episode(config, task, 0, None, model=ScriptedChat(replies)))
    assert (episode.status, episode.error_kind) == (status, kind), episode.error
    assert "context window" in (episode.error or "") and is_scored(episode) is (status == "budget")
