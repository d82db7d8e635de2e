"""Entry point: ``buildbench suites | tasks | run | report | export | demo`` plus one group
per suite (``buildbench dreamhouse validate …``), loaded only when named."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any, TypedDict

import click
from click.core import ParameterSource

from buildbench.cliargs import (
    RUN_FOLDER_FILES,
    GivenPath,
    forget_given_paths,
    run_folder_in_input,
    with_path_label,
)
from buildbench.display import terminal_safe
from buildbench.harness.errors import BuildbenchError, ConfigError
from buildbench.harness.options import DEFAULT_CONCURRENCY, DEFAULT_WORKERS, OptionValue

from .option_help import RunCommand
from .suite_groups import SuiteGroups


class _SuiteRow(TypedDict):
    """One line of ``buildbench suites``."""

    name: str
    description: str
    agents: list[str]
    protocols: list[str]
    splits: list[str]
    options: dict[str, str]
    defaults: dict[str, OptionValue]
    schema: dict[str, Any]


@click.group(cls=SuiteGroups, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="buildbench")
def cli() -> None:
    """buildbench: agents that build physical things, and the verifiers that judge them."""


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def suites(as_json: bool) -> None:
    """List the registered suites with their agents, protocols, splits and -o options (--json: each
    option with its accepted values, meaning and default, "defaults" with each default typed,
    null when unset, and "schema", the JSON Schema of all its options, common ones included; every
    model agent also takes the common ones, listed last in the table)."""
    from buildbench.harness import COMMON_OPTIONS, get_suite, suite_names

    rows: list[_SuiteRow] = []
    with_defaults: dict[str, list[str]] = {"(common)": [f"{o.name}={o.shown_default()}" for o in COMMON_OPTIONS]}
    for name in suite_names():
        try:
            s = get_suite(name)
        except Exception as exc:  # one broken plugin must not hide the others
            rows.append({"name": name, "description": f"(cannot be loaded: {type(exc).__name__}: {exc})",
                         "agents": [], "protocols": [], "splits": [], "options": {}, "defaults": {}, "schema": {}})
            continue
        rows.append({"name": name, "description": s.description, "agents": list(s.agents),
                     "protocols": list(s.protocols), "splits": list(s.splits),
                     "options": {o.name: o.describe() for o in s.option_specs()},
                     "defaults": {o.name: o.default for o in s.option_specs()},
                     "schema": s.options_model().json_schema() if as_json else {}})
        with_defaults[name] = [f"{o.name}={o.shown_default()}" for o in s.option_specs()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    # One wide cell per suite, names on labelled lines: a name is never broken across lines.
    table = Table(title="suites", show_lines=True)
    table.add_column("suite", no_wrap=True)
    table.add_column("description, agents, protocols, splits, -o options", overflow="fold")
    for r in rows:
        listed = {"agents": r["agents"], "protocols": r["protocols"], "splits": r["splits"],
                  "options": with_defaults.get(r["name"], [])}
        details = "\n".join([r["description"], *(f"[bold]{key}:[/bold] {', '.join(values)}"
                                                   for key, values in listed.items() if values)])
        table.add_row(r["name"], details)
    table.add_row("(common)", "every model agent; none: the agent's or model client's own (budgets: no limit)\n"
                  f"[bold]options:[/bold] {', '.join(with_defaults['(common)'])}")
    Console(width=max(100, Console().width)).print(table)


@cli.command()
@click.argument("suite")
@click.option("--split", default="default", show_default=True, help="Task split.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Generation seed.")
@click.option("--limit", type=click.IntRange(min=1), help="Show at most N tasks.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def tasks(suite: str, split: str, seed: int, limit: int | None, as_json: bool) -> None:
    """List the tasks of SUITE."""
    from buildbench.harness import get_suite

    s = get_suite(suite)
    if split not in s.splits:
        raise ConfigError(f"suite {suite!r} has no split {split!r}; splits: {', '.join(s.splits)}")
    items = s.load_tasks(split, seed)[: limit or None]
    for t in items:
        if as_json:
            # The full record (Task.to_dict), so the output can be run again with `run --tasks`.
            click.echo(json.dumps(t.to_dict(), default=str))
        else:
            meta = " ".join(f"{k}={v}" for k, v in t.metadata.items())
            click.echo(f"{terminal_safe(t.id)}\t{terminal_safe(meta)}")


def _parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``-o KEY=VALUE`` pairs as text: each option's declaration parses its text (a JSON decoding
    here would turn ``-o prompts=1.50`` into the folder ``1.5`` and ``-o levels=true`` into ``True``)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"option {pair[:60]!r} is not KEY=VALUE")
        out[key] = raw
    return out


@cli.command(cls=RunCommand)
@click.argument("suite", required=False)
@click.option("--config", "config_file", type=GivenPath(dir_okay=False, path_type=Path), default=None,
              help="Run file (YAML or JSON) with the run's fields: suite, agent, protocol, model, options, "
                   "tasks, seed, concurrency, backend… (--print-config writes one); flags given here override it.")
@click.option("--print-config", is_flag=True,
              help="Print the fully resolved run file (YAML) and exit without running.")
@click.option("--agent", "-a", default=None, help="Agent name (see `buildbench suites`), or your own agent "
              "factory: path/to/file.py:factory or package.module:factory (see docs/agents.md). "
              "Default: the suite's default agent; with --model, its model agent (llm).")
@click.option("--protocol", "-p", default=None, help="Protocol name (see `buildbench suites`). "
              "Default: the suite's default protocol.")
@click.option("--model", "-m", default=None, help="Model spec, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, "
              "vllm:MODEL@http://127.0.0.1:8000/v1, or a Python function: python:path/to/file.py:fn. "
              "Keys come from the environment (OPENAI_API_KEY, …); a base URL also from <PROVIDER>_BASE_URL.")
@click.option("--split", default="default", show_default=True, help="Task split (see `buildbench suites`).")
@click.option("--tasks", "task_source", type=GivenPath(exists=False), default=None,
              help="Run the tasks in this JSONL/JSON file or folder (e.g. from `buildbench tasks SUITE --json`) "
                   "instead of --split.")
@click.option("--limit", type=click.IntRange(min=1), help="Run only the first N tasks.")
@click.option("--samples", default=1, show_default=True, type=click.IntRange(1, 1_000_000), help="Episodes per task.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Run seed.")
@click.option("--run-dir", type=GivenPath(file_okay=False, path_type=Path, run_folder=True),
              help="Where the run is stored.  [default: runs/SUITE-AGENT-PROTOCOL-sSEED]")
@click.option("--resume", is_flag=True, help="Continue the run in --run-dir, skipping finished episodes.")
@click.option("--concurrency", default=DEFAULT_CONCURRENCY, show_default=True, type=click.IntRange(1, 100_000),
              help="Model-backed episodes in flight.")
@click.option("--workers", default=DEFAULT_WORKERS, show_default=True, type=click.IntRange(0, 1024),
              help="Processes for CPU-bound episodes (0: no pool; each episode still plays in a process "
              "of its own, so a native crash ends only that episode).")
@click.option("--record", type=GivenPath(dir_okay=False, output=True),
              help="Record every model call to this JSONL file (needs --model).")
@click.option("--replay", type=GivenPath(exists=True, dir_okay=False),
              help="Answer model calls from this JSONL file (written by --record; needs the same --model).")
@click.option("-o", "--option", "options", multiple=True,
              help="Suite option KEY=VALUE (repeatable); `buildbench suites` lists each suite's "
                   "with its default (--json: also what it accepts).")
@click.option("--backend", type=click.Choice(["process", "ray"]), default="process", show_default=True,
              help="process: this machine; ray: episodes as Ray tasks on a cluster (docs/ray.md).")
@click.option("--address", default=None,
              help="Ray cluster: auto or ray://HOST:PORT (default: a local Ray instance for this run).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or tables.")
def run(suite: str | None, config_file: Path | None, print_config: bool, agent: str | None, protocol: str | None,
        model: str | None, split: str, task_source: str | None, limit: int | None,
        samples: int, seed: int, run_dir: Path | None, resume: bool, concurrency: int, workers: int,
        record: str | None, replay: str | None, options: tuple[str, ...], backend: str, address: str | None,
        quiet: bool) -> None:
    """Run AGENT on the tasks of SUITE under PROTOCOL and store every episode (or the run that
    --config FILE describes; the run folder keeps its resolved run file as run.yaml).

    Exit status 0 when some episode was scored, 1 when none produced a result (an unreachable
    model endpoint, say: each such episode is stored as unscored), 2 for bad input or options.
    """
    from buildbench.harness import Runner, print_report, run_report
    from buildbench.harness.run_file import build_run_config, read_run_file

    if resume and run_dir is None:
        raise ConfigError("--resume needs --run-dir")
    ctx = click.get_current_context()
    flags: dict[str, Any] = {"suite": suite, "agent": agent, "protocol": protocol, "model": model, "split": split,
             "tasks": task_source, "limit": limit, "samples": samples, "seed": seed, "concurrency": concurrency,
             "workers": workers, "record": record, "replay": replay, "backend": backend, "address": address}
    # Flags typed on the command line override the file; the others keep the file's values.
    given = {key: value for key, value in flags.items()
             if ctx.get_parameter_source("task_source" if key == "tasks" else key) is ParameterSource.COMMANDLINE}
    if options:
        given["options"] = _parse_options(options)
    values = read_run_file(config_file) if config_file is not None else {}
    # A run file's relative paths are read against its own folder, the flags' against the cwd.
    config = build_run_config(values, overrides=given, where=str(config_file or ""),
                              base=config_file.resolve().parent if config_file is not None else None)
    if print_config:
        click.echo(config.to_yaml(), nl=False)
        return
    _check_model_files(config.model, config.record, config.replay)
    # A user agent is named by its (absolute) file path: the default run folder takes the file name alone.
    agent_label = re.sub(r"[^A-Za-z0-9_.-]+", "_", re.sub(r"[^:]*[/\\]", "", config.agent))
    run_label = "--run-dir" if run_dir is not None else "--run-dir (its default)"
    run_dir = run_dir or Path("runs") / f"{config.suite}-{agent_label}-{config.protocol}-s{config.seed}"
    # The parser checked --run-dir against --tasks; not the default run folder, nor a run file's tasks.
    tasks_label = "--tasks" if "tasks" in given else f"'tasks' in the run file {config_file}"
    if config.tasks and (problem := run_folder_in_input(run_dir, config.tasks, tasks_label)):
        raise ConfigError(f"{run_label} {problem}")
    result = Runner(config, run_dir, resume=resume, progress=not quiet).run()
    rep = run_report(run_dir)
    if not quiet:
        click.echo(f"ran {result.ran} episode(s), skipped {result.skipped} already finished; stored in {run_dir}")
        print_report(rep)
    if rep["episodes"] and rep["unscored"] == rep["episodes"]:
        statuses = ", ".join(f"{n} {k}" for k, n in sorted(rep["status"].items()))
        first = _first_error(run_dir)
        click.echo(f"error: no episode produced a result ({statuses}){first}; see `buildbench report {run_dir}`",
                   err=True)
        ctx.exit(1)


def _check_model_files(model: str | None, record: str | None, replay: str | None) -> None:
    """Refuse --record/--replay that would be ignored, and a replay file that cannot be read,
    before the first episode (otherwise every episode would end as an unscored api_error)."""
    for flag, path in (("--record", record), ("--replay", replay)):
        if path and not model:
            raise ConfigError(f"{flag} {path}: needs --model (the model spec is part of every call's key)")
    if record:
        # The recorder makes missing folders; what is there already must take a file, or every
        # episode would end as an unscored error naming the path.
        target = Path(record)
        if target.exists() and not target.is_file():
            raise ConfigError(f"--record {record}: exists and is not a regular file")
        above = next(p for p in target.absolute().parents if p.exists())
        if not above.is_dir():
            raise ConfigError(f"--record {record}: {above} is not a folder")
    if replay:
        from buildbench.inputs import InputFileError
        from buildbench.llm.cache import load_entries

        try:
            entries = load_entries(Path(replay))
        except InputFileError as exc:
            raise ConfigError(f"--replay {exc}") from None
        except ValueError as exc:
            raise ConfigError(f"--replay {exc}") from None
        if not entries:  # every call would miss: each episode an unscored error, exit 1
            raise ConfigError(f"--replay {replay}: holds no recorded call (empty, or its one line was cut short)")


def _default_agent(suite: Any, model: str | None) -> str:
    """The suite's default agent; with --model, its model agent (``llm``) when the default takes no model."""
    from buildbench.harness.run_file import default_agent

    return default_agent(suite, bool(model))


