"""Data commands of ``buildbench scenerevis``: ``reverse``, ``export``, ``rooms``, ``goals``.

The suite's click group mounts these commands. Every user error (unreadable or empty
file, bad option) ends the command with one line naming what and where, exit status 2.
``reverse`` and ``goals`` read a batch of scenes: a malformed line or scene is reported as
one ``error:`` line on stderr and left out, the rest is processed, and the command then
exits with status 2 (0 when every scene was read).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import click

from buildbench.cliargs import GivenPath
from buildbench.parallel import Backend, backend_options

from .flat import Scene

#: Upper bounds of the size options: far above any real use (the paper draws 10 candidate
#: chains a room), low enough that a mistyped number fails at once instead of running for days.
MAX_ROOMS = 100_000
MAX_CANDIDATES = 1000
MAX_WORKERS = 1024


class _UserError(click.ClickException):
    """One-line error, exit status 2."""

    exit_code = 2


@dataclass(frozen=True)
class _Batch:
    """The scenes read from a batch file, and how many of its items were malformed (each
    already reported on stderr)."""

    scenes: list[Scene]
    n_bad: int

    def exit_if_bad(self) -> None:
        if self.n_bad:
            raise click.exceptions.Exit(2)


def _scenes(path: Path) -> _Batch:
    from .flat import SceneRecordError, scene_items

    scenes: list[Scene] = []
    n_bad = 0
    try:
        for item in scene_items(path):
            if isinstance(item, SceneRecordError):
                click.echo(f"error: {item}", err=True)
                n_bad += 1
            else:
                scenes.append(item)
    except SceneRecordError as exc:
        raise _UserError(str(exc)) from None
    if not scenes and not n_bad:
        raise _UserError(f"{path}: no scenes (the file is empty)")
    if not scenes:
        # every item was bad and is reported: no output at all beats an empty one
        raise click.exceptions.Exit(2)
    return _Batch(scenes, n_bad)


#: What ``reverse`` writes in OUT (an input there under one of these names would be overwritten or mixed in).
_REVERSE_WRITES = ("chains.jsonl", "summary.json", "images", "hf", "verl.parquet")


@click.command()
@click.argument("scenes", type=click.Path(path_type=Path))
@click.option("--out", type=GivenPath(file_okay=False, path_type=Path, output=True, writes=_REVERSE_WRITES),
              required=True, help="Output folder.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seeds every chain draw (same seed, same chains).")
@click.option("--no-images", is_flag=True, help="Skip the per-turn renders (and the <image> tags).")
@click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=2, show_default=True,
              help=f"Processes (at most {MAX_WORKERS}).")
@click.option("--candidates", type=click.IntRange(min=1, max=MAX_CANDIDATES), default=10, show_default=True,
              help=f"Algorithm 1 chains drawn per room (at most {MAX_CANDIDATES}).")
@click.option("--keep", type=click.IntRange(min=1), default=3, show_default=True, help="Best chains kept per room.")
@click.option("--mode", type=click.Choice(["multi", "single"]), default="multi", show_default=True,
              help="Operation probabilities of Algorithm 1.")
@click.option("--no-filter", is_flag=True, help="Reverse every room, not only those passing the §3.1 filter.")
@click.option("--geometry", default="box", show_default=True, metavar="box|procedural|mesh",
              help="Object shapes of the §3.1 filter's physics: boxes, our procedural furniture, or the real "
                   "asset meshes (needs BUILDBENCH_3DFUTURE_DIR or BUILDBENCH_OBJAVERSE_DIR).")
@click.option("--descs", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="model_info_3dfuture_assets_simple_descs.json: draw distractors and replacements from it.")
@click.option("--text-model", default=None,
              help="Chat model spec (e.g. openai:gpt-4o) that rewrites instructions and reasoning; "
                   "default: our deterministic templates.")
@click.option("--hf", is_flag=True, help="Also write a Hugging Face datasets folder OUT/hf.")
@click.option("--parquet", is_flag=True, help="Also write verl RL parquet OUT/verl.parquet.")
@backend_options
def reverse(scenes: Path, out: Path, seed: int, no_images: bool, workers: int, candidates: int, keep: int,
            mode: str, no_filter: bool, geometry: str, descs: Path | None, text_model: str | None, hf: bool,
            parquet: bool, backend: Backend) -> None:
    """Reverse-engineer build trajectories (Algorithm 1) from the rooms in SCENES (JSONL: one
    scene, or a record with it under "scene", a line) into OUT/chains.jsonl (ms-swift)."""
    from .assets import pool_from_descs_file
    from .pipeline import ReverseOptions, generate_chains

    if keep > candidates:
        raise _UserError(f"--keep {keep} is more than --candidates {candidates}")
    from buildbench.scenes.assets import AssetError, AssetLibrary, check_level

    try:
        check_level(geometry)
    except AssetError as exc:
        raise _UserError(f"--geometry: {exc}") from None
    if geometry == "mesh" and not AssetLibrary.from_env().configured:
        raise _UserError("--geometry mesh needs an asset folder (BUILDBENCH_3DFUTURE_DIR or "
                         "BUILDBENCH_OBJAVERSE_DIR); use --geometry procedural without one")
    batch = _scenes(scenes)
    try:
        pool = pool_from_descs_file(descs) if descs else None
        if text_model:
            from buildbench.llm import parse_spec

            parse_spec(text_model)
    except ValueError as exc:
        raise _UserError(str(exc)) from None
    opts = ReverseOptions(seed=seed, candidates=candidates, keep=keep, mode=mode,
                          images_dir=None if no_images else out / "images", filter_sources=not no_filter, pool=pool,
                          text_model=text_model, geometry=geometry)
    t0 = time.perf_counter()
    try:
        out.mkdir(parents=True, exist_ok=True)
        stats = generate_chains(batch.scenes, out / "chains.jsonl", opts, workers, backend)
    except OSError as exc:
        raise _UserError(f"{out}: cannot write ({exc.strerror})") from None
    summary = {**stats.to_dict(), "seconds": round(time.perf_counter() - t0, 2), "seed": seed,
               "source": str(scenes), "with_images": not no_images, "geometry": geometry}
    if hf or parquet:
        summary.update(_export(out / "chains.jsonl", out, hf=hf, parquet=parquet, split="train"))
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    click.echo(f"{stats.chains} chains from {stats.scenes - stats.filtered_out}/{stats.scenes} rooms "
               f"({stats.turns} edit turns, {stats.images} images) → {out / 'chains.jsonl'}")
    batch.exit_if_bad()


def _export(chains: Path, out: Path, *, hf: bool, parquet: bool, split: str) -> dict[str, int]:
    from .export import ExportError, read_records, save_hf, write_verl_parquet

    try:
        records = list(read_records(chains))
        if not records:  # datasets fails on an empty list with a bare ValueError about its features
            raise ExportError(f"{chains}: no chains (the file holds no record)")
        done = {}
        if hf:
            done["hf_rows"] = save_hf(records, out / "hf")
        if parquet:
            done["verl_rows"] = write_verl_parquet(records, out / "verl.parquet", split)
    except ExportError as exc:
        raise _UserError(str(exc)) from None
    return done


@click.command()
@click.argument("chains", type=click.Path(path_type=Path))
@click.option("--out", type=GivenPath(file_okay=False, path_type=Path, output=True, writes=("hf", "verl.parquet")),
              required=True, help="Output folder.")
@click.option("--format", "fmt", type=click.Choice(["hf", "parquet", "all"]), default="all", show_default=True,
              help="hf: a Hugging Face datasets folder OUT/hf; parquet: verl RL rows OUT/verl.parquet; "
                   "all: both.")
@click.option("--split", default="train", show_default=True, help="Split name written into verl rows.")
def export(chains: Path, out: Path, fmt: str, split: str) -> None:
    """Export CHAINS (ms-swift JSONL from `reverse`) as a Hugging Face datasets folder (OUT/hf)
    and/or verl parquet (OUT/verl.parquet)."""
    done = _export(chains, out, hf=fmt in ("hf", "all"), parquet=fmt in ("parquet", "all"), split=split)
    click.echo(", ".join(f"{k} {v}" for k, v in done.items()) + f" → {out}")


@click.command()
@click.option("--n", "n", type=click.IntRange(min=1, max=MAX_ROOMS), default=100, show_default=True,
              help=f"Rooms to generate (at most {MAX_ROOMS}).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Room i draws from the generator seeded with (seed, i).")
@click.option("--type", "types", multiple=True, help="Room type(s) (default: all seven, in turn).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Output JSONL.")
def rooms(n: int, seed: int, types: tuple[str, ...], out: Path) -> None:
    """Generate N furnished rooms that pass the §3.1 filter, one scene a line."""
    from .rooms import ROOM_TYPES, generate_rooms

    try:
        made = generate_rooms(n, seed, tuple(types) or ROOM_TYPES)
    except ValueError as exc:
        raise _UserError(str(exc)) from None
    _write_lines(out, [json.dumps(r) for r in made])
    click.echo(f"{len(made)} rooms → {out}")


@click.command()
@click.argument("scenes", type=click.Path(path_type=Path))
@click.option("--condition", type=click.Choice(["chaotic_missing", "chaotic", "missing", "all"]), default="all",
              show_default=True,
              help="How each room is spoiled: objects moved and turned (chaotic), taken away (missing), both, "
                   "or one task set per condition (all).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seeds which objects are moved, turned or taken away.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Output JSONL.")
def goals(scenes: Path, condition: str, seed: int, out: Path) -> None:
    """Goal-oriented repair tasks from the rooms in SCENES, one task a line; rooms with fewer than
    4 objects give none, and standard error says how many and which."""
    from .goals import CONDITIONS, MIN_OBJECTS, goal_tasks, too_few_objects

    batch = _scenes(scenes)
    conds = CONDITIONS if condition == "all" else (condition,)
    tasks = [t for c in conds for t in goal_tasks(batch.scenes, c, seed)]
    _write_lines(out, [json.dumps(t) for t in tasks])
    click.echo(f"{len(tasks)} tasks ({', '.join(conds)}) → {out}")
    small = too_few_objects(batch.scenes)
    if small:  # said, not dropped in silence
        shown = ", ".join(str(i + 1) for i in small[:10]) + (" …" if len(small) > 10 else "")
        click.echo(f"{len(small)} of {len(batch.scenes)} rooms have fewer than {MIN_OBJECTS} objects and give no "
                   f"task (rooms {shown}, counting the readable rooms from 1)", err=True)
    batch.exit_if_bad()


def _write_lines(path: Path, lines: list[str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    except OSError as exc:
        raise _UserError(f"{path}: cannot write ({exc.strerror})") from None


COMMANDS = (reverse, export, rooms, goals)
