"""A suite as an MCP server (``buildbench mcp SUITE``), over stdio or streamable HTTP.

Tools (see :mod:`.mcp_episodes` for what an episode over MCP is):

- ``start_episode(task?)``: start an episode (default: the next task with an episode left) and show
  its first turn;
- the suite's own tools of the current turn, with their JSON schemas (the list changes with the
  turn; the server says so with ``notifications/tools/list_changed``): answer the turn with one call;
- ``submit(text)``: answer the turn with text (code, a plan, JSON: what the turn asks for);
- ``observe()``: the current turn again in full, images as MCP image content;
- ``finish()``: end the episode now; it is scored on what was built;
- ``call(tool, arguments)``: call a turn's tool by name, for apps that never refresh their tool list
  (each turn whose tools changed also writes them out with their schemas).

The arguments of these five are records (:class:`StartEpisode`, :class:`Submit`, :class:`Observe`,
:class:`Finish`, :class:`Call`): each tool's input schema is its record's JSON Schema and the
arguments are read through the same record (:mod:`buildbench.harness.record`).

Every answer shows the next turn (text and images) or, when the protocol ended the episode, its
status and metrics; ``structuredContent`` carries ``{"ended", "tools", "episode"}``. A call the
turn cannot take (an unknown tool, arguments outside its schema, no turn waiting) is an error result
whose text is one ``error: …`` line; nothing is sent and the turn still waits. Tasks are resources
(``buildbench://SUITE/tasks/ID``: the id, the split and how many of its episodes are stored; never
the task's ground truth or metadata).

Each MCP session plays its own episodes; sessions share only the run they are stored in. Over HTTP
the server listens on 127.0.0.1 by default; it answers only requests whose ``Host`` names it and
whose ``Origin`` (a browser's) is its own (:mod:`buildbench.httpguard`), and bound beyond loopback it
needs a token that every request carries as ``Authorization: Bearer TOKEN``. A POST's body is read
by a deadline and checked with our JSON limits before the MCP SDK parses it (:mod:`.mcp_bodies`).
"""

from __future__ import annotations

import base64
import hmac
import json
import logging
import os
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from io import TextIOWrapper
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import anyio
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from pydantic import AnyUrl

from buildbench.harness.errors import BuildbenchError, ConfigError
from buildbench.harness.record import Record
from buildbench.httpguard import host_allowed, is_loopback, origin_allowed
from buildbench.limits import limit

from .mcp_bodies import checked_body, header_deadline_protocol
from .mcp_episodes import EpisodeSession, McpRun, TurnView

__all__ = ["build_server", "serve_http", "serve_stdio"]

#: The HTTP path of the MCP endpoint.
ENDPOINT = "/mcp"
#: An HTTP session idle this long (no request in flight) is closed, and its episode with it.
IDLE_TIMEOUT_S = 3600.0

@dataclass(frozen=True)
class StartEpisode(Record):
    """Start an episode and show its first turn. Each task has a fixed number of episodes
    (samples); tasks are listed as resources.

    Attributes:
        task: Task id (default: the next task with an episode left).
    """

    SUITE = "mcp"
    KIND = "start_episode"

    task: str | None = None


@dataclass(frozen=True)
class Submit(Record):
    """Answer the current turn with text: code, a plan, JSON, a verdict, whatever the turn asks for.

    Attributes:
        text: Your reply.
    """

    SUITE = "mcp"
    KIND = "submit"

    text: str


@dataclass(frozen=True)
class Observe(Record):
    """Show the current turn again in full (system prompt, text, images), or how the last episode
    ended."""

    SUITE = "mcp"
    KIND = "observe"


@dataclass(frozen=True)
class Finish(Record):
    """End the episode now: it is scored on what was built so far (like a model that spent its
    request budget)."""

    SUITE = "mcp"
    KIND = "finish"


@dataclass(frozen=True)
class Call(Record):
    """Call one of the current turn's tools by name (the same as calling it directly; for apps that
    do not refresh their tool list when a turn changes it).

    Attributes:
        tool: The tool's name.
        arguments: Its arguments, as its JSON schema asks.
    """

    SUITE = "mcp"
    KIND = "call"

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)


def _fixed_tool(record: type[Record]) -> types.Tool:
    """The MCP tool whose arguments are ``record``: its JSON Schema is the tool's input schema."""
    schema = record.json_schema()
    return types.Tool(name=record.KIND, description=schema.get("description", ""), inputSchema=schema)


R = TypeVar("R", bound=Record)


def _arguments(record: type[R], arguments: dict[str, Any]) -> R:
    """``arguments`` read as ``record`` (ConfigError: one line naming the argument)."""
    try:
        return record.from_data(arguments)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