def _first_error(run_dir: Path) -> str:
    from buildbench.harness import Store

    with Store(run_dir, create=False) as store:
        for ep in store.episodes():
            if ep.error:
                return f"; first: {terminal_safe(ep.error.splitlines()[0][:200])}"
    return ""


@cli.command()
@click.argument("run_dirs", nargs=-1, required=True, type=GivenPath(path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help="Print the run's metrics as one JSON object (a metric without data is null), with "
                   "their intervals, the paper tables' intervals (table_intervals) and pass@k.")
@click.option("--errors-as-failures", is_flag=True,
              help="Count episodes without a result (errors, API failures) as failed episodes "
                   "(pass flags and scores at their failing values, other metrics n/a) instead of "
                   "leaving them out of the means.")
@click.option("--all", "show_all", is_flag=True,
              help="Also list every metric beyond the suite's headline ones (raw counts, per-test flags).")
@click.option("--prices", type=GivenPath(dir_okay=False, path_type=Path), default=None,
              help="A price file (JSON or YAML: models -> input_per_million, output_per_million, "
                   "per_request) to show the money each run cost beside its tokens.")
# Figures are written under fixed names (FIGURE.png, FIGURE.svg): a run in the folder is never one.
@click.option("--figures", "figures_dir", default=None,
              type=GivenPath(file_okay=False, path_type=Path, output=True, writes=("*.png", "*.svg")),
              help="Also write figures (PNG and SVG) to this folder: headline metrics with intervals, "
                   "per task type, outcomes, cost vs quality, and the suite's paper figures.")
def report(run_dirs: tuple[Path, ...], as_json: bool, errors_as_failures: bool, show_all: bool,
           prices: Path | None, figures_dir: Path | None) -> None:
    """Summarise the run stored in RUN_DIR; given several runs, put them side by side in each
    table, one row per run configuration (runs that differ in any setting are never merged).
    Each headline metric shows its unit, n and a 95 % interval clustered by task. Refuses (exit 2)
    a run folder given twice, a copy of one beside it (its episodes would count twice) and runs of
    two suites."""
    from buildbench.harness import print_report, run_report
    from buildbench.harness.cost import load_prices

    price_table = load_prices(prices) if prices is not None else None
    if figures_dir is not None:
        from buildbench.harness.compare import write_run_figures

        written = write_run_figures(run_dirs, figures_dir)
        click.echo(f"wrote {len(written)} figure files to {figures_dir}", err=True)
    if len(run_dirs) > 1:
        from buildbench.harness.compare import compare_runs, print_comparison

        both = compare_runs(run_dirs, errors_as_failures=errors_as_failures, prices=price_table)
        if as_json:
            click.echo(_strict_json(both))
        else:
            print_comparison(both, show_all=show_all)
        return
    data = run_report(run_dirs[0], errors_as_failures=errors_as_failures, prices=price_table)
    if as_json:
        click.echo(_strict_json(data))
    else:
        print_report(data, show_all=show_all)


@cli.command()
@click.argument("run_a", type=GivenPath(path_type=Path))
@click.argument("run_b", type=GivenPath(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as one JSON object.")
@click.option("--errors-as-failures", is_flag=True,
              help="Count episodes without a result as failed episodes instead of leaving them out.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed of the bootstrap and permutation resampling.")
def compare(run_a: Path, run_b: Path, as_json: bool, errors_as_failures: bool, seed: int) -> None:
    """Compare two runs task by task: B - A per metric on the tasks both scored, with a 95 %
    bootstrap interval and a p-value (exact McNemar for pass/fail, sign-flip permutation
    otherwise). Says when the task sets differ; refuses (exit 2) runs of two suites, runs with
    no task scored in both, and the same run twice."""
    from buildbench.harness.compare import compare_pair, print_pair

    result = compare_pair(run_a, run_b, errors_as_failures=errors_as_failures, seed=seed)
    if as_json:
        click.echo(_strict_json(result))
    else:
        print_pair(result)


def _strict_json(value: Any) -> str:
    """``value`` as standard JSON: a metric without data (NaN, inf) becomes null (`json_ready`)."""
    from buildbench.jsonio import json_ready

    return json.dumps(json_ready(value), default=str, allow_nan=False)


@cli.command()
# export reads the run's own files only: a new file beside them (the default RUN/episodes.jsonl) is fine
@click.argument("run_dir", type=GivenPath(path_type=Path, reads=RUN_FOLDER_FILES))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "parquet", "sft"]), default="jsonl", show_default=True,
              help="jsonl: one full episode record a line; parquet: one flat row an episode; sft: chat data.")
