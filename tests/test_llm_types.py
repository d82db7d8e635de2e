"""buildbench.llm without HTTP: types, retry policy, budget, scripted model, cache file, factory."""

from __future__ import annotations

import asyncio
import io
import json
import random

import numpy as np
import pytest
from PIL import Image

from buildbench.llm import (
    ApiError,
    Budget,
    BudgetedChat,
    ChatRequest,
    ChatResponse,
    ImagePart,
    LLMConfigError,
    Message,
    RecordReplay,
    RetryPolicy,
    ScriptedChat,
    TextPart,
    Tool,
    ToolCall,
    Usage,
    make_model,
    parse_spec,
    request_hash,
)
from buildbench.llm.anthropic_client import to_anthropic_messages
from buildbench.llm.openai_client import to_openai_messages
from buildbench.llm.retry import parse_retry_after


def _pixels(h: int = 6, w: int = 5, c: int = 4) -> np.ndarray:
    return np.arange(h * w * c, dtype=np.uint8).reshape(h, w, c)


def _request(text: str = "hi", **kw: object) -> ChatRequest:
    return ChatRequest((Message.user(text),), **kw)  # type: ignore[arg-type]


# --- types -------------------------------------------------------------------------------


def test_request_and_response_round_trip_through_json() -> None:
    call = ToolCall.parse("c1", "place", '{"x": 1.5, "name": "Stud"}')
    request = ChatRequest(
        messages=(
            Message.system("You build houses."),
            Message.user("Look:", images=[_pixels()]),
            Message.assistant("placing", [call]),
            Message.tool("c1", "ok", images=[_pixels(3, 3, 3)]),
        ),
        tools=(Tool("place", "Place a member", {"type": "object", "properties": {"x": {"type": "number"}}}),),
        temperature=0.7,
        max_tokens=64,
        tool_choice="place",
        stop=("END",),
        seed=3,
    )
    again = ChatRequest.from_dict(json.loads(json.dumps(request.to_dict())))
    assert again == request
    response = ChatResponse(
        text="t",
        tool_calls=(ToolCall.parse("c2", "f", "{oops"),),
        usage=Usage(10, 2, 1),
        finish_reason="tool_calls",
        model="m",
        latency_s=0.25,
        attempts=2,
    )
    assert ChatResponse.from_dict(json.loads(json.dumps(response.to_dict()))) == response
    failed = ChatResponse.failure(ApiError("timeout", "slow", None, 3), "m", 1.0)
    assert ChatResponse.from_dict(json.loads(json.dumps(failed.to_dict()))) == failed
    assert failed.usage == Usage(0, 0, 1) and not failed.ok


def test_from_dict_names_the_bad_field() -> None:
    bad = {"messages": [{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}]}
    with pytest.raises(ValueError, match="role"):
        ChatRequest.from_dict(bad)
    with pytest.raises(ValueError, match=r"request\.messages\[0\]\.content\[0\]\.type"):
        ChatRequest.from_dict({"messages": [{"role": "user", "content": [{"type": "video"}]}]})
    with pytest.raises(ValueError, match="missing field 'messages'"):
        ChatRequest.from_dict({})


def test_tool_call_parse_flags_bad_arguments_instead_of_raising() -> None:
    assert ToolCall.parse("a", "f", '{"k": [1, 2]}').arguments == {"k": [1, 2]}
    assert ToolCall.parse("a", "f", "").parse_error is None  # no-argument tools
    bad = ToolCall.parse("a", "f", '{"k": 1')
    assert (
        bad.arguments == {} and bad.raw_arguments == '{"k": 1' and "invalid JSON" in (bad.parse_error or "")
    )
    assert "got list" in (ToolCall.parse("a", "f", "[1]").parse_error or "")
    assert ToolCall.parse("a", "f", {"k": 2}).raw_arguments == '{"k": 2}'
    assert ToolCall.parse("a", "f", 7).parse_error is not None


