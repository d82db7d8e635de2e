"""A hostile model behind a loopback OpenAI-compatible endpoint, seen by the client and the harness:
what the model itself said (lone surrogates, a refusal, parts) becomes text every writer can write;
what the endpoint broke (a body nested 100,000 deep, bad token counts, a reset) is an API error
with its reason, never an exception; a request over the context window is the agent's scored doing
once its own replies are in the conversation, and an unscored API error before that."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest

from buildbench.harness import AgentError, RunConfig, Store, execute_episode, get_suite, is_scored
from buildbench.llm import (
    ApiError,
    ChatRequest,
    ChatResponse,
    Fault,
    Message,
    OpenAIChat,
    RetryPolicy,
    ScriptedChat,
    ScriptedServer,
    ServerReply,
    ServerToolCall,
    Tool,
    ToolCall,
)

REQUEST = ChatRequest((Message.user("hi"),), tools=(Tool("place", "place a block"),))
RETRY = RetryPolicy(max_attempts=2, base_delay_s=0.01)


def _body(message: str, usage: str = '{"prompt_tokens": 3, "completion_tokens": 4}') -> str:
    return ('{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0, '
            f'"message": {message}, "finish_reason": "stop"}}], "usage": {usage}}}')


def _ask(*faults: Fault, reply: ServerReply | str = "fine") -> tuple[ChatResponse, int]:
    with ScriptedServer(lambda request: reply) as server:
        server.inject(*faults)
        model = OpenAIChat("m", base_url=server.base_url, timeout_s=5, retry=RETRY)
        response = model.generate_sync(REQUEST)
        return response, len(server.requests)


def _writable(response: ChatResponse) -> None:
    """Every writer downstream (the next request, the store, a replay file) can write it."""
    json.dumps(response.to_dict(), ensure_ascii=False).encode("utf-8")
    response.to_message().to_dict()


def test_lone_surrogates_in_text_and_tool_calls_become_replacement_characters() -> None:
    # json.dumps escapes them ("\ud800"): valid JSON that reads back as lone surrogates
    reply = ServerReply(text="bad \ud800 and \udfff end",
                        tool_calls=(ServerToolCall("place\udc00", {"code": "x = '\ud800'", "\udc01": ["\ud83d"]}),))
    response, _ = _ask(reply=reply)
    assert response.ok and response.text == "bad \ufffd and \ufffd end"
    (call,) = response.tool_calls
    assert call.name == "place\ufffd" and call.arguments == {"code": "x = '\ufffd'", "\ufffd": ["\ufffd"]}
    _writable(response)


def test_a_surrogate_in_an_action_from_any_bridge_is_replaced() -> None:
    from buildbench.harness import Action

    assert Action(text="a\ud800b").text == "a\ufffdb"
    call = ToolCall.parse("c", "n", '{"k": "\\udfff"}')  # how Inspect, verifiers and MCP build theirs
    assert call.arguments == {"k": "\ufffd"} and call.parse_error is None


def test_a_refusal_is_the_reply_text_and_parts_are_joined() -> None:
    refusal = _body('{"role": "assistant", "content": null, "refusal": "I cannot help with that."}')
    response, _ = _ask(Fault.raw(refusal))
    assert response.ok and response.text == "I cannot help with that." and response.finish_reason == "refusal"
    parts = _body('{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "x"}, '
                  '{"type": "text", "text": "b"}]}')
    response, _ = _ask(Fault.raw(parts))
    assert response.ok and response.text == "ab"


@pytest.mark.parametrize(("body", "why"), [
    (_body('{"role": "assistant", "content": "hi", "junk": ' + "[" * 100_000 + "]" * 100_000 + "}"),
     "nested too deeply"),
    (_body('{"role": "assistant", "content": "hi"}', '{"prompt_tokens": -5, "completion_tokens": 1}'),
     "usage.prompt_tokens: expected a token count, got -5"),
    (_body('{"role": "assistant", "content": "hi"}', '{"prompt_tokens": 1, "completion_tokens": NaN}'),
     "usage.completion_tokens: expected a token count, got nan"),
    (_body('{"role": "assistant", "content": "hi"}', '{"prompt_tokens": true, "completion_tokens": 1}'),
     "usage.prompt_tokens: expected a token count, got True"),
    (_body('{"role": "assistant", "content": "hi"}', '{"prompt_tokens": 1e300, "completion_tokens": 1}'),
     "usage.prompt_tokens: expected a token count, got 1e+300"),
    (_body('{"role": "assistant", "content": 5}'), "message.content: expected text, got int"),
])
def test_a_broken_body_is_an_api_error_naming_it_not_an_exception(body: str, why: str) -> None:
    response, requests = _ask(Fault.raw(body), Fault.raw(body))
    assert response.error is not None and response.error.kind == "api_error", response
    assert "malformed response" in response.error.message and why in response.error.message
    assert requests == RETRY.max_attempts  # the endpoint's fault: retried like any malformed reply


@pytest.mark.parametrize("message", [
    "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens",  # OpenAI, vLLM
    "The decoder prompt (length 9000) is longer than the maximum model length of 8192.",  # vLLM
    "prompt is too long: 210000 tokens > 200000 maximum",  # Anthropic
])
def test_a_context_window_refusal_is_its_own_kind_and_not_retried(message: str) -> None:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    response, requests = _ask(Fault.raw(body, 400), Fault.raw(body, 400))
    assert response.error is not None and response.error.kind == "context_length", response
    assert "over the model's context window" in response.error.message and requests == 1


def test_another_400_stays_an_api_error() -> None:
    body = json.dumps({"error": {"message": "temperature: must be <= 2", "type": "invalid_request_error"}})
    response, requests = _ask(Fault.raw(body, 400))
    assert response.error is not None and response.error.kind == "api_error" and requests == 1


def test_a_reset_connection_is_named() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def reset_each() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.recv(1 << 16)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            conn.close()  # linger 0: a TCP reset

    threading.Thread(target=reset_each, daemon=True).start()
    try:
        model = OpenAIChat("m", base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1", timeout_s=5,
                           retry=RETRY)
        response = model.generate_sync(REQUEST)
    finally:
        stop.set()
    assert response.error is not None and response.error.kind == "api_error"
    # the reset's exception has no text of its own; its type is named rather than nothing
    assert response.error.message.split("connection failed: ")[1].split(" (after")[0].strip(), response.error


CONTEXT = ApiError("context_length", "m: HTTP 400: the request is over the model's context window", 400, 1)


def test_the_context_window_is_the_agent_s_doing_only_after_its_own_reply() -> None:
    first = AgentError.from_api(CONTEXT, after_reply=ChatRequest((Message.system("s"), Message.user("task"))).has_reply)
    assert first.kind == "api_error" and "first prompt" in first.message
    later = AgentError.from_api(CONTEXT, after_reply=ChatRequest((Message.user("task"), Message.assistant("x" * 100),
                                                                 Message.user("more"))).has_reply)
    assert later.kind == "context_length"


@pytest.mark.parametrize(("replies", "status", "kind"), [
    ([ChatResponse(error=CONTEXT)], "api_error", "api_error"),  # the task's prompt: unscored
    (["no tower here", ChatResponse(error=CONTEXT)], "budget", "context_length"),  # its replies grew it: scored
])
def test_a_context_window_overflow_in_an_episode(tmp_path, replies, status, kind) -> None:
    config = RunConfig(suite="example", agent="llm", protocol="refine", split="demo", limit=1, workers=0)
    task = get_suite("example").load_tasks("demo", 0)[0]
    episode = asyncio.run(execute_episode(config, task, 0, None, model=ScriptedChat(replies)))
    assert (episode.status, episode.error_kind) == (status, kind), episode.error
    assert "context window" in (episode.error or "")
    assert is_scored(episode) is (status == "budget")
    with Store(tmp_path / "run") as store:
        store.add_episode(episode)
        (kept,) = store.episodes()
    assert (kept.status, kept.error_kind) == (status, kind)


@pytest.mark.parametrize("reason", ["length", "content_filter", "refusal"])
def test_a_cut_filtered_or_refused_reply_is_named_in_its_step(reason: str) -> None:
    config = RunConfig(suite="example", agent="llm", protocol="one-shot", split="demo", limit=1, workers=0)
    task = get_suite("example").load_tasks("demo", 0)[0]
    cut = ChatResponse(text='{"blocks": [{"center": [0, 0, 0.', finish_reason=reason)
    episode = asyncio.run(execute_episode(config, task, 0, None, model=ScriptedChat([cut])))
    (step,) = [s for s in episode.steps if s.role == "agent"]
    assert step.info["finish_reason"] == reason
    assert episode.status == "ok" and is_scored(episode)  # an invalid design: the agent's scored failure
    plain = asyncio.run(execute_episode(config, task, 0, None, model=ScriptedChat(["{}"])))
    assert "finish_reason" not in plain.steps[0].info  # "stop" is not worth a word


def test_tool_calls_without_an_id_or_sharing_one_get_their_own() -> None:
    calls = [{"id": i, "type": "function", "function": {"name": "place", "arguments": "{}"}}
             for i in ("", "same", "same", None, "call_4")]
    response, _ = _ask(Fault.raw(_body(json.dumps({"role": "assistant", "content": None, "tool_calls": calls}))))
    ids = [c.id for c in response.tool_calls]
    assert ids[1] == "same" and ids[4] == "call_4" and len(set(ids)) == 5 and all(ids), ids


def test_an_episode_whose_model_sends_tool_calls_without_ids_goes_on() -> None:
    config = RunConfig(suite="example", agent="llm", protocol="refine", split="demo", limit=1, workers=0,
                       options={"tools": True})
    task = get_suite("example").load_tasks("demo", 0)[0]
    nameless = ChatResponse(tool_calls=(ToolCall("", "submit_blocks", {"blocks": []}), ToolCall("", "nope")))
    episode = asyncio.run(execute_episode(config, task, 0, None, model=ScriptedChat([nameless, nameless, "{}"])))
    assert episode.status == "ok" and is_scored(episode), episode.error  # was ValueError: an unscored error


def test_a_conversation_over_the_request_limit_is_not_sent_and_is_the_agent_s_overflow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDBENCH_LIMIT_MODEL_REQUEST_BYTES", "4096")
    big = ChatRequest((Message.user("task"), Message.assistant("x" * 5000), Message.user("more")))
    with ScriptedServer(lambda request: "fine") as server:
        model = OpenAIChat("m", base_url=server.base_url, timeout_s=5, retry=RETRY)
        assert model.generate_sync(REQUEST).ok  # a small one goes
        response = model.generate_sync(big)
        sent = len(server.requests)
    assert sent == 1 and response.error is not None and response.error.kind == "context_length"
    assert "BUILDBENCH_LIMIT_MODEL_REQUEST_BYTES" in response.error.message and response.usage.requests == 0
    assert AgentError.from_api(response.error, after_reply=big.has_reply).kind == "context_length"


@pytest.mark.parametrize(("spec", "why"), [
    ("vllm:m@ftp://host/v1", "must start with http:// or https://"),
    ("vllm:m@http://[::1", "is not a URL: Invalid IPv6 URL"),
    ("vllm:m@http://host:99999/v1", "is not a URL: Port out of range"),
    ("vllm:m@http://:8000/v1", "name a host"),
])
def test_a_base_url_that_is_no_http_url_is_one_error_line(spec: str, why: str, tmp_path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.cli.main import main
    from buildbench.llm import LLMConfigError, make_model

    run_dir = tmp_path / "run"
    code = main(["run", "example", "--model", spec, "--split", "demo", "--limit", "1", "--run-dir", str(run_dir), "-q"])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == 2 and line.startswith(f"error: model spec {spec!r}") and why in line and not run_dir.exists()

    with pytest.raises(LLMConfigError, match=why):
        make_model(spec)


@pytest.mark.parametrize("history", [0, 1, 2])
def test_a_truncated_conversation_never_sends_a_tool_result_without_its_call(history: int) -> None:
    config = RunConfig(suite="example", agent="llm", protocol="refine", split="demo", limit=1, workers=0,
                       options={"tools": True, "history": history, "max_steps": 5})
    task = get_suite("example").load_tasks("demo", 0)[0]
    model = ScriptedChat([ChatResponse(tool_calls=(ToolCall(f"c{i}", "submit_blocks", {"blocks": []}),))
                          for i in range(5)])
    episode = asyncio.run(execute_episode(config, task, 0, None, model=model))
    assert episode.status == "ok" and len(model.requests) == 5, episode.error
    for request in model.requests:
        open_calls: set[str] = set()
        for message in request.messages:
            if message.role == "assistant":
                open_calls = {c.id for c in message.tool_calls}
            elif message.role == "tool":
                assert message.tool_call_id in open_calls, [m.role for m in request.messages]
    last = model.requests[-1].messages
    if history < 4:
        assert any("Results of your earlier tool calls" in m.text for m in last)  # what was cut is still said
