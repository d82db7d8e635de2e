"""``buildbench dreamhouse`` commands, run as subprocesses: validate, render, generate --render, report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from buildbench.suites.dreamhouse.cli import cli
from buildbench.suites.dreamhouse.generate import generate_structure
from buildbench.suites.dreamhouse.model import Member, Structure

CLI = [sys.executable, "-m", "buildbench.suites.dreamhouse.cli"]


def _invoke(*args: str | Path) -> Result:
    """In-process run (fast); the subprocess tests cover the real entry point."""
    return CliRunner().invoke(cli, [str(a) for a in args])


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("house")
    h = generate_structure("RN_01_0001", 0)
    frame, skin = folder / "frame.json", folder / "skin.json"
    h.structure.save(frame, released=True)
    h.skin.save(skin)
    return frame, skin


def test_validate_passing_file_text_and_json(house: tuple[Path, Path]) -> None:
    frame, _ = house
    text = _run("validate", frame)
    assert text.returncode == 0, text.stderr
    assert "PASS  Load path (T1)" in text.stdout and "[SUCCESS]" in text.stdout
    js = _invoke("validate", frame, "--profile", "released", "--json")
    assert js.exit_code == 0, js.output
    doc = json.loads(js.output)
    assert doc["profile"] == "released" and doc["passed"] is True
    assert doc["released"]["all_passed"] is True and len(doc["released"]["tests"]) == 10


def test_validate_failing_file_names_members(tmp_path: Path) -> None:
    path = tmp_path / "floating.json"
    s = Structure.from_members([Member.from_aabb("Stud_01", (0, 0, 1.0), (0.038, 0.089, 3.4))])
    s.save(path)
    out = _invoke("validate", path)
    assert out.exit_code == 1
    assert "FAIL  Load path (T1)" in out.output and "Stud_01" in out.output
    assert "[VALIDATION FAILED]" in out.output


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "cannot read structure file"),
        ("{not json", "not valid JSON"),
        ('{"members": [{"name": "Stud_1", "dimensions": [1, 2]}]}', "member 0 ('Stud_1')"),
        ('{"members": 3}', '"members" list'),
    ],
)
def test_validate_bad_files_give_one_clear_line(tmp_path: Path, content: str | None, needle: str) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    out = _invoke("validate", path)
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]


def test_bad_file_from_the_command_line_is_one_line_without_traceback(tmp_path: Path) -> None:
    out = _run("validate", tmp_path / "missing.json")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot read structure file" in lines[0] and "Traceback" not in out.stderr


def test_render_writes_five_pngs_per_condition(house: tuple[Path, Path], tmp_path: Path) -> None:
    from buildbench.render import load_png

    frame, skin = house
    out = _run("render", frame, "--out", tmp_path / "f")
    assert out.returncode == 0, out.stderr
    names = sorted(p.name for p in (tmp_path / "f").iterdir())
    assert names == ["back.png", "front.png", "front_right.png", "left.png", "right.png"]
    image = load_png(tmp_path / "f" / "front.png")
    assert image.shape == (512, 512, 4) and (image[..., 3] > 0).any() and (image[..., 3] == 0).any()
    out = _run("render", frame, "--out", tmp_path / "fa", "--condition", "facade", "--skin", skin)
    assert out.returncode == 0, out.stderr
    facade = load_png(tmp_path / "fa" / "front.png")
    assert (facade[..., 3] > 0).sum() > (image[..., 3] > 0).sum()
    missing = _invoke("render", frame, "--out", tmp_path / "x", "--condition", "facade")
    assert missing.exit_code == 2 and "--skin" in missing.output


def test_generate_with_renders(tmp_path: Path) -> None:
    out = _invoke(
        "generate", "--n", "2", "--out", tmp_path / "ds", "--workers", "1", "--format", "jsonl", "--render"
    )
    assert out.exit_code == 0, out.output
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert manifest["n"] == 2
    renders = sorted(p for p in (tmp_path / "ds" / "renders").iterdir() if p.is_dir())
    assert len(renders) == 2
    for folder in renders:
        assert len(list(folder.glob("frame_*.png"))) == 5 and len(list(folder.glob("facade_*.png"))) == 5
    assert "rendered 2 structures" in out.output
    # The default renderer, recorded beside the PNGs with its pixel version.
    from buildbench.render.raster import PIXEL_VERSION

    record = json.loads((tmp_path / "ds" / "renders" / "made_by.json").read_text())
    assert record == {"renderer": "raster", "made_by": f"raster v{PIXEL_VERSION}"}


def test_report_over_stored_runs(tmp_path: Path) -> None:
    from buildbench.harness import Episode, Store

    with Store(tmp_path / "run") as store:
        store.write_manifest({"config": {"suite": "dreamhouse", "model": None}})
        store.add_episode(
            Episode(
                task_id="T0",
                sample=0,
                suite="dreamhouse",
                agent="oracle",
                protocol="planner-atomic",
                seed=0,
                outcome={"condition": "frame"},
                metrics={
                    "structural_pass": 1.0,
                    "visual_fidelity": 1.0,
                    "topological_fidelity": 1.0,
                    "joint_pass": 1.0,
                    "test_load_path": 1.0,
                },
            )  # fmt: skip
        )
    out = _invoke("report", tmp_path / "run", "--json")
    assert out.exit_code == 0, out.output
    table1 = next(iter(json.loads(out.output)["tables"].values()))
    ours = [r for r in table1 if not r["model"].endswith("*")]
    assert ours[0]["Struct F/Fa"] == "1.000/–"
    text = _run("report", tmp_path / "run")
    assert "Table 1" in text.stdout and "Claude*" in text.stdout
    # Every table fits 100 columns with its cells on one line each, whatever the terminal.
    assert max(len(line) for line in text.stdout.splitlines()) <= 100
    assert "Struct F/Fa" in text.stdout and "1.000/–" in text.stdout
    bad = _invoke("report", tmp_path / "nowhere")
    assert bad.exit_code == 2 and "not a buildbench run" in bad.output


def test_buildbench_entry_point_mounts_the_group(house: tuple[Path, Path]) -> None:
    frame, _ = house
    out = subprocess.run([sys.executable, "-m", "buildbench", "dreamhouse", "validate", str(frame)],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "[SUCCESS]" in out.stdout


def test_failing_validation_exits_1_through_the_buildbench_command(tmp_path: Path) -> None:
    """The top-level command keeps a subcommand's exit status (it used to drop ``ctx.exit(1)``)."""
    from buildbench.cli import main

    path = tmp_path / "floating.json"
    Structure.from_members([Member.from_aabb("Stud_01", (0, 0, 1.0), (0.038, 0.089, 3.4))]).save(path)
    assert main(["dreamhouse", "validate", str(path)]) == 1
