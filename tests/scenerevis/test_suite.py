"""The suite as the harness sees it: registration, splits, options and a run from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.cli import main
from buildbench.harness import get_suite

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scenerevis" / "split_prompts"


def test_registered_through_the_entry_point():
    suite = get_suite("scenerevis")
    assert set(suite.agents) == {"diagnose", "one-pass", "random", "oracle", "degraded", "llm"}
    assert suite.agent("llm").needs_model and suite.default_protocol == "diagnose-act"


def test_the_paper_splits():
    suite = get_suite("scenerevis")
    counts = {split: len(suite.load_tasks(split, 0)) for split in ("default", "standard", "long-tail", "demo")}
    assert counts == {"default": 400, "standard": 300, "long-tail": 100, "demo": 8}
    rooms = [t.metadata["room"] for t in suite.load_tasks("default", 0)]
    assert {r: rooms.count(r) for r in set(rooms)} == {"bedroom": 150, "living_room": 150, "dining_room": 50,
                                                       "study_room": 50}
    assert all(set(t.inputs) == {"instruction"} for t in suite.load_tasks("demo", 0))


def test_shipped_prompts_match_the_shared_files():
    if not SHARED.exists():
        pytest.skip(f"shared prompts not found at {SHARED}")
    tasks = get_suite("scenerevis").load_tasks("default", 0)
    shipped = [t.inputs["instruction"] for t in tasks if t.metadata["room"] == "study_room"]
    assert shipped == [line.strip() for line in (SHARED / "study_room.txt").read_text().splitlines() if line.strip()]


def test_unknown_option_values_are_refused(tmp_path, capsys):
    assert main(["run", "scenerevis", "--split", "demo", "--limit", "1", "-o", "address=uid",
                 "--run-dir", str(tmp_path / "r")]) == 2
    assert "address" in capsys.readouterr().err


def test_a_cli_run_of_the_diagnose_agent(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert main(["run", "scenerevis", "--agent", "diagnose", "--split", "demo", "--limit", "2", "--quiet",
                 "--run-dir", str(run_dir), "--workers", "0"]) == 0
    capsys.readouterr()
    assert main(["report", str(run_dir), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["episodes"] == 2 and rep["status"] == {"ok": 2}
    assert rep["metrics"]["collision_rate"] == 0.0 and rep["metrics"]["oob_rate"] == 0.0
