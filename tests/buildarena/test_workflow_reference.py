"""Reference designs played through the real action path (env steps) by the Runner, and a negative control."""

from __future__ import annotations

import asyncio

import pytest

from buildbench.harness import EpisodeContext, RunConfig, Runner, Store
from buildbench.harness import suite as suite_registry
from buildbench.suites.buildarena import agents, designs
from buildbench.suites.buildarena.agents import DesignAgent, script_actions
from buildbench.suites.buildarena.env import BuildArenaEnv
from buildbench.suites.buildarena.options import BuildArenaOptions
from buildbench.suites.buildarena.protocols import Workflow
from buildbench.suites.buildarena.score import score_episode as score
from buildbench.suites.buildarena.suite import to_task


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    assert "buildarena" in suite_registry.suite_names()  # registered through the package's entry points


def test_reference_agent_plays_every_design_through_the_env(tmp_path):
    config = RunConfig(suite="buildarena", agent="reference", protocol="workflow", workers=0,
                       options={"sim_duration_s": 0.2})
    result = Runner(config, tmp_path).run()
    with Store(tmp_path) as store:
        episodes = {e.task_id: e for e in store.episodes()}
    assert len(episodes) == 9 and result.summary["episodes"] == 9
    for task_id, make in designs.REFERENCE.items():
        ep = episodes[task_id]
        assert ep.status == "ok", (task_id, ep.error)
        design = make()
        expected = designs.build(design)
        calls = len(design.calls) + sum(len(c) for c in (design.saved or {}).values())
        assert ep.metrics["approved"] == 1.0 and ep.metrics["simulated"] == 1.0
        assert ep.metrics["parts"] == expected.num_blocks
        assert ep.metrics["calls"] == calls and ep.metrics["invalid_calls"] == 0.0
        assert sum(1 for s in ep.steps if s.role == "builder") == calls
    assert episodes["lift-1"].metrics["passed"] == 1.0
    tables = result.summary["tables"]
    table2 = next(rows for title, rows in tables.items() if title.startswith("Table 2"))
    ours = [r for r in table2 if r["source"] == "ours (MuJoCo)"]
    assert [r["task"] for r in ours] == ["Transport", "Support", "Lift"]
    assert ours[2]["SR % L1/L2/L3"].startswith("100.0 / ") and ours[2]["parts L1/L2/L3"].startswith("3.0 / ")


def _play(design: designs.Design, task_id: str) -> dict:
    task = to_task(task_id)
    options = BuildArenaOptions(sim_duration_s=0.2)
    env = BuildArenaEnv(task, options)
    ctx = EpisodeContext(task=task, seed=0, options=options)
    asyncio.run(Workflow(options).run(env, DesignAgent(design, "control"), ctx))
    return score(task, env.outcome())


def test_negative_agent_plays_the_control_of_each_task(tmp_path):
    config = RunConfig(suite="buildarena", agent="negative", protocol="workflow", split="lift-1", workers=0,
                       options={"sim_duration_s": 0.2})
    result = Runner(config, tmp_path).run()
    assert result.summary["status"] == {"ok": 1}
    assert result.summary["metrics"]["passed"] == 0.0 and result.summary["metrics"]["approved"] == 1.0
    assert result.summary["metrics"]["indicator"] == pytest.approx(1.6 / 1.75)
    task = to_task("support-3")
    control = agents.negative(task, None, BuildArenaOptions())  # every level has a control
    assert isinstance(control, DesignAgent) and control.actions == script_actions(designs.NEGATIVE["three beams shorter than the wide gap"][1]())
    with pytest.raises(ValueError, match="targets task 'lift-1', not 'support-3'"):
        agents.negative(task, None, BuildArenaOptions(control="unheated cannon"))
    with pytest.raises(ValueError, match="unknown negative control 'x'"):
        agents.negative(task, None, BuildArenaOptions(control="x"))


def test_assembled_design_builds_parts_then_the_assembly():
    part = designs.heated_engine()
    assembly = [{"op": "add_machine", "params": {"machine_id": "engine"}},
                {"op": "add_machine", "params": {"machine_id": "engine", "init_shift": [5, 0, 0]}}]
    design = designs.Design("two engines", assembly, {"engine": part})
    actions = script_actions(design)
    assert actions[0] == {"stage": {"kind": "script", "machine_id": "engine"}}
    assert actions[-1] == {"approve": "assembly", "final": True}
    metrics = _play(design, "lift-1")
    # Built and simulated whole; judged by the task's rule: Lift Lv.1 allows one sub-structure, unassembled.
    assert metrics["parts"] == 6.0 and metrics["simulated"] == 1.0 and metrics["passed"] == 0.0
