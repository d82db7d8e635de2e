"""``buildbench mcp SUITE``: the suite as an MCP server for agent apps (see :mod:`.mcp_server`).

Only click is imported here; the MCP SDK and the suite load when the command runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from buildbench.cliargs import GivenPath


def _given_token(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An empty ``--token`` is refused: ``--token "$TOKEN"`` with the variable unset would serve
    loopback without one, silently. An empty ``$BUILDBENCH_MCP_TOKEN`` is no token."""
    if value == "" and ctx.get_parameter_source("token") is click.core.ParameterSource.COMMANDLINE:
        raise click.BadParameter("an empty token (an unset shell variable?); give one, or leave --token out",
                                 ctx, param)
    return value or None


@click.command("mcp")
@click.argument("suite")
@click.option("--agent", "-a", default=None, help="The suite's model agent whose model the MCP client plays "
              "(see `buildbench suites`). Default: the one `buildbench run --model` uses (llm).")
@click.option("--protocol", "-p", default=None, help="Protocol name. Default: the suite's default protocol.")
@click.option("--split", default="default", show_default=True, help="Task split.")
@click.option("--task", "task_ids", multiple=True, help="Serve only this task id (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), help="Serve only the first N tasks.")
@click.option("--samples", default=1, show_default=True, type=click.IntRange(1, 1_000_000),
              help="Episodes per task (a task with all of them stored cannot be started again).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Run seed.")
@click.option("--run-dir", type=GivenPath(file_okay=False, path_type=Path, run_folder=True),
              help="Where the episodes are stored; a run there with the same settings is continued.  "
                   "[default: runs/SUITE-AGENT-PROTOCOL-MODEL-sSEED]")
@click.option("-o", "--option", "options", multiple=True, help="Suite option KEY=VALUE (repeatable), as for `run`.")
@click.option("--model", "model_label", default="mcp", show_default=True,
              help="What the run records as its model: name the agent app (e.g. mcp:claude-code) so that "
                   "reports tell runs apart.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio: for an agent app that starts the server; http: streamable HTTP at http://HOST:PORT/mcp.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", default=8766, show_default=True, type=click.IntRange(0, 65535),
              help="HTTP: port (0: any free port).")
@click.option("--token", default=lambda: os.environ.get("BUILDBENCH_MCP_TOKEN"), callback=_given_token,
              help="HTTP: bearer token every request must carry (required beyond loopback; "
                   "default $BUILDBENCH_MCP_TOKEN).")
def mcp(suite: str, agent: str | None, protocol: str | None, split: str, task_ids: tuple[str, ...],
        limit: int | None, samples: int, seed: int, run_dir: Path | None, options: tuple[str, ...],
        model_label: str, transport: str, host: str, port: int, token: str | None) -> None:
    """Serve SUITE to an MCP client (Claude Code, Cursor, …): it plays the model of the suite's model
    agent, episode by episode, stored and scored as `buildbench run` stores and scores them."""
    from buildbench.cli.main import _default_agent, _parse_options
    from buildbench.harness import RunConfig, get_suite

    from .mcp_episodes import McpRun, default_run_dir
    from .mcp_server import serve_http, serve_stdio

    s = get_suite(suite)
    agent = agent or _default_agent(s, model_label)
    protocol = protocol or s.default_protocol or next(iter(s.protocols))
    config = RunConfig(suite=suite, agent=agent, protocol=protocol, model=model_label, split=split, limit=limit,
                       samples=samples, seed=seed, options=_parse_options(options), concurrency=1)
    run = McpRun(config, run_dir or default_run_dir(config), only=task_ids)
    run.check()  # bad settings are one `error:` line before anything listens
    if transport == "stdio":
        serve_stdio(run)
    else:
        def ready(url: str) -> None:
            click.echo(f"serving {suite} over MCP at {url} (episodes stored in {run.run_dir}); Ctrl-C stops",
                       err=True)

        try:
            serve_http(run, host, port, token, ready=ready)
        except KeyboardInterrupt:
            pass
    _exit_as_run_does(run.run_dir)


def _exit_as_run_does(run_dir: Path) -> None:
    """Exit 1 with one `error:` line when the run holds episodes and none produced a result, as
    `buildbench run` does."""
    from buildbench.cli.main import _first_error
    from buildbench.harness import Store, run_report

    if not (run_dir / Store.FILENAME).is_file():
        return
    rep = run_report(run_dir)
    click.echo(f"{rep['episodes']} episode(s) stored in {run_dir}; `buildbench report {run_dir}` shows them", err=True)
    if rep["episodes"] and rep["unscored"] == rep["episodes"]:
        statuses = ", ".join(f"{n} {k}" for k, n in sorted(rep["status"].items()))
        click.echo(f"error: no episode produced a result ({statuses}){_first_error(run_dir)}; "
                   f"see `buildbench report {run_dir}`", err=True)
        click.get_current_context().exit(1)
