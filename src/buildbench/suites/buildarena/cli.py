"""``buildbench buildarena …``: replay library calls, simulate, draw or export a machine, judge a game log.

MACHINE.json may be a history JSON (a list of ``{"op", "params", "result"}``,
as ``export.history_json`` writes), a machine document
(``Machine.to_json``), or an episode outcome of a run (``env.outcome``). A
history is replayed with the library profile ``--profile`` names (an outcome
records its own).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

from buildbench.inputs import read_bytes
from buildbench.limits import limit

from .calibration_cli import calibrate, sensitivity
from .machine_files import load_machine, task_spec

PROFILE_OPTION = click.option(
    "--profile", type=click.Choice(["default", "released"]), default="default", show_default=True,
    help="Library profile that replays a history list (default: ours; released: the original's behaviour).")
#: ``render.VIEWS`` and ``render.DEFAULT_VIEWS``, spelled out so that the help needs no renderer import.
TASK_HELP = ("Task id: transport-1 … lift-3, or a variant id such as support-2_gap12_load2000_bank10_rise0 "
             "(`buildbench tasks buildarena --split variants` lists some).")
VIEW_NAMES = ("iso", "top", "bottom", "south", "east", "north", "west")
DEFAULT_VIEWS = "iso,top,south,east"


@click.group(name="buildarena")
def cli() -> None:
    """BuildArena: Besiege-style block machines built with the geometry library and simulated with MuJoCo."""


@cli.command()
@click.argument("calls", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--profile", type=click.Choice(["default", "released"]), default="default", show_default=True,
              help="default: our library with its fixes; released: the original library's behaviour.")
def replay(calls: Path, profile: str) -> None:
    """Replay each line of CALLS.jsonl (a list of {"op", "params"}) on a fresh machine.

    Prints one JSON line per non-empty input line: every call's returned text and the final blocks'
    ids, types, positions and rotations (real frame). "-" reads standard input; a .gz file is read
    compressed. Lines recorded by the differential tool ({"seed", "calls": [...with "result"]})
    also get an "agreement" count, and the totals are printed on standard error at the end.
    A line that cannot be replayed (bad JSON, not a list of calls) still gets its output line,
    holding "error", plus one "error: CALLS line N: ..." line on standard error; the other
    lines are replayed, and the command then exits with status 2. An empty CALLS (no
    non-blank line) is an input error too: one line, status 2.
    """
    from .library import replay_line

    lines = _read_lines(calls)
    if not any(line.strip() for line in lines):
        # Nothing to replay is an input error, not a replay of zero lists that "succeeded".
        click.echo(f"error: {calls}: no call lists (the file is empty)", err=True)
        raise click.exceptions.Exit(2)
    totals = {"calls": 0, "normalized": 0, "exact": 0}
    n_bad = 0
    for number, line in enumerate(lines, 1):
        if line.strip():
            out = replay_line(line, profile=profile)
            click.echo(out)
            result = json.loads(out)
            if result.get("error"):
                click.echo(f"error: {calls} line {number}: {result['error']}", err=True)
                n_bad += 1
            agreement = result.get("agreement") or {}
            for key in totals:
                totals[key] += int(agreement.get(key, 0))
    if totals["calls"]:
        n = totals["calls"]
        click.echo(f"agreement ({profile}): {totals['normalized']}/{n} normalized "
                   f"({totals['normalized'] / n:.2%}), {totals['exact']}/{n} exact ({totals['exact'] / n:.2%})",
                   err=True)
    if n_bad:
        raise click.exceptions.Exit(2)


def _read_lines(calls: Path) -> list[str]:
    if str(calls) == "-":
        cap = limit("json_file_bytes")  # the same cap as a file: a pipe is no less endless
        data = sys.stdin.buffer.read(cap + 1)
        if len(data) > cap:
            raise click.ClickException(f"standard input is over the {cap}-byte limit (BUILDBENCH_LIMIT_JSON_FILE_BYTES)")
        return data.decode("utf-8").splitlines()
    try:
        return read_bytes(calls, limit_name="json_file_bytes", gunzip=calls.suffix == ".gz").decode("utf-8").splitlines()
    except (OSError, EOFError) as exc:
        raise click.ClickException(f"cannot read {calls}: {getattr(exc, 'strerror', None) or exc}") from None
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"cannot read {calls}: not UTF-8 text (byte {exc.start})") from None


def _finite(_ctx: click.Context, _param: click.Parameter, value: float | None) -> float | None:
    # click's FloatRange lets nan through (every comparison with nan is false).
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


@cli.command()
@click.argument("machine", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--task", "task_id", required=True, help=TASK_HELP)
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed (chooses tracked blocks of Lift Lv.2/3).")
@click.option("--duration", type=click.FloatRange(min=0.04), callback=_finite,
              help="Simulate only the first this many seconds; a longer time is cut to the task's "
                   "duration (default: the task's full duration).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@PROFILE_OPTION
@click.option("--physics", "physics", default=None, metavar="NAME|FILE",
              help="Physics profile: a shipped name (default besiege-1) or a profile .toml file.")
def simulate(machine: Path, task_id: str, seed: int, duration: float | None, as_json: bool, profile: str,
             physics: str | None) -> None:
    """Simulate MACHINE.json on a task and report pass, indicator and a trajectory summary.

    MACHINE is a history (a list of calls, the original's _full.json, or 2.0's {"operation_history"}),
    a machine document or an episode outcome; a call that fails on replay, or a document field that
    is not what a machine holds, is one error line naming it. A Besiege .bsg is refused in one line
    too: it records where blocks are, not which face joins which (give its build history).

    Exit status 0 when the task is passed, 1 when it is not (a failing verdict, or a run that diverged
    under every step tried: status "diverged"), 2 for bad input.
    """
    from .check import simulate as run
    from .physics.config import config_for
    from .physics.profile import ProfileError

    task_spec(task_id)
    try:
        config = config_for(physics)
    except ProfileError as exc:
        raise click.BadParameter(str(exc), param_hint="'--physics'") from None
    built = load_machine(machine, profile)
    try:
        result = run(built, task_id, seed=seed, duration_s=duration, config=config)
    except ValueError as exc:
        raise click.ClickException(f"{machine}: {exc}") from None
    summary = result.trajectory.summary()
    report = {
        "task": task_id,
        "passed": result.passed,
        "indicator": result.indicator,
        "reason": result.reason,
        "status": result.status,
        "physics": config.stamp(),
        "parts": built.num_blocks,
        "metrics": result.metrics,
        "broken": result.broken,
        "trajectory": summary,
    }
    if as_json:
        click.echo(json.dumps(report, default=str))
        sys.exit(0 if result.passed else 1)
    verdict = "PASS" if result.passed else ("DIVERGED" if result.status != "ok" else "FAIL")
    click.echo(f"task {task_id}: {verdict} — {result.reason}")
    click.echo(f"indicator: {result.indicator:.4f}   parts: {built.num_blocks}")
    click.echo(f"physics: {config.profile_name} (sha256 {config.sha256[:16]}…), step {result.metrics['timestep_s']:g} s"
               + (f" after {result.metrics['retries']} diverged attempt(s)" if result.metrics["retries"] else ""))
    click.echo(f"trajectory: {summary['samples']} samples over {summary['duration_s']:.2f} s")
    for block_id, end in summary["end"].items():
        click.echo(f"  {block_id}: start {summary['start'][block_id]} → end {end}")
    for line in result.broken:
        click.echo(f"  broke: {line}")
    if not result.passed:
        sys.exit(1)


@cli.command("analyze")
@click.argument("log", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--machine", "machine_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The machine that was run (history JSON, machine document or episode outcome).")
@click.option("--task", "task_id", required=True, help=TASK_HELP)
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed (chooses tracked blocks of Lift Lv.2/3).")
@PROFILE_OPTION
def analyze(log: Path, machine_path: Path, task_id: str, seed: int, profile: str) -> None:
    """Judge a trajectory LOG from Besiege: the exported .bsg's Lua log ("t, ID_k, x, y, z" lines)
    or BuildArena 2.0's Block Tracker CSV, told apart by the first line as `calibrate` does.

    Prints one JSON object: pass, indicator, reason and the metrics (trajectory metrics included),
    computed by the same rules as our simulations. Exit 1 when the task is not passed.
    """
    from .check import judge
    from .trajectories import RecordingError, read_recording

    task = task_spec(task_id)
    machine = load_machine(machine_path, profile)
    try:
        recording = read_recording(log, {b.id: b.type for b in machine.blocks.values()})
    except RecordingError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        verdict = judge(task, machine, recording.trajectory, seed=seed)
    except (KeyError, ValueError) as exc:
        raise click.ClickException(f"{log}: {exc}") from None
    click.echo(json.dumps({"task": task_id, "passed": verdict.passed, "indicator": verdict.indicator,
                           "reason": verdict.reason, "metrics": verdict.metrics}, default=str))
    if not verdict.passed:
        sys.exit(1)


@cli.command("render")
@click.argument("machine", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="PNG to write (default: MACHINE with the suffix .png).")
@click.option("--views", "views_text", default=DEFAULT_VIEWS, show_default=True,
              help=f"Comma-separated views: {', '.join(VIEW_NAMES)}.")
@click.option("--size", "px", default=384, show_default=True, type=click.IntRange(64, 2048),
              help="Side of each view in pixels.")
@click.option("--colors", type=click.Choice(["type", "block"]), default="type", show_default=True,
              help="type: one colour per block type, with a legend; block: one colour per block.")
@click.option("--labels/--no-labels", default=False, show_default=True, help="Write block ids on the blocks.")
@PROFILE_OPTION
def render(machine: Path, out: Path | None, views_text: str, px: int, colors: str, labels: bool,
           profile: str) -> None:
    """Draw MACHINE.json as a PNG: every block as its body, seen from several sides (machine_preview)."""
    from buildbench.render import RenderUnavailableError, save_png

    from .render import RenderRequestError, parse_views, render_machine

    target = out or machine.with_suffix(".png")
    try:
        views = parse_views(views_text)
        built = load_machine(machine, profile)
        image = render_machine(built, views=views, px=px, colors="block" if colors == "block" else "type",
                               labels=labels)
    except RenderRequestError as exc:
        raise click.ClickException(f"{machine}: {exc}") from None
    except RenderUnavailableError as exc:
        raise click.ClickException(f"cannot draw here: {exc}") from None
    try:
        save_png(image, target)
    except OSError as exc:
        raise click.ClickException(f"cannot write {target}: {exc.strerror or exc}") from None
    click.echo(f"wrote {target} ({image.shape[1]}x{image.shape[0]} px, {built.num_blocks} blocks)")


@cli.command("levels")
@click.argument("levels_file", type=click.Path(dir_okay=False, path_type=Path))
def levels(levels_file: Path) -> None:
    """Check a released levels.yaml as `-o levels=FILE` will, and print its task texts as JSON by task id."""
    from .tasks import load_levels

    try:
        texts = load_levels(levels_file)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(texts, indent=2, ensure_ascii=False))


@cli.command("export-bsg")
@click.argument("machine", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write here instead of stdout.")
@click.option("--name", default=None, help="Machine name in the file (default: the file's stem).")
@PROFILE_OPTION
def export_bsg(machine: Path, out: Path | None, name: str | None, profile: str) -> None:
    """Write MACHINE.json as a Besiege .bsg machine file (for users who own the game)."""
    from .export import to_bsg

    text = to_bsg(load_machine(machine, profile), name=name or machine.stem)
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}")


cli.add_command(sensitivity)
cli.add_command(calibrate)

if __name__ == "__main__":
    cli()
