"""What a new user meets first: bad input anywhere on the command line gets one ``error:`` line
naming what and where, exit status 2, and never a traceback or a silently ignored flag."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MACHINE = REPO / "examples" / "files" / "machine.json"


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "buildbench", *args], capture_output=True, text=True,
                          timeout=180, cwd=cwd, env={**os.environ, "OPENAI_API_KEY": ""})


def _one_error(out: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> str:
    assert out.returncode == code, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert "Traceback" not in out.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    made = {"bin": tmp_path / "bin.json", "badline": tmp_path / "bad.jsonl", "folder": tmp_path / "folder",
            "replay": tmp_path / "replay.jsonl"}
    made["bin"].write_bytes(b"\xff\xfe\x00garbage")
    made["badline"].write_text('{"a":\n', encoding="utf-8")
    made["folder"].mkdir()
    made["replay"].write_text('{"a": 1}\n{"key": "k", "response": {}}\n', encoding="utf-8")
    return made


@pytest.mark.parametrize("command", ["run", "tasks"])
def test_negative_seed_names_the_flag(command: str) -> None:
    _one_error(_run(command, "example", "--split", "demo", "--seed", "-1"), "'--seed'", "-1")


def test_replay_file_is_checked_before_the_run(tmp_path: Path, files: dict[str, Path]) -> None:
    base = ["run", "example", "--split", "demo", "--limit", "1", "-q", "--model", "openai:gpt-4o"]
    _one_error(_run(*base, "--replay", str(tmp_path / "missing.jsonl"), "--run-dir", str(tmp_path / "a")),
               "'--replay'", "does not exist")
    _one_error(_run(*base, "--replay", str(files["bin"]), "--run-dir", str(tmp_path / "b")),
               "--replay", "not UTF-8 text")
    _one_error(_run(*base, "--replay", str(files["replay"]), "--run-dir", str(tmp_path / "c")),
               f"--replay {files['replay']}:1: not a record/replay entry")
    assert not any((tmp_path / d).exists() for d in "abc")


@pytest.mark.parametrize("flag", ["--record", "--replay"])
def test_record_and_replay_without_a_model_are_refused(tmp_path: Path, files: dict[str, Path], flag: str) -> None:
    path = files["replay"] if flag == "--replay" else tmp_path / "calls.jsonl"
    out = _run("run", "example", "--split", "demo", "--limit", "1", flag, str(path), "--run-dir", str(tmp_path / "r"))
    _one_error(out, flag, "needs --model")


@pytest.mark.parametrize(("option", "needle"), [
    ("max_steps=99999999999999999999", "too large"),
    ("delay_s=1e300", "must be <= 3600"),
])
def test_huge_option_values_are_refused(tmp_path: Path, option: str, needle: str) -> None:
    out = _run("run", "example", "--split", "demo", "--limit", "1", "-o", option, "--run-dir", str(tmp_path / "r"))
    _one_error(out, f"option {option.partition('=')[0]}=", needle)


def test_export_to_a_folder_or_a_new_path(tmp_path: Path, files: dict[str, Path]) -> None:
    run_dir = tmp_path / "run"
    ran = _run("run", "example", "--split", "demo", "--limit", "1", "--workers", "0", "-q", "--run-dir", str(run_dir))
    assert ran.returncode == 0, ran.stderr
    for fmt in ("jsonl", "parquet"):
        _one_error(_run("export", str(run_dir), "--format", fmt, "--out", str(files["folder"])),
                   f"--out {files['folder']}: is a folder")
    nested = tmp_path / "new" / "deeper" / "episodes.jsonl"
    out = _run("export", str(run_dir), "--out", str(nested))
    assert out.returncode == 0, out.stderr
    assert json.loads(nested.read_text(encoding="utf-8").splitlines()[0])["suite"] == "example"


def test_suites_json_describes_each_option() -> None:
    out = _run("suites", "--json")
    assert out.returncode == 0, out.stderr
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    assert rows["example"]["options"]["max_steps"] == ("int in [1, 1000]: submissions allowed by the refine "
                                                       "protocol (default 3)")
    assert rows["example"]["defaults"]["max_steps"] == 3 and rows["example"]["defaults"]["prompts"] is None
    assert rows["legoeval"]["options"]["image_px"].startswith("int in [32, 2048]: ")


def test_buildarena_replay_names_an_undecodable_file(files: dict[str, Path]) -> None:
    _one_error(_run("buildarena", "replay", str(files["bin"])), f"cannot read {files['bin']}: not UTF-8 text")


@pytest.mark.parametrize(("args", "needle"), [
    (["simulate", str(MACHINE), "--task", "transport-1", "--duration", "nan"], "'--duration': nan"),
    (["simulate", str(MACHINE), "--task", "lift-2", "--seed", "-1"], "'--seed': -1"),
    (["render", str(MACHINE), "--size", "0"], "'--size': 0"),
])
def test_buildarena_flags_name_themselves(args: list[str], needle: str) -> None:
    _one_error(_run("buildarena", *args), needle)


def test_legoeval_inputs(tmp_path: Path, files: dict[str, Path]) -> None:
    _one_error(_run("legoeval", "generate", "--pairs", "99999999999", "--out", str(tmp_path / "g")),
               "'--pairs'", "1<=x<=100000")
    scene = tmp_path / "lego" / "data_0" / "data_0.json"
    assert _run("legoeval", "generate", "--pairs", "1", "--out", str(tmp_path / "lego")).returncode == 0
    _one_error(_run("legoeval", "evaluate", "--scene", str(scene), "--constraints", str(files["bin"])),
               f"--constraints {files['bin']}: not UTF-8 text")
    _one_error(_run("legoeval", "evaluate", "--scene", str(scene), "--constraints", str(files["folder"])),
               "a folder, not a file")


def test_legoeval_report_refuses_another_suites_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    ran = _run("run", "example", "--split", "demo", "--limit", "1", "--workers", "0", "-q", "--run-dir", str(run_dir))
    assert ran.returncode == 0, ran.stderr
    _one_error(_run("legoeval", "report", str(run_dir)), f"{run_dir}: a run of suite 'example', not legoeval")


@pytest.mark.parametrize("args", [[], ["dreamhouse"]])
def test_a_bare_group_prints_its_help(args: list[str]) -> None:
    out = _run(*args)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.startswith(f"Usage: buildbench {' '.join(args)}".rstrip() + " [OPTIONS] COMMAND")


@pytest.mark.parametrize(("flag", "value"), [("--samples", "99999999999999999999"), ("--workers", "99999999999")])
def test_run_sizes_are_bounded(tmp_path: Path, flag: str, value: str) -> None:
    out = _run("run", "example", "--split", "demo", "--limit", "1", flag, value, "--run-dir", str(tmp_path / "r"))
    _one_error(out, f"'{flag}'", value, "is not in the range")
    assert not (tmp_path / "r").exists()


def test_resume_names_the_setting_that_changed(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    base = ["run", "example", "--split", "demo", "--limit", "1", "--workers", "0", "-q", "--run-dir", str(run_dir)]
    assert _run(*base).returncode == 0
    _one_error(_run(*base, "--resume", "--seed", "3", "-o", "max_steps=2"),
               f"cannot resume {run_dir}: the stored run has seed 0, not 3; options {{}}, not {{'max_steps': 2}}")


@pytest.mark.parametrize(("model", "needle"), [("nosuch:foo", "unknown provider 'nosuch'"),
                                               ("openai:gpt-4o", "no API key")])
def test_a_bad_model_leaves_no_run_behind(tmp_path: Path, model: str, needle: str) -> None:
    # Otherwise fixing the key and running the same command again asks for --resume.
    run_dir = tmp_path / "run"
    _one_error(_run("run", "example", "--split", "demo", "--limit", "1", "--model", model, "--run-dir", str(run_dir)),
               needle)
    assert not run_dir.exists()


def test_report_of_an_empty_store_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run.sqlite").write_bytes(b"")
    _one_error(_run("report", str(tmp_path)), f"{tmp_path} holds no run")


@pytest.mark.parametrize("value", ["abc", "0", "-5"])
def test_a_malformed_limit_override_is_refused_before_the_run(tmp_path: Path, value: str) -> None:
    # Read only where it bounds something (each model request), it failed every episode as an
    # unscored error and the run exited 1.
    run_dir = tmp_path / "run"
    out = subprocess.run([sys.executable, "-m", "buildbench", "run", "example", "--split", "demo", "--limit", "1",
                          "--model", "vllm:x@http://127.0.0.1:9/v1", "--run-dir", str(run_dir)],
                         capture_output=True, text=True, timeout=180,
                         env={**os.environ, "BUILDBENCH_LIMIT_MODEL_REQUEST_BYTES": value})
    _one_error(out, f"BUILDBENCH_LIMIT_MODEL_REQUEST_BYTES={value!r}")
    assert not run_dir.exists()


def test_a_limit_override_naming_no_limit_is_refused() -> None:
    # A typo left the limit the user meant to raise where it was, silently.
    out = subprocess.run([sys.executable, "-m", "buildbench", "run", "example", "--split", "demo", "--limit", "1"],
                         capture_output=True, text=True, timeout=180,
                         env={**os.environ, "BUILDBENCH_LIMIT_HOUSE_MEMBRS": "50000"})
    _one_error(out, "BUILDBENCH_LIMIT_HOUSE_MEMBRS names no limit")
    assert "BUILDBENCH_LIMIT_HOUSE_MEMBERS" in out.stderr

