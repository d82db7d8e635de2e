"""BIM-Edit tasks: ids, composition, records, verified descriptions and the oracle scoring 1.0."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import ifcopenshell
import pytest

from buildbench.harness.errors import ConfigError
from buildbench.suites.bimedit.check.edit import score_edit
from buildbench.suites.bimedit.check.model import load_model
from buildbench.suites.bimedit.check.shapes import ShapeCache
from buildbench.suites.bimedit.generate.describe import DescriptionIndex, resolve
from buildbench.suites.bimedit.generate.tasks import BASE_COUNTS, generate_demo, score_oracle, tool_namespace
from buildbench.suites.bimedit.generate.tasks.split import base_edits
from buildbench.suites.bimedit.tasks import BimTask, TaskId, from_harness, load_tasks, read_tasks, write_tasks

# The module-scoped fixtures (the generated demo split) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("bimedit-tasks")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> list[BimTask]:
    return generate_demo(0, tmp_path_factory.mktemp("bimedit_demo"))


def test_task_ids_round_trip_and_reject_bad_ones() -> None:
    tid = TaskId.parse("DOR-UPD-DIR-A-001")
    assert (tid.element, tid.operation, tid.category, tid.scene, tid.index) == ("door", "update", "direct",
                                                                                 "simple", 1)
    assert str(tid) == "DOR-UPD-DIR-A-001" and tid.group_id == "DOR-UPD-A-001"
    for bad in ("DOR-UPD-DIR-X-001", "XXX-UPD-DIR-A-001", "DOR-UPD-DIR-A-1"):
        with pytest.raises(ConfigError, match="malformed"):
            TaskId.parse(bad)


def test_default_composition_matches_paper_table_4() -> None:
    edits = list(base_edits(0))
    assert len(edits) * 3 == 324
    per_cell = Counter((e.element, e.operation) for e in edits)
    table4 = {("wall", "create"): 24, ("door", "create"): 18, ("door", "update"): 6, ("door", "delete"): 12,
              ("window", "create"): 6, ("window", "update"): 18, ("column", "update"): 12, ("slab", "delete"): 24}
    for cell, tasks in table4.items():
        assert per_cell[cell] * 3 == tasks, cell
    assert sum(BASE_COUNTS.values()) == 54
    assert Counter(e.scene for e in edits) == {"simple": 54, "complex": 54}
    for op in ("create", "update", "delete"):
        assert sum(3 * v for (_, o), v in Counter((e.element, e.operation) for e in edits).items() if o == op) == 108
    ids = {str(TaskId(e.element, e.operation, "direct", e.scene, e.index)) for e in edits}
    assert len(ids) == 108  # one id per base edit and scene kind


def test_demo_records_round_trip(demo: list[BimTask], tmp_path: Path) -> None:
    assert len(demo) == 12 and Counter(t.category for t in demo) == {"direct": 4, "spatial": 4, "topological": 4}
    assert len({t.task_id for t in demo}) == 12
    path = write_tasks(demo, Path(demo[0].input_ifc).parents[1] / "copy.jsonl")
    line = json.loads(path.read_text().splitlines()[0])
    assert not Path(line["input_ifc"]).is_absolute()  # stored relative to the task file
    again = read_tasks(path)
    assert again == demo
    h = demo[0].to_harness()
    assert set(h.inputs) == {"instruction", "ifc_path", "unit"} and "oracle_code" not in h.inputs
    assert from_harness(h).task_id == demo[0].task_id
    bad = tmp_path / "bad.jsonl"
    bad.write_text(path.read_text().splitlines()[0] + "\n{not json\n")
    with pytest.raises(ConfigError, match=r"bad.jsonl:2: not valid JSON"):
        read_tasks(bad)


def test_indirect_descriptions_pick_out_one_element(demo: list[BimTask]) -> None:
    for t in demo:
        if t.category == "direct":
            assert all(g in t.instruction for g in t.target_guids[:1])
            continue
        assert t.facts, t.task_id
        model = load_model(t.input_ifc)
        found = resolve(DescriptionIndex(model, ShapeCache(model)), t.facts)
        if t.operation != "create":
            assert found == [t.target_guids[0]], (t.task_id, found)
            continue
        truth = load_model(t.ground_truth_ifc)
        created = sorted(set(truth.nodes) - set(model.nodes))
        again = resolve(DescriptionIndex(truth, ShapeCache(truth)), t.facts)
        # a create names either the new element itself (checked on M*) or an anchor already in M0
        assert (len(again) == 1 and again[0] in created) or (len(found) == 1 and found == again), (t.task_id, again)


def test_oracle_code_reproduces_the_ground_truth(demo: list[BimTask], tmp_path: Path) -> None:
    for t in demo:
        s = score_oracle(t, tmp_path)
        assert (s.geometry, s.semantics, s.topology) == (1.0, 1.0, 1.0), (t.task_id, s.reason, s.notes)
        assert s.solved and s.reason == "scored"


def test_oracle_code_runs_in_the_tool_namespace_and_commits(demo: list[BimTask], tmp_path: Path) -> None:
    t = demo[0]
    model = ifcopenshell.open(t.input_ifc)
    out = tmp_path / "committed.ifc"
    ns = tool_namespace(model, lambda: model.write(str(out)))
    exec(compile(t.oracle_code, t.task_id, "exec"), ns)  # noqa: S102 - generated oracle code
    assert out.is_file() and score_edit(t.input_ifc, t.ground_truth_ifc, out, t.score_spec()).solved
    noop = score_edit(t.input_ifc, t.ground_truth_ifc, t.input_ifc, t.score_spec())
    assert not noop.solved  # the ground truth really differs from the input


def test_generation_is_deterministic(demo: list[BimTask], tmp_path: Path) -> None:
    again = generate_demo(0, tmp_path)
    assert [t.instruction for t in again] == [t.instruction for t in demo]
    for a, b in zip(again, demo, strict=True):
        assert Path(a.ground_truth_ifc).read_bytes() == Path(b.ground_truth_ifc).read_bytes()


def test_load_tasks_uses_the_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown BIM-Edit split"):
        load_tasks("nope")
    monkeypatch.setenv("BUILDBENCH_CACHE", str(tmp_path))
    tasks = load_tasks("demo", 0)
    assert len(tasks) == 12 and str(tmp_path) in tasks[0].input_ifc
    assert load_tasks("demo", 0) == tasks  # second call reads the file


def test_single_pretty_printed_task_file(demo: list[BimTask], tmp_path: Path) -> None:
    folder = Path(demo[0].input_ifc).parents[1]
    single = folder / "single.json"
    single.write_text(json.dumps(json.loads((folder / "tasks.jsonl").read_text().splitlines()[0]), indent=2))
    assert read_tasks(single) == [demo[0]]
    record = demo[0].to_dict() | {"unit": "km"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    with pytest.raises(ConfigError, match="unit must be"):
        read_tasks(bad)