@click.option("--out", type=GivenPath(path_type=Path, output=True),
              help="Output file (jsonl, parquet; default RUN_DIR/episodes.FORMAT) or new folder "
                   "(sft; default RUN_DIR/sft).")
def export(run_dir: Path, fmt: str, out: Path | None) -> None:
    """Export the episodes of RUN_DIR as JSONL (full records), Parquet (flat rows) or SFT data
    (chat JSONL with image files and a Hugging Face dataset with loss masks on assistant turns)."""
    from buildbench.harness import Store, export_jsonl, export_parquet

    if fmt == "sft":
        from buildbench.harness.sft import export_sft

        done = export_sft(run_dir, out or run_dir / "sft")
        click.echo(f"wrote {done.episodes} episode(s), {done.messages} message(s), {done.images} image(s) "
                   f"to {done.jsonl} and the dataset {done.dataset}")
        return
    out = out or run_dir / f"episodes.{fmt}"
    if out.is_dir():
        raise ConfigError(f"--out {out}: is a folder; give the {fmt} file to write")
    with Store(run_dir, create=False) as store:
        out.parent.mkdir(parents=True, exist_ok=True)
        n = (export_jsonl if fmt == "jsonl" else export_parquet)(store, out)
    click.echo(f"wrote {n} episode(s) to {out}")


