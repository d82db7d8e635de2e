"""BuildArena's decoding defaults (temperature 0.5, top-p 0.7) reach the model request and the clients."""

from __future__ import annotations

import asyncio

import pytest

from buildbench.harness import EpisodeContext, Observation, get_suite
from buildbench.llm import ChatRequest, Message
from buildbench.llm.openai_client import OpenAIChat
from buildbench.llm.scripted import ScriptedChat
from buildbench.suites.buildarena.agents import llm
from buildbench.suites.buildarena.suite import to_task


def _first_request(options: dict[str, object]) -> ChatRequest:
    model = ScriptedChat(["TERMINATE"])
    task = to_task("support-1")
    team = llm(task, model, get_suite("buildarena").parse_options(options))
    asyncio.run(team.act(Observation(text="Plan a bridge.", state={"role": "planner"}), EpisodeContext(task, 0)))
    return model.requests[0]


def test_team_sends_the_paper_decoding_settings() -> None:
    request = _first_request({})
    assert request.temperature == 0.5 and request.top_p == 0.7
    assert _first_request({"top_p": "none"}).top_p is None
    assert _first_request({"top_p": 0.9, "temperature": 0.0}).top_p == 0.9


def test_top_p_is_validated_and_kept_out_of_old_cache_keys() -> None:
    msg = (Message.user("hi"),)
    assert "top_p" not in ChatRequest(msg).to_dict()
    request = ChatRequest(msg, top_p=0.7)
    assert ChatRequest.from_dict(request.to_dict()) == request
    with pytest.raises(ValueError, match="top_p"):
        ChatRequest(msg, top_p=0.0)


def test_openai_client_passes_top_p() -> None:
    client = OpenAIChat("m", base_url="http://127.0.0.1:9/v1", api_key="x")
    kwargs = client.request_kwargs(ChatRequest((Message.user("hi"),), temperature=0.5, top_p=0.7))
    assert kwargs["top_p"] == 0.7 and kwargs["temperature"] == 0.5
