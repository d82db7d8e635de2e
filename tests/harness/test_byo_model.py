"""``--model python:FILE:fn``: a Python function as a chat model (issue 14)."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import numpy as np
import pytest

from buildbench.harness import RunConfig, Runner, run_report
from buildbench.llm import ChatRequest, LLMConfigError, Message, Tool, make_model, parse_spec
from buildbench.llm.python_model import PythonChat, load_callable

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_MODEL = REPO / "examples" / "example" / "model.py"


def _write(tmp_path: Path, body: str, name: str = "user_model.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def _ask(model: PythonChat, request: ChatRequest) -> object:
    return asyncio.run(model.generate(request))


def _request(**kw: object) -> ChatRequest:
    return ChatRequest(messages=(Message.system("sys"), Message.user("hello")), **kw)  # type: ignore[arg-type]


def test_function_gets_openai_messages_tools_and_options(tmp_path: Path) -> None:
    path = _write(tmp_path, """
        SEEN = []
        def chat(messages, tools=None, **options):
            SEEN.append((messages, tools, options))
            return "hi " + messages[-1]["content"][0]["text"]
    """)
    model = make_model(f"python:{path}:chat")
    tool = Tool("submit", "send it", {"type": "object", "properties": {"x": {"type": "number"}}})
    image = np.zeros((4, 4, 3), dtype=np.uint8)
    request = ChatRequest(messages=(Message.system("sys"), Message.user("look", [image])), tools=(tool,),
                          temperature=0.5, max_tokens=99, tool_choice="auto", seed=7, stop=("END",))
    response = _ask(model, request)  # type: ignore[arg-type]
    assert response.ok and response.text == "hi look" and response.finish_reason == "stop"
    assert response.usage.requests == 1 and response.usage.input_tokens > 0  # estimated when not given
    module = load_callable(f"{path}:chat").__globals__
    messages, tools, options = module["SEEN"][0]
    assert messages[0] == {"role": "system", "content": "sys"}
    assert messages[1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert tools == [{"type": "function", "function": {"name": "submit", "description": "send it",
                                                       "parameters": tool.parameters}}]
    assert options == {"temperature": 0.5, "max_tokens": 99, "tool_choice": "auto", "seed": 7, "stop": ["END"]}


def test_dict_replies_with_tool_calls_in_both_shapes(tmp_path: Path) -> None:
    path = _write(tmp_path, """
        def chat(messages, tools=None, **options):
            return {"content": "calling", "usage": {"prompt_tokens": 11, "completion_tokens": 3},
                    "tool_calls": [
                        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
                        {"name": "g", "arguments": {"y": 2}}]}
    """)
    response = _ask(PythonChat(f"{path}:chat"), _request())
    assert response.text == "calling" and response.finish_reason == "tool_calls"  # type: ignore[attr-defined]
    calls = response.tool_calls  # type: ignore[attr-defined]
    assert [(c.id, c.name, c.arguments) for c in calls] == [("a", "f", {"x": 1}), ("call_1", "g", {"y": 2})]
    assert response.usage.input_tokens == 11 and response.usage.output_tokens == 3  # type: ignore[attr-defined]


def test_async_functions_are_awaited(tmp_path: Path) -> None:
    path = _write(tmp_path, """
        import asyncio
        async def chat(messages, tools=None, **options):
            await asyncio.sleep(0)
            return {"content": "async ok"}
    """)
    assert _ask(PythonChat(f"{path}:chat"), _request()).text == "async ok"  # type: ignore[attr-defined]


@pytest.mark.parametrize("body,needle", [
    ("raise RuntimeError('GPU out of memory')", "RuntimeError: GPU out of memory"),
    ("return 42", "malformed reply: returned a int"),
    ("return {'role': 'assistant'}", "neither 'content' nor 'tool_calls'"),
    ("return {'tool_calls': [{'arguments': {}}]}", "tool_calls[0]: needs a 'name'"),
])
def test_failures_are_api_errors_not_exceptions(tmp_path: Path, body: str, needle: str) -> None:
    path = _write(tmp_path, f"def chat(messages, tools=None, **options):\n    {body}\n")
    response = _ask(PythonChat(f"{path}:chat"), _request())
    assert response.error is not None and response.error.kind == "api_error"  # type: ignore[attr-defined]
    assert needle in response.error.message and "\n" not in response.error.message  # type: ignore[attr-defined]


def test_slow_function_is_a_timeout(tmp_path: Path) -> None:
    path = _write(tmp_path, """
        import asyncio
        async def chat(messages, tools=None, **options):
            await asyncio.sleep(5)
    """)
    response = _ask(PythonChat(f"{path}:chat", timeout_s=0.05), _request())
    assert response.error is not None and response.error.kind == "timeout"  # type: ignore[attr-defined]


def test_module_targets_and_spec_parsing() -> None:
    model = make_model("python:json:dumps")
    assert model.provider == "python" and model.model == "json:dumps"
    assert parse_spec(f"python:{EXAMPLE_MODEL}:chat").model == f"{EXAMPLE_MODEL}:chat"


@pytest.mark.parametrize("target,needle", [
    ("nowhere/model.py:chat", "no file nowhere/model.py"),
    ("json:not_there", "json has no attribute 'not_there'"),
    ("no_such_module_xyz:fn", "cannot import module 'no_such_module_xyz'"),
    ("json", "expected 'path/to/file.py:name'"),
    ("json:__doc__", "not callable"),
])
def test_bad_targets_are_config_errors(target: str, needle: str) -> None:
    with pytest.raises(LLMConfigError, match=needle):
        make_model(f"python:{target}")


def test_import_failure_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "def chat(:\n")
    with pytest.raises(LLMConfigError, match=r"importing it failed: SyntaxError"):
        load_callable(f"{path}:chat")


def _run(tmp_path: Path, name: str, model: str, **kw: object) -> dict:
    config = RunConfig(suite="example", agent="llm", protocol="one-shot", model=model, split="demo", limit=2,
                       workers=0, **kw)  # type: ignore[arg-type]
    Runner(config, tmp_path / name).run()
    return run_report(tmp_path / name)


def test_runner_scores_a_python_model_and_records_and_replays_it(tmp_path: Path) -> None:
    copy = tmp_path / "tower_model.py"
    copy.write_text(EXAMPLE_MODEL.read_text())
    record = tmp_path / "calls.jsonl"
    live = _run(tmp_path, "live", f"python:{copy}:chat", record=str(record))
    assert live["status"] == {"ok": 2} and live["metrics"]["passed"] == 1.0
    assert len(record.read_text().splitlines()) == 2
    copy.unlink()  # replay answers from the file alone: the function is not loaded
    replayed = _run(tmp_path, "replayed", f"python:{copy}:chat", replay=str(record))
    assert replayed["status"] == {"ok": 2} and replayed["metrics"] == live["metrics"]


def test_a_raising_model_leaves_episodes_unscored(tmp_path: Path) -> None:
    path = _write(tmp_path, "def chat(messages, tools=None, **options):\n    raise ValueError('broken weights')\n")
    rep = _run(tmp_path, "broken", f"python:{path}:chat")
    assert rep["status"] == {"api_error": 2} and rep["unscored"] == 2 and rep["metrics"] == {}
