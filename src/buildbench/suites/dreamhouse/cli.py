"""``buildbench dreamhouse …``: validate a member list, generate the dataset, render views, read and
write task packs, report runs.

Every user error (unreadable or malformed file, unknown option value, unwritable folder)
ends the command with one line naming what was wrong and where, and exit status 2.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from buildbench.cliargs import GivenPath
from buildbench.harness.errors import BuildbenchError
from buildbench.parallel import Backend, backend_options

#: Largest --n that ``generate`` takes: the paper's dataset is 26,543 structures; a bound
#: keeps a mistyped number from running for days.
MAX_STRUCTURES = 1_000_000
#: Largest --workers: a mistyped number would start that many processes.
MAX_WORKERS = 1024
#: ``views.RENDERERS``, spelled out so that the help needs no renderer import.
RENDERER_CHOICES: tuple[str, ...] = ("raster", "gl", "cycles")
RENDERER_HELP = ("raster: our CPU rasterizer, the same pixels on every machine; gl: OpenGL through EGL (edge "
                 "pixels depend on the driver); cycles: Blender Cycles through .venv-blender, as the paper (slow).")


class _UserError(click.ClickException):
    """One-line error, exit status 2."""

    exit_code = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """DreamHouse: timber-frame houses checked against IRC-based structural tests."""


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--profile",
    type=click.Choice(["paper", "released"]),
    default="paper",
    show_default=True,
    help="paper: appendix T1–T10; released: the released harness's 10 tests.",
)
@click.option("--task", "task_ids", multiple=True, help="With a dataset: only this house (repeatable).")
@click.option(
    "--json", "as_json", is_flag=True, help="Print our JSON result and the released harness's form."
)
def validate(file: Path, profile: str, task_ids: tuple[str, ...], as_json: bool) -> None:
    """Validate the member list in FILE: our JSON, the released submission JSON, or a dataset
    folder or shard written by `generate` (every house, or those named by --task).

    Exit status: 0 when every test passes, 1 when some test fails, 2 for a bad file.
    """
    from .check import validate as run_validator
    from .cli_inputs import is_dataset, load_houses

    houses = _run(lambda: load_houses(file, task_ids))
    reports = [(h, run_validator(h.frame, profile)) for h in houses]
    if as_json:
        docs = [{**r.to_json(), "released": r.to_released_json(h.label)} for h, r in reports]
        click.echo(json.dumps(docs if is_dataset(file) else docs[0], indent=1))
    elif is_dataset(file):
        for h, r in reports:
            failed = [t.name for t in r.results if not t.passed]
            click.echo(f"{h.label}: {len(h.frame)} members, {'PASS' if r.passed else 'FAIL ' + ', '.join(failed)}")
        click.echo(f"{sum(r.passed for _, r in reports)}/{len(reports)} houses pass every test (profile {profile})")
    else:
        report = reports[0][1]
        click.echo(f"{file}: {report.n_members} members, profile {profile}")
        for test in report.results:
            click.echo(f"{'PASS' if test.passed else 'FAIL'}  {test.label}")
            for line in test.messages:
                click.echo(f"      {line}")
        click.echo(report.summary())
    click.get_current_context().exit(0 if all(r.passed for _, r in reports) else 1)


@cli.command()
@click.option("--n", "n", type=click.IntRange(min=1, max=MAX_STRUCTURES), default=1200, show_default=True,
              help=f"Structures to generate (the paper's dataset has 26543; at most {MAX_STRUCTURES}).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Dataset seed.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output folder.")
@click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=2, show_default=True,
              help=f"Processes (at most {MAX_WORKERS}).")
@click.option(
    "--format", "fmt", type=click.Choice(["parquet", "jsonl"]), default="parquet", show_default=True,
    help="Shard file format of the structures.",
)
@click.option(
    "--split", is_flag=True, help="Generate the stratified 1,200-task split (paper ids) instead of N."
)
@click.option("--render", is_flag=True, help="Also render Frame and Facade views into OUT/renders/.")
@click.option("--renderer", type=click.Choice(RENDERER_CHOICES), default="raster", show_default=True,
              help="With --render: " + RENDERER_HELP)
@backend_options
def generate(n: int, seed: int, out: Path, workers: int, fmt: str, split: bool, render: bool, renderer: str,
             backend: Backend) -> None:
    """Generate N validator-certified structures into OUT (--n 26543 is the paper's size)."""
    from .generate import default_split, write_dataset
    from .views_dataset import render_dataset

    t0 = time.perf_counter()
    ids = default_split() if split else None
    manifest = _run(lambda: write_dataset(out, n, seed, fmt=fmt, workers=workers, task_ids=ids, backend=backend))
    counts = manifest["member_counts"]["overall"]
    click.echo(
        f"wrote {manifest['n']} structures to {out} in {time.perf_counter() - t0:.1f} s "
        f"(members: min {counts['min']}, mean {counts['mean']:.0f}, max {counts['max']})"
    )
    if render:
        t1 = time.perf_counter()
        rendered = _run(lambda: render_dataset(out, workers=workers, backend=backend,
                                                 renderer=renderer))
        click.echo(f"rendered {rendered} structures × 2 conditions × 5 views to {out / 'renders'} "
                   f"in {time.perf_counter() - t1:.1f} s")  # fmt: skip


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output folder.")
@click.option(
    "--condition",
    type=click.Choice(["frame", "facade"]),
    default="frame",
    show_default=True,
    help="facade also draws the skin (--skin, or the dataset's own).",
)
@click.option("--skin", type=click.Path(path_type=Path), help="Facade panels (a structure JSON).")
@click.option("--task", "task_id", help="With a dataset: the house to render.")
@click.option("--renderer", type=click.Choice(RENDERER_CHOICES), default="raster", show_default=True,
              help=RENDERER_HELP)
def render(file: Path, out: Path, condition: str, skin: Path | None, task_id: str | None, renderer: str) -> None:
    """Render the five Table-4 views of the structure in FILE (a structure JSON, or a house
    of a dataset folder or shard written by `generate`) into OUT/<view>.png."""
    from .cli_inputs import load_houses
    from .views import render_views, save_views

    houses = _run(lambda: load_houses(file, (task_id,) if task_id else ()))
    if len(houses) > 1:
        raise _UserError(f"{file} holds {len(houses)} houses; pick one with --task (e.g. --task {houses[0].label})")
    house = houses[0]
    skin_structure = _load(skin) if skin is not None else house.skin
    if condition == "facade" and skin_structure is None:
        raise _UserError("--condition facade needs --skin FILE with the facade panels")
    images = _run(lambda: render_views(house.frame, skin_structure, condition, renderer=renderer))
    paths = _run(lambda: save_views(images, out))
    click.echo(f"wrote {len(paths)} views of {len(house.frame)} members to {out}")


@cli.command()
@click.option("--split", default="demo", show_default=True, help="Task split to pack (default, demo, demo26).")
@click.option("--tasks", "task_source", type=click.Path(path_type=Path), help="Pack these task files instead.")
@click.option("--limit", type=click.IntRange(min=1), help="First N tasks only.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The .dhpack to write.")
@click.option("--condition", type=click.Choice(["frame", "facade"]), default="frame", show_default=True,
              help="Which target views the pack holds.")
@click.option("--renderer", type=click.Choice(RENDERER_CHOICES), default="raster", show_default=True,
              help=RENDERER_HELP)
def pack(split: str, task_source: Path | None, limit: int | None, out: Path, condition: str, renderer: str) -> None:
    """Write tasks as a released-harness task pack (.dhpack: SQLite, five PNG views per task)."""
    from buildbench.harness.progress import Progress

    from .dhpack import pack_task_of, write_dhpack
    from .env import render_call
    from .tasks import load_tasks
    from .views import png_bytes, target_images

    if task_source is not None:
        from buildbench.harness.task_files import load_task_files

        from .tasks import validate_task

        tasks = _run(lambda: load_task_files(task_source, "dreamhouse", validate_task))
    else:
        tasks = _run(lambda: load_tasks(split))
    tasks = tasks[:limit] if limit else tasks
    entries = []
    with Progress(True, len(tasks), "dreamhouse pack", unit="tasks rendered", stream=sys.stderr) as bar:
        for k, task in enumerate(tasks, start=1):
            images, made_by = _run(lambda t=task: render_call(target_images, t, condition, renderer))
            entries.append(_run(lambda t=task, i=images, m=made_by: pack_task_of(t, [png_bytes(v) for v in i], m)))
            bar.update(k, task.id)
    _run(lambda: write_dhpack(out, entries, metadata={"condition": condition, "renderer": renderer}))
    click.echo(f"wrote {len(entries)} tasks to {out}")


@cli.command()
@click.argument("pack_file", type=click.Path(path_type=Path))
@click.option("--out", required=True, help="Folder for tasks.jsonl and the views.",
              # a houses/ tree given as PACK_FILE at OUT/views would have its views written over
              type=GivenPath(file_okay=False, path_type=Path, output=True, writes=("tasks.jsonl", "views")))
def unpack(pack_file: Path, out: Path) -> None:
    """Turn a .dhpack, or a released houses/ folder tree (one folder of views and structure.json
    per task), into OUT/tasks.jsonl (for `buildbench run dreamhouse --tasks`) and OUT/views/."""
    from .task_folders import load_dhpack

    tasks = _run(lambda: load_dhpack(pack_file, (out / "views").resolve()))
    lines = "".join(json.dumps(t.to_dict(), sort_keys=True) + "\n" for t in tasks)
    _run(lambda: (out / "tasks.jsonl").write_text(lines))
    with_truth = sum(1 for t in tasks if t.target)
    click.echo(f"wrote {len(tasks)} tasks ({with_truth} with a ground-truth frame) to {out / 'tasks.jsonl'}")


@cli.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the tables and their cells' 95 % intervals as JSON.")
@click.option("--errors-as-failures", is_flag=True,
              help="Count episodes without a result (errors, API failures) as failed attempts.")
def report(run_dirs: tuple[Path, ...], as_json: bool, errors_as_failures: bool) -> None:
    """Table 1 (and the failure analysis) over one or more stored dreamhouse runs, beside the
    paper's numbers."""
    from .cli_inputs import require_dreamhouse_run
    from .report import print_tables, runs_summary

    for run_dir in run_dirs:
        _run(lambda d=run_dir: require_dreamhouse_run(d))
    tables = _run(lambda: runs_summary(list(run_dirs), errors_as_failures=errors_as_failures))
    if as_json:
        from buildbench.harness.tables import tables_json

        click.echo(tables_json(tables))
    else:
        print_tables(tables)


class _ServeCommand(click.Command):
    """``serve``, whose help lists its ``-o`` options with their defaults; they are read only when
    the help is shown, so other commands do not import the server."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from .serve import SERVE_OPTIONS

        with formatter.section("-o KEY=VALUE options"):
            formatter.write_dl([(spec.name, spec.describe()) for spec in SERVE_OPTIONS])
        super().format_epilog(ctx, formatter)


@cli.command(cls=_ServeCommand)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind (the default serves this machine only).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port (8000 is the released CLI's; 0 picks a free one).")
@click.option("--split", help="Serve this task split (default, demo, demo26); the default is demo.")
@click.option("--tasks", "task_source", type=click.Path(path_type=Path), help="Serve these task files.")
@click.option("--dhpack", type=click.Path(dir_okay=False, path_type=Path), help="Serve this task pack.")
@click.option("--limit", type=click.IntRange(min=1), help="First N tasks only.")
@click.option("--workers", type=click.IntRange(min=1, max=64), default=2, show_default=True,
              help="Validation threads.")
@click.option("-o", "--option", "options", multiple=True,
              help="KEY=VALUE, one of the options listed below (with their defaults).")
@click.option("--token", envvar="DREAMHOUSE_SERVE_TOKEN", default=None,
              help="Bearer token every request must carry (Authorization: Bearer TOKEN); required when "
                   "--host is not loopback. Also read from DREAMHOUSE_SERVE_TOKEN.")
def serve(host: str, port: int, split: str | None, task_source: Path | None, dhpack: Path | None,
          limit: int | None, workers: int, options: tuple[str, ...], token: str | None) -> None:
    """Serve the released DreamHouse harness's HTTP API (tasks, views, sessions, submissions,
    results) over our tasks, validator and renderer, so released clients and agents run unchanged."""
    from .serve import Grader, ReleasedApiServer, ServeOptions, load_source

    opts = _run(lambda: ServeOptions.from_pairs(options))
    if split is None and task_source is None and dhpack is None:
        split = "demo"
    source = _run(lambda: load_source(split=split, tasks_path=task_source, dhpack=dhpack, limit=limit,
                                      condition=opts.condition, renderer=opts.renderer))
    grader = Grader(opts.profile, opts.executor, opts.isolation)
    server = _run(lambda: ReleasedApiServer(source, grader, host=host, port=port, workers=workers,
                                                     token=token))
    click.echo(f"serving {len(source.ids())} tasks (profile {opts.profile}) at {server.url}\n"
               f"export DREAMHOUSE_SERVER={server.url}    # Ctrl-C stops")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        server.board.close()
        server.server_close()


def _load(path: Path) -> Any:
    from .model import load_structure

    return _run(lambda: load_structure(path))


def _run(fn: Any) -> Any:
    """Call ``fn``; a project error or bad value becomes one line on stderr."""
    try:
        return fn()
    except (BuildbenchError, ValueError, OSError) as exc:
        raise _UserError(str(exc)) from exc


if __name__ == "__main__":
    cli()
