"""Reading the released LEGO-Bench layout (a tiny fabricated copy) and writing our own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from buildbench.suites.legoeval.check import deterministic
from buildbench.suites.legoeval.legobench import LegoBenchError, load_legobench, write_benchmark
from buildbench.suites.legoeval.outcome import LegoEvalOutcome
from buildbench.suites.legoeval.score import score
from buildbench.suites.legoeval.tasks import generated_tasks

FIXTURES = Path(__file__).parent / "fixtures"
TINY = FIXTURES / "legobench_tiny"


def test_reads_entries_types_and_scenes_matched_by_query() -> None:
    tasks = load_legobench(TINY)
    assert [t.id for t in tasks] == ["legobench-000", "legobench-001"]
    t0 = tasks[0]
    assert [c["type"] for c in t0.inputs["constraints"]] == ["FL", "FL", "MS", "OS", "OP", "OS", "OP", "MS"]
    assert t0.inputs["scene"]["query"] == t0.inputs["instruction"]
    assert t0.target["valid"] is True and t0.target["labels"] == [True] * 8  # released scenes are aligned
    assert t0.target["programs"] == [None] * 8 and t0.metadata["source"] == "lego-bench"


def test_root_may_be_the_parent_of_data(tmp_path: Path) -> None:
    shutil.copytree(TINY, tmp_path / "data")
    assert [t.id for t in load_legobench(tmp_path)] == ["legobench-000", "legobench-001"]


def test_deterministic_evaluator_on_the_released_layout() -> None:
    t0, t1 = load_legobench(TINY)
    out0 = deterministic(t0)
    assert [v["holds"] for v in out0["verdicts"]] == [True] * 7 + [None]  # free text: an error, not a guess
    assert out0["valid"] is None
    s = score(t0, LegoEvalOutcome.from_dict(out0))
    assert s["partial_tt"] == 7.0 and s["partial_unknown"] == 1.0 and "holistic_correct" not in s
    assert deterministic(t1)["valid"] is True


def test_external_generator_scenes_are_unlabelled() -> None:
    tasks = load_legobench(TINY, scenes=FIXTURES / "generator_scenes")
    assert [t.id for t in tasks] == ["legobench-000"]
    t = tasks[0]
    assert t.target["labels"] is None and t.target["valid"] is None
    out = deterministic(t)
    assert out["valid"] is False  # the generator left out the tv the sofa should face
    s = score(t, LegoEvalOutcome.from_dict(out))
    assert s["valid_pred"] == 0.0 and "valid_label" not in s and s["OP_fails"] == 1.0


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    shutil.copytree(TINY, root)
    return root


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: {"x": 1}, "expected a list of entries"),
    (lambda d: [{**d[0], "instruction": ""}] + d[1:], "entry 0.instruction"),
    (lambda d: [{**d[0], "constraints": []}] + d[1:], "entry 0.constraints"),
    (lambda d: [{**d[0], "labels": d[0]["labels"][:2]}] + d[1:], "entry 0.labels"),
    (lambda d: [d[0], {**d[1], "labels": [{"condition_idx": "0", "condition_type": "Lighting"}] + d[1]["labels"][1:]}],
     "entry 1.labels[0]"),
    (lambda d: [{**d[0], "programs": [{"op": "bad"}] * 8}] + d[1:], "entry 0.programs[0].op"),
])
def test_malformed_full_data_names_the_entry(tmp_path: Path, edit: object, message: str) -> None:
    root = _copy(tmp_path)
    data = json.loads((root / "full_data.json").read_text())
    (root / "full_data.json").write_text(json.dumps(edit(data)))  # type: ignore[operator]
    with pytest.raises(LegoBenchError) as info:
        load_legobench(root)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_missing_files_and_unmatched_scenes(tmp_path: Path) -> None:
    with pytest.raises(LegoBenchError, match="no full_data.json"):
        load_legobench(tmp_path)
    root = _copy(tmp_path)
    (root / "data_0" / "data_0.json").write_text("{not json")
    with pytest.raises(LegoBenchError, match="data_0.json: not JSON"):
        load_legobench(root)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LegoBenchError, match="no scene's query equals"):
        load_legobench(TINY, scenes=empty)


def test_written_benchmark_reads_back_to_the_same_tasks(tmp_path: Path) -> None:
    summary = write_benchmark(tmp_path / "gen", n_pairs=3, seed=4)
    assert summary.startswith("3 instructions") and summary.endswith("6 scenes")
    read = load_legobench(tmp_path / "gen")
    made = generated_tasks(3, seed=4)
    assert [(t.metadata["pair"].replace("legobench", "lego-4"), t.metadata["aligned"]) for t in read] == [
        (t.metadata["pair"], t.metadata["aligned"]) for t in made]
    for a, b in zip(read, made, strict=True):
        assert a.inputs == b.inputs and a.target == b.target
        assert deterministic(a)["valid"] is b.target["valid"]


def test_task_ids_do_not_tell_the_label(tmp_path: Path) -> None:
    """An agent sees task ids (MCP resources, Gymnasium, Inspect): the aligned and misaligned
    twins are ``-a``/``-b`` in an order a hash of the pair picks, never named by label."""
    write_benchmark(tmp_path / "gen", n_pairs=8, seed=1)
    for tasks in (generated_tasks(8, seed=1), load_legobench(tmp_path / "gen")):
        assert not any("aligned" in t.id for t in tasks)
        suffix = {t.id[-2:] for t in tasks if t.metadata["aligned"]}
        assert suffix == {"-a", "-b"}, suffix
