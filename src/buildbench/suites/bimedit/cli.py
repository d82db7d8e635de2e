"""``buildbench bimedit``: generate tasks, score an edited model, diff two models."""

from __future__ import annotations

import json
from pathlib import Path

import click

from buildbench.harness.errors import BuildbenchError
from buildbench.parallel import PROCESS, Backend, backend_options


def _fail(message: str) -> None:
    raise click.ClickException(message)


@click.group()
def cli() -> None:
    """BIM-Edit: IFC edit tasks scored on geometry, semantics and topology."""


@cli.command()
@click.option("--n", "n", type=int, default=None,
              help="number of tasks (default: the paper's 324-task design)")
@click.option("--seed", type=int, default=0, show_default=True, help="generator seed")
@click.option("--out", "out", type=click.Path(file_okay=False), default="bimedit-tasks", show_default=True,
              help="folder for scenes, ground truths and tasks.jsonl")
@click.option("--ifc", "ifc", type=click.Path(dir_okay=False), default=None,
              help="make the tasks on this IFC model (any schema and unit) instead of synthetic scenes")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="processes making the synthetic scenes' tasks (one scene per process at a time)")
@backend_options
def generate(n: int | None, seed: int, out: str, ifc: str | None, workers: int, backend: Backend) -> None:
    """Generate tasks with their input and ground-truth models.

    With --ifc, the tasks edit that model: the paper's composition laid over its elements,
    each base edit phrased three ways with checked descriptions and an oracle solution; what
    the model cannot support is listed (also in generation-report.json).
    """
    from buildbench.suites.bimedit.generate.tasks import generate_tasks
    from buildbench.suites.bimedit.generate.tasks.usergen import generate_from_ifc

    if n is not None and n < 1:
        _fail(f"--n must be a positive number of tasks, got {n}")
    if ifc is not None:
        if not Path(ifc).is_file():
            _fail(f"--ifc {ifc}: no such file")
        tasks, report = generate_from_ifc(ifc, out, n, seed, progress=_progress)
        click.echo("", err=True)
        for line in report.lines():
            click.echo(line)
        click.echo(f"wrote {len(tasks)} tasks to {Path(out) / 'tasks.jsonl'}")
        return
    try:
        tasks = generate_tasks(n, seed, out, workers=workers, backend=backend)
    except (BuildbenchError, ValueError, RuntimeError, OSError) as exc:
        _fail(f"generation failed: {exc}")
    click.echo(f"wrote {len(tasks)} tasks to {Path(out) / 'tasks.jsonl'}")


def _progress(text: str) -> None:
    click.echo(f"\rgenerating: {text}", nl=False, err=True)


@cli.command()
@click.option("--task", "task_path", type=click.Path(), default=None, help="task JSON (or JSONL with one task)")
@click.option("--pred", "pred", type=click.Path(), default=None, help="the edited IFC model to score")
@click.option("--tasks", "tasks_path", type=click.Path(), default=None,
              help="a task file (JSONL) to re-score in batch, with --preds")
@click.option("--preds", "preds", type=click.Path(), default=None,
              help="folder of predictions, one <task id>.ifc per task (with --tasks)")
@click.option("--json", "as_json", is_flag=True, help="print the full result as JSON")
@click.option("--strict", is_flag=True, help="also penalise collateral damage (ours, not the paper's)")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="processes scoring a batch (--tasks/--preds)")
@backend_options
def score(task_path: str | None, pred: str | None, tasks_path: str | None, preds: str | None, as_json: bool,
          strict: bool, workers: int, backend: Backend) -> None:
    """Score an edited model against a task's ground truth (--task/--pred), or a folder of
    predictions against a task file (--tasks/--preds).

    Batch exit status: 0 when every task was scored, 1 when a prediction is missing or could
    not be scored (listed, never counted as zero), 2 for a bad task file or folder.
    """
    if (task_path is None) == (tasks_path is None) or (task_path is None) != (pred is None) or (
            tasks_path is None) != (preds is None):
        _fail("give either --task and --pred, or --tasks and --preds")
    if tasks_path is not None and preds is not None:
        _score_batch(tasks_path, preds, as_json, strict, workers, backend)
        return
    assert task_path is not None and pred is not None  # checked above
    _score_one(task_path, pred, as_json, strict)


