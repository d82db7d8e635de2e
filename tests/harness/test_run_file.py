"""Run config files: ``--print-config`` writes the resolved run, ``--config`` runs it (flags
override it), the run folder keeps it, ``--resume`` compares against it, and each bad field is
one ``error:`` line naming the file, the field and what it accepts, before any run folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from buildbench.cli.main import main
from buildbench.harness import Store
from buildbench.harness.run_file import build_run_config, read_run_file

FLAGS = ["example", "--split", "demo", "--limit", "2", "--seed", "3", "--workers", "0", "-o", "max_steps=2",
         "-o", "history=full"]


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_print_config_then_config_gives_the_same_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    printed = _out(capsys, ["run", *FLAGS, "--print-config"])
    run_file = tmp_path / "run.yaml"
    run_file.write_text(printed)
    assert yaml.safe_load(printed)["options"] == {"max_steps": 2, "history": None}
    assert _out(capsys, ["run", "--config", str(run_file), "--print-config"]) == printed
    assert main(["run", *FLAGS, "-q", "--run-dir", str(tmp_path / "a")]) == 0
    assert main(["run", "--config", str(run_file), "-q", "--run-dir", str(tmp_path / "b")]) == 0
    stored = []
    for name in ("a", "b"):
        assert (tmp_path / name / "run.yaml").read_text() == printed  # the run folder keeps its run file
        with Store(tmp_path / name, create=False) as store:
            stored.append((store.manifest()["config"],
                           sorted((e.task_id, json.dumps(e.metrics, sort_keys=True)) for e in store.episodes())))
    assert stored[0] == stored[1]
    assert len(stored[0][1]) == 2


def test_flags_override_the_file_and_the_file_fills_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = tmp_path / "run.yaml"
    run_file.write_text("suite: example\nsplit: demo\nseed: 5\nconcurrency: 3\noptions: {max_steps: 0, delay_s: 0.5}\n")
    # the file's bad max_steps is overridden by -o, so it is never an error
    resolved = yaml.safe_load(_out(capsys, ["run", "--config", str(run_file), "--seed", "7", "-o", "max_steps=4",
                                            "--print-config"]))
    assert (resolved["seed"], resolved["concurrency"], resolved["split"]) == (7, 3, "demo")
    assert resolved["options"] == {"delay_s": 0.5, "max_steps": 4}
    assert (resolved["agent"], resolved["protocol"]) == ("reference", "refine")  # the suite's defaults


def test_resume_compares_the_stored_run_field_by_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    assert main(["run", *FLAGS, "--limit", "1", "-q", "--run-dir", str(run_dir)]) == 0
    capsys.readouterr()
    changed = tmp_path / "changed.yaml"
    changed.write_text((run_dir / "run.yaml").read_text().replace("seed: 3", "seed: 4"))
    assert main(["run", "--config", str(changed), "--resume", "-q", "--run-dir", str(run_dir)]) == 2
    assert "the stored run has seed 3, not 4" in capsys.readouterr().err
    assert main(["run", "--config", str(run_dir / "run.yaml"), "--resume", "-q", "--run-dir", str(run_dir)]) == 0


@pytest.mark.parametrize("text, message", [
    ("suite: example\nseed: -1\n", "seed: expected an integer >= 0, got -1"),
    ("suite: example\nsamples: many\n", "samples: expected an integer in [1, 1000000], got 'many'"),
    ("suite: example\nlimit: true\n", "limit: expected an integer >= 1, got True"),
    ("suite: example\nbackend: slurm\n", "backend: expected one of process, ray, got 'slurm'"),
    ("suite: example\nmodel: 3\n", "model: expected a non-empty string, got 3"),
    ("suite: nope\n", "suite: unknown suite 'nope'; known suites: "),
    ("suite: example\nagent: nobody\n", "agent: unknown agent 'nobody'; known agents: "),
    ("suite: example\nprotocol: nope\n", "protocol: unknown protocol 'nope'; known protocols: one-shot, refine"),
    ("suite: example\noptions: [1]\n", "options: expected a mapping of option names to values"),
    ("suite: example\noptions: {max_steps: 0}\n", "options.max_steps: option max_steps=0: must be >= 1"),
    ("suite: example\noptions: {bogus: 1}\n", "options.bogus: unknown option 'bogus' for suite 'example'; options: "),
    ("suite: example\nsed: 1\n", "unknown field 'sed'; fields: suite, agent, protocol"),
    ("- suite\n", "expected a mapping of run fields"),
    ("suite: [example\n", "not YAML or JSON (line 2, column 1)"),
    ("seed: 1\n", "suite: missing"),
])
def test_a_bad_run_file_is_one_line_naming_file_and_field(
        text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = tmp_path / "bad.yaml"
    run_file.write_text(text)
    run_dir = tmp_path / "run"
    assert main(["run", "--config", str(run_file), "-q", "--run-dir", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {run_file}: {message}"), err
    assert not run_dir.exists()


def test_the_python_api_builds_the_same_config_as_the_file(tmp_path: Path) -> None:
    run_file = tmp_path / "run.yaml"
    run_file.write_text("suite: example\nsplit: demo\noptions: {max_steps: '2', history: full}\n")
    from_file = build_run_config(read_run_file(run_file), where=str(run_file))
    from_kwargs = build_run_config({"suite": "example", "split": "demo", "options": {"max_steps": 2, "history": "full"}})
    assert from_file == from_kwargs
    assert from_file.options == {"max_steps": 2, "history": None}
