"""``buildbench scenerevis``: the environment's pieces from the command line, plus the
physics metrics and the data pipeline.

* ``apply SCENE REPLY``: apply one model reply to a scene as the env does (exit 1 when the
  env would refuse the reply; the scene is then unchanged);
* ``render SCENE --out PNG``: the merged top + diagonal observation image;
* ``retrieve DESCRIPTION --size W H D``: the 3D-FUTURE assets retrieval would pick;
* ``metrics`` (physics), ``reverse`` / ``export`` / ``rooms`` / ``goals`` (data).

Bad input (unreadable file, malformed scene) prints ``error: …`` naming what and where and
exits 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from buildbench.inputs import read_text
from buildbench.jsonio import parse_json

from .check.cli import metrics
from .generate.cli import export, goals, reverse, rooms


class _InputError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)


@click.group()
def cli() -> None:
    """SceneReVis: diagnose-and-act room layout (env tools, physics metrics, data pipeline)."""


def read_scene(path: Path) -> dict[str, Any]:
    """A flat scene from a JSON file, or the first line of a JSONL file (either also
    gzip-compressed); a record holding the scene under ``"scene"`` is unwrapped, and a THOR or
    3D-FRONT house of one room is that room (a house of several is refused, naming them)."""
    from buildbench.scenes.io import is_jsonl, revis_records, scene_text
    from buildbench.scenes.model import SceneFormatError

    try:
        text = scene_text(path)
    except OSError as exc:
        raise _InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        data = parse_json(text if not is_jsonl(path) else text.splitlines()[0], unique_keys=True)
    except (json.JSONDecodeError, IndexError) as exc:
        raise _InputError(f"{path}: not a JSON scene ({exc})") from None
    if isinstance(data, dict) and isinstance(data.get("scene"), dict) and "room" not in data["scene"]:
        data = data["scene"]
    if isinstance(data, dict) and "bounds_bottom" not in data and "room_envelope" not in data:
        try:
            rooms = revis_records(data)
        except SceneFormatError as exc:
            raise _InputError(f"{path}: {exc}") from None
        if len(rooms) > 1:
            names = ", ".join(repr(r.get("room_id", "")) for r in rooms[:5] if isinstance(r, dict))
            raise _InputError(f"{path}: a house of {len(rooms)} rooms ({names}); this command takes one room "
                              "(write each as a room with `buildbench scenes convert --to scenerevis-flat`)")
        data = rooms[0] if rooms else data
    if not isinstance(data, dict):
        raise _InputError(f"{path}: expected a JSON object holding a scene")
    return data


def _state(path: Path) -> Any:
    from .actions import ReplyError, SceneState

    try:
        return SceneState.from_flat(read_scene(path), where=str(path))
    except ReplyError as exc:
        raise _InputError(str(exc)) from None


@cli.command()
@click.argument("scene", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("reply", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--address", type=click.Choice(["id", "jid"]), default="id", show_default=True,
              help="id: unique instance ids (ours); jid: the released behaviour (a jid hits every copy).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the edited scene here (JSON).")
def apply(scene: Path, reply: Path, address: str, out: Path | None) -> None:
    """Apply the <tool_calls> of REPLY (a text file) to SCENE and print what happened."""
    from .actions import Addressing, ApplyResult, ReplyError, apply_calls, parse_turn

    state = _state(scene)
    try:
        text = read_text(reply)
    except OSError as exc:
        raise _InputError(f"{reply}: cannot read ({exc.strerror or exc})") from None
    try:
        result = apply_calls(state, parse_turn(text, Addressing(address)).calls, Addressing(address))
    except ReplyError as exc:
        result = ApplyResult(state, errors=[str(exc)])
    for line in result.applied:
        click.echo(f"applied: {line}")
    for line in result.errors:
        click.echo(f"refused: {line}")
    if out is not None:
        out.write_text(json.dumps(result.state.to_flat(Addressing(address)), indent=2), encoding="utf-8")
    if result.errors:
        click.echo("the reply was not applied; the scene is unchanged")
        raise click.exceptions.Exit(1)


@cli.command()
@click.argument("scene", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="PNG to write.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Picks the diagonal view's azimuth.")
@click.option("--turn", type=click.IntRange(min=0), default=0, show_default=True,
              help="Episode turn the image is for: with --seed, picks the diagonal view's azimuth "
                   "as the env does at that turn.")
@click.option("--geometry", type=click.Choice(["box", "procedural", "mesh"]), default="box", show_default=True,
              help="How objects are drawn: boxes (as the release), procedural furniture or asset meshes.")
def render(scene: Path, out: Path, seed: int, turn: int, geometry: str) -> None:
    """Render SCENE (JSON, or the first line of a JSONL) as the merged observation image."""
    from buildbench.render import save_png
    from buildbench.scenes.views import ViewInputError

    from .render import render_merged

    flat = _state(scene).to_flat()
    try:
        image = render_merged(flat, seed=seed, turn=turn, geometry=geometry)
    except ViewInputError as exc:
        raise _InputError(f"--geometry {geometry}: {exc}") from None
    save_png(image, out)
    click.echo(f"wrote {out}")


@cli.command()
@click.argument("description")
@click.option("--size", "size", type=float, nargs=3, required=True, metavar="W H D",
              help="Requested extents, metres.")
@click.option("--top", type=click.IntRange(min=1, max=50), default=5, show_default=True,
              help="How many assets to list, best first (at most 50).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the ranked assets as a JSON list (asset_id, category, scores, size_m).")
def retrieve(description: str, size: tuple[float, float, float], top: int, as_json: bool) -> None:
    """The 3D-FUTURE assets retrieval ranks best for DESCRIPTION at SIZE."""
    from .actions import ReplyError, check_size
    from .retrieval import default_index

    try:
        wanted = check_size(list(size), "--size")
    except ReplyError as exc:
        raise _InputError(str(exc)) from None
    hits = default_index().rank(description, (wanted[0], wanted[1], wanted[2]), top)
    rows: list[dict[str, Any]] = [
        {"asset_id": r.asset.asset_id, "category": r.asset.category, "semantic": round(r.semantic, 2),
         "score": round(r.score, 2), "size_m": r.size_m, "description": r.asset.description} for r in hits]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no asset shares a word with the description")
    for r in rows:
        click.echo(f"{r['score']:7.2f}  {r['asset_id']}  [{r['category']}]  {r['description'][:90]}")


for _command in (metrics, reverse, export, rooms, goals):
    cli.add_command(_command)
