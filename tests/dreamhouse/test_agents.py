"""DreamHouse agents: single-fault agents fail exactly their tests; a scripted model drives
Planner-Managed end to end over the local OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import re

import numpy as np
import pytest

from buildbench.harness import EpisodeContext, RunConfig, Runner, Store
from buildbench.llm import ScriptedServer
from buildbench.suites.dreamhouse.agents import FAULTS, plan_for, safe_params
from buildbench.suites.dreamhouse.env import make_env
from buildbench.suites.dreamhouse.protocols import make_protocol
from buildbench.suites.dreamhouse.score import score
from buildbench.suites.dreamhouse.scripts import fenced, structure_to_bpy
from buildbench.suites.dreamhouse.suite import suite
from buildbench.suites.dreamhouse.tasks import ground_truth, make_task

TASK = "RN_01_0001"
OPTS = {"action_format": "json", "images": "off", "step_retries": 0}

EXPECTED = {
    "fault-no-roof": {"roof_coverage", "gap_detection"},
    "fault-overspan-joist": {"span_limits", "deflection"},
    "fault-floating-stud": {"dual_end_connection"},
    "fault-bad-name": {"member_integrity"},
}


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """Score structure only: rendering fidelity for every episode here would dominate the
    run time, and fidelity has its own tests (test_fidelity, test_views, test_fidelity_e2e)."""
    from buildbench.suites.dreamhouse import protocols, score

    monkeypatch.setattr(score, "METRICS", [score.structural_metrics, score.count_metrics])
    monkeypatch.setattr(protocols, "visual_scorer", lambda: None)


@pytest.fixture(scope="module")
def task():
    return make_task(TASK)


def _failed_tests(task, agent_name, protocol="planner-atomic", options=OPTS):
    ctx = EpisodeContext(task=task, seed=0, options=suite.parse_options(options))
    env = make_env(task, suite.parse_options(options))
    try:
        agent = suite.agent(agent_name).factory(task, None, suite.parse_options(options))
        asyncio.run(make_protocol(protocol, suite.parse_options(options)).run(env, agent, ctx))
        metrics = score(task, env.outcome())
    finally:
        env.close()
    return {k[5:] for k, v in metrics.items() if k.startswith("test_") and v == 0.0}, metrics


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_single_fault_agents_fail_exactly_their_tests(task, name):
    failed, metrics = _failed_tests(task, name)
    assert failed == EXPECTED[name]
    assert metrics["structural_pass"] == 0.0


def test_faults_also_fail_in_the_released_profile_and_under_other_formats(task):
    failed, _ = _failed_tests(task, "fault-overspan-joist", options={**OPTS, "profile": "released"})
    assert failed == {"span_limits", "deflection"}
    failed, _ = _failed_tests(task, "fault-floating-stud", options={**OPTS, "action_format": "tools"})
    assert failed == {"dual_end_connection"}


def test_safe_house_ignores_the_house_but_passes(task):
    params = safe_params(task)
    assert len(params.sections) == 1 and params.stories == task.inputs["stories"]
    assert params.roof_type == task.inputs["roof_type"]
    failed, metrics = _failed_tests(task, "safe-house")
    assert failed == set() and metrics["members"] != metrics["target_members"]


# -- a scripted model over HTTP ------------------------------------------------------------
def _text(message) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])


class Model:
    """Answers like a model that reads the prompt: a plan (wrong lot area first), then each
    step's members as Blender Python; step 2's first try leaves a floating post."""

    def __init__(self):
        self.calls: list[int] = []

    def __call__(self, request):
        self.calls.append(len(request.messages))
        users = [_text(m) for m in request.messages if m["role"] == "user"]
        task = make_task(re.search(r'collection named "(\w+)"', users[0]).group(1))
        house = ground_truth(task)
        last = users[-1]
        step_asks = [u for u in users if re.search(r"Step \d+ of", u)]
        if not step_asks:
            plan = plan_for(house, dict(task.inputs["lot_size"]))
            if len(users) == 1:
                plan["analysis"]["lot_size"]["area"] += 1.0  # "recomputed" area: rejected
            return "Here is my plan:\n```json\n" + json.dumps(plan) + "\n```"
        k = int(re.search(r"Step (\d+) of", step_asks[-1]).group(1))
        ph = house.phases[k - 1]
        part = house.structure.subset(np.arange(ph.start, ph.start + ph.count))
        code = structure_to_bpy(part, task.id)
        if k == 2 and "failed (" not in last:
            code += "\nbpy.ops.mesh.primitive_cube_add(size=1, location=(1, 1, 30))\n"
            code += "bpy.context.active_object.name = 'Post_float'\ncoll.objects.link(bpy.context.active_object)\n"
        return fenced(code)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("history", [None, 2])
def test_llm_agent_runs_planner_managed_end_to_end(tmp_path, monkeypatch, history):
    model = Model()
    options = {"images": "off"} if history is None else {"images": "off", "history": history}
    with ScriptedServer(model) as server:
        config = RunConfig(suite="dreamhouse", agent="llm", protocol="planner-managed", split="demo", limit=1,
                           seed=0, model=f"vllm:scripted@{server.base_url}", workers=0, options=options)
        result = Runner(config, tmp_path).run()
        n_requests = len(server.requests)
        max_tokens = {r.body.get("max_tokens") or r.body.get("max_completion_tokens") for r in server.requests}
    assert result.summary["status"] == {"ok": 1}
    assert result.summary["metrics"]["structural_pass"] == 1.0
    with Store(tmp_path) as store:
        ep = next(store.episodes())
    notes = ep.outcome["protocol"]
    assert notes["plan"] == {"ok": True, "attempts": 2, "steps": notes["steps_total"]}
    assert notes["steps_passed"] == notes["steps_total"] and notes["retries"] == 2  # plan + step 2
    assert n_requests == 2 + notes["steps_total"] + 1
    assert max_tokens == {16_384}
    planner = [s for s in ep.steps if s.role == "planner"]
    assert "lot_size.area" in planner[0].observation_text
    gated = [s for s in ep.steps if s.role == "builder" and not s.info.get("passed")]
    assert len(gated) == 1 and "Post_float" in gated[0].observation_text
    assert ep.steps[-1].role == "validator" and ep.steps[-1].info["all_passed"]
    if history is not None:
        # system + task turn + the last `history` exchanges (2 messages each) + the new input
        assert max(model.calls) <= 1 + 2 + 2 * history + 1
    else:
        assert max(model.calls) == 2 * n_requests  # system + every earlier exchange + the new input