def test_message_validation() -> None:
    with pytest.raises(ValueError, match="tool_call_id"):
        Message("tool", "result")
    with pytest.raises(ValueError, match=r"content\[1\]"):
        Message("user", [TextPart("a"), "b"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="not 'auto'"):
        _request(tool_choice="missing_tool")
    with pytest.raises(ValueError, match="empty"):
        ChatRequest(())
    m = Message("user", [TextPart("a"), ImagePart.from_array(_pixels()), TextPart("b")])
    assert isinstance(m.content, tuple) and m.text == "ab" and len(m.images) == 1


def test_image_part_from_array_and_path(tmp_path) -> None:
    rgba = _pixels()
    part = ImagePart.from_array(rgba)
    assert part == ImagePart.from_array(rgba.copy())  # same pixels, same bytes
    decoded = np.asarray(Image.open(io.BytesIO(part.png)))
    assert decoded.shape == rgba.shape and np.array_equal(decoded, rgba)
    assert part.data_url.startswith("data:image/png;base64,")
    png_path = tmp_path / "a.png"
    png_path.write_bytes(part.png)
    assert ImagePart.from_path(png_path).png == part.png
    jpg_path = tmp_path / "b.jpg"
    Image.fromarray(_pixels(8, 8, 3)).save(jpg_path)
    assert ImagePart.from_path(jpg_path).png.startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="dtype uint8"):
        ImagePart.from_array(rgba.astype(np.float32))
    with pytest.raises(ValueError, match="shape"):
        ImagePart.from_array(np.zeros((2, 2, 2), np.uint8))
    with pytest.raises(ValueError, match="cannot read"):
        ImagePart.from_path(tmp_path / "missing.png")
    with pytest.raises(ValueError, match="PNG"):
        ImagePart(b"GIF89a")


# --- wire conversion ---------------------------------------------------------------------


def test_openai_messages_move_tool_images_after_the_tool_results() -> None:
    calls = [ToolCall.parse("c1", "render", "{}"), ToolCall.parse("c2", "render", "{}")]
    msgs = (
        Message.user("go"),
        Message.assistant("", calls),
        Message.tool("c1", "view 1", images=[_pixels()]),
        Message.tool("c2", "view 2"),
        Message.user("next?"),
    )
    out = to_openai_messages(msgs)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert out[1]["content"] is None and out[1]["tool_calls"][1]["id"] == "c2"
    assert out[4]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert out[5]["content"] == "next?"


def test_anthropic_messages_merge_tool_results_and_split_system() -> None:
    calls = [ToolCall.parse("t1", "f", '{"a": 1}'), ToolCall.parse("t2", "f", "{}")]
    msgs = (
        Message.system("rules"),
        Message.user("go"),
        Message.assistant("thinking", calls),
        Message.tool("t1", "one"),
        Message.tool("t2", "two", images=[_pixels()]),
        Message.assistant(""),  # an empty reply must not become an empty (rejected) turn
        Message.user("and?"),
    )
    system, turns = to_anthropic_messages(msgs)
    assert system == "rules"
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][1] == {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}
    results = turns[2]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result", "text"]
    assert results[1]["content"][1]["type"] == "image"


# --- retry policy ------------------------------------------------------------------------


