"""DreamHouse's paper results: the visual-retry gate (on by default), Managed with per-step
visual feedback (Table 5), T of failed structures, and Tables 2 and 5 from stored runs."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import numpy as np
import pytest

from buildbench.harness import Agent, Episode, EpisodeContext, RunConfig, Runner, Store
from buildbench.harness.tables import cell_text
from buildbench.suites.dreamhouse.agents import oracle
from buildbench.suites.dreamhouse.env import make_env
from buildbench.suites.dreamhouse.fidelity import fidelity_metrics
from buildbench.suites.dreamhouse.protocols import TABLE6, make_protocol
from buildbench.suites.dreamhouse.report import runs_summary
from buildbench.suites.dreamhouse.report_extra import t_split_rows, table2_rows, table5_rows
from buildbench.suites.dreamhouse.suite import suite
from buildbench.suites.dreamhouse.tasks import ground_truth, make_task
from buildbench.suites.dreamhouse.views import VisualScore

OPTS = {"action_format": "json", "images": "off"}


@pytest.fixture(scope="module")
def task():
    return make_task("RN_01_0001")


class _Watcher(Agent):
    """The oracle, remembering every observation it was shown."""

    def __init__(self, task):
        self.inner = oracle(task, None, suite.parse_options(OPTS))
        self.seen = []

    async def act(self, observation, ctx):
        self.seen.append(observation)
        return await self.inner.act(observation, ctx)


def _run(task, protocol, agent, scores, options=OPTS):
    """Run ``protocol`` with a scorer that returns ``scores`` in turn (the last one forever)."""
    queue = list(scores)
    calls = []

    def scorer(task, structure, condition, renderer):
        calls.append(len(structure))
        value = queue.pop(0) if len(queue) > 1 else queue[0]
        return VisualScore(value, (value,) * 5, (np.zeros((4, 8, 4), np.uint8),) * 5)

    proto = make_protocol(protocol, suite.parse_options(options))
    proto._visual = scorer
    ctx = EpisodeContext(task=task, seed=0, options=suite.parse_options(options))
    env = make_env(task, suite.parse_options(options))
    try:
        asyncio.run(proto.run(env, agent, ctx))
    finally:
        env.close()
    return env, ctx, calls


def test_the_visual_gate_is_on_by_default_and_can_be_turned_off():
    for name in TABLE6:
        assert make_protocol(name, suite.parse_options({})).require_visual
        # options reach a protocol parsed by the suite's typed model (``-o require_visual=false``)
        assert not make_protocol(name, suite.parse_options({"require_visual": "false"})).require_visual


def test_atomic_gate_retries_below_tau_then_the_frame_stands(task):
    env, _, calls = _run(task, "planner-atomic", oracle(task, None, suite.parse_options(OPTS)), [0.1], {**OPTS, "step_retries": 2})
    notes = env.outcome().protocol
    assert len(calls) == 3 and notes["retries"] == 2 and "attempts_to_pass" not in notes
    assert env.last.all_passed  # a frame that only looks wrong still stands as built


def test_managed_visual_shows_the_frame_beside_the_target_after_each_step(task):
    agent = _Watcher(task)
    env, _, calls = _run(task, "planner-managed-visual", agent, [0.9])
    steps = [o for o in agent.seen if o.state.get("request") == "step"]
    total = env.outcome().protocol["steps_total"]
    assert len(steps) == total > 1
    assert not steps[0].images and "So far your frame scores" not in steps[0].text
    assert all(len(o.images) == 5 and "S = 0.900" in o.text for o in steps[1:])
    assert len(calls) == total  # after each of the first total-1 steps, and the last step's gate
    # Plain Managed shows no images and renders only for the last step's gate.
    agent = _Watcher(task)
    _, _, calls = _run(task, "planner-managed", agent, [0.9])
    assert all(not o.images for o in agent.seen) and len(calls) == 1


def test_managed_gate_retries_the_last_step_then_keeps_it(task):
    env, _, calls = _run(task, "planner-managed", oracle(task, None, suite.parse_options(OPTS)), [0.1, 0.5], {**OPTS, "step_retries": 3})
    notes = env.outcome().protocol
    assert notes["steps_passed"] == notes["steps_total"] and notes["retries"] == 1 and len(calls) == 2
    env, _, calls = _run(task, "planner-managed", oracle(task, None, suite.parse_options(OPTS)), [0.1], {**OPTS, "step_retries": 1})
    notes = env.outcome().protocol
    assert notes["steps_passed"] == notes["steps_total"] and env.last.all_passed and len(calls) == 2


def test_t_is_kept_for_failed_structures(task):
    target = ground_truth(task).structure
    half = target.subset(np.arange(len(target) // 2))
    out = fidelity_metrics(False, half, target, None, None)
    assert math.isnan(out["topological_fidelity"]) and math.isnan(out["visual_fidelity"])
    assert 0.0 < out["topological_fidelity_any"] < 1.0
    same = fidelity_metrics(True, target, target, None, None)
    assert same["topological_fidelity_any"] == same["topological_fidelity"] == pytest.approx(1.0)


def _ep(i, protocol, metrics, notes=None, agent="m"):
    return Episode(task_id=f"T{i}", sample=0, suite="dreamhouse", agent=agent, protocol=protocol, seed=0,
                   outcome={"condition": "frame", "protocol": notes or {}}, metrics=metrics)


def _refined(i, baseline, final, best, accepted, rejected):
    notes = {"refinement": {"status": "done", "baseline": baseline, "final": final, "best": best,
                            "accepted": accepted, "rejected": rejected, "eligible": baseline < 0.6}}
    return _ep(i, "iterative-refinement", {"structural_pass": 1.0}, notes)


def test_table2_hand_computed():
    episodes = [
        _refined(0, 0.30, 0.40, 0.45, 3, 1),
        _refined(1, 0.50, 0.50, 0.50, 0, 2),
        _refined(2, 0.70, 0.70, 0.70, 0, 0),  # S ≥ τ: never entered refinement
        _ep(3, "iterative-refinement", {"structural_pass": 0.0}, {"refinement": {"status": "no_structural_pass"}}),
    ]
    ours, *paper = table2_rows(episodes)
    assert ours == {"model": "m", "baseline": "0.400", "final": "0.450", "best": "0.475", "Δ": "+0.050",
                    "improved": "50.0%", "retained": "50.0%", "N": 2}
    assert [r["model"] for r in paper] == ["Claude*", "GPT-5*", "Gemini*"]
    assert paper[0]["baseline"] == "0.408" and paper[0]["retained"] == "68.5%"


def test_table5_and_t_split_hand_computed():
    def m(struct, s, vis, joint, t_any):
        return {"structural_pass": struct, "visual_fidelity": s, "visual_pass": vis, "joint_pass": joint,
                "topological_fidelity_any": t_any}

    episodes = [
        _ep(0, "planner-managed", m(1.0, 0.4, 0.0, 0.0, 0.3)),
        _ep(1, "planner-managed", m(0.0, math.nan, 0.0, 0.0, 0.1)),
        _ep(2, "planner-managed-visual", m(1.0, 0.7, 1.0, 1.0, 0.5)),
        _ep(3, "planner-managed-visual", m(1.0, 0.5, 0.0, 0.0, 0.4)),
    ]
    rows = [r for r in table5_rows(episodes) if not r["model"].endswith("*")]
    assert rows == [
        {"model": "m", "variant": "managed", "struct": "0.500", "visual": "0.400", "vis pass": "0.000",
         "joint": "0.000", "N": 2},
        {"model": "m", "variant": "managed+v", "struct": "1.000", "visual": "0.600", "vis pass": "0.500",
         "joint": "0.500", "N": 2},
    ]
    split = {r["protocol"]: r for r in t_split_rows(episodes) if not r["model"].endswith("*")}
    assert (split["managed"]["T passed"], split["managed"]["T failed"]) == (pytest.approx(0.3), pytest.approx(0.1))
    assert cell_text(split["managed"]["T passed"]) == "0.300"  # one task: no interval
    assert (split["managed"]["N passed"], split["managed"]["N failed"]) == (1, 1)
    assert split["managed+v"]["T failed"] == "–"


def test_tables_2_and_5_from_stored_runs(tmp_path: Path):
    """Real runs: safe-house (structurally sound, visually unlike the target) under refinement
    and both Managed variants, read back from their stores by the report."""
    runs = []
    for protocol in ("iterative-refinement", "planner-managed", "planner-managed-visual"):
        out = tmp_path / protocol
        config = RunConfig(suite="dreamhouse", agent="safe-house", protocol=protocol, split="demo", limit=1,
                           workers=0, options={"images": "off", "action_format": "json", "revisions": 1,
                                               "global_retries": 0})
        Runner(config, out).run()
        runs.append(out)
    tables = runs_summary(runs)
    table2 = next(rows for title, rows in tables.items() if title.startswith("Table 2"))
    ours = [r for r in table2 if r["model"] == "safe-house"]
    assert len(ours) == 1 and ours[0]["N"] == 1
    with Store(runs[0], create=False) as store:
        (ep,) = list(store.episodes())
    notes = ep.outcome["protocol"]["refinement"]
    assert notes["revisions"] == 1 and ours[0]["baseline"] == f"{notes['baseline']:.3f}"
    table5 = next(rows for title, rows in tables.items() if title.startswith("Table 5"))
    variants = [r["variant"] for r in table5 if r["model"] == "safe-house"]
    assert variants == ["managed", "managed+v"]
    split = next(rows for title, rows in tables.items() if title.startswith("T of passed"))
    assert {r["protocol"] for r in split if r["model"] == "safe-house"} == {"refine", "managed", "managed+v"}
