"""``buildbench bimedit``: generate tasks, score an edited model, diff two models."""

from __future__ import annotations

import json
from pathlib import Path

import click

from buildbench.harness.errors import BuildbenchError


def _fail(message: str) -> None:
    raise click.ClickException(message)


@click.group()
def cli() -> None:
    """BIM-Edit: IFC edit tasks scored on geometry, semantics and topology."""


@cli.command()
@click.option("--n", "n", type=int, default=None, help="number of tasks (default: the paper's 324-task split)")
@click.option("--seed", type=int, default=0, show_default=True, help="generator seed")
@click.option("--out", "out", type=click.Path(file_okay=False), default="bimedit-tasks", show_default=True,
              help="folder for scenes, ground truths and tasks.jsonl")
def generate(n: int | None, seed: int, out: str) -> None:
    """Generate tasks with their input and ground-truth models."""
    from buildbench.suites.bimedit.taskgen import generate_tasks

    if n is not None and n < 1:
        _fail(f"--n must be a positive number of tasks, got {n}")
    try:
        tasks = generate_tasks(n, seed, out)
    except (BuildbenchError, ValueError, RuntimeError, OSError) as exc:
        _fail(f"generation failed: {exc}")
    click.echo(f"wrote {len(tasks)} tasks to {Path(out) / 'tasks.jsonl'}")


@cli.command()
@click.option("--task", "task_path", type=click.Path(), required=True, help="task JSON (or JSONL with one task)")
@click.option("--pred", "pred", type=click.Path(), required=True, help="the edited IFC model to score")
@click.option("--json", "as_json", is_flag=True, help="print the full result as JSON")
@click.option("--strict", is_flag=True, help="also penalise collateral damage (ours, not the paper's)")
def score(task_path: str, pred: str, as_json: bool, strict: bool) -> None:
    """Score an edited model against a task's ground truth."""
    from buildbench.suites.bimedit.score import score_edit
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