#: Tools every session has; a suite tool of the same name is reached only through ``call``.
FIXED_TOOLS = tuple(_fixed_tool(r) for r in (StartEpisode, Submit, Observe, Finish, Call))


def build_server(run: McpRun) -> Server[EpisodeSession, Any]:
    """The MCP server of ``run`` (opened); every session gets an :class:`EpisodeSession` of its own."""
    suite = run.suite
    fixed = {t.name for t in FIXED_TOOLS}

    @asynccontextmanager
    async def session_state(_: Server[EpisodeSession, Any]) -> AsyncIterator[EpisodeSession]:
        state = EpisodeSession(run)
        try:
            yield state
        finally:
            with anyio.CancelScope(shield=True):  # the episode in play is stored even on shutdown
                await state.close()

    instructions = (
        f"buildbench {suite.name}: {suite.description} You play the model of the suite's '{run.config.agent}' agent "
        f"under its '{run.config.protocol}' protocol, exactly as an API model does in `buildbench run`. Call "
        "start_episode, then answer each turn with one of its tools or with submit, until the episode ends. "
        f"Episodes are stored and scored in {run.run_dir}.")
    server: Server[EpisodeSession, Any] = Server(f"buildbench-{suite.name}", version=_version(),
                                                 instructions=instructions, lifespan=session_state)

    def state() -> EpisodeSession:
        ctx = server.request_context
        session: EpisodeSession = ctx.lifespan_context
        params = ctx.session.client_params
        if not session.client and params is not None:
            session.client = {"name": params.clientInfo.name, "version": params.clientInfo.version}
        return session

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        turn = [types.Tool(name=t.name, description=t.description, inputSchema=t.parameters)
                for t in state().tools if t.name not in fixed]
        return [*FIXED_TOOLS, *turn]

    @server.call_tool(validate_input=False)  # checked here, so a bad call is one `error:` line
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        session = state()
        before = [t.name for t in session.tools]
        try:
            view = await _dispatch(session, name, arguments)
        except BuildbenchError as exc:
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"error: {text}")],
                                        isError=True)
        if [t.name for t in session.tools] != before:
            await server.request_context.session.send_tool_list_changed()
        return _result(view)

    @server.list_resources()
    async def list_resources() -> list[types.Resource]:
        return [types.Resource(uri=AnyUrl(_task_uri(suite.name, t.id)), name=t.id, mimeType="application/json",
                               description=f"{suite.name} task {t.id} (split {run.config.split})")
                for t in run.tasks]

    @server.read_resource()
    async def read_resource(uri: AnyUrl) -> str:
        prefix = _task_uri(suite.name, "")
        task_id = unquote(str(uri).removeprefix(prefix)) if str(uri).startswith(prefix) else None
        if not task_id:
            raise ValueError(f"error: no resource {uri}; tasks are {prefix}ID")
        task = run.task(task_id)
        return json.dumps({"id": task.id, "suite": suite.name, "split": run.config.split,
                           "samples": run.config.samples, "stored": run.stored(task.id)})

    return server


async def _dispatch(session: EpisodeSession, name: str, arguments: dict[str, Any]) -> TurnView:
    if name == "start_episode":
        return await session.start(_arguments(StartEpisode, arguments).task)
    if name == "submit":
        return await session.reply(_arguments(Submit, arguments).text)
    if name == "observe":
        _arguments(Observe, arguments)
        return session.observe()
    if name == "finish":
        _arguments(Finish, arguments)
        return await session.finish()
    if name == "call":
        call = _arguments(Call, arguments)
        return await session.call(call.tool, call.arguments)
    return await session.call(name, arguments)


def _result(view: TurnView) -> types.CallToolResult:
    content: list[types.ContentBlock] = []
    for kind, value in view.blocks:
        if kind == "text":
            content.append(types.TextContent(type="text", text=str(value)))
        else:
            assert isinstance(value, bytes)
            content.append(types.ImageContent(type="image", data=base64.b64encode(value).decode("ascii"),
                                              mimeType="image/png"))
    structured = {"ended": view.ended, "tools": [t.name for t in view.tools], "episode": view.result or None}
    return types.CallToolResult(content=content, structuredContent=structured)


def _task_uri(suite: str, task_id: str) -> str:
    return f"buildbench://{suite}/tasks/{quote(task_id, safe='')}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("buildbench")
    except PackageNotFoundError:
        return "0"


