"""``buildbench legoeval``: run any tool on any house, list the tools, check a house against
constraints with the deterministic evaluator, generate the benchmark, print a run's tables.

Exit codes: 0 success (``evaluate``: the house is valid), 1 ``evaluate`` found a violated
constraint, 2 bad input (printed as one ``error:`` line).
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from buildbench.display import terminal_safe
from buildbench.harness.errors import ConfigError
from buildbench.inputs import read_text
from buildbench.jsonio import parse_json

if TYPE_CHECKING:
    from .options import Geometry


def _not_a_file(path: str) -> str:
    """Why ``path`` (an option's text, not a click path) names no file to read: said as such, where
    Path("") is the current folder and a link loop or a link to nothing reads as missing."""
    if not path.strip():
        return "an empty path; give a file name"
    if os.path.isdir(path):
        return "a folder, not a file"
    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "a loop of symbolic links"
        return f"a symbolic link to {terminal_safe(os.readlink(path))}, which does not exist"
    return "no such file"


def _load_scene(path: str) -> Any:
    from buildbench.scenes import scene_warnings
    from buildbench.scenes.io import load_scene, scene_text
    from buildbench.scenes.model import SceneFormatError

    p = Path(path)
    if not path.strip() or not p.exists() or p.is_dir():
        raise ConfigError(f"--scene {path}: {_not_a_file(path)}")
    try:
        text = scene_text(p)  # a house.json.gz as its content
        data = parse_json(text, unique_keys=True)  # a key given twice: which one other readers keep differs
    except OSError as exc:
        raise ConfigError(f"--scene {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--scene {path}: not JSON ({exc})") from None
    try:
        with scene_warnings.named(scene_warnings.in_document(f"--scene {path}", 1, text)):
            return load_scene(data)
    except (SceneFormatError, KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"--scene {path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None


def _parse_args(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return parse_json(text, unique_keys=True)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--args: not JSON ({exc.msg} at character {exc.pos})") from None


def _image_file(out: Path, key: str, used: set[str]) -> Path:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", key.replace("output__image", "")).strip("_") or "image"
    name, k = stem, 1
    while name in used:
        k += 1
        name = f"{stem}_{k}"
    used.add(name)
    return out / f"{name}.png"


def write_images(output: dict[str, Any], out: Path | None) -> dict[str, Any]:
    """The output with each PNG written under ``out`` and replaced by its path (or, without
    ``out``, by a note of its size)."""
    from .tools import is_image_key

    shown: dict[str, Any] = {}
    used: set[str] = set()
    for key, value in output.items():
        if not is_image_key(key):
            shown[key] = value
        elif out is None:
            shown[key] = f"<PNG, {len(value)} bytes; pass --out DIR to write it>"
        else:
            out.mkdir(parents=True, exist_ok=True)
            path = _image_file(out, key, used)
            path.write_bytes(value)
            shown[key] = str(path)
    return shown


@click.group()
def cli() -> None:
    """LEGO-Eval: tool-augmented evaluation of 3D houses against fine-grained instructions."""


@cli.command("tools")
@click.option("--json", "as_json", is_flag=True, help="Print the registry as JSON.")
def tools_cmd(as_json: bool) -> None:
    """List the 21 tools with their group, argument family and argument."""
    from .tools import MENUS, TOOLS

    rows: list[dict[str, Any]] = [{"name": s.name, "group": s.group, "family": s.family, "argument": s.param, "optional": s.optional,
             "menus": [t for t, menu in MENUS.items() if s.name in menu], "description": s.description,
             "schema": s.schema()} for s in TOOLS.values()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        arg = f"{r['argument']}=[...]" if r["argument"] else ""
        arg = f"[{arg}]" if r["optional"] else arg
        click.echo(f"{r['name']}({arg})  [{r['group']}, family {r['family']}, menus {','.join(r['menus'])}]")
        click.echo(f"    {r['description']}")


@cli.command("tool")
@click.argument("name")
@click.option("--scene", "scene_path", required=True, help="House JSON (AI2-THOR/Holodeck/ProcTHOR or SceneReVis).")
@click.option("--args", "args_json", default=None, help='Arguments as JSON: {"room_ids": [...]} or a bare list.')
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the PNG images (their paths replace them in the output).")
@click.option("--json", "as_json", is_flag=True, help="Print the output dict as JSON.")
@click.option("--wall-midpoint", is_flag=True, help="Door/window positions as the original reports them.")
@click.option("--px", type=click.IntRange(32, 2048), default=512, show_default=True, help="Side of each image, pixels.")
@click.option("--constraint", default="", help="The constraint text (read by the multimodal tools).")
@click.option("--geometry", type=click.Choice(["box", "procedural", "mesh"]), default="box", show_default=True,
              help="How images draw objects: boxes, procedural furniture or asset meshes.")
def tool_cmd(name: str, scene_path: str, args_json: str | None, out: Path | None, as_json: bool,
             wall_midpoint: bool, px: int, constraint: str, geometry: str) -> None:
    """Run tool NAME on a house and print its output."""
    from .tools import TOOLS, ToolArgumentError, ToolContext, run_tool

    if name not in TOOLS:
        raise ConfigError(f"unknown tool {name!r}; `buildbench legoeval tools` lists them")
    args = _parse_args(args_json)
    scene = _load_scene(scene_path)
    ctx = ToolContext.for_scene(scene, wall_midpoint_positions=wall_midpoint, image_px=px, constraint=constraint,
                                geometry=geometry)
    try:
        output = run_tool(ctx, name, args)
    except ToolArgumentError as exc:
        raise ConfigError(f"--args: {exc}") from None
    shown = write_images(output, out)
    if as_json:
        click.echo(json.dumps(shown, indent=2, default=str))
        return
    for key, value in shown.items():
        click.echo(f"{key}: {json.dumps(value, default=str)}")


def _read_constraints(path: str) -> tuple[str, list[dict[str, Any]]]:
    p = Path(path)
    if not path.strip() or not p.exists() or p.is_dir():
        raise ConfigError(f"--constraints {path}: {_not_a_file(path)}")
    try:
        text = read_text(p)
    except OSError as exc:
        raise ConfigError(f"--constraints {path}: {exc.strerror or exc}") from None
    if p.suffix.lower() != ".json":
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines:
            _no_constraints(path, "no line that is not blank or a # comment")
        return "", [{"id": f"c{i}", "text": ln} for i, ln in enumerate(lines)]
    try:
        data = parse_json(text, unique_keys=True)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--constraints {path}: not JSON ({exc})") from None
    items = data.get("constraints") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ConfigError(f"--constraints {path}: expected a list of constraints or {{\"constraints\": [...]}}")
    out = []
    for i, c in enumerate(items):
        if isinstance(c, str):
            out.append({"id": f"c{i}", "text": c})
        elif isinstance(c, dict) and ("text" in c or "program" in c):
            out.append({"id": str(c.get("id", f"c{i}")), **{k: c[k] for k in ("text", "program") if k in c}})
        else:
            raise ConfigError(f"--constraints {path}: item {i} is neither a sentence nor an object with text/program")
    if not out:
        _no_constraints(path, "an empty list")
    return (str(data.get("instruction", "")) if isinstance(data, dict) else ""), out


def _no_constraints(path: str, holds: str) -> None:
    """Refuse a constraints file that holds none: checking nothing would print 'not fully judged'
    and exit 0, which reads as a house that passed."""
    raise ConfigError(f"--constraints {path}: no constraints ({holds}); give one sentence per line, or a .json list")


@cli.command("evaluate")
@click.option("--scene", "scene_path", required=True, help="House JSON to check.")
@click.option("--constraints", "constraints_path", required=True,
              help="Constraints: a .json list (sentences, or {id, text|program}) or a text file, one per line.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts as JSON.")
@click.option("--geometry", type=click.Choice(["box", "procedural", "mesh"]), default="box", show_default=True,
              help="What distances, 'under' and 'overlaps' measure: the objects' boxes, our procedural "
                   "part-based furniture or the asset meshes (3D-FUTURE/Objaverse where available).")
def evaluate_cmd(scene_path: str, constraints_path: str, as_json: bool, geometry: Geometry) -> None:
    """Check a house against constraints with the deterministic evaluator (exit 1 if one fails)."""
    from buildbench.scenes.relations import measured_with

    from .check import evaluate
    from .env import check_geometry
    from .tasks import holistic

    level = check_geometry(geometry)
    scene = _load_scene(scene_path)
    instruction, constraints = _read_constraints(constraints_path)
    with measured_with(level):
        verdicts = evaluate(scene, constraints)
    valid = holistic(verdicts)
    if as_json:
        click.echo(json.dumps({"instruction": instruction, "valid": valid, "geometry": level,
                               "verdicts": [v.to_dict() for v in verdicts]}, indent=2))
    else:
        for v in verdicts:
            mark = {True: "PASS", False: "FAIL", None: "ERROR"}[v.holds]
            click.echo(f"{mark} {terminal_safe(v.id)}: {terminal_safe(v.explanation)}")
        click.echo(f"house {'valid' if valid else 'invalid' if valid is False else 'not fully judged'}"
                   f" (objects measured as {level} shapes)")
    if valid is None and any(v.holds is None for v in verdicts) and not any(v.holds is False for v in verdicts):
        bad = next(v for v in verdicts if v.holds is None)
        raise ConfigError(f"constraint {bad.id} could not be checked: {bad.explanation.removeprefix('error: ')}")
    if valid is False:
        raise click.exceptions.Exit(1)


@cli.command("generate")
@click.option("--pairs", type=click.IntRange(1, 100_000), default=130, show_default=True,
              help="Aligned scenes (each with a misaligned twin).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Generation seed.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("legoeval-bench"),
              show_default=True, help="Folder for the LEGO-Bench-layout files.")
def generate_cmd(pairs: int, seed: int, out: Path) -> None:
    """Generate instruction–scene pairs in the released LEGO-Bench layout."""
    from .legobench import write_benchmark

    written = write_benchmark(out, n_pairs=pairs, seed=seed)
    click.echo(f"wrote {written} to {out}")


def _require_legoeval_run(run_dir: Path) -> None:
    from buildbench.harness import Store

    with Store(run_dir, create=False) as store:
        suite = store.manifest().get("config", {}).get("suite")
    if suite != "legoeval":
        raise ConfigError(f"{run_dir}: a run of suite {suite!r}, not legoeval (see `buildbench report {run_dir}`)")


@cli.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the tables and their cells' 95 % intervals as JSON.")
def report_cmd(run_dirs: tuple[Path, ...], as_json: bool) -> None:
    """Print stored LEGO-Eval runs as the paper's tables beside its numbers: Table 1
    agreement, Table 3 success rates, Tables 5/7 planner and argument quality (LLM runs),
    Table 2 ablations (runs with -o disable=... next to the same run without) and Table 4
    (-o constraints=identify next to given)."""
    from buildbench.harness.errors import BuildbenchError

    from .report_runs import print_runs_report

    for run_dir in run_dirs:
        if not (run_dir / "run.sqlite").is_file():
            raise ConfigError(f"{run_dir}: not a buildbench run (no run.sqlite)")
        _require_legoeval_run(run_dir)
    try:
        print_runs_report(run_dirs, as_json=as_json)
    except BuildbenchError as exc:
        raise ConfigError(str(exc).splitlines()[0]) from None