@cli.command()
@click.argument("run_dirs", nargs=-1, required=True, type=GivenPath(file_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind (the default serves this machine only).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(min=0, max=65535),
              help="Port (0: any free port).")
@click.option("--static", "static_out", type=GivenPath(path_type=Path, output=True),
              help="Write the viewer as static files into this new folder instead of serving.")
def view(run_dirs: tuple[Path, ...], host: str, port: int, static_out: Path | None) -> None:
    """Browse RUN_DIR(s): episode tables, trajectories and the built artefacts in 3-D."""
    from buildbench.web.cli import serve, write_static_site

    if static_out is not None:
        write_static_site(list(run_dirs), static_out)
    else:
        serve(list(run_dirs), host, port)


@cli.command()
@click.option("--run-dir", type=GivenPath(file_okay=False, path_type=Path, run_folder=True),
              default=Path("runs/demo"), show_default=True,
              help="Where the demo runs are stored (a suite's earlier demo runs there are replaced; "
              "a folder with anything else is refused).")
@click.option("--suite", "suites", multiple=True,
              type=click.Choice(["dreamhouse", "buildarena", "bimedit", "scenerevis", "legoeval", "generators",
                                 "example"]),
              help="Only these sections (repeatable): a suite, 'generators' (two scene generators scored "
              "with `scenes evaluate`) or the 'example' suite; default: the five suites and 'generators'.")
@click.option("--dreamhouse-limit", default=4, show_default=True, type=click.IntRange(min=1),
              help="DreamHouse tasks per agent × protocol × condition.")
def demo(run_dir: Path, suites: tuple[str, ...], dreamhouse_limit: int) -> None:
    """Run the built-in end-to-end evaluations (no network, no keys) and print their tables."""
    from .demo import DEMO_SUITES, run_demo

    run_demo(run_dir, suites or DEMO_SUITES, dreamhouse_limit=dreamhouse_limit)


def _add_core_groups() -> None:
    # Groups of shared packages (not suites): imported here, their commands import lazily.
    from buildbench.integrations.mcp_cli import mcp
    from buildbench.scenes.cli import scenes

    cli.add_command(scenes)
    cli.add_command(mcp)


_add_core_groups()


class _LevelPrefix(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def _log_to_stderr() -> None:
    """Warnings from the library as ``warning: …`` lines on stderr (once per process)."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(_LevelPrefix())
        root.addHandler(handler)
        root.setLevel(logging.DEBUG if os.environ.get("BUILDBENCH_DEBUG") else logging.WARNING)


def _warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    # Python's own layout is two lines (where in our source, and that source line): a warning
    # about the user's file is one ``warning:`` line, as the library's logged ones.
    click.echo(f"warning: {terminal_safe(message)}", err=True)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors print as one line (set BUILDBENCH_DEBUG=1 for tracebacks)."""
    _log_to_stderr()
    if not os.environ.get("BUILDBENCH_DEBUG"):
        warnings.showwarning = _warning_line
    forget_given_paths()
    try:
        _check_limit_overrides()
        # Without standalone mode click returns the code of ``ctx.exit(N)`` instead of exiting.
        rc = cli.main(args=argv, prog_name="buildbench", standalone_mode=False)
        return rc if isinstance(rc, int) and not isinstance(rc, bool) else 0
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.exceptions.NoArgsIsHelpError as exc:
        # `buildbench` or `buildbench SUITE` alone asks for help: show it, as --help does.
        click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
        return 0
    except click.ClickException as exc:
        # Usage and input errors, one convention: one line starting "error:", exit status 2.
        ctx = getattr(exc, "ctx", None)  # usage errors know their command
        command = ctx.command_path.partition(" ")[2] if ctx is not None else ""
        where = f" (buildbench {command})" if command else ""
        # click lays some messages out on indented lines ("Choose from:\n\tthor,\n\t…"): one line
        # here; any other newline (a file name's) is shown escaped.
        message = re.sub(r"\n[ \t]+", " ", exc.format_message())
        # A parameter's own error names it; a command's (a reader's) names the file: add its parameter.
        _error_line((message if isinstance(exc, click.BadParameter) else with_path_label(message, arguments=False))
                    + where)
        return 2
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except BuildbenchError as exc:
        _error_line(with_path_label(str(exc), arguments=False))
        return 2
    # Before ValueError: UnicodeDecodeError is one.
    except (RecursionError, UnicodeDecodeError, MemoryError) as exc:
        # Backstop for inputs a reader did not bound itself: one line, not a traceback.
        what = {"RecursionError": "input nested too deeply", "UnicodeDecodeError": "input is not UTF-8 text",
                "MemoryError": "input too large for memory"}[type(exc).__name__]
        click.echo(f"error: {what} ({type(exc).__name__}: {str(exc)[:200]})", err=True)
        return 2
    except OSError as exc:
        if exc.filename is None or os.environ.get("BUILDBENCH_DEBUG"):
            return _unexpected(exc)
        # A path the user gave that cannot be read or written (missing, a folder, no permission).
        # A reader's OSError names the file, not which option gave it: added when one did.
        _error_line(with_path_label(f"{os.fsdecode(exc.filename)}: {exc.strerror or exc}"))
        return 2
    except ValueError as exc:
        from buildbench.llm import LLMConfigError

        if not isinstance(exc, LLMConfigError):
            return _unexpected(exc)
        click.echo(f"error: {exc}", err=True)
        return 2
    except Exception as exc:
        return _unexpected(exc)


def _error_line(message: str) -> None:
    """Print ``message`` as the one ``error:`` line: a newline in it (a file name may hold one)
    is shown escaped, as every other control character."""
    click.echo(f"error: {terminal_safe(message)}", err=True)


def _check_limit_overrides() -> None:
    """Refuse a malformed or unknown ``BUILDBENCH_LIMIT_*`` override before any command runs: read where it
    bounds something (a model request inside an episode), it failed every episode of a run as an
    unscored error, exit 1."""
    from buildbench.limits import LIMITS, limit, unknown_overrides

    unknown = unknown_overrides()
    if unknown:
        raise click.UsageError(f"{', '.join(unknown)} names no limit; the limits are "
                               f"{', '.join(f'BUILDBENCH_LIMIT_{n.upper()}' for n in LIMITS)}")
    for name in LIMITS:
        try:
            limit(name)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None


def _unexpected(exc: Exception) -> int:
    if os.environ.get("BUILDBENCH_DEBUG"):
        raise exc
    click.echo(f"error: {type(exc).__name__}: {exc} (set BUILDBENCH_DEBUG=1 for the traceback)", err=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