# -- stdio ----------------------------------------------------------------------------------
def serve_stdio(run: McpRun) -> None:
    """Serve ``run`` on this process's stdin and stdout until the client closes them.

    The MCP stream keeps the original descriptors; file descriptor 1 then points at stderr and 0 at
    /dev/null, so nothing else (a library's print, a child process) can write into the stream or
    read from it.
    """
    mcp_in = os.fdopen(os.dup(0), "rb", buffering=0)
    mcp_out = os.fdopen(os.dup(1), "wb")
    sys.stdout.flush()
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)

    async def main() -> None:
        from mcp.server.stdio import stdio_server

        stdin = anyio.wrap_file(TextIOWrapper(mcp_in, encoding="utf-8", errors="replace"))
        stdout = anyio.wrap_file(TextIOWrapper(mcp_out, encoding="utf-8"))
        run.open()
        try:
            server = build_server(run)
            async with stdio_server(stdin, stdout) as (read, write):
                await server.run(read, write, server.create_initialization_options(NotificationOptions(tools_changed=True)))
        finally:
            run.close()

    anyio.run(main)


# -- streamable HTTP ------------------------------------------------------------------------
def serve_http(run: McpRun, host: str = "127.0.0.1", port: int = 0, token: str | None = None, *,
               ready: Callable[[str], None] | None = None, stop: threading.Event | None = None) -> None:
    """Serve ``run`` over streamable HTTP at ``http://HOST:PORT/mcp`` until interrupted (or ``stop``).

    Args:
        ready: Called with the endpoint's URL once it accepts connections.
        stop: Ends serving when set (tests); else serving ends on Ctrl-C.

    Raises:
        ConfigError: A host beyond loopback without a token.
    """
    logging.getLogger("mcp.server.streamable_http").addFilter(_ClosedStreams())
    if not is_loopback(host) and not token:
        raise ConfigError(f"serving MCP on {host} reaches other machines: give a token (--token or "
                          "BUILDBENCH_MCP_TOKEN) that every client must send as 'Authorization: Bearer TOKEN'")
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(64)
    bound_port = int(sock.getsockname()[1])
    shown = f"[{host.strip('[]')}]" if family == socket.AF_INET6 else host
    url = f"http://{shown}:{bound_port}{ENDPOINT}"

    async def main() -> None:
        import uvicorn
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        run.open()
        try:
            manager = StreamableHTTPSessionManager(app=build_server(run), session_idle_timeout=IDLE_TIMEOUT_S)
            app = _guarded(manager.handle_request, host, bound_port, token, manager.max_request_body_size)
            config = uvicorn.Config(app, lifespan="off", log_level="warning", timeout_graceful_shutdown=5,
                                    http=header_deadline_protocol(limit("http_request_seconds")))
            server = uvicorn.Server(config)
            async with manager.run(), anyio.create_task_group() as tg:
                async def watch() -> None:
                    while not server.started:
                        await anyio.sleep(0.02)
                    if ready is not None:
                        ready(url)
                    while stop is not None and not stop.is_set():
                        await anyio.sleep(0.05)
                    if stop is not None:
                        server.should_exit = True

                tg.start_soon(watch)
                await server.serve(sockets=[sock])
                tg.cancel_scope.cancel()
        finally:
            run.close()

    anyio.run(main)


class _ClosedStreams(logging.Filter):
    """Drops the SDK's traceback for a stream that a session's end closed under its writer (the SDK
    1.30 logs it as an error each time a client ends its session)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], anyio.ClosedResourceError))


Asgi = Callable[[dict[str, Any], Callable[..., Any], Callable[..., Any]], Any]


def _guarded(app: Asgi, host: str, port: int, token: str | None, max_body: int) -> Asgi:
    """``app`` behind the Host/Origin checks and the bearer token (see the module docstring), a
    POST's body read and checked first (:mod:`.mcp_bodies`; at most ``max_body`` bytes)."""
    expected = f"Bearer {token}".encode() if token else None

    async def guarded(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        status, detail = 0, ""
        if not host_allowed(headers.get("host"), host, port):
            status, detail = 403, f"Host {headers.get('host', '')[:100]!r} is not this server"
        elif not origin_allowed(headers.get("origin"), headers.get("host")):
            status, detail = 403, "cross-origin requests are refused"
        elif expected is not None and not hmac.compare_digest(headers.get("authorization", "").encode(), expected):
            status, detail = 401, "missing or wrong bearer token (Authorization: Bearer <token>)"
        elif scope.get("path") not in (ENDPOINT, ENDPOINT + "/"):
            status, detail = 404, f"not found; the MCP endpoint is {ENDPOINT}"
        if status:
            body = json.dumps({"detail": detail}).encode()
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        if scope.get("method") == "POST":
            checked = await checked_body(headers, receive, send, max_bytes=max_body)
            if checked is None:
                return
            receive = checked
        await app(scope, receive, send)

    return guarded
