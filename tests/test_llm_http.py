"""buildbench.llm through the real openai/anthropic SDKs over HTTP against ScriptedServer.

Everything runs on 127.0.0.1 with tiny back-off delays and sub-second timeouts.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import io
import json
import time
from collections.abc import Iterator

import numpy as np
import openai
import pytest
from PIL import Image

from buildbench.llm import (
    AnthropicChat,
    Budget,
    BudgetedChat,
    ChatRequest,
    ChatResponse,
    Fault,
    LLMConfigError,
    Message,
    OpenAIChat,
    RecordReplay,
    RetryPolicy,
    ScriptedServer,
    ServerReply,
    ServerRequest,
    ServerToolCall,
    Tool,
)

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.001, factor=2.0, max_delay_s=0.01)
PLACE = Tool(
    "place_member",
    "Place a timber member.",
    {
        "type": "object",
        "properties": {"name": {"type": "string"}, "x": {"type": "number"}},
        "required": ["name"],
    },
)


def _user(text: str = "hello", **kw: object) -> ChatRequest:
    return ChatRequest((Message.user(text),), **kw)  # type: ignore[arg-type]


def _echo(req: ServerRequest) -> ServerReply:
    return ServerReply(text=f"echo: {req.last_user_text()}", input_tokens=11, output_tokens=3)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(_echo) as srv:
        yield srv


def _openai(srv: ScriptedServer, **kw: object) -> OpenAIChat:
    opts: dict[str, object] = {"timeout_s": 2.0, "retry": FAST}
    opts.update(kw)
    return OpenAIChat("scripted-model", base_url=srv.base_url, **opts)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def warm_openai() -> None:
    """One request through the openai SDK before a timed one: the first in a process imports the
    SDK's lazy parts (0.5 CPU s; the first 'hang' call took 1.06 s at load ~10, 0.37 s once warm),
    set-up that is not the retry timing the fault tests bound."""
    with ScriptedServer(_echo) as srv:
        assert _openai(srv).generate_sync(_user()).ok


def _anthropic(srv: ScriptedServer, **kw: object) -> AnthropicChat:
    opts: dict[str, object] = {"timeout_s": 2.0, "retry": FAST}
    opts.update(kw)
    return AnthropicChat("claude-test", base_url=srv.anthropic_base_url, **opts)  # type: ignore[arg-type]


# --- plain calls -------------------------------------------------------------------------


def test_plain_text_and_accounting(server: ScriptedServer) -> None:
    model = _openai(server)
    r = model.generate_sync(_user("hi there", temperature=0.2, max_tokens=50, stop=("END",), seed=5))
    assert r.ok and r.text == "echo: hi there" and r.finish_reason == "stop"
    assert r.usage.to_dict() == {"input_tokens": 11, "output_tokens": 3, "requests": 1}
    assert r.attempts == 1 and r.model == "scripted-model" and r.latency_s > 0 and not r.cached
    body = server.requests[0].body
    assert (
        body["temperature"] == 0.2
        and body["max_tokens"] == 50
        and body["stop"] == ["END"]
        and body["seed"] == 5
    )
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"
    # a second blocking call runs in a new event loop and must get a fresh SDK client
    assert model.generate_sync(_user("again")).text == "echo: again"


def test_models_route_through_sdk(server: ScriptedServer) -> None:
    async def run() -> list[str]:
        client = openai.AsyncOpenAI(api_key="x", base_url=server.base_url, max_retries=0)
        try:
            return [m.id async for m in client.models.list()]
        finally:
            await client.close()

    assert asyncio.run(run()) == ["scripted-model"]


def test_image_input_arrives_as_png_data_url(server: ScriptedServer) -> None:
    pixels = np.zeros((7, 9, 4), np.uint8)
    pixels[..., 0] = 200
    pixels[..., 3] = 255
    r = _openai(server).generate_sync(ChatRequest((Message.user("what colour?", images=[pixels]),)))
    assert r.ok
    parts = server.requests[0].body["messages"][0]["content"]
    assert parts[0] == {"type": "text", "text": "what colour?"}
    url = parts[1]["image_url"]["url"]
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    png = base64.b64decode(url[len(prefix) :], validate=True)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(png))), pixels)


def test_tool_call_round_trip() -> None:
    script = iter(
        [
            ServerReply(tool_calls=(ServerToolCall("place_member", {"name": "Stud", "x": 0.4}),)),
            ServerReply(text="done"),
        ]
    )
    with ScriptedServer(lambda req: next(script)) as srv:
        model = _openai(srv)
        history: list[Message] = [Message.system("Build."), Message.user("Place a stud.")]
        r1 = model.generate_sync(ChatRequest(tuple(history), tools=(PLACE,), tool_choice="place_member"))
        assert r1.finish_reason == "tool_calls" and len(r1.tool_calls) == 1
        call = r1.tool_calls[0]
        assert (
            call.name == "place_member"
            and call.arguments == {"name": "Stud", "x": 0.4}
            and call.parse_error is None
        )
        history += [r1.to_message(), Message.tool(call.id, "placed Stud at x=0.4 m")]
        r2 = model.generate_sync(ChatRequest(tuple(history), tools=(PLACE,)))
        assert r2.text == "done"
        first, second = srv.requests[0].body, srv.requests[1].body
    assert first["tools"][0]["function"]["name"] == "place_member"
    assert first["tool_choice"] == {"type": "function", "function": {"name": "place_member"}}
    sent_call = second["messages"][2]["tool_calls"][0]
    assert sent_call["id"] == call.id and json.loads(sent_call["function"]["arguments"]) == call.arguments
    assert second["messages"][3] == {
        "role": "tool",
        "tool_call_id": call.id,
        "content": "placed Stud at x=0.4 m",
    }


def test_malformed_tool_arguments_are_flagged() -> None:
    with ScriptedServer(
        lambda req: ServerReply(tool_calls=(ServerToolCall("place_member", '{"name": "Stud",'),))
    ) as srv:
        r = _openai(srv).generate_sync(_user(tools=(PLACE,)))
    assert r.ok and r.tool_calls[0].parse_error is not None
    assert r.tool_calls[0].raw_arguments == '{"name": "Stud",' and r.tool_calls[0].arguments == {}


# --- faults ------------------------------------------------------------------------------


def test_rate_limit_honours_retry_after(server: ScriptedServer) -> None:
    server.inject(Fault.rate_limit(retry_after_s=0.3))
    t0 = time.perf_counter()
    r = _openai(server).generate_sync(_user())
    assert r.ok and r.attempts == 2 and r.usage.requests == 1
    assert time.perf_counter() - t0 >= 0.3  # the back-off alone would wait 1 ms
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    "fault",
    [Fault.server_error(500), Fault.server_error(503), Fault.truncated(), Fault.disconnect(), Fault.hang(5)],
)
def test_transient_fault_is_retried(server: ScriptedServer, fault: Fault, warm_openai: None) -> None:
    server.inject(fault)
    t0 = time.perf_counter()
    r = _openai(server, timeout_s=0.3).generate_sync(_user("x"))
    assert r.ok and r.text == "echo: x" and r.attempts == 2, r.error
    assert time.perf_counter() - t0 < 3.0  # far below the 5 s hang


@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [
        (Fault.server_error(500), "api_error", 500),
        (Fault.truncated(), "api_error", None),
        (Fault.hang(5), "timeout", None),
    ],
)
def test_persistent_fault_becomes_an_error_response(
    server: ScriptedServer, fault: Fault, kind: str, status: int | None, warm_openai: None
) -> None:
    server.inject(fault, fault, fault)
    t0 = time.perf_counter()
    r = _openai(server, timeout_s=0.3).generate_sync(_user())
    assert not r.ok and r.error is not None
    assert r.error.kind == kind and r.error.status_code == status and r.error.attempts == 3
    assert "after 3 attempts" in r.error.message and r.text == "" and r.usage.requests == 1
    assert len(server.requests) == 3 and time.perf_counter() - t0 < 4.0


def test_client_error_is_not_retried(server: ScriptedServer) -> None:
    def broken(req: ServerRequest) -> ServerReply:
        raise RuntimeError("no script for this")

    with ScriptedServer(broken) as srv:
        r = _openai(srv).generate_sync(_user())
        assert r.error is not None and r.error.status_code == 400 and r.error.attempts == 1
        assert "no script for this" in r.error.message and len(srv.requests) == 1


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch, server: ScriptedServer) -> None:
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="MY_KEY"):
        OpenAIChat("m", base_url=server.base_url, api_key_env="MY_KEY", require_key=True)
    monkeypatch.setenv("MY_KEY", "secret-123")
    model = OpenAIChat("m", base_url=server.base_url, api_key_env="MY_KEY")
    assert model.generate_sync(_user()).ok
    assert server.requests[-1].headers["authorization"] == "Bearer secret-123"
    with pytest.raises(LLMConfigError, match="timeout_s"):
        OpenAIChat("m", base_url=server.base_url, timeout_s=0)


# --- budget over HTTP --------------------------------------------------------------------


def test_budget_stops_calls_before_the_server(server: ScriptedServer) -> None:
    budget = Budget(max_requests=2, max_output_tokens=100)
    model = BudgetedChat(_openai(server), budget)
    results = [model.generate_sync(_user(f"q{i}", max_tokens=500)) for i in range(3)]
    assert [r.ok for r in results] == [True, True, False]
    assert results[2].error is not None and results[2].error.kind == "budget"
    assert len(server.requests) == 2 and server.requests[0].body["max_tokens"] == 100
    assert server.requests[1].body["max_tokens"] == 97
    assert budget.used.to_dict() == {"input_tokens": 22, "output_tokens": 6, "requests": 2}


# --- record / replay ---------------------------------------------------------------------


def _sampler(req: ServerRequest) -> ServerReply:
    if "fail" in req.last_user_text():
        return ServerReply(fault=Fault.server_error(502))
    if "tool" in req.last_user_text():
        return ServerReply(tool_calls=(ServerToolCall("place_member", "{bad json"),))
    return ServerReply(text=f"sample #{req.index} for {req.last_user_text()}")


async def _session(model: RecordReplay) -> list[ChatResponse]:
    image = np.full((4, 4, 3), 90, np.uint8)
    requests = [
        _user("a", temperature=1.0),
        _user("a", temperature=1.0),  # same request twice: two different samples
        ChatRequest((Message.user("look", images=[image]),)),
        _user("tool please", tools=(PLACE,)),
        _user("fail"),
        _user("a", temperature=1.0),
    ]
    return [await model.generate(r) for r in requests]


def test_record_then_replay_offline_bit_for_bit(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    with ScriptedServer(_sampler) as srv:
        recorder = RecordReplay(
            path, _openai(srv, retry=RetryPolicy(max_attempts=2, base_delay_s=0.001)), "record"
        )
        recorded = asyncio.run(_session(recorder))
    texts = [r.text for r in recorded]
    assert texts[0] != texts[1] and texts[0] != texts[5]
    assert recorded[3].tool_calls[0].parse_error is not None
    assert recorded[4].error is not None and recorded[4].error.status_code == 502
    # server gone: only the file answers now
    replayer = RecordReplay(path, None, "replay", provider="openai", model="scripted-model")
    replayed = asyncio.run(_session(replayer))
    assert all(r.cached for r in replayed)
    for a, b in zip(recorded, replayed, strict=True):
        assert json.dumps(dataclasses.replace(b, cached=False).to_dict()) == json.dumps(a.to_dict())
    miss = replayer.generate_sync(_user("never asked"))
    assert miss.error is not None and miss.error.kind == "replay_miss" and str(path) in miss.error.message


def test_concurrent_record_keeps_the_file_valid(tmp_path) -> None:
    path = tmp_path / "many.jsonl"
    n = 40

    async def run(model: RecordReplay) -> list[ChatResponse]:
        return await asyncio.gather(*(model.generate(_user(f"task {i % 10}")) for i in range(n)))

    with ScriptedServer(_sampler) as srv:
        recorded = asyncio.run(run(RecordReplay(path, _openai(srv), "record")))
    lines = path.read_text().splitlines()
    assert len(lines) == n
    entries = [json.loads(line) for line in lines]
    assert len({e["key"] for e in entries}) == n
    assert sorted(e["occurrence"] for e in entries) == sorted([k for k in range(4) for _ in range(10)])
    replayed = asyncio.run(run(RecordReplay(path, None, "replay", provider="openai", model="scripted-model")))
    assert [r.text for r in replayed] == [r.text for r in recorded]


# --- Anthropic through its SDK -----------------------------------------------------------


def test_anthropic_text_image_and_tool_round_trip() -> None:
    script = iter(
        [
            ServerReply(
                text="I'll place it.", tool_calls=(ServerToolCall("place_member", {"name": "Sill"}),)
            ),
            ServerReply(text="done", input_tokens=30, output_tokens=2),
        ]
    )
    with ScriptedServer(lambda req: next(script)) as srv:
        model = _anthropic(srv)
        pixels = np.zeros((3, 3, 3), np.uint8)
        history = [Message.system("Be a carpenter."), Message.user("Place a sill.", images=[pixels])]
        r1 = model.generate_sync(
            ChatRequest(tuple(history), tools=(PLACE,), tool_choice="required", temperature=0)
        )
        assert r1.ok and r1.text == "I'll place it." and r1.finish_reason == "tool_calls"
        call = r1.tool_calls[0]
        assert call.arguments == {"name": "Sill"} and call.id == "toolu_0_0"
        history += [r1.to_message(), Message.tool(call.id, "placed")]
        r2 = model.generate_sync(ChatRequest(tuple(history), tools=(PLACE,), max_tokens=64))
        assert r2.text == "done" and r2.finish_reason == "stop"
        assert r2.usage.to_dict() == {"input_tokens": 30, "output_tokens": 2, "requests": 1}
        first, second = srv.requests[0].body, srv.requests[1].body
    assert first["system"] == "Be a carpenter." and first["tool_choice"] == {"type": "any"}
    assert first["temperature"] == 0 and first["max_tokens"] == 4096
    assert first["tools"][0]["input_schema"]["required"] == ["name"]
    image = first["messages"][0]["content"][1]
    assert image["type"] == "image" and base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG")
    assert second["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_0_0",
        "name": "place_member",
        "input": {"name": "Sill"},
    }
    assert second["messages"][2]["content"][0]["type"] == "tool_result"
    assert second["messages"][2]["content"][0]["tool_use_id"] == "toolu_0_0" and second["max_tokens"] == 64


def test_anthropic_faults_and_malformed_tool_input(server: ScriptedServer) -> None:
    server.inject(Fault.rate_limit(retry_after_s=0.05), Fault.server_error(529))
    r = _anthropic(server).generate_sync(_user("hey"))
    assert r.ok and r.attempts == 3 and r.text == "echo: hey"
    server.inject(Fault.server_error(500), Fault.server_error(500), Fault.server_error(500))
    failed = _anthropic(server).generate_sync(_user())
    assert failed.error is not None and failed.error.kind == "api_error" and failed.error.attempts == 3
    with ScriptedServer(
        lambda req: ServerReply(tool_calls=(ServerToolCall("place_member", "{nope"),))
    ) as srv:
        bad = _anthropic(srv).generate_sync(_user(tools=(PLACE,)))
    assert bad.ok and bad.tool_calls[0].parse_error is not None and bad.tool_calls[0].raw_arguments == "{nope"
