"""The verifiers bridge with a hostile model behind the loopback server: a lone surrogate in a reply
(which verifiers' own client sends back with the next request) and a reply with no content and no
tool call are the model's doing, scored; an endpoint that sends no choices stays unscored."""

from __future__ import annotations

import math
from typing import Any

import pytest

from buildbench.llm import Fault, ScriptedServer, ServerReply, ServerToolCall

vf = pytest.importorskip("verifiers", reason="the verifiers adapter is optional: verifiers is not installed")
openai = pytest.importorskip("openai")

from buildbench.integrations.verifiers import load_environment  # noqa: E402


def _rollout(suite: str, replies: list[ServerReply], **options: Any) -> tuple[dict[str, Any], int]:
    env = load_environment(suite, split="demo", limit=1, max_turns=len(replies), options=options)
    with ScriptedServer(replies) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="loopback", max_retries=0)
        (out,) = env.evaluate_sync(client, model="scripted", max_concurrent=1)["outputs"]
        return out, len(server.requests)


def test_surrogates_and_an_empty_reply_are_the_model_s_scored_doing() -> None:
    replies = [ServerReply(text="bad \ud800 room"),  # read back as a lone surrogate; resent next turn
               ServerReply(tool_calls=(ServerToolCall("place\udc00", '{"x": "\\udfff"}'),)),
               ServerReply(text="", finish_reason="content_filter")]
    out, requests = _rollout("scenerevis", replies, max_turns=3)
    assert requests == 3  # every reply was answered, none lost to a UnicodeEncodeError
    assert out["error"]["error"] == "EmptyModelResponseError"  # verifiers' own word for the last reply
    assert out["verifier_score"] == 0.0 and math.isfinite(out["reward"])  # scored: no room is no score


def test_an_endpoint_without_choices_stays_unscored() -> None:
    no_choices = ServerReply(fault=Fault.raw('{"id": "x", "object": "chat.completion", "created": 1, '
                                             '"model": "m", "choices": null}'))
    out, _ = _rollout("example", [no_choices])
    assert out["error"]["error"] == "EmptyModelResponseError" and math.isnan(out["reward"])
