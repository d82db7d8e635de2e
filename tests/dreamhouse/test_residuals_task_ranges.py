"""DreamHouse task records: the inputs the prompt and the agents read beside the constraints
(stories, wings, lot, footprint, roof type, complexity) are refused out of range on load, one
``error:`` line naming file, task and field; the suite's own tasks pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli import main
from buildbench.harness import get_suite
from buildbench.harness.task_files import load_task_files


def _record() -> dict[str, Any]:
    return get_suite("dreamhouse").load_tasks("demo", 0)[0].to_dict()


@pytest.mark.parametrize("change, expected", [
    ({"stories": 0}, "inputs.stories: missing or not an integer in [1, 10], got 0"),
    ({"stories": -1}, "inputs.stories: missing or not an integer in [1, 10], got -1"),
    ({"wings": "2"}, "inputs.wings: missing or not an integer in [0, 16], got '2'"),
    ({"roof_type": "dome"}, "inputs.roof_type: 'dome' is not one of"),
    ({"lot_size": {"width": -5, "depth": 20, "area": 100}}, "inputs.lot_size.width: missing or not a number in (0, 500]"),
    ({"lot_size": {"width": 5, "depth": 20, "area": 0}}, "inputs.lot_size.area: missing or not a number in (0, 250000]"),
    ({"footprint": {"x": "wide", "y": 8}}, "inputs.footprint.x: missing or not a number in (0, 500], got 'wide'"),
])
def test_odd_inputs_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any],
                                expected: str) -> None:
    record = _record()
    record["inputs"] = {**record["inputs"], **change}
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["run", "dreamhouse", "--tasks", str(path), "--run-dir", str(tmp_path / "run"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:1: task {record['id']!r}: {expected}") and err.count("\n") == 1, err


def test_the_suites_own_tasks_pass(tmp_path: Path) -> None:
    suite = get_suite("dreamhouse")
    tasks = suite.load_tasks("demo26", 0)
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps(t.to_dict()) + "\n" for t in tasks))
    assert len(load_task_files(path, "dreamhouse", suite.validate_task)) == len(tasks)