def _score_batch(tasks_path: str, preds: str, as_json: bool, strict: bool, workers: int = 1,
                 backend: Backend = PROCESS) -> None:
    from buildbench.suites.bimedit.rescore import rescore, summary, summary_line
    from buildbench.suites.bimedit.tasks import read_tasks

    tasks = read_tasks(tasks_path)
    if not tasks:
        _fail(f"{tasks_path}: no tasks")
    rows = rescore(tasks, preds, strict=strict, workers=workers, backend=backend)
    info = summary(rows)
    if as_json:
        click.echo(json.dumps({"tasks": [r.to_dict() for r in rows], "summary": info}, indent=2, default=str))
    else:
        for r in rows:
            click.echo(r.line())
        click.echo(summary_line(info))
    if info["scored"] < info["tasks"]:
        raise click.exceptions.Exit(1)


def _score_one(task_path: str, pred: str, as_json: bool, strict: bool) -> None:
    from buildbench.suites.bimedit.check.edit import score_edit
    from buildbench.suites.bimedit.tasks import read_tasks

    try:
        tasks = read_tasks(task_path)
    except BuildbenchError as exc:
        _fail(str(exc))
    if len(tasks) != 1:
        _fail(f"{task_path}: expected one task, found {len(tasks)}")
    task = tasks[0]
    try:
        result = score_edit(task.input_ifc, task.ground_truth_ifc, pred, task.score_spec(), strict=strict)
    except ValueError as exc:
        _fail(str(exc))
    if as_json:
        click.echo(json.dumps({"task_id": task.task_id, **result.to_dict()}, indent=2, default=str))
        return
    click.echo(f"{task.task_id}: geometry {result.geometry:.4f}  semantics {result.semantics:.4f}  "
               f"topology {result.topology:.4f}  final {result.final:.4f}  solved {result.solved}")
    click.echo(f"reason: {result.reason}")
    if result.edit_sets is not None:
        sets = result.edit_sets
        click.echo(f"reference edit set: {', '.join(sets.reference) or '(empty)'}")
        click.echo(f"predicted edit set: {', '.join(sets.predicted) or '(empty)'}")
    for note in result.notes:
        click.echo(f"note: {note}")


@cli.command()
@click.argument("a", type=click.Path())
@click.argument("b", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="print the changes as JSON")
def diff(a: str, b: str, as_json: bool) -> None:
    """List the elements added, removed and modified from model A to model B."""
    from buildbench.suites.bimedit.check.diff import node_changes
    from buildbench.suites.bimedit.check.model import ModelError, load_model

    try:
        ma, mb = load_model(a), load_model(b)
    except (ModelError, ValueError) as exc:
        _fail(f"cannot read model: {exc}")
    ch = node_changes(ma, mb)
    nodes = {"added": sorted(ch.added), "removed": sorted(ch.removed), "modified": sorted(ch.modified)}
    relations = {"relations_added": [list(e) for e in sorted(mb.edges - ma.edges)],
                 "relations_removed": [list(e) for e in sorted(ma.edges - mb.edges)]}
    if as_json:
        click.echo(json.dumps({**nodes, **relations}, indent=2))
        return
    for key, items in nodes.items():
        names = [f"{(mb if key == 'added' else ma).nodes[k].ifc_class} {k}" for k in items]
        click.echo(f"{key} ({len(items)}): {', '.join(names) or '-'}")
    for key, edges in relations.items():
        click.echo(f"{key.replace('_', ' ')} ({len(edges)})")
        for e in edges:
            click.echo("  " + " ".join(str(x) for x in e))
