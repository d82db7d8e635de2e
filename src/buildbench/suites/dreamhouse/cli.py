"""``buildbench dreamhouse …``: validate a member list, generate the dataset, render views, report runs.

Every user error (unreadable or malformed file, unknown option value, unwritable folder)
ends the command with one line naming what was wrong and where, and exit status 2.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from buildbench.harness.errors import BuildbenchError


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
@click.option(
    "--json", "as_json", is_flag=True, help="Print our JSON result and the released harness's form."
)
def validate(file: Path, profile: str, as_json: bool) -> None:
    """Validate the member list in FILE (our JSON or the released submission JSON).

    Exit status: 0 when every test passes, 1 when some test fails, 2 for a bad file.
    """
    from .check import validate as run_validator

    structure = _load(file)
    report = run_validator(structure, profile)
    if as_json:
        doc = {
            **report.to_json(),
            "released": report.to_released_json(str(structure.meta.get("task_id", ""))),
        }
        click.echo(json.dumps(doc, indent=1))
    else:
        click.echo(f"{file}: {report.n_members} members, profile {profile}")
        for r in report.results:
            click.echo(f"{'PASS' if r.passed else 'FAIL'}  {r.label}")
            for line in r.messages:
                click.echo(f"      {line}")
        click.echo(report.summary())
    click.get_current_context().exit(0 if report.passed else 1)


@cli.command()
@click.option("--n", "n", type=click.IntRange(min=1), default=1200, show_default=True, help="Structures.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Dataset seed.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output folder.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="Processes.")
@click.option(
    "--format", "fmt", type=click.Choice(["parquet", "jsonl"]), default="parquet", show_default=True
)
@click.option(
    "--split", is_flag=True, help="Generate the stratified 1,200-task split (paper ids) instead of N."
)
@click.option("--render", is_flag=True, help="Also render Frame and Facade views into OUT/renders/.")
def generate(n: int, seed: int, out: Path, workers: int, fmt: str, split: bool, render: bool) -> None:
    """Generate N validator-certified structures into OUT (``--n 26543`` is the paper's size)."""
    from .generate import default_split, write_dataset
    from .views import render_dataset

    t0 = time.perf_counter()
    ids = default_split() if split else None
    manifest = _run(lambda: write_dataset(out, n, seed, fmt=fmt, workers=workers, task_ids=ids))
    counts = manifest["member_counts"]["overall"]
    click.echo(
        f"wrote {manifest['n']} structures to {out} in {time.perf_counter() - t0:.1f} s "
        f"(members: min {counts['min']}, mean {counts['mean']:.0f}, max {counts['max']})"
    )
    if render:
        t1 = time.perf_counter()
        rendered = _run(lambda: render_dataset(out, workers=workers))
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
    help="facade also draws the skin given by --skin.",
)
@click.option("--skin", type=click.Path(path_type=Path), help="Facade panels (a structure JSON).")
def render(file: Path, out: Path, condition: str, skin: Path | None) -> None:
    """Render the five Table-4 views of the structure in FILE into OUT/<view>.png."""
    from .views import render_views, save_views

    structure = _load(file)
    if condition == "facade" and skin is None:
        raise _UserError("--condition facade needs --skin FILE with the facade panels")
    skin_structure = _load(skin) if skin is not None else None
    images = _run(lambda: render_views(structure, skin_structure, condition))
    paths = _run(lambda: save_views(images, out))
    click.echo(f"wrote {len(paths)} views of {len(structure)} members to {out}")


@cli.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the tables as JSON.")
def report(run_dirs: tuple[Path, ...], as_json: bool) -> None:
    """Table 1 (and the failure analysis) over one or more stored runs, beside the paper's numbers."""
    from .report import print_tables, runs_summary

    tables = _run(lambda: runs_summary(list(run_dirs)))
    if as_json:
        click.echo(json.dumps(tables, indent=1, default=str))
    else:
        print_tables(tables)


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
