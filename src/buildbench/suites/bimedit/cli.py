"""``buildbench bimedit``: generate tasks, score an edited model, diff two models."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from buildbench.cliargs import GivenPath
from buildbench.display import terminal_safe
from buildbench.harness.errors import BuildbenchError
from buildbench.jsonio import json_ready
from buildbench.parallel import PROCESS, Backend, backend_options

if TYPE_CHECKING:
    from buildbench.suites.bimedit.check.edit import EditScore

#: Bounds of the generator's options: a count this large already takes hours, and a bigger one
#: would hang building its list of base edits before writing anything.
MAX_TASKS = 100_000
MAX_WORKERS = 1024
MAX_SEED = 2**63 - 1


def _fail(message: str) -> None:
    """Stop with one line (printed as ``error: ...`` by ``buildbench``, exit status 2)."""
    raise click.ClickException(message)


def _json_text(value: Any) -> str:
    """``value`` as strict JSON: non-finite numbers (an empty edit set's Chamfer distance) become null."""
    return json.dumps(json_ready(value), indent=2, default=str, allow_nan=False)


@click.group()
def cli() -> None:
    """BIM-Edit: IFC edit tasks scored on geometry, semantics and topology."""


#: What ``generate`` writes in its --out folder: an --ifc model under one of these names there
#: would be overwritten or copied into itself (usergen copies it to scenes/).
GENERATE_WRITES = ("scenes", "inputs", "truth", "tasks.jsonl", "tasks.jsonl.tmp", "generation-report.txt")


@cli.command()
@click.option("--n", "n", type=click.IntRange(1, MAX_TASKS), default=None,
              help="Number of tasks, at most 100000, stratified across the 18 element × operation "
                   "cells and the three phrasings (default: the paper's 324-task design; a multiple "
                   "of 324 gives that many rounds of it).")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=0, show_default=True,
              help="Generator seed, a whole number from 0.")
@click.option("--out", "out", type=GivenPath(file_okay=False, output=True, writes=GENERATE_WRITES),
              default="bimedit-tasks", show_default=True, help="Folder for scenes, ground truths and tasks.jsonl.")
@click.option("--ifc", "ifc", type=click.Path(dir_okay=False), default=None,
              help="Make the tasks on this IFC model (.ifc or .ifczip; any schema and length unit) instead of synthetic "
                   "scenes (default: synthetic scenes).")
@click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=1, show_default=True,
              help="Processes making the synthetic scenes' tasks, one scene per process at a time (at most 1024).")
@backend_options
def generate(n: int | None, seed: int, out: str, ifc: str | None, workers: int, backend: Backend) -> None:
    """Generate tasks with their input and ground-truth models.

    With --ifc, the tasks edit that model: the paper's composition laid over its elements,
    each base edit phrased three ways with checked descriptions and an oracle solution; what
    the model cannot support is listed (also in generation-report.txt beside tasks.jsonl).
    """
    from buildbench.suites.bimedit.generate.tasks import generate_tasks
    from buildbench.suites.bimedit.generate.tasks.usergen import generate_from_ifc

    if ifc is not None:
        if not Path(ifc).is_file():
            _fail(f"--ifc {ifc}: no such file")
        with ExitStack() as stack:
            tasks, report = generate_from_ifc(ifc, out, n, seed, progress=_progress(stack))
        for line in report.lines():
            click.echo(line)
        click.echo(f"wrote {len(tasks)} tasks to {Path(out) / 'tasks.jsonl'}")
        return
    try:
        with ExitStack() as stack:
            tasks = generate_tasks(n, seed, out, workers=workers, backend=backend, progress=_progress(stack))
    except (BuildbenchError, ValueError, RuntimeError, OSError) as exc:
        _fail(f"generation failed: {exc}")
    click.echo(f"wrote {len(tasks)} tasks to {Path(out) / 'tasks.jsonl'}")


