"""``buildbench scenes …``: tools on indoor scene files of any supported format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click


@click.group("scenes")
def scenes() -> None:
    """Indoor scenes (THOR houses, SceneReVis rooms and other generators' formats): export their
    placed meshes, convert between formats, score a generator's outputs with LEGO-Eval and SceneReVis."""


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
    """Write each scene of ROOMS (JSON or JSONL files, also gzip-compressed: SceneReVis rooms,
    ReSpace records, THOR houses) as meshes in world coordinates:
    OUT/<NNNN>_<scene id>/<index>_<object id>.<fmt>, one folder per scene in input order, one file per object (its index in the scene's object list),
    plus room_floor / room_walls and OUT/manifest.json (each object's mesh source).

    Exit status: 0 when every scene was written, 2 when an input or asset was bad."""
    from buildbench.scenes.assets import AssetError, AssetLibrary, check_level
    from buildbench.scenes.assets.export import export_scene, safe_name, scene_documents
    from buildbench.scenes.io import scene_text

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
            texts.append((path, scene_text(path)))
        except OSError as exc:
            raise click.UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
        if not texts[-1][1].strip():
            # as scenerevis metrics: an empty input is a mistake, not a successful export of nothing
            raise click.UsageError(f"{path}: no scenes (the file is empty)")
    created = not out_dir.exists()
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
    if failed and not manifest:
        # every scene was refused (each reported): leave no folder that looks like an export
        if created:
            shutil.rmtree(out_dir, ignore_errors=True)
        ctx.exit(2)
    (out_dir / "manifest.json").write_text(json.dumps({"geometry": level, "format": fmt, "scenes": manifest},
                                                      indent=1) + "\n", encoding="utf-8")
    click.echo(f"geometry={level} format={fmt}: {len(manifest)} scenes written to {out_dir}"
               + (f", {failed} refused" if failed else ""))
    if failed:
        ctx.exit(2)


def _formats_help() -> str:
    from buildbench.scenes.formats import FORMATS

    rows = [f"{name}: {fmt.description}{'' if fmt.write else ' [read only]'}" for name, fmt in FORMATS.items()]
    return "\b\nFormats (--from / --to):\n" + "\n".join(f"  {r}" for r in rows)


class _FormatsEpilog(click.Command):
    """A command whose epilog lists the formats, read only when its help is shown (the format
    readers import NumPy, which ``buildbench --help`` should not)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.epilog = _formats_help()
        super().format_epilog(ctx, formatter)


def _read_options(asset_sizes: Path | None, metres_per_px: float) -> object:
    from buildbench.scenes.formats import ReadOptions
    from buildbench.scenes.model import MAX_COORD_M, SceneFormatError, within_bounds

    sizes: dict[str, tuple[float, float, float]] = {}
    if asset_sizes is not None:
        from buildbench.scenes.formats import parse_document

        data = parse_document(asset_sizes)
        if not isinstance(data, dict):
            raise SceneFormatError(f"{asset_sizes}: expected a JSON object model id -> [sx, sy, sz]")
        for key, value in data.items():
            if not (isinstance(value, list) and len(value) == 3
                    and all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in value)):
                raise SceneFormatError(f"{asset_sizes}: {key!r}: expected [sx, sy, sz], three positive numbers")
            if not all(within_bounds(v) for v in value):  # the bound every scene's sizes meet
                raise SceneFormatError(f"{asset_sizes}: {key!r}: a size of {max(value):g} m exceeds "
                                       f"{MAX_COORD_M:g} m")
            sizes[str(key)] = (float(value[0]), float(value[1]), float(value[2]))
    return ReadOptions(asset_sizes=sizes, metres_per_px=metres_per_px)


_FORMAT_NAMES = ["thor", "holodeck", "procthor", "scenerevis-flat", "scenerevis-grouped", "respace", "sceneeval",
                 "layoutgpt", "idesign", "layoutvlm", "3dfront"]
ASSET_SIZES_HELP = "JSON object model id -> [sx, sy, sz] metres (SceneEval and LayoutVLM files name assets, not sizes)."
PX_HELP = "LayoutGPT's pixel size in metres (its files normalise rooms; 3D-FRONT's true size is not in them)."


def _metres_per_px(ctx: click.Context, param: click.Parameter, value: float) -> float:
    # FloatRange lets NaN through (every comparison with it is false), and inf or a denormal
    # would turn every box into garbage; a pixel between a micrometre and 100 m is plausible
    if not 1e-6 <= value <= 100.0:
        raise click.BadParameter(f"{value}: expected a pixel size in metres between 1e-06 and 100", ctx, param)
    return value


@scenes.command("convert", cls=_FormatsEpilog)
@click.argument("source", metavar="IN", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--from", "src_fmt", required=True, type=click.Choice(_FORMAT_NAMES), help="Format of IN.")
@click.option("--to", "dst_fmt", required=True, type=click.Choice(_FORMAT_NAMES), help="Format to write.")
@click.option("--out", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="File to write (a new file; an existing one is refused).")
@click.option("--asset-sizes", type=click.Path(path_type=Path, dir_okay=False), default=None, help=ASSET_SIZES_HELP)
@click.option("--metres-per-px", type=float, callback=_metres_per_px, default=0.01, show_default=True,
              help=PX_HELP)
def convert(source: Path, src_fmt: str, dst_fmt: str, out: Path, asset_sizes: Path | None,
            metres_per_px: float) -> None:
    """Convert the scenes of IN (also gzip-compressed: .json.gz, .jsonl.gz) from one format to
    another: every scene the file holds, into one OUT document (a list where the target format
    stores several so). What a format cannot carry is lost (scenes/README.md lists it per format); what is changed on the way (an object
    tilted out of upright, written upright in a heading-only format) and what a reader could
    not place is a `warning:` line naming the file and scene. Exit status 2 on a bad input, with
    one `error:` line naming the file and the element, and no OUT written."""
    from buildbench.scenes.formats import ReadOptions, get_format, read_items, write_items
    from buildbench.scenes.model import SceneFormatError

    if get_format(dst_fmt).write is None:
        raise click.ClickException(f"--to {dst_fmt}: format is read only ({get_format(dst_fmt).losses})")
    if out.exists():
        raise click.ClickException(f"--out {out}: exists (choose a new file)")
    try:
        options = _read_options(asset_sizes, metres_per_px)
        assert isinstance(options, ReadOptions)
        items = read_items(source, src_fmt, options)
        write_items(items, out, dst_fmt, source)
    except SceneFormatError as exc:
        raise click.ClickException(str(exc.args[0]).splitlines()[0]) from None
    click.echo(f"{out}: {len(items)} scene(s) from {src_fmt} to {dst_fmt}")


@scenes.command("evaluate")
@click.argument("folders", metavar="GENERATOR_OUTPUTS...", nargs=-1, required=True,
                type=click.Path(path_type=Path, file_okay=False))
@click.option("--format", "fmt", required=True, type=click.Choice(_FORMAT_NAMES),
              help="Format of the generator's scene files.")
@click.option("--run-dir", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="New (or empty) folder: RUN_DIR/<suite> becomes one run per suite.")
@click.option("--suite", "suites", default="legoeval,scenerevis", show_default=True,
              help="Comma-separated suites to score with.")
@click.option("--name", default=None, help="The generator's row name (default: its folder's name; one folder only).")
@click.option("--evaluator", default="deterministic", show_default=True,
              help="LEGO-Eval agent that judges the scenes (deterministic: geometry, offline; llm, vlm-judge, "
                   "tool-agent, translate need --model).")
@click.option("--model", default=None, help="Model spec for a model-backed --evaluator (openai:gpt-4.1, ...).")
@click.option("--judge", default="rule", show_default=True,
              help="SceneReVis's evaluation judge: rule (offline; labelled not comparable with the paper) or a "
                   "model spec (a vision model scoring each scene's render, as the paper's GPT-5).")
@click.option("--identify", is_flag=True,
              help="Also judge on the constraints the llm evaluator identifies from each prompt (RUN_DIR/"
                   "legoeval-identify; Table 4 with `buildbench legoeval report RUN_DIR/legoeval "
                   "RUN_DIR/legoeval-identify`).")
@click.option("--asset-sizes", type=click.Path(path_type=Path, dir_okay=False), default=None, help=ASSET_SIZES_HELP)
@click.option("--metres-per-px", type=float, callback=_metres_per_px, default=0.01, show_default=True,
              help=PX_HELP)
def evaluate_cmd(folders: tuple[Path, ...], fmt: str, run_dir: Path, suites: str, name: str | None,
                 evaluator: str, model: str | None, judge: str, identify: bool, asset_sizes: Path | None,
                 metres_per_px: float) -> None:
    """Score the scenes one generator wrote (a folder per generator, each a row) with LEGO-Eval
    (Table 3 success rates) and SceneReVis (OBR, CNR, voxel loss, judge scores), beside the
    papers' rows: `buildbench report RUN_DIR/legoeval` and `buildbench report
    RUN_DIR/scenerevis` show them. A folder holds the generator's scene files in --format
    (.json/.jsonl, also gzip-compressed), plus an optional prompts.jsonl ({"scene": FILE_OR_NAME, "instruction": ..., "room": ...,
    "constraints": [...]} a line) where the files do not carry their prompts (scenes/README.md).

    Offline, LEGO-Eval's deterministic evaluator and SceneReVis's rule judge score (their
    judge columns are labelled not comparable with the papers'). A bad input is one `error:`
    line naming the file and line, exit status 2, and no run folder is left."""
    from buildbench.scenes.evaluate import evaluate
    from buildbench.scenes.formats import ReadOptions
    from buildbench.scenes.model import SceneFormatError
    from buildbench.suites.legoeval.suite import suite as legoeval_suite

    if evaluator not in legoeval_suite.agents:
        raise click.UsageError(f"--evaluator {evaluator!r}: not a LEGO-Eval agent (known: "
                               f"{', '.join(legoeval_suite.agents)})")
    if legoeval_suite.agents[evaluator].needs_model and not model:
        raise click.UsageError(f"--evaluator {evaluator} needs --model")
    try:
        options = _read_options(asset_sizes, metres_per_px)
        assert isinstance(options, ReadOptions)
        runs = evaluate(list(folders), fmt, run_dir, suites=[s.strip() for s in suites.split(",") if s.strip()],
                        name=name, evaluator=evaluator, model=model, options=options, identify=identify,
                        judge=judge.strip() or "rule")
    except SceneFormatError as exc:
        raise click.ClickException(str(exc.args[0]).splitlines()[0]) from None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    for suite, path in runs.items():
        click.echo(f"{suite}: {path} (buildbench report {path})")
