"""Relative paths in a run file are read against the run file's folder, flags' against the current
directory; the resolved run (``--print-config``, the run folder's ``run.yaml``, the manifest) holds
them absolute, so the same file means the same run, and a stored run resumes, from anywhere. A file
the run file names that does not exist is one ``error:`` line naming the run file, the key and the
full path looked for (exit 2, no run folder)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from buildbench.cli.main import main
from buildbench.harness import Store, get_suite, suite_names
from buildbench.harness.run_paths import resolve_value

MODEL = """
def chat(messages, tools=None, **options):
    return '{"blocks": [{"center": [0, 0, 0.5], "size": [0.5, 0.5, 1.0]}]}'
"""
REPO = Path(__file__).resolve().parents[2]


def MODEL_AT(root: Path) -> str:  # noqa: N802
    # A model spec is the key of recorded calls: kept as written, so the run file names it absolutely.
    return f"{root.resolve()}/lib/model.py:chat"


RUN_FILE = """\
suite: example
agent: llm
model: python:{model}
tasks: set/tasks.jsonl
record: out/calls.jsonl
workers: 0
options: {prompts: prompts, max_steps: 1}
"""


def _project(root: Path) -> Path:
    """A run file beside the files it names, by relative paths; returns the run file."""
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "model.py").write_text(MODEL)
    (root / "set").mkdir()
    records = [{"id": f"t{i}", "suite": "example",
                "inputs": {"target_height_m": 1.0 + i, "lot_half_width_m": 1.0, "max_blocks": 3},
                "target": {"target_height_m": 1.0 + i}} for i in range(2)]
    (root / "set" / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / "prompts").mkdir()
    (root / "prompts" / "task.md").write_text("Build {target_height_m} m high; {{json}} please.")
    (root / "lib" / "agent.py").write_text((REPO / "examples" / "example" / "agent.py").read_text())
    run_file = root / "run.yaml"
    run_file.write_text(RUN_FILE.replace("{model}", MODEL_AT(root)))
    return run_file


def _printed(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, object]:
    assert main(argv) == 0
    loaded: dict[str, object] = yaml.safe_load(capsys.readouterr().out)
    return loaded


def test_the_same_run_file_from_two_directories_is_the_same_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    run_file = _project(project)
    root = project.resolve()
    stored = []
    for name in ("a", "b/c"):
        cwd = tmp_path / name
        cwd.mkdir(parents=True)
        monkeypatch.chdir(cwd)
        given = str(Path("..", "project", "run.yaml") if name == "a" else run_file)
        printed = _printed(capsys, ["run", "--config", given, "--print-config"])
        assert (printed["tasks"], printed["record"], printed["model"]) == (
            str(root / "set" / "tasks.jsonl"), str(root / "out" / "calls.jsonl"), f"python:{MODEL_AT(root)}")
        assert printed["options"] == {"prompts": str(root / "prompts"), "max_steps": 1}
        run_dir = tmp_path / f"run-{name.replace('/', '-')}"
        assert main(["run", "--config", given, "-q", "--run-dir", str(run_dir)]) == 0
        with Store(run_dir, create=False) as store:
            stored.append((store.manifest()["config"], sorted(e.task_id for e in store.episodes())))
        assert yaml.safe_load((run_dir / "run.yaml").read_text()) == printed  # kept absolute
    assert stored[0] == stored[1] and stored[0][1] == ["t0", "t1"]
    assert (root / "out" / "calls.jsonl").is_file()  # written beside the run file, not in either cwd
    assert not (tmp_path / "a" / "out").exists() and not (tmp_path / "b" / "c" / "out").exists()
    # the stored run file resumes from a third directory: nothing left to play
    monkeypatch.chdir(tmp_path)
    run_dir = tmp_path / "run-a"
    assert main(["run", "--config", str(run_dir / "run.yaml"), "--resume", "--run-dir", str(run_dir)]) == 0
    assert "ran 0 episode(s), skipped 2" in capsys.readouterr().out


def test_an_agent_file_is_read_against_the_run_files_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = _project(tmp_path / "project")
    run_file.write_text("suite: example\nagent: lib/agent.py:make\ntasks: set/tasks.jsonl\nworkers: 0\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    agent = f"{(tmp_path / 'project').resolve()}/lib/agent.py:make"
    assert _printed(capsys, ["run", "--config", str(run_file), "--print-config"])["agent"] == agent
    assert main(["run", "--config", str(run_file), "-q", "--run-dir", "run"]) == 0
    with Store(Path("run"), create=False) as store:
        assert store.manifest()["config"]["agent"] == agent and len(list(store.episodes())) == 2


def test_flags_stay_relative_to_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = _project(tmp_path / "project")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "tasks.jsonl").write_text((tmp_path / "project" / "set" / "tasks.jsonl").read_text())
    monkeypatch.chdir(tmp_path / "mine")
    printed = _printed(capsys, ["run", "--config", str(run_file), "--tasks", "tasks.jsonl", "-o", "prompts=.",
                                "--print-config"])
    assert printed["tasks"] == str((tmp_path / "mine" / "tasks.jsonl").resolve())
    assert printed["options"] == {"prompts": str((tmp_path / "mine").resolve()), "max_steps": 1}
    assert printed["record"] == str((tmp_path / "project" / "out" / "calls.jsonl").resolve())  # the file's


@pytest.mark.parametrize(("line", "key", "missing"), [
    ("tasks: set/nothere.jsonl", "tasks", "set/nothere.jsonl"),
    ("agent: agents/mine.py:make", "agent", "agents/mine.py"),
    ("options: {prompts: no-prompts}", "options.prompts", "no-prompts"),
])
def test_a_missing_file_names_the_run_file_the_key_and_the_full_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        line: str, key: str, missing: str) -> None:
    run_file = _project(tmp_path / "project")
    field = line.split(":")[0]
    run_file.write_text("".join(old for old in RUN_FILE.splitlines(keepends=True)
                                if not old.startswith(f"{field}:")) + line + "\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    run_dir = tmp_path / "run"
    assert main(["run", "--config", str(run_file), "-q", "--run-dir", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    full = (tmp_path / "project").resolve() / missing
    assert err == [f"error: {run_file}: {key}: {full} does not exist (option --config)"]
    assert not run_dir.exists()


@pytest.mark.parametrize(("value", "rule", "expected"), [
    ("besiege-1", ".toml", "besiege-1"),  # a shipped name
    ("mine.toml", ".toml", "/base/mine.toml"),
    ("p/mine", ".toml", "/base/p/mine"),
    ("pkg.mod:make", "callable", "pkg.mod:make"),
    ("llm", "callable", "llm"),
    ("released:gen/x.py:generate", "callable", "released:/base/gen/x.py:generate"),
    ("none", "output", "none"),  # how an option is unset
    ("/abs/calls.jsonl", "output", "/abs/calls.jsonl"),
    ("rel/calls.jsonl", "", "rel/calls.jsonl"),  # not a path
    (3, "input", 3),  # left for the field's own check
])
def test_what_each_rule_takes_for_a_file(value: object, rule: str, expected: object) -> None:
    assert resolve_value(value, rule, Path("/base"))[0] == expected


@pytest.mark.parametrize("name", suite_names())
def test_every_option_that_names_a_file_says_how(name: str) -> None:
    # an option left out would be read against the cwd from a run file elsewhere (a model spec is
    # none: it is the key of recorded calls, kept as written)
    for spec in get_suite(name).option_specs():
        if spec.kind == "str" and not spec.choices and re.search(r"\bfile\b|folder|\.toml|\.yaml", spec.help):
            assert spec.path, f"{name} option {spec.name}: declare path= (run_paths)"
