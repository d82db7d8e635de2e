"""What a new user meets in ``buildbench bimedit``: one ``error:`` line and exit 2 for bad input,
exit 1 for an unsolved single task, strict JSON, bounded generator options, honest progress,
and help that says what is written and what each option defaults to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from buildbench.harness.episode import Episode
from buildbench.suites.bimedit.cli import cli
from buildbench.suites.bimedit.generate.tasks import generate_tasks, write_oracle_prediction
from buildbench.suites.bimedit.generate.tasks.usergen import REPORT_FILE
from buildbench.suites.bimedit.report import NO_DATA, summarize
from buildbench.suites.bimedit.tasks import BimTask

# The module-scoped fixtures (the generated task folder) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("bimedit-cli-new-user")

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"


def bimedit(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "buildbench", "bimedit", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def one_error_line(res: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line of a refused command (and no traceback)."""
    assert "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[BimTask]]:
    out = tmp_path_factory.mktemp("gen")
    tasks = generate_tasks(3, 1, out)
    for t in tasks:
        (out / f"{t.task_id}.json").write_text(json.dumps(t.to_dict()))
    return out, tasks


@pytest.mark.parametrize("kind", ["missing", "folder", "binary", "text"])
def test_unreadable_prediction_is_an_input_error(made: tuple[Path, list[BimTask]], tmp_path: Path,
                                                 kind: str) -> None:
    out, tasks = made
    pred = tmp_path / "pred.ifc"
    if kind == "folder":
        pred.mkdir()
    elif kind == "binary":
        pred.write_bytes(bytes(range(256)) * 8)
    elif kind == "text":
        pred.write_text("hello, not a model\n")
    res = bimedit("score", "--task", str(out / f"{tasks[0].task_id}.json"), "--pred", str(pred))
    assert res.returncode == 2, (res.stdout, res.stderr)
    line = one_error_line(res)
    assert "--pred" in line and str(pred) in line
    assert "final" not in res.stdout  # never a zero score


def test_single_score_exit_is_the_verdict_and_json_is_strict(made: tuple[Path, list[BimTask]]) -> None:
    out, tasks = made
    task = out / f"{tasks[0].task_id}.json"
    solved = bimedit("score", "--task", str(task), "--pred", tasks[0].ground_truth_ifc)
    assert solved.returncode == 0 and "solved True" in solved.stdout, solved.stderr
    unsolved = bimedit("score", "--task", str(task), "--pred", tasks[0].input_ifc, "--json")
    assert unsolved.returncode == 1 and unsolved.stderr == "", unsolved.stderr

    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    record = json.loads(unsolved.stdout, parse_constant=refuse)
    assert record["solved"] is False
    # the unchanged input has an empty predicted edit set: its Chamfer distance has no finite value
    assert record["diagnostics"]["chamfer_median_m"] is None


def test_batch_reports_each_bad_item_and_exits_2(made: tuple[Path, list[BimTask]], tmp_path: Path) -> None:
    out, tasks = made
    preds = tmp_path / "preds"
    preds.mkdir()
    write_oracle_prediction(tasks[0], preds / f"{tasks[0].task_id}.ifc")
    (preds / f"{tasks[1].task_id}.ifc").write_bytes(b"\x00\xff" * 64)
    res = bimedit("score", "--tasks", str(out / "tasks.jsonl"), "--preds", str(preds), "--json")
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    errors = res.stderr.strip().splitlines()
    assert len(errors) == 2 and all(line.startswith("error: ") for line in errors), res.stderr
    assert tasks[1].task_id in errors[0] and "not a readable IFC" in errors[0]
    assert tasks[2].task_id in errors[1] and "missing" in errors[1]
    summary = json.loads(res.stdout)["summary"]
    assert (summary["scored"], summary["errors"], summary["missing"]) == (1, 1, 1)
    assert summary["final"] == pytest.approx(1.0)  # the bad items are kept out of the mean


def test_batch_with_every_prediction_exits_0(made: tuple[Path, list[BimTask]], tmp_path: Path) -> None:
    out, tasks = made
    preds = tmp_path / "preds"
    preds.mkdir()
    for t in tasks:  # an unsolved prediction is a score, not a verdict: still exit 0
        (preds / f"{t.task_id}.ifc").write_bytes(Path(t.input_ifc).read_bytes())
    res = bimedit("score", "--tasks", str(out / "tasks.jsonl"), "--preds", str(preds))
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert "scored 3 of 3" in res.stdout


@pytest.mark.parametrize(("flag", "value"), [("--n", "99999999999"), ("--n", "0"), ("--workers", "99999999999"),
                                             ("--workers", "0"), ("--seed", "-1")])
def test_generator_options_are_bounded(tmp_path: Path, flag: str, value: str) -> None:
    res = bimedit("generate", flag, value, "--out", str(tmp_path / "out"), timeout=30)
    assert res.returncode == 2, res.stderr
    assert flag in one_error_line(res)
    assert not (tmp_path / "out").exists()


def test_progress_never_passes_the_requested_count(tmp_path: Path) -> None:
    res = bimedit("generate", "--ifc", str(FIXTURE), "--n", "2", "--out", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    counts = [part.split()[0] for part in res.stderr.split("progress bimedit generate: ")[1:]]
    assert counts and all(c.endswith("/2") and int(c.split("/")[0]) <= 2 for c in counts), res.stderr
    assert counts[-1] == "2/2"
    assert "wrote 2 tasks" in res.stdout


def test_help_names_the_report_file_written() -> None:
    generate = cli.commands["generate"]
    assert generate.help is not None and REPORT_FILE in generate.help
    assert REPORT_FILE in bimedit("generate", "--help").stdout


@pytest.mark.parametrize("name", ["generate", "score", "diff"])
def test_help_texts_are_sentences_with_defaults(name: str) -> None:
    command = cli.commands[name]
    assert command.help is not None and command.help[0].isupper()
    for param in command.params:
        if not isinstance(param, click.Option):
            continue
        text = param.help or ""
        assert text[:1].isupper() and text.endswith("."), (param.name, text)
        assert param.show_default or "default" in text, (param.name, text)


def _episode(task_id: str, category: str, solved: bool) -> Episode:
    value = 1.0 if solved else 0.2
    return Episode(task_id=task_id, sample=0, suite="bimedit", agent="a", protocol="p", seed=0,
                   metrics={"final": value, "geometry": value, "semantics": value, "topology": value,
                            "solved": float(solved)},
                   outcome={"failure": "executed"},
                   metadata={"operation": "update", "category": category, "scene": "simple", "element": "wall"})


def test_report_cells_without_data_say_so() -> None:
    out = summarize([_episode("t1", "direct", True), _episode("t2", "direct", False)])
    table2 = out["tables"]["Table 2: strict solve rates and per-axis pass rates (%)"][0]
    assert (table2["direct"], table2["spatial"], table2["topological"]) == (50.0, NO_DATA, NO_DATA)
    cells = [v for rows in out["tables"].values() for row in rows for v in row.values()]
    assert not any(isinstance(v, float) and v != v for v in cells)  # no NaN anywhere
    notes = out["tables"]["Notes"]
    assert len(notes) == 1 and notes[0]["note"].startswith(f"{NO_DATA}:") and "Table 2" in notes[0]["note"]
    assert "Notes" not in summarize([_episode("t1", c, True) for c in ("direct", "spatial", "topological")])[
        "tables"]
