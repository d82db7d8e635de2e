"""DreamHouse protocols: Phase-0 plan checks, Table 6 budgets, gating, rollback, refinement."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

from buildbench.harness import Action, Agent, EpisodeContext, RunConfig, Runner, Store
from buildbench.harness.errors import ConfigError
from buildbench.harness.suite import get_suite, suite_names
from buildbench.suites.dreamhouse.agents import member_entries, oracle, plan_for
from buildbench.suites.dreamhouse.env import make_env
from buildbench.suites.dreamhouse.plan import check_plan
from buildbench.suites.dreamhouse.protocols import TABLE6, budget_from_options, make_protocol
from buildbench.suites.dreamhouse.tasks import ground_truth, make_task
from buildbench.suites.dreamhouse.views import VisualScore

TASK = "RN_01_0001"
OPTS = {"action_format": "json", "images": "off"}
SUITE = get_suite("dreamhouse")


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """Score structure only: rendering fidelity for every episode here would dominate the
    run time, and fidelity has its own tests (test_fidelity, test_views, test_fidelity_e2e)."""
    from buildbench.suites.dreamhouse import protocols, score

    monkeypatch.setattr(score, "METRICS", [score.structural_metrics, score.count_metrics])
    monkeypatch.setattr(protocols, "visual_scorer", lambda: None)


@pytest.fixture()
def registered():
    assert "dreamhouse" in suite_names()  # registered through the package's entry points


@pytest.fixture(scope="module")
def task():
    return make_task(TASK)


def _plan(task):
    return plan_for(ground_truth(task), dict(task.inputs["lot_size"]))


def test_plan_checks_lot_taxonomy_dag_and_bounds(task):
    lot = dict(task.inputs["lot_size"])
    good = _plan(task)
    assert check_plan(json.dumps(good), lot).ok
    bad = copy.deepcopy(good)
    bad["analysis"]["lot_size"]["area"] = round(lot["width"] * lot["depth"] + 0.01, 2)
    bad["construction_order"][0]["members"].append({"type": "Beam", "count": 2})
    bad["construction_order"][0]["depends_on"] = [len(good["construction_order"])]
    bad["sections"][0]["bounds"]["x_max"] = lot["width"] + 5
    problems = " | ".join(check_plan(bad, lot).problems)
    assert "lot_size.area" in problems and "copy it exactly" in problems
    assert "'Beam' is not in the taxonomy" in problems
    assert "cycle" in problems
    assert "more than the lot width" in problems
    assert check_plan("not json", lot).problems[0].startswith("the plan is not valid JSON")
    within = copy.deepcopy(good)
    within["analysis"]["lot_size"]["width"] = lot["width"] + 0.004  # equal to 2 decimals
    assert check_plan(within, lot).ok


def test_table6_budgets_and_overrides():
    assert TABLE6["planner-atomic"].max_tokens == 16_384 and TABLE6["planner-atomic"].step_retries == 5
    assert TABLE6["planner-reactive"].max_tokens == 64_000 and TABLE6["planner-reactive"].step_retries == 10
    managed = TABLE6["planner-managed"]
    assert (managed.step_retries, managed.global_retries, managed.tau_retry) == (5, 30, 0.4)
    assert TABLE6["iterative-refinement"].max_tokens == 65_536 and TABLE6["iterative-refinement"].revisions == 10
    # the run's options arrive parsed (and bounded) once, before the run starts
    options = SUITE.parse_options({"history": "5", "global_retries": 3})
    b = budget_from_options("planner-managed", options)
    assert b.history == 5 and b.global_retries == 3
    assert budget_from_options("planner-managed", SUITE.parse_options({"history": "full"})).history is None
    with pytest.raises(ConfigError, match="option max_retries='many': expected an integer"):
        SUITE.parse_options({"max_retries": "many"})
    with pytest.raises(ConfigError, match="unknown DreamHouse protocol"):
        make_protocol("freestyle", SUITE.parse_options({}))


@pytest.mark.parametrize("protocol", list(TABLE6))
@pytest.mark.parametrize("agent", ["oracle", "safe-house"])
def test_reference_agents_pass_every_protocol_through_the_runner(tmp_path, registered, protocol, agent):
    # One revision keeps the safe-house's refinement (whose S stays low) short.
    config = RunConfig(suite="dreamhouse", agent=agent, protocol=protocol, split="demo", limit=1, workers=0,
                       options={**OPTS, "revisions": 1})
    result = Runner(config, tmp_path).run()
    assert result.summary["status"] == {"ok": 1}
    assert result.summary["metrics"]["structural_pass"] == 1.0
    assert result.summary["metrics"]["plan_ok"] == 1.0
    with Store(tmp_path) as store:
        ep = next(store.episodes())
    assert ep.steps[0].role == "planner" and ep.steps[0].info["plan_ok"]


@pytest.mark.timeout(180)
def test_oracle_blender_python_passes_managed_in_the_fast_executor(tmp_path, registered):
    config = RunConfig(suite="dreamhouse", agent="oracle", protocol="planner-managed", split="demo", limit=1,
                       workers=0, options={"images": "off"})
    result = Runner(config, tmp_path).run()
    assert result.summary["metrics"]["structural_pass"] == 1.0
    with Store(tmp_path) as store:
        ep = next(store.episodes())
    builder = next(s for s in ep.steps if s.role == "builder")
    assert "```python" in builder.action_text and "primitive_cube_add" in builder.action_text
    assert ep.outcome["protocol"]["steps_passed"] == ep.outcome["protocol"]["steps_total"] > 1
    controls = [s.info["control"] for s in ep.steps if "control" in s.info]
    assert controls[:2] == ["set_scope", "checkpoint"] and controls[-2:] == ["note", "evaluate"]


class _Flaky(Agent):
    """Plans like the oracle; its first try of every build request starts with a floating post."""

    def __init__(self, task):
        self.inner = oracle(task, None, SUITE.parse_options(OPTS))
        self.seen: set[str] = set()

    async def act(self, observation, ctx):
        action = await self.inner.act(observation, ctx)
        req = observation.state.get("request")
        key = f"{req}:{observation.state.get('index')}"
        if req == "plan" or key in self.seen:
            return action
        self.seen.add(key)
        doc = json.loads(action.text.strip("`\njson"))
        doc["members"].insert(0, {"name": "Post_float", "size": [0.089, 0.089, 1.0], "location": [1, 1, 20]})
        return Action(text=json.dumps(doc))


def _run(task, protocol, agent, options=OPTS):
    ctx = EpisodeContext(task=task, seed=0, options=SUITE.parse_options(options))
    env = make_env(task, SUITE.parse_options(options))
    try:
        asyncio.run(make_protocol(protocol, SUITE.parse_options(options)).run(env, agent, ctx))
        return env, ctx
    finally:
        env.close()


def test_managed_rolls_back_failed_steps_and_counts_retries(task):
    env, ctx = _run(task, "planner-managed", _Flaky(task))
    notes = env.outcome().protocol
    assert notes["steps_passed"] == notes["steps_total"]
    assert notes["retries"] == notes["steps_total"]
    assert "Post_float" not in env.structure.names and env.last.all_passed
    failed = [s for s in ctx.steps if s.role == "builder" and not s.info.get("passed")]
    assert failed and "Load path (T1)" in failed[0].observation_text


def test_managed_global_cap_stops_the_episode(task):
    env, ctx = _run(task, "planner-managed", _Flaky(task), {**OPTS, "global_retries": 1})
    notes = env.outcome().protocol
    assert notes["retries"] == 1 and notes["failed_step"] == 2 and notes["steps_passed"] == 1
    assert ctx.steps[-1].role == "validator" and not ctx.steps[-1].info["all_passed"]


def test_reactive_gates_phase_by_phase_then_regenerates_from_empty(task):
    env, ctx = _run(task, "planner-reactive", _Flaky(task))
    builds = [s for s in ctx.steps if s.role == "builder"]
    assert len(builds) == 2
    assert builds[0].info["failed_phase"] == 1
    assert "are invalidated; rewrite the whole submission" in builds[0].observation_text
    assert builds[1].info["all_passed"] and "Post_float" not in env.structure.names


def test_atomic_retries_with_feedback_until_the_frame_passes(task):
    env, ctx = _run(task, "planner-atomic", _Flaky(task))
    # The repair is a full rebuild ("replace"), so the float is gone and the frame passes.
    assert env.last.all_passed and env.outcome().protocol["attempts_to_pass"] == 2


class _Reviser(Agent):
    """Oracle, but its first revision breaks the structure and its second moves one member."""

    def __init__(self, task):
        self.inner = oracle(task, None, SUITE.parse_options(OPTS))
        self.revisions = 0

    async def act(self, observation, ctx):
        action = await self.inner.act(observation, ctx)
        if observation.state.get("request") != "refine":
            return action
        self.revisions += 1
        members = member_entries(ground_truth(ctx.task).structure)
        if self.revisions == 1:
            members.append({"name": "Post_float", "size": [0.089, 0.089, 1.0], "location": [1, 1, 20]})
        return Action(data={"members": members, "replace": True})


def test_refinement_rejects_structural_regressions_even_if_they_look_better(task):
    scores = iter([0.3, 0.9])

    def scorer(task, structure, condition, renderer):
        # Scores the Atomic pass, then the accepted second revision (the first is rejected unscored).
        return VisualScore(next(scores), (0.5,) * 5)

    protocol = make_protocol("iterative-refinement", SUITE.parse_options(OPTS))
    protocol._visual = scorer
    ctx = EpisodeContext(task=task, seed=0, options=SUITE.parse_options(OPTS))
    env = make_env(task, SUITE.parse_options(OPTS))
    try:
        asyncio.run(protocol.run(env, _Reviser(task), ctx))
    finally:
        env.close()
    notes = env.outcome().protocol["refinement"]
    assert notes["rejected"] == 1 and notes["accepted"] == 1
    assert notes["baseline"] == 0.3 and notes["best"] == 0.9 and notes["final"] == 0.9
    assert env.last.all_passed
    assert any("Revision rejected" in s.observation_text for s in ctx.steps)


def test_visual_gate_retries_a_passing_frame_below_tau(task):
    scores = iter([0.5, 0.9])
    protocol = make_protocol("planner-atomic", SUITE.parse_options({**OPTS, "require_visual": "true"}))
    protocol._visual = lambda task, structure, condition, renderer: VisualScore(next(scores), (0.5,) * 5)
    ctx = EpisodeContext(task=task, seed=0, options=SUITE.parse_options(OPTS))
    env = make_env(task, SUITE.parse_options(OPTS))
    try:
        asyncio.run(protocol.run(env, oracle(task, None, SUITE.parse_options(OPTS)), ctx))
    finally:
        env.close()
    assert env.outcome().protocol["attempts_to_pass"] == 2


class _BadPlanner(Agent):
    async def act(self, observation, ctx):
        return Action(text='{"analysis": {}, "sections": [], "construction_order": []}')


def test_a_plan_that_never_passes_ends_the_episode_before_any_build(task):
    env, ctx = _run(task, "planner-managed", _BadPlanner(), {**OPTS, "step_retries": 1})
    assert env.outcome().protocol["plan"] == {"ok": False, "attempts": 2}
    assert [s.role for s in ctx.steps if "control" not in s.info] == ["planner", "planner"]
    assert [s.info["control"] for s in ctx.steps if "control" in s.info] == ["note"]
    assert "analysis.lot_size is missing" in ctx.steps[0].observation_text
    assert len(env.structure) == 0


def test_demo_table_has_table1_layout():
    import math

    from rich.console import Console

    from buildbench.suites.dreamhouse.demo import COLUMNS, DemoRow, demo_table

    values = {key: {"frame": 1.0, "facade": math.nan} for _, key in COLUMNS}
    console = Console(width=160, record=True)
    console.print(demo_table([DemoRow("oracle", "planner-managed", values, 2)]))
    text = console.export_text()
    assert "Struct" in text and "Joint" in text and "Frame/Facade" in text and "managed" in text
    assert "1.00/–" in text