def test_backoff_is_exponential_capped_and_seeded() -> None:
    plain = RetryPolicy(base_delay_s=0.5, factor=2, max_delay_s=3).backoff()
    assert [plain.delay_s(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    policy = RetryPolicy(base_delay_s=1, jitter=0.5, seed=7)
    a = [policy.backoff().delay_s(1) for _ in range(2)]
    assert a[0] == a[1] and 1.0 <= a[0] <= 1.5
    assert a[0] == 1.0 + 0.5 * random.Random(7).random()
    capped = RetryPolicy(max_retry_after_s=2).backoff()
    assert capped.delay_s(1, retry_after_s=30) == 2 and capped.delay_s(1, retry_after_s=0.25) == 0.25
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now_s=1445412480.0) == 10.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


# --- scripted model, budget --------------------------------------------------------------


def test_scripted_chat_list_function_and_exhaustion() -> None:
    call = ToolCall.parse("s1", "f", "{}")
    model = ScriptedChat(["first", ChatResponse(tool_calls=(call,))])
    r1 = model.generate_sync(_request("abcdefgh"))
    assert r1.text == "first" and r1.finish_reason == "stop" and r1.usage == Usage(2, 1, 1)
    r2 = model.generate_sync(_request())
    assert r2.tool_calls == (call,) and r2.finish_reason == "tool_calls" and r2.model == "scripted"
    r3 = model.generate_sync(_request())
    assert r3.error is not None and "exhausted after 2" in r3.error.message
    echo = ScriptedChat()
    assert echo.generate_sync(_request("ping")).text == "ping" and len(echo.requests) == 1


def test_budget_counts_and_refuses_without_calling() -> None:
    inner = ScriptedChat(lambda r: "x" * 40)
    budget = Budget(max_requests=3)
    model = BudgetedChat(inner, budget)

    async def run() -> list[ChatResponse]:
        return await asyncio.gather(*(model.generate(_request("y" * 8)) for _ in range(5)))

    out = asyncio.run(run())
    assert sum(r.ok for r in out) == 3
    refused = [r for r in out if not r.ok]
    assert all(r.error is not None and r.error.kind == "budget" and r.error.attempts == 0 for r in refused)
    assert len(inner.requests) == 3
    assert budget.used == Usage(3 * 2, 3 * 10, 3)


def test_budget_output_tokens_clamp_max_tokens_and_input_limit() -> None:
    inner = ScriptedChat(lambda r: ChatResponse(text="z", usage=Usage(50, 7, 1)))
    budget = Budget(max_input_tokens=120, max_output_tokens=20)
    model = BudgetedChat(inner, budget)
    model.generate_sync(_request(max_tokens=100))
    assert inner.requests[-1].max_tokens == 20
    model.generate_sync(_request())
    assert inner.requests[-1].max_tokens == 13
    model.generate_sync(_request())  # input 150 >= 120 now
    refused = model.generate_sync(_request())
    assert refused.error is not None and "input-token budget" in refused.error.message
    assert budget.used == Usage(150, 21, 3) and len(inner.requests) == 3


# --- record/replay file ------------------------------------------------------------------


def test_repeated_request_replays_in_order(tmp_path) -> None:
    counter = iter(range(100))
    live = ScriptedChat(lambda r: f"sample {next(counter)}")
    path = tmp_path / "calls.jsonl"
    rec = RecordReplay(path, live, mode="record")
    req = _request("same", temperature=1.0)
    first = [rec.generate_sync(req).text for _ in range(3)]
    assert first == ["sample 0", "sample 1", "sample 2"]
    assert request_hash("p", "m", _request(temperature=1)) == request_hash(
        "p", "m", _request(temperature=1.0)
    )
    rep = RecordReplay(path, None, mode="replay", provider="scripted", model="scripted")
    assert [rep.generate_sync(req).text for _ in range(3)] == first
    miss = rep.generate_sync(req)
    assert (
        miss.error is not None and miss.error.kind == "replay_miss" and "occurrence 3" in miss.error.message
    )


def test_auto_mode_records_only_misses(tmp_path) -> None:
    live = ScriptedChat()
    path = tmp_path / "auto.jsonl"
    RecordReplay(path, live, mode="auto").generate_sync(_request("a"))
    auto = RecordReplay(path, live, mode="auto")
    assert auto.generate_sync(_request("a")).cached
    assert not auto.generate_sync(_request("b")).cached
    assert len(live.requests) == 2 and auto.hits == 1 and auto.misses == 1
    assert len(path.read_text().splitlines()) == 2


def test_torn_last_line_is_skipped_and_corruption_reported(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    RecordReplay(path, ScriptedChat(), mode="record").generate_sync(_request("a"))
    with path.open("a") as f:
        f.write('{"key": "abc", "resp')  # a crash mid-write
    with pytest.warns(UserWarning, match="incomplete last line"):
        rec = RecordReplay(path, ScriptedChat(), mode="auto")
    rec.generate_sync(_request("b"))
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[2])["response"]["text"] == "b"
    path.write_text("not json\n" + path.read_text())
    with pytest.raises(ValueError, match=r"c\.jsonl:1"):
        RecordReplay(path, None, mode="replay", provider="scripted", model="scripted")
    with pytest.raises(LLMConfigError, match="needs a live model"):
        RecordReplay(path, None, mode="record")


# --- factory -----------------------------------------------------------------------------


def test_parse_spec_forms() -> None:
    assert parse_spec("openai:gpt-4o").base_url is None
    s = parse_spec("vllm:Qwen/Qwen2.5-VL-7B-Instruct@http://gpu:8000/v1")
    assert (s.provider, s.model, s.base_url) == ("vllm", "Qwen/Qwen2.5-VL-7B-Instruct", "http://gpu:8000/v1")
    assert parse_spec("openrouter:meta/llama@free").model == "meta/llama@free"
    with pytest.raises(LLMConfigError, match="expected 'provider:model'"):
        parse_spec("gpt-4o")


def test_make_model_resolves_urls_and_keys(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("VLLM_BASE_URL", raising=False)
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    vllm = make_model("vllm:qwen")
    assert vllm.base_url == "http://127.0.0.1:8000/v1" and vllm.provider == "vllm"  # type: ignore[attr-defined]
    assert vllm.max_tokens_field == "max_tokens"  # type: ignore[attr-defined]
    monkeypatch.setenv("VLLM_BASE_URL", "http://box:9000/v1")
    assert make_model("vllm:qwen").base_url == "http://box:9000/v1"  # type: ignore[attr-defined]
    assert make_model("vllm:qwen@http://other:1/v1").base_url == "http://other:1/v1"  # type: ignore[attr-defined]
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        make_model("openai:gpt-4o")
    with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY"):
        make_model("anthropic:claude-sonnet-4-5")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert make_model("openai:gpt-4o").max_tokens_field == "max_completion_tokens"  # type: ignore[attr-defined]
    with pytest.raises(LLMConfigError, match="unknown provider 'nope'"):
        make_model("nope:x")
    with pytest.raises(LLMConfigError, match="unexpected keyword"):
        make_model("vllm:qwen", temperatur=0.3)
    assert make_model("scripted").generate_sync(_request("echo")).text == "echo"
