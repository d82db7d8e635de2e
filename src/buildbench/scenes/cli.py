"""``buildbench scenes …``: tools on indoor scene files of any supported format."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.group("scenes")
def scenes() -> None:
    """Indoor scenes (THOR houses, SceneReVis rooms): export their placed meshes."""


@scenes.command("export")
@click.argument("rooms", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="New (or empty) folder to write into.")
@click.option("--format", "fmt", type=click.Choice(["obj", "glb"]), default="obj", show_default=True,
              help="obj: geometry with per-vertex colours; glb: with textures where the source has them.")
@click.option("--geometry", type=click.Choice(["box", "procedural", "mesh"]), default="procedural",
              show_default=True, help="box: each object's box; procedural: our part-based furniture; mesh: "
              "the real assets under BUILDBENCH_3DFUTURE_DIR / BUILDBENCH_OBJAVERSE_DIR (a missing one falls "
              "back to procedural, named in manifest.json).")
@click.option("--strict-assets", is_flag=True, help="With --geometry mesh: a missing or bad asset is an error.")
@click.pass_context
def export(ctx: click.Context, rooms: tuple[Path, ...], out_dir: Path, fmt: str, geometry: str,
           strict_assets: bool) -> None:
    """Write each scene of ROOMS (JSON or JSONL files: SceneReVis rooms, ReSpace records, THOR
    houses) as meshes in world coordinates: OUT/<NNNN>_<scene id>/<index>_<object id>.<fmt>, one
    folder per scene in input order, one file per object (its index in the scene's object list),
    plus room_floor / room_walls and OUT/manifest.json (each object's mesh source).

    Exit status: 0 when every scene was written, 2 when an input or asset was bad."""
    from buildbench.inputs import read_text
    from buildbench.scenes.assets import AssetError, AssetLibrary, check_level
    from buildbench.scenes.assets.export import export_scene, safe_name, scene_documents

    level = check_level(geometry)
    library = None
    try:
        if level == "mesh":
            library = AssetLibrary.from_env(strict=strict_assets)
            if not library.configured:
                raise AssetError("--geometry mesh needs BUILDBENCH_3DFUTURE_DIR or BUILDBENCH_OBJAVERSE_DIR "
                                 "(an asset folder); use --geometry procedural without one")
    except AssetError as exc:
        raise click.UsageError(str(exc)) from None
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise click.UsageError(f"--out {out_dir}: exists and is not an empty folder (choose a new one)")
    texts = []
    for path in rooms:
        try:
            texts.append((path, read_text(path)))
        except OSError as exc:
            raise click.UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
        if not texts[-1][1].strip():
            # as scenerevis metrics: an empty input is a mistake, not a successful export of nothing
            raise click.UsageError(f"{path}: no scenes (the file is empty)")
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest: list[dict[str, object]] = []
    failed = 0
    position = 0
    for path, text in texts:
        for where, scene_id, scene in scene_documents(path, text):
            position += 1
            if isinstance(scene, Exception):
                click.echo(f"error: {str(scene).splitlines()[0]}", err=True)
                failed += 1
                continue
            folder = out_dir / f"{position - 1:04d}_{safe_name(scene_id)}"
            try:
                done = export_scene(scene, folder, fmt, level, library)  # type: ignore[arg-type]
            except AssetError as exc:
                click.echo(f"error: {where}: {exc}", err=True)
                failed += 1
                continue
            manifest.append({"folder": folder.name, "input": where, "objects": done.objects})
            note = f", {len(done.fallbacks)} procedural fallbacks" if done.fallbacks else ""
            click.echo(f"{folder}: {len(done.objects)} objects{note}")
    (out_dir / "manifest.json").write_text(json.dumps({"geometry": level, "format": fmt, "scenes": manifest},
                                                      indent=1) + "\n", encoding="utf-8")
    click.echo(f"geometry={level} format={fmt}: {len(manifest)} scenes written to {out_dir}"
               + (f", {failed} refused" if failed else ""))
    if failed:
        ctx.exit(2)
