"""Reference agents through the runner on the demo split: the oracle scores 1 everywhere, the
no-op and the flawed agents land exactly where the metric definitions put them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from buildbench.harness import Episode, RunConfig, Runner, Store, get_suite
from buildbench.harness import suite as suite_registry
from buildbench.harness.errors import ConfigError
from buildbench.suites.bimedit.agents import wall_keeps_openings
from buildbench.suites.bimedit.check.edit import score_edit
from buildbench.suites.bimedit.tasks import BimTask, load_tasks

# The module-scoped fixtures (the generated demo split) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("bimedit-agents-reference")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> list[BimTask]:
    return load_tasks("demo", 0, out_dir=tmp_path_factory.mktemp("bimedit_demo"))


@pytest.fixture
def registered(demo: list[BimTask], monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite reading this module's generated demo split (no cache folder touched)."""
    suite = dataclasses.replace(get_suite("bimedit"), load_tasks=lambda split, seed: [t.to_harness() for t in demo])
    monkeypatch.setitem(suite_registry._loaded, "bimedit", suite)


def run(agent: str, run_dir: Path, demo: list[BimTask], prefix: str = "",
        **options: object) -> tuple[list[Episode], dict]:
    config = RunConfig(suite="bimedit", agent=agent, protocol="tool-loop", split="demo", workers=0,
                       options=dict(options))
    if prefix:  # only the prefix's tasks run (`registered` puts the whole split back afterwards)
        tasks = [t.to_harness() for t in demo if t.task_id.startswith(prefix)]
        suite_registry._loaded["bimedit"] = dataclasses.replace(get_suite("bimedit"),
                                                                load_tasks=lambda split, seed: tasks)
    result = Runner(config, run_dir).run()
    with Store(run_dir) as store:
        episodes = [e for e in store.episodes() if e.task_id.startswith(prefix)]
    return episodes, result.summary


def rescore(ep: Episode, demo: list[BimTask], run_dir: Path):
    """The full score (with diagnostics) of the model an episode committed."""
    task = next(t for t in demo if t.task_id == ep.task_id)
    pred = ep.outcome.get("model_path") or task.input_ifc
    return score_edit(task.input_ifc, task.ground_truth_ifc, pred, task.score_spec())


def test_oracle_scores_one_on_every_demo_task_and_the_report(registered, demo, tmp_path):
    episodes, summary = run("oracle", tmp_path, demo)
    assert len(episodes) == len(demo) == 12
    for ep in episodes:
        assert ep.status == "ok", (ep.task_id, ep.error)
        m = ep.metrics
        assert (m["geometry"], m["semantics"], m["topology"], m["final"], m["solved"]) == (1, 1, 1, 1, 1), ep.task_id
        assert m["strict_final"] == 1.0 and m["collateral"] == 0.0 and m["failure_executed"] == 1.0
        assert ep.outcome["call_status"] == ["ok"] and Path(ep.outcome["model_path"]).is_file()
    tables = summary["tables"]
    ours = tables["Table 1: scores, 0-100, mean ± std"][0]
    assert ours["source"] == "ours: oracle" and (ours["final"], ours["final"].std) == (100.0, 0.0) and ours["n"] == 12
    assert tables["Table 2: strict solve rates and per-axis pass rates (%)"][0]["spatial"] == 100.0
    assert tables["Table 3: runtime failure rates (%)"][0]["overall"] == 0.0
    by_op = {r["operation"]: r["n"] for r in tables["Figure 3: by operation"]}
    assert by_op == {"create": 6, "delete": 3, "update": 3}
    assert len(tables["Table 1: scores, 0-100, mean ± std"]) == 8  # ours + the paper's seven models


