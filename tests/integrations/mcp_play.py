"""Helpers of the MCP tests: a reference ``buildbench run`` whose scripted model's replies are kept,
and the same replies played by the MCP SDK's own client over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from buildbench.harness import RunConfig, Runner, Store, get_suite, run_report
from buildbench.harness.episode import Episode
from buildbench.integrations.mcp_episodes import McpRun
from buildbench.integrations.mcp_server import serve_http
from buildbench.llm import ChatRequest, ChatResponse, ScriptedChat

Policy = Callable[[ChatRequest], str | ChatResponse]


def reference_run(suite: str, policy: Policy, run_dir: Path, *, protocol: str, agent: str = "llm",
                  split: str = "demo", task: str, options: dict[str, Any] | None = None
                  ) -> tuple[Episode, list[ChatResponse]]:
    """``buildbench run SUITE --agent AGENT`` on one task with a scripted model; its episode and replies."""
    replies: list[ChatResponse] = []

    def answer(request: ChatRequest) -> str | ChatResponse:
        reply = policy(request)
        replies.append(reply if isinstance(reply, ChatResponse) else ChatResponse(text=reply))
        return reply

    first = get_suite(suite).load_tasks(split, 0)[0].id
    assert first == task, f"the reference run plays the split's first task, {first}, not {task}"
    config = RunConfig(suite=suite, agent=agent, protocol=protocol, split=split, limit=1, workers=0,
                       options=dict(options or {}))
    Runner(config, run_dir, model=ScriptedChat(answer)).run()
    with Store(run_dir) as store:
        (episode,) = list(store.episodes())
    return episode, replies


def mcp_config(suite: str, *, protocol: str, agent: str = "llm", split: str = "demo",
               options: dict[str, Any] | None = None) -> RunConfig:
    return RunConfig(suite=suite, agent=agent, protocol=protocol, split=split, model="mcp:test-client",
                     options=dict(options or {}), concurrency=1)


async def play(session: ClientSession, task: str, replies: list[ChatResponse]) -> list[types.CallToolResult]:
    """Start ``task`` and answer its turns with ``replies`` in order; every result, the last one the end."""
    results = [await session.call_tool("start_episode", {"task": task})]
    for reply in replies:
        if results[-1].structuredContent and results[-1].structuredContent["ended"]:
            break
        if reply.tool_calls:
            (call,) = reply.tool_calls
            results.append(await session.call_tool(call.name, call.arguments))
        else:
            results.append(await session.call_tool("submit", {"text": reply.text}))
        assert not results[-1].isError, results[-1].content
    return results


@contextlib.contextmanager
def http_server(config: RunConfig, run_dir: Path, *, only: Sequence[str] = (), token: str | None = None
                ) -> Iterator[str]:
    """``serve_http`` in a thread on a free loopback port; yields the endpoint URL."""
    found: list[str] = []
    started = threading.Event()
    stop = threading.Event()
    errors: list[BaseException] = []

    def ready(url: str) -> None:
        found.append(url)
        started.set()

    def serve() -> None:
        try:
            serve_http(McpRun(config, run_dir, only=only), "127.0.0.1", 0, token, ready=ready, stop=stop)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
            started.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert started.wait(60), "the HTTP server did not start"
    if errors:
        raise errors[0]
    try:
        yield found[0]
    finally:
        stop.set()
        thread.join(60)
        assert not thread.is_alive(), "the HTTP server did not stop"
        if errors:
            raise errors[0]


@contextlib.asynccontextmanager
async def http_session(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write, _), \
            ClientSession(read, write, read_timeout_seconds=timedelta(seconds=300)) as session:
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def stdio_session(args: list[str], cwd: Path) -> AsyncIterator[ClientSession]:
    """``buildbench mcp ARGS`` as a child process, the way an agent app starts it."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "buildbench", "mcp", *args], cwd=str(cwd))
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=timedelta(seconds=300)) as session:
        await session.initialize()
        yield session


def stored(run_dir: Path) -> tuple[Episode, dict[str, Any]]:
    """The one episode of a run, and its report."""
    with Store(run_dir, create=False) as store:
        (episode,) = list(store.episodes())
    return episode, run_report(run_dir)


def run_async(fn: Callable[[], Any]) -> Any:
    return anyio.run(fn)
