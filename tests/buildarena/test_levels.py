"""``-o levels=FILE``: the released levels.yaml is checked before a run starts; a bad file is one error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.harness import RunConfig, Runner, get_suite, run_report
from buildbench.harness import suite as suite_registry
from buildbench.harness.errors import ConfigError
from buildbench.harness.suite import RunChoice
from buildbench.suites.buildarena.suite import check_run
from buildbench.suites.buildarena.tasks import MAX_LEVELS_FILE_BYTES, TASKS, load_levels

LEVELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "buildarena" / "levels.yaml"
NAMES = {1: "soft", 2: "medium", 3: "hard"}


def check_options(options: dict[str, str]) -> None:
    """What the runner does with the run's options before the run: parse them, then ``check_run``."""
    suite = get_suite("buildarena")
    check_run(RunChoice("reference", "workflow", "default", suite.parse_options(options)))


def _document(task_id: str, text: str | None = None) -> str:
    spec = TASKS[task_id]
    body = text if text is not None else f"Our stand-in text for {task_id}."
    return f"level: {NAMES[spec.level]}\ncategory: {spec.category}\ntask: |\n  {body}\n"


def _nine(**replace: str) -> str:
    """A well-formed nine-task file of our own, with documents replaced by task id."""
    return "---\n".join(replace.get(t, _document(t)) for t in TASKS)


@pytest.fixture(autouse=True)
def _builtin_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "buildarena" in suite_registry.suite_names()  # registered through the package's entry points


def _run(tmp_path: Path, levels: Path) -> Path:
    run_dir = tmp_path / "run"
    config = RunConfig(suite="buildarena", agent="reference", protocol="workflow", split="lift-1", samples=1,
                       workers=0, options={"sim_duration_s": 0.2, "levels": str(levels)})
    Runner(config, run_dir).run()
    return run_dir


def test_the_released_file_passes_the_check_and_runs(tmp_path: Path) -> None:
    if not LEVELS.exists():
        pytest.skip(f"released levels.yaml not present at {LEVELS}")
    check_options({"levels": str(LEVELS)})
    texts = load_levels(LEVELS)
    assert sorted(texts) == sorted(TASKS) and all(texts.values())
    assert run_report(_run(tmp_path, LEVELS))["metrics"]["passed"] == 1.0


def test_a_file_of_our_own_with_all_nine_tasks_is_read(tmp_path: Path) -> None:
    path = tmp_path / "levels.yaml"
    path.write_text(_nine(), encoding="utf-8")
    texts = load_levels(path)
    assert texts["support-3"] == "Our stand-in text for support-3."


BROKEN = {
    "not YAML": (lambda: _nine() + "---\ntask: [unclosed\n", "not valid YAML (line"),
    "a list document": (lambda: _nine(**{"lift-2": "- just\n- a list\n"}), "document 8 is a list, not a mapping"),
    "no task text": (lambda: _nine(**{"lift-1": "level: soft\ncategory: lift\n"}), "document 7 has no task text"),
    "empty task text": (lambda: _nine(**{"lift-1": "level: soft\ncategory: lift\ntask: '  '\n"}),
                        "document 7 has no task text"),
    "unknown level": (lambda: _nine(**{"transport-2": "level: extreme\ncategory: transport\ntask: go\n"}),
                      "document 2 names an unknown task (category 'transport', level 'extreme'"),
    "unknown category": (lambda: _nine(**{"transport-2": "level: soft\ncategory: fly\ntask: go\n"}),
                         "names an unknown task (category 'fly'"),
    "a task twice": (lambda: _nine(**{"support-2": _document("support-1")}),
                     "document 5 gives task support-1 a second time"),
    "a task missing": (lambda: "---\n".join(_document(t) for t in TASKS if t != "lift-3"),
                       "no task text for lift-3"),
    "empty": (lambda: "", "no task text for transport-1, transport-2"),
    "too large": (lambda: "# " + "x" * MAX_LEVELS_FILE_BYTES + "\n" + _nine(), "over the limit of 1048576"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_file_is_refused_before_the_run(tmp_path: Path, case: str) -> None:
    make, problem = BROKEN[case]
    path = tmp_path / "levels.yaml"
    path.write_text(make(), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        _run(tmp_path, path)
    message = str(info.value)
    assert "\n" not in message and f"levels file {path}" in message and problem in message, message
    assert not (tmp_path / "run").exists()  # refused before the run folder was made


def test_unreadable_files_are_refused(tmp_path: Path) -> None:
    binary = tmp_path / "levels.yaml"
    binary.write_bytes(b"\xff\xfe\x00level")
    for path, problem in ((binary, "not UTF-8 text"), (tmp_path / "missing.yaml", "cannot read it"),
                          (tmp_path, "cannot read it")):
        with pytest.raises(ConfigError, match="levels file .*" + problem):
            check_options({"levels": str(path)})


def test_the_cli_reports_a_bad_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.cli.main import main

    path = tmp_path / "levels.yaml"
    path.write_text(_nine(**{"lift-2": "- a list\n"}), encoding="utf-8")
    rc = main(["run", "buildarena", "--split", "lift-1", "--workers", "0", "--quiet",
               "--run-dir", str(tmp_path / "run"), "-o", f"levels={path}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error:") and str(path) in err[0], err
    assert not (tmp_path / "run").exists()
    assert main(["buildarena", "levels", str(path)]) == 2
    assert "document 8 is a list" in capsys.readouterr().err
    good = tmp_path / "good.yaml"
    good.write_text(_nine(), encoding="utf-8")
    assert main(["buildarena", "levels", str(good)]) == 0
    assert '"lift-3": "Our stand-in text for lift-3."' in capsys.readouterr().out