def _progress(stack: ExitStack) -> Callable[[int, int], None]:
    """Tells a generator's progress on stderr, as a run's (the total is known once generation starts)."""
    from buildbench.harness.progress import Progress

    bar: Progress | None = None

    def tell(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = stack.enter_context(Progress(True, total, "bimedit generate", unit="tasks", stream=sys.stderr))
        bar.update(done)

    return tell


@cli.command()
@click.option("--task", "task_path", type=click.Path(), default=None,
              help="Task JSON, or JSONL with one task (default: none; give it with --pred).")
@click.option("--pred", "pred", type=click.Path(), default=None,
              help="The edited IFC model to score, .ifc or .ifczip (default: none; give it with --task).")
@click.option("--tasks", "tasks_path", type=click.Path(), default=None,
              help="A task file (JSONL) to re-score in batch (default: none; give it with --preds).")
@click.option("--preds", "preds", type=click.Path(), default=None,
              help="Folder of predictions, one <task id>.ifc per task (default: none; give it with --tasks).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the full result as JSON; a non-finite number (the Chamfer distance in metres "
                   "of an empty edit set) is written as null (default: off).")
@click.option("--strict", is_flag=True,
              help="Also penalise collateral damage, ours, not the paper's (default: off).")
@click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=1, show_default=True,
              help="Processes scoring a batch (--tasks/--preds), at most 1024.")
@backend_options
def score(task_path: str | None, pred: str | None, tasks_path: str | None, preds: str | None, as_json: bool,
          strict: bool, workers: int, backend: Backend) -> None:
    """Score an edited model against a task's ground truth (--task/--pred), or a folder of
    predictions against a task file (--tasks/--preds).

    One task: exit status 0 when the edit is solved (every axis at the solve threshold), 1 when
    it is not, 2 when the task or the prediction cannot be read (missing, a folder, not IFC), or
    when the prediction is past a cap or its tessellation budget or crashes the geometry kernel
    (one line naming the element).

    Batch: every task is scored; a missing or unreadable prediction, or a task whose own models
    cannot be read, prints one "error:" line and stays out of the means (never a zero). Exit
    status 0 when every task was scored, 2 when any was malformed input.
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
    for r in rows:
        if r.score is None:
            click.echo(f"error: task {terminal_safe(r.task_id)}: {r.status} prediction: {terminal_safe(r.reason)}",
                       err=True)
        elif not as_json:
            click.echo(r.line())
    if as_json:
        click.echo(_json_text({"tasks": [r.to_dict() for r in rows], "summary": info}))
    else:
        click.echo(summary_line(info))
    if info["scored"] < info["tasks"]:
        raise click.exceptions.Exit(2)


def _score_one(task_path: str, pred: str, as_json: bool, strict: bool) -> None:
    from buildbench.suites.bimedit.check.bounded import KernelCrash
    from buildbench.suites.bimedit.check.edit import score_edit
    from buildbench.suites.bimedit.rescore import prediction_problem
    from buildbench.suites.bimedit.tasks import read_tasks

    try:
        tasks = read_tasks(task_path)
    except BuildbenchError as exc:
        _fail(str(exc))
    if len(tasks) != 1:
        _fail(f"{task_path}: expected one task, found {len(tasks)}")
    task = tasks[0]
    problem = prediction_problem(Path(pred))
    if problem is not None:
        _fail(f"--pred {problem}")
    try:
        result = score_edit(task.input_ifc, task.ground_truth_ifc, pred, task.score_spec(), strict=strict)
    except (ValueError, KernelCrash) as exc:  # KernelCrash: the geometry kernel died on the prediction
        _fail(str(exc))
    if as_json:
        click.echo(_json_text({"task_id": task.task_id, **result.to_dict()}))
    else:
        _print_score(task.task_id, result)
    if not result.solved:
        raise click.exceptions.Exit(1)


def _print_score(task_id: str, result: EditScore) -> None:
    click.echo(f"{terminal_safe(task_id)}: geometry {result.geometry:.4f}  semantics {result.semantics:.4f}  "
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
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON (default: off).")
def diff(a: str, b: str, as_json: bool) -> None:
    """List the elements added, removed and modified from model A to model B (each .ifc or .ifczip)."""
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
