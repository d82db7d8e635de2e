"""``buildbench scenerevis metrics SCENES.jsonl [--geometry LEVEL] [--json]``: OBR, CNR and the
rest per scene, the objects shaped at the geometry level (box, procedural, mesh; printed in
the table's summary line, and ``geometry`` in every JSON scene and the summary).

Each line of the file is one scene: a bare SceneReVis scene (flat or grouped) or a record
holding it under ``"scene"`` (the shared ReSpace file); a record may carry ``latency_s``.
A file that is one pretty-printed JSON document is read whole (a scene or a list of them),
and a THOR house gives one scene per room (:func:`buildbench.scenes.io.revis_records`).
A line that cannot be read or checked is reported on stderr as
``error: FILE line N: what`` and left out; the other lines are still measured and printed,
and the command then exits with status 2. An unreadable or empty file exits 2 at once.
Nothing goes to stdout until the whole file has been read, and no table at all when no
scene could be measured.
"""

from __future__ import annotations

import functools
import json
import math
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import click

from buildbench.jsonio import parse_json
from buildbench.scenes import scene_warnings
from buildbench.scenes.io import revis_records, scene_lines, scene_text
from buildbench.scenes.model import SceneFormatError

from .physics import RULES

#: Files with at least this many scenes are measured by a process per core (up to
#: MAX_WORKERS): mesh levels cost tens of milliseconds a room, and scenes are independent.
PARALLEL_FROM = 64
MAX_WORKERS = 4


