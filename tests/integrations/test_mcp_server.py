"""``buildbench mcp`` sessions: bad calls are one ``error:`` line and the episode goes on, finishing
early is scored, a client that leaves is never scored, sessions are isolated, tasks are resources,
and the HTTP transport answers only its own Host and Origin (and a token's bearer)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server is optional: the mcp package is not installed")

import httpx  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from buildbench.cli.main import main  # noqa: E402
from buildbench.harness import Store  # noqa: E402
from buildbench.harness.errors import ConfigError  # noqa: E402
from buildbench.integrations.mcp_episodes import McpRun  # noqa: E402
from buildbench.integrations.mcp_server import serve_http  # noqa: E402

from .mcp_play import http_server, http_session, mcp_config, run_async, stdio_session  # noqa: E402

TASK = "tower_0000_0000"


def tower(target_m: float, gap_m: float = 0.0) -> dict[str, Any]:
    half = target_m / 2
    return {"blocks": [{"center": [0, 0, half / 2], "size": [0.5, 0.5, half]},
                       {"center": [0, 0, 1.5 * half + gap_m], "size": [0.5, 0.5, half]}]}


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def episodes(run_dir: Path) -> list[Any]:
    with Store(run_dir, create=False) as store:
        return list(store.episodes())


FIXED = ["start_episode", "submit", "observe", "finish", "call"]
CONFIG = mcp_config("example", protocol="refine", options={"tools": True})


def test_a_bad_call_is_one_error_line_and_the_episode_goes_on(tmp_path: Path) -> None:
    async def session(url: str) -> None:
        async with http_session(url) as s:
            assert [t.name for t in (await s.list_tools()).tools] == FIXED
            nothing = await s.call_tool("submit", {"text": "hello"})
            assert nothing.isError and text(nothing).startswith("error: no turn is waiting")
            first = await s.call_tool("start_episode", {"task": TASK})
            assert not first.isError and first.structuredContent["tools"] == ["submit_blocks"]
            assert "[tools of this turn" in text(first) and '"blocks"' in text(first)  # its schema, written out
            assert "submit_blocks" in [t.name for t in (await s.list_tools()).tools]
            target = float(text(first).split("at least ")[1].split(" m")[0])
            bad = [await s.call_tool("submit_blocks", {"blocks": "three blocks"}),
                   await s.call_tool("submit_blocks", {"blocks": [{"center": [0, 0]}]}),
                   await s.call_tool("build_bridge", {}),
                   await s.call_tool("submit", {}),
                   await s.call_tool("call", {"tool": "submit_blocks", "arguments": {"blocks": 3}}),
                   await s.call_tool("start_episode", {"task": TASK})]
            for result in bad:
                lines = text(result).splitlines()
                assert result.isError and len(lines) == 1 and lines[0].startswith("error: "), lines
            assert "argument blocks: 'three blocks' is not of type 'array'" in text(bad[0])
            assert "argument blocks/0" in text(bad[1])
            assert "'build_bridge' is not offered in this turn; its tools: submit_blocks" in text(bad[2])
            assert "argument blocks: 3 is not of type 'array'" in text(bad[4])
            assert "already in play" in text(bad[5])
            again = await s.call_tool("observe", {})  # the turn still waits, untouched
            assert not again.isError and "[system prompt]" in text(again) and "at least" in text(again)
            end = await s.call_tool("call", {"tool": "submit_blocks", "arguments": tower(target)})
            assert end.structuredContent["ended"] and end.structuredContent["episode"]["status"] == "ok"
            assert end.structuredContent["episode"]["metrics"]["passed"] == 1.0
            replay = await s.call_tool("start_episode", {"task": TASK})
            assert replay.isError and "already has its 1 episode(s)" in text(replay)

    with http_server(CONFIG, tmp_path / "run") as url:
        run_async(lambda: session(url))
    (episode,) = episodes(tmp_path / "run")
    assert episode.status == "ok" and episode.metrics["attempts"] == 1.0  # the refused calls never reached the env
    assert main(["report", str(tmp_path / "run"), "--json"]) == 0


def test_finish_is_scored_and_a_client_that_leaves_is_not(tmp_path: Path) -> None:
    async def sessions(url: str) -> None:
        async with http_session(url) as a, http_session(url) as b:
            first = await a.call_tool("start_episode", {"task": TASK})
            target = float(text(first).split("at least ")[1].split(" m")[0])
            # b has no episode: a's turn and tools are not b's
            assert "No episode in play" in text(await b.call_tool("observe", {}))
            assert [t.name for t in (await b.list_tools()).tools] == FIXED
            assert (await b.call_tool("submit_blocks", tower(target))).isError
            floating = await a.call_tool("submit_blocks", tower(target, gap_m=0.05))
            assert not floating.structuredContent["ended"]
            done = await a.call_tool("finish", {})
            assert done.structuredContent["episode"]["status"] == "budget"
            await b.call_tool("start_episode", {})  # the next task with an episode left; b then leaves

    with http_server(CONFIG, tmp_path / "run", only=[TASK, "tower_0000_0001"]) as url:
        run_async(lambda: sessions(url))
    stored = {ep.task_id: ep for ep in episodes(tmp_path / "run")}
    finished, left = stored[TASK], stored["tower_0000_0001"]
    assert finished.status == "budget" and finished.metrics["passed"] == 0.0  # scored: the floating tower
    assert finished.metadata["mcp_client"]["name"] == "mcp"
    assert left.status == "api_error" and "disconnected" in (left.error or "")  # never a score
    report = json.loads(_report_json(tmp_path / "run"))
    assert report["episodes"] == 2 and report["unscored"] == 1


def _report_json(run_dir: Path) -> str:
    from click.testing import CliRunner

    from buildbench.cli.main import cli

    out = CliRunner().invoke(cli, ["report", str(run_dir), "--json"])
    assert out.exit_code == 0, out.output
    return out.output


def test_tasks_are_resources_without_their_answers(tmp_path: Path) -> None:
    async def session(url: str) -> None:
        async with http_session(url) as s:
            resources = (await s.list_resources()).resources
            assert [r.name for r in resources][:2] == [TASK, "tower_0000_0001"] and len(resources) == 6
            (content,) = (await s.read_resource(resources[0].uri)).contents
            assert json.loads(content.text) == {"id": TASK, "suite": "example", "split": "demo", "samples": 1,
                                                "stored": 0}

    with http_server(CONFIG, tmp_path / "run") as url:
        run_async(lambda: session(url))


def test_http_answers_only_its_own_host_and_origin(tmp_path: Path) -> None:
    with http_server(CONFIG, tmp_path / "run") as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "probe", "version": "0"}}}
        accept = {"Accept": "application/json, text/event-stream"}

        def post(**headers: str) -> httpx.Response:
            return httpx.post(url, json=hello, headers={**accept, **headers}, timeout=30)

        assert post(Host=f"rebound.example:{port}").status_code == 403  # DNS rebinding
        assert post(Host=f"localhost:{port + 1}").status_code == 403
        assert post(Origin="http://evil.example").status_code == 403  # a web page's request
        assert post(Origin=f"http://127.0.0.1:{port}").status_code == 200
        assert post(Host=f"localhost:{port}").status_code == 200
        assert httpx.get(url.replace("/mcp", "/other"), timeout=30).status_code == 404
        # A browser may post a text/plain form without asking: the SDK's transport refuses any body not JSON.
        form = httpx.post(url, content=json.dumps(hello), timeout=30, headers={**accept, "Content-Type": "text/plain"})
        assert 400 <= form.status_code < 500


def test_a_token_is_required_beyond_loopback_and_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="give a token"):
        serve_http(McpRun(CONFIG, tmp_path / "open"), "0.0.0.0", 0)
    assert not (tmp_path / "open").exists()  # refused before anything was created

    async def session(url: str, token: str) -> list[str]:
        client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with client, streamable_http_client(url, http_client=client) as (read, write, _), \
                ClientSession(read, write, read_timeout_seconds=timedelta(seconds=60)) as s:
            await s.initialize()
            return [t.name for t in (await s.list_tools()).tools]

    with http_server(CONFIG, tmp_path / "run", token="s3cret") as url:
        assert httpx.post(url, json={}, timeout=30).status_code == 401
        assert httpx.post(url, json={}, headers={"Authorization": "Bearer wrong"}, timeout=30).status_code == 401
        assert "start_episode" in run_async(lambda: session(url, "s3cret"))


def test_the_command_refuses_bad_settings_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [(["example", "--agent", "reference"], "takes no model"),
             (["example", "--split", "demo", "--task", "no_such_task"], "--task no_such_task"),
             (["example", "--split", "demo", "-o", "no_such_option=1"], "no_such_option"),
             (["example", "--split", "demo", "--transport", "http", "--host", "0.0.0.0", "--port", "0"],
              "give a token")]
    for args, said in cases:
        assert main(["mcp", *args, "--run-dir", str(tmp_path / "run")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and said in err[0], err


def test_the_readme_snippet_starts_a_server_an_agent_app_can_use(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### MCP\n", 1)[1]
    snippet = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
    ((_, entry),) = snippet["mcpServers"].items()
    assert entry["command"] == "buildbench" and entry["args"][0] == "mcp"
    args = list(entry["args"][1:])
    args[args.index("--run-dir") + 1] = str(tmp_path / "run")

    async def session() -> tuple[list[str], int]:
        async with stdio_session(args, tmp_path) as s:
            tools = [t.name for t in (await s.list_tools()).tools]
            return tools, len((await s.list_resources()).resources)

    tools, tasks = run_async(session)
    assert tools == FIXED and tasks > 0


def test_a_run_whose_client_left_every_episode_exits_1_as_buildbench_run_does(tmp_path: Path) -> None:
    import subprocess
    import sys

    command = [sys.executable, "-m", "buildbench", "mcp", "example", "--split", "demo", "-o", "tools=true",
               "--protocol", "refine", "--run-dir", str(tmp_path / "run")]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path)
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        server.stdin.flush()

    def answer(request_id: int) -> dict[str, Any]:
        assert server.stdout is not None
        while True:  # nothing but MCP messages may come on stdout
            message = json.loads(server.stdout.readline())
            if message.get("id") == request_id:
                return dict(message)

    try:
        send({"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                         "clientInfo": {"name": "raw", "version": "1"}}})
        answer(1)
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/call", "params": {"name": "start_episode", "arguments": {}}})
        assert not answer(2)["result"].get("isError")
        server.stdin.close()  # the app goes away mid-episode
        rc = server.wait(timeout=120)
    finally:
        server.kill()
    err = server.stderr.read() if server.stderr else ""
    assert rc == 1, err
    assert "error: no episode produced a result (1 api_error); first: " in err and "disconnected" in err
    (episode,) = episodes(tmp_path / "run")
    assert episode.status == "api_error" and episode.metadata["mcp_client"] == {"name": "raw", "version": "1"}


def test_requests_that_arrive_together_are_answered_one_at_a_time_oldest_first() -> None:
    import asyncio

    from buildbench.integrations.mcp_episodes import BridgeModel
    from buildbench.llm import ApiError, ChatRequest, Message

    async def scenario() -> list[str]:
        model = BridgeModel("mcp:test")
        asks = [asyncio.create_task(model.generate(ChatRequest((Message.user(f"question {i}"),)))) for i in range(3)]
        await asyncio.sleep(0)
        assert [p.request.messages[0].text for p in model.pending] == ["question 0", "question 1", "question 2"]
        model.answer("first")
        model.answer("second")
        model.close(ApiError("api_error", "gone"))
        answers = await asyncio.gather(*asks)
        late = await model.generate(ChatRequest((Message.user("after"),)))
        assert late.error is not None and late.error.message == "gone"
        assert answers[0].usage.requests == 1
        return [a.text or str(a.error) for a in answers]

    assert asyncio.run(scenario()) == ["first", "second", "api_error: gone"]


def test_an_episode_another_server_stored_first_is_an_error_never_dropped(tmp_path: Path) -> None:
    from buildbench.harness import Episode
    from buildbench.harness.errors import BuildbenchError
    from buildbench.integrations.mcp_episodes import default_run_dir

    assert default_run_dir(CONFIG) == Path("runs/example-llm-refine-mcp_test-client-s0")
    run = McpRun(CONFIG, tmp_path / "run").open()
    try:
        task, sample = run.take(None)
        assert (task.id, sample) == (TASK, 0) and run.take(None)[0].id == "tower_0000_0001"  # in play: not given twice
        mine = Episode(task_id=TASK, sample=0, suite="example", agent="llm", protocol="refine", seed=1)
        with Store(tmp_path / "run") as other:  # a second server on the same folder got there first
            assert other.add_episode(mine)
        with pytest.raises(BuildbenchError, match="stored meanwhile by another process"):
            run.store_episode(mine)
    finally:
        run.close()


def test_an_unknown_huge_task_id_comes_back_clipped(tmp_path: Path) -> None:
    run = McpRun(CONFIG, tmp_path / "run")
    run.check()
    with pytest.raises(ConfigError) as caught:
        run.task("x" * 2_000_000)
    message = str(caught.value)
    assert len(message) < 500 and "(2000000 characters)" in message and TASK in message