def test_noop_scores(registered, demo, tmp_path):
    episodes, _ = run("noop", tmp_path, demo)
    for ep in episodes:
        m = ep.metrics
        assert ep.outcome["tool_calls"] == 0 and not ep.outcome["committed"]
        if ep.task_id.startswith("DOR-UPD"):
            # No relation changes in the reference: the paper's special case gives topology 1.
            assert m["topology"] == 1.0 and m["semantics"] == 1.0 and 0.0 < m["geometry"] < 0.98
            assert m["strict_topology"] == 0.0 and not m["solved"]
        else:  # nothing created or removed: empty predicted edit set on every axis
            assert (m["geometry"], m["semantics"], m["topology"], m["final"]) == (0, 0, 0, 0), ep.task_id


def test_strict_option_makes_the_strict_scores_the_headline(registered, demo, tmp_path):
    episodes, summary = run("noop", tmp_path, demo, prefix="DOR-UPD", strict="true")
    for ep in episodes:
        m = ep.metrics
        assert m["topology"] == 0.0 and m["paper_topology"] == 1.0  # no shortcut for "no relation change"
        assert m["final"] == m["strict_final"] < m["paper_final"]
    assert summary["tables"]["Table 1: scores, 0-100, mean ± std"][0]["source"] == "ours: noop (strict)"


def test_door_moved_without_its_opening(registered, demo, tmp_path):
    episodes, _ = run("door-without-opening", tmp_path, demo, prefix="DOR-UPD")
    assert len(episodes) == 3
    for ep in episodes:
        m = ep.metrics
        # Matched by OBB-IoU with the same class and properties, no relation touched:
        assert m["semantics"] == 1.0 and m["topology"] == 1.0
        # The median Chamfer distance hides the forgotten opening (spec section 10, lesson 2) ...
        assert 0.98 < m["geometry"] < 1.0
        # ... and strict topology is the node F1 of {door} against {door, opening}: 2/3.
        assert m["strict_topology"] == pytest.approx(2 / 3)


def test_wall_deleted_but_openings_left(registered, demo, tmp_path):
    episodes, _ = run("wall-keeps-openings", tmp_path, demo, prefix="WAL-DEL")
    assert len(episodes) == 3
    for ep in episodes:
        s = rescore(ep, demo, tmp_path)
        topo = s.diagnostics["topology"]
        # Targets: the wall, its opening and its door; only the wall is gone.
        assert ep.metrics["semantics"] == pytest.approx(1 / 3)
        # Nodes: {wall} against {wall, opening, door}: P = 1, R = 1/3.
        assert topo["nodes_f1"] == pytest.approx(0.5)
        pred = {tuple(e) for e in topo["predicted_edges"]}
        ref = {tuple(e) for e in topo["reference_edges"]}
        assert pred < ref  # everything it removed should go, but not everything that should go did
        assert topo["edges_f1"] == pytest.approx(2 * len(pred) / (len(pred) + len(ref)))
        assert ep.metrics["topology"] == pytest.approx(0.3 * 0.5 + 0.7 * topo["edges_f1"])
        assert ep.metrics["final"] == pytest.approx(s.final) and not ep.metrics["solved"]


def test_wall_created_without_storey_containment(registered, demo, tmp_path):
    episodes, _ = run("uncontained-wall", tmp_path, demo, prefix="WAL-CRE")
    assert len(episodes) == 3
    for ep in episodes:
        s = rescore(ep, demo, tmp_path)
        topo = s.diagnostics["topology"]
        ref = {tuple(e) for e in topo["reference_edges"]}
        missing = ref - {tuple(e) for e in topo["predicted_edges"]}
        assert [e[1] for e in missing] == ["IfcRelContainedInSpatialStructure"]
        n = len(ref)
        assert ep.metrics["geometry"] == 1.0 and ep.metrics["semantics"] == 1.0
        assert ep.metrics["topology"] == pytest.approx(0.3 + 0.7 * 2 * (n - 1) / (2 * n - 1))


def test_flawed_agents_refuse_tasks_they_do_not_apply_to(demo):
    door_task = next(t for t in demo if t.task_id.startswith("DOR-UPD")).to_harness()
    with pytest.raises(ConfigError, match="applies to wall delete tasks only"):
        wall_keeps_openings(door_task, None, {})