@click.command("metrics")
@click.argument("scenes_path", metavar="SCENES.jsonl", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print per-scene and aggregate metrics as JSON.")
@click.option(
    "--rules",
    type=click.Choice(["evaluation", "reward"]),
    default="evaluation",
    show_default=True,
    help="evaluation: depth > 1 cm (the paper's metric); reward: any penetration.",
)
@click.option(
    "--voxels/--no-voxels", default=True, show_default=True, help="Also compute the 0.05 m voxel loss."
)
@click.option(
    "--navigation/--no-navigation", default=True, show_default=True,
    help="Also measure navigability: free floor in the largest free area, share of floor furniture reachable.",
)
@click.option(
    "--geometry",
    default="box",
    show_default=True,
    metavar="box|procedural|mesh",
    help="Shape of the objects: box (exact box tests), procedural (our part-based furniture) or mesh "
    "(the real assets under BUILDBENCH_3DFUTURE_DIR / BUILDBENCH_OBJAVERSE_DIR), checked as the "
    "released evaluation checks meshes; an object without a usable asset mesh is its procedural stand-in, "
    "counted under the table (mesh_fallbacks in --json).",
)
@click.pass_context
def metrics(ctx: click.Context, scenes_path: Path, as_json: bool, rules: str, voxels: bool, geometry: str,
            navigation: bool) -> None:
    """Physics metrics (OBR, CNR, voxel loss…) of every scene in SCENES.jsonl.

    Exit status: 0 when every line was measured, 2 when some line or the file was bad.
    """
    from buildbench.scenes.assets import AssetError, AssetLibrary, check_level

    from ..metrics import aggregate

    try:
        level = check_level(geometry)
        if level == "mesh" and not AssetLibrary.from_env().configured:
            raise AssetError("geometry=mesh needs an asset folder (BUILDBENCH_3DFUTURE_DIR or "
                             "BUILDBENCH_OBJAVERSE_DIR); use --geometry procedural without one")
    except AssetError as exc:
        click.echo(f"error: --geometry: {exc}", err=True)
        ctx.exit(2)
    try:
        text = scene_text(scenes_path)  # a .jsonl.gz as its content
    except OSError as exc:
        click.echo(f"error: {scenes_path}: cannot read: {exc.strerror or exc}", err=True)
        ctx.exit(2)
    rows: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    records = list(_records(text, scenes_path))
    if not records:
        click.echo(f"error: {scenes_path}: no scenes (the file is empty)", err=True)
        ctx.exit(2)
    measure = functools.partial(_measure, rules=rules, voxels=voxels, level=level, navigation=navigation)
    for number, (row, message) in zip((n for n, _ in records), _mapped(measure, records), strict=True):
        if row is None:
            errors.append({"line": number, "error": message})
            click.echo(f"error: {scenes_path} line {number}: {message}", err=True)
        else:
            rows.append(row)
    summary = {"rules": rules, **aggregate(rows), "geometry": level}
    if as_json:
        click.echo(json.dumps({"scenes": rows, **summary, "errors": errors}, indent=1))
    elif rows:
        _print_table(rows, summary)
    if errors:
        ctx.exit(2)


def _records(text: str, path: Path) -> Iterator[tuple[int, Any]]:
    """``(line, scene record)`` of each scene in file ``path``, or ``(line, error)`` for a
    document that could not be parsed or converted."""
    for number, line in scene_lines(text):
        try:
            with scene_warnings.named(scene_warnings.in_document(str(path), number, line)):
                records = revis_records(parse_json(line, unique_keys=True))
        except (json.JSONDecodeError, SceneFormatError, ValueError) as exc:
            yield number, exc
            continue
        for record in records:
            yield number, record


def _latency(record: dict[str, Any]) -> float | None:
    value = record.get("latency_s")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise SceneFormatError(f"latency_s: expected a non-negative number of seconds, got {value!r}")
    return float(value)


def _print_table(rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    click.echo(f"{'line':>5} {'objects':>7} {'colliding':>18} {'out of bounds':>18} {'voxel loss m3':>13}")
    for r in rows:
        loss = f"{r['voxel_loss_m3']:.3f}" if "voxel_loss_m3" in r else "-"
        click.echo(
            f"{r['line']:>5} {r['n_objects']:>7} {_ids(r['colliding']):>18} "
            f"{_ids(r['out_of_bounds']):>18} {loss:>13}"
        )
    click.echo(f"scenes {summary['n_scenes']} ({summary['rules']} rules, {summary['geometry']} geometry)")
    stand_ins = [(r["line"], f) for r in rows for f in r.get("mesh_fallbacks", ())]
    if stand_ins:
        line, first = stand_ins[0]
        n = sum(r["n_objects"] for r in rows if "mesh_fallbacks" in r)
        click.echo(f"procedural stand-ins: {len(stand_ins)} of {n} objects had no usable asset mesh "
                   f"(line {line} object {first['object']}: {first['source']})")
    for key in (
        "OBR",
        "CNR",
        "Phy",
        "collision_free_rate",
        "valid_placement_rate",
        "VBL",
        "voxel_valid_rate",
        "unsupported_rate",
        "free_connected_rate",
        "reachable_rate",
        "latency_s",
    ):
        if key in summary:
            click.echo(f"{key:>22}: {summary[key]:.2f}")


def _ids(values: list[int]) -> str:
    text = ",".join(map(str, values)) or "-"
    return text if len(text) <= 18 else text[:15] + "..."


def _measure(item: tuple[int, Any], *, rules: str, voxels: bool, level: Any,
             navigation: bool = True) -> tuple[dict[str, Any] | None, str]:
    """One line's metrics row, or None and the one-line reason it could not be measured."""
    from ..metrics import scene_metrics

    number, record = item
    try:
        if isinstance(record, Exception):
            raise record
        if not isinstance(record, dict):
            raise SceneFormatError(f"expected a JSON object, got {type(record).__name__}")
        return {"line": number, **scene_metrics(record, rules=RULES[rules], voxels=voxels,
                                                latency_s=_latency(record), geometry=level,
                                                navigation=navigation)}, ""
    except (json.JSONDecodeError, SceneFormatError, ValueError) as exc:
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _mapped(call: Callable[[Any], Any], items: list[Any]) -> Iterable[Any]:
    """``map(call, items)`` in order, over worker processes for long files on Linux (forked,
    so each starts with what this process imported)."""
    workers = min(MAX_WORKERS, len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else 1
    if len(items) < PARALLEL_FROM or workers < 2 or not sys.platform.startswith("linux"):
        return map(call, items)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(call, items, chunksize=8))
