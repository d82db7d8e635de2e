"""``buildbench buildarena sensitivity`` and ``calibrate``: how verdicts depend on the physics
constants, and fitting them to trajectories recorded in Besiege (registered in ``cli``).

Heavy imports happen inside the commands, so ``buildbench --help`` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

PHYSICS_HELP = "Physics profile NAME or FILE.toml (default: the profile the runs used; else besiege-1)."


@click.command("sensitivity")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--vary", multiple=True, required=True, metavar="NAME=V1,V2",
              help="A profile constant or group and its values: factors (0.5x, 2x) or numbers (0). "
                   "Each value is one setting; repeat for more constants.")
@click.option("--physics", default=None, help=PHYSICS_HELP)
@click.option("--workers", default=2, show_default=True, type=click.IntRange(min=1, max=64),
              help="Processes that simulate.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def sensitivity(run_dirs: tuple[Path, ...], vary: tuple[str, ...], physics: str | None, workers: int,
                as_json: bool) -> None:
    """Re-simulate the final machines of RUN_DIR… under perturbed physics and report, per task,
    the verdicts that flip and the Kendall τ of the configurations' ranking against the baseline."""
    from .sensitivity import SensitivityError, format_report, sensitivity_report

    try:
        report = sensitivity_report(list(run_dirs), list(vary), physics=physics, workers=workers)
    except SensitivityError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(report, default=str) if as_json else format_report(report))


@click.command("calibrate")
@click.argument("recordings", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--machine", "machines", multiple=True, required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The machine of the recordings: a history JSON (valid or full, BuildArena 1.0 or 2.0), a machine "
                   "document or an episode outcome. Once for all recordings, or once per recording in order.")
@click.option("--task", "task_id", required=True, help="Task (scene) the recordings were made in, e.g. lift-2.")
@click.option("--free", multiple=True, default=("weld_strength,drag,wheel_torque",), show_default=True,
              metavar="NAME[=LOW:HIGH]", help="Constants or groups to fit, with optional factor bounds.")
@click.option("--physics", default=None, help="Starting profile NAME or FILE.toml (default: besiege-1).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the fitted profile here (TOML).")
@click.option("--name", "profile_name", default=None, help="Name of the fitted profile (default: <base>-calibrated).")
@click.option("--max-evals", default=40, show_default=True, type=click.IntRange(0, 1000),
              help="Simulation rounds of the refinement after the grid.")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(min=1, max=64),
              help="Processes for the grid search.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def calibrate(recordings: tuple[Path, ...], machines: tuple[Path, ...], task_id: str, free: tuple[str, ...],
              physics: str | None, out: Path | None, profile_name: str | None, max_evals: int, workers: int,
              as_json: bool) -> None:
    """Fit free physics constants to RECORDING… (Besiege Lua logs or Block Tracker CSVs) by simulation;
    print the residuals per quantity and write the fitted profile (--out)."""
    from .calibrate import CalibrationError, Pair, calibrated_profile, fit, load_pair_machine, parse_free
    from .machine_files import task_spec
    from .physics.profile import DEFAULT_PROFILE, ProfileError, load_profile
    from .trajectories import RecordingError, read_recording

    task_spec(task_id)
    if len(machines) not in (1, len(recordings)):
        raise click.BadParameter(f"give one --machine for all recordings or one per recording "
                                 f"({len(recordings)}), not {len(machines)}", param_hint="'--machine'")
    try:
        base = load_profile(physics or DEFAULT_PROFILE)
        free_constants = parse_free(free, base)
        built = {path: load_pair_machine(path) for path in dict.fromkeys(machines)}
        pairs = []
        for k, path in enumerate(recordings):
            machine = built[machines[0] if len(machines) == 1 else machines[k]]
            recording = read_recording(path, {b.id: b.type for b in machine.blocks.values()})
            pairs.append(Pair(recording, machine, task_id))
        result = fit(pairs, base, free_constants, max_evals=max_evals, workers=workers)
        name = profile_name or f"{base.name}-calibrated"
        fitted, text = calibrated_profile(result, base, [str(p) for p in recordings], name)
    except (RecordingError, CalibrationError, ProfileError) as exc:
        raise click.ClickException(str(exc)) from None
    if out is not None:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise click.ClickException(f"cannot write {out}: {exc.strerror or exc}") from None
    rows: list[dict[str, Any]] = [{"recording": str(p.recording.path), "format": p.recording.format, "samples": int(p.recording.trajectory.time.size),
             "start": s.quantities, "fit": b.quantities}
            for p, s, b in zip(pairs, result.start, result.best, strict=True)]
    fitted_values: dict[str, dict[str, Any]] = {f.name: {"factor": x, "values": {m: fitted.entries[m].value for m in base.groups.get(f.name, (f.name,))}}
                     for f, x in zip(result.free, result.factors, strict=True)}
    if as_json:
        click.echo(json.dumps({"profile": {"name": name, "sha256": fitted.sha256, "base": base.name,
                                           "written": str(out) if out else None},
                               "fitted": fitted_values, "evaluations": result.evaluations, "residuals": rows},
                              default=str))
        return
    click.echo(f"fitted {', '.join(f.name for f in result.free)} to {len(pairs)} recording(s) on {task_id} "
               f"in {result.evaluations} simulation rounds (base {base.label()})")
    for f_name, item in fitted_values.items():
        values = ", ".join(f"{m} = {v:g}" for m, v in item["values"].items())
        click.echo(f"  {f_name}: × {item['factor']:.4g}  ({values})")
    for row in rows:
        click.echo(f"{row['recording']} ({row['format']}, {row['samples']} samples): residual RMS, start → fit")
        for quantity, value in row["fit"].items():
            click.echo(f"  {quantity:<11} {row['start'][quantity]:>10.4g} → {value:.4g}")
    if out is not None:
        click.echo(f"wrote {out} (profile {name}, sha256 {fitted.sha256[:12]})")
