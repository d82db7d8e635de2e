"""Episodes fail for what the agent did: a sabotaging agent in every suite ends scored, never unscored.

Each agent below (a user agent, ``--agent FILE.py:factory``) does what a weak or hostile model
does: text that parses as nothing, output over a limit, or never the output the suite scores.
Every episode must come out scored (``ok`` with failing values, or ``failed`` with the reason
the agent's output was refused, `AgentFailure`), counted in the run's means; only
infrastructure faults may leave an episode unscored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import Action, Observation, Task, get_suite
from buildbench.harness.context import EpisodeContext
from buildbench.harness.episode import SCORED_STATUSES
from buildbench.harness.runner import RunConfig, Runner
from buildbench.harness.store import Store

HERE = Path(__file__)


class _Garbage:
    """Answers every turn with text no suite can read."""

    name = "garbage"

    def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        return Action(text="I am not sure. <<<{ not json ]]] </create>")


def garbage(task: Task, model: Any, options: dict[str, Any]) -> _Garbage:
    return _Garbage()


class _TooManyMembers:
    """DreamHouse: a valid plan (the oracle agent's), then a script that builds 20,001 members."""

    name = "too-many-members"

    def __init__(self, task: Task, options: dict[str, Any]) -> None:
        self.planner = get_suite("dreamhouse").agent("oracle").factory(task, None, options)

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        if observation.state.get("request") == "plan":
            return await self.planner.act(observation, ctx)
        code = ("import bpy\nfor i in range(20001):\n"
                "    bpy.ops.mesh.primitive_cube_add(size=1, location=(i * 0.05, 0, 1))\n"
                "    bpy.context.active_object.name = f'Stud_{i}'\n")
        return Action(text=f"```python\n{code}```")


def too_many_members(task: Task, model: Any, options: dict[str, Any]) -> _TooManyMembers:
    return _TooManyMembers(task, options)


class _TooManyBlocks:
    """Example suite: a design of a million and one blocks in one action."""

    name = "too-many-blocks"

    def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        block = {"size": [0.1, 0.1, 0.1], "position": [0.0, 0.0, 0.05]}
        return Action(text=json.dumps({"blocks": [block] * 20_001}))


def too_many_blocks(task: Task, model: Any, options: dict[str, Any]) -> _TooManyBlocks:
    return _TooManyBlocks()


def _run(tmp_path: Path, suite: str, agent: str, options: dict[str, Any] | None = None) -> tuple[list[Any], Any]:
    config = RunConfig(suite=suite, agent=f"{HERE}:{agent}", protocol=get_suite(suite).default_protocol,
                       split="demo", limit=1, workers=0, options=options or {})
    result = Runner(config, tmp_path / "run").run()
    store = Store(tmp_path / "run")
    try:
        return list(store.episodes()), result.summary
    finally:
        store.close()


def _said(episode: Any) -> str:
    """Everything the run told about the episode: its error and every observation."""
    return "\n".join([episode.error or "", *(step.observation_text for step in episode.steps)])


#: (suite, agent, the metric whose mean shows the failure, its failing mean, what the run says why)
CASES = [
    ("example", "garbage", "passed", 0.0, "could not parse"),
    ("example", "too_many_blocks", "passed", 0.0, "blocks"),
    ("dreamhouse", "too_many_members", "structural_pass", 0.0, "over the limit of 20000"),
    ("buildarena", "garbage", "passed", 0.0, ""),
    ("bimedit", "garbage", "solved", 0.0, ""),
    ("scenerevis", "garbage", "valid_placement", 0.0, "no final scene"),
    ("legoeval", "garbage", "partial_holds", 0.0, "no verdicts"),
]
#: Run options per agent. The refused build is the same on every retry (each one builds 20,001
#: members again, ~4 s), so one attempt shows the refusal (the retry budget has its own tests);
#: the target views are not what is refused, so they are not rendered.
OPTIONS: dict[str, dict[str, Any]] = {"too_many_members": {"step_retries": 0, "images": "off"}}


@pytest.mark.parametrize(("suite", "agent", "metric", "failing", "reason"), CASES,
                         ids=[f"{s}-{a}" for s, a, *_ in CASES])
def test_a_sabotaging_agent_is_scored_as_failed(tmp_path: Path, suite: str, agent: str, metric: str,
                                                failing: float, reason: str) -> None:
    episodes, summary = _run(tmp_path, suite, agent, OPTIONS.get(agent))
    assert episodes and all(ep.status in SCORED_STATUSES for ep in episodes), \
        [(ep.status, ep.error) for ep in episodes]
    assert summary.get("unscored", 0) == 0
    for ep in episodes:
        assert ep.metrics.get(metric) == failing, (metric, ep.metrics)
        assert reason in _said(ep), _said(ep)[-2000:]
        if ep.status == "failed":
            assert ep.error_kind == "agent_output" and ep.error.startswith("agent output refused: ")


def test_a_missing_scene_is_a_failure_with_its_reason_and_the_suites_failing_values(tmp_path: Path) -> None:
    (episode,), summary = _run(tmp_path, "scenerevis", "garbage")
    assert episode.status == "failed", episode.error
    assert "no final scene" in (episode.error or "")
    task = get_suite("scenerevis").load_tasks("demo", 0)[0]
    assert episode.metrics == get_suite("scenerevis").failure_metrics(task)  # type: ignore[misc]
    assert summary["status"] == {"failed": 1}
    assert summary["metrics"]["valid_placement"] == 0.0


def test_outputs_past_the_caps_are_refused_before_scoring(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame past ``house_members`` and a scene past ``scene_objects`` are the agent's failure,
    found before any test, render or physics runs (limits lowered here to keep it small)."""
    from buildbench.harness.errors import AgentFailure

    monkeypatch.setenv("BUILDBENCH_LIMIT_HOUSE_MEMBERS", "3")
    monkeypatch.setenv("BUILDBENCH_LIMIT_SCENE_OBJECTS", "3")
    house = get_suite("dreamhouse")
    task = house.load_tasks("demo", 0)[0]
    frame = {"structure": {"names": [f"Stud_{i}" for i in range(4)], "sizes_m": [[0.04, 0.09, 2.4]] * 4,
                           "transforms": [[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1.2]]] * 4}}
    with pytest.raises(AgentFailure, match="4 members, over the cap of 3"):
        house.score(task, house.read_outcome(frame))
    scenes = get_suite("scenerevis")
    task = scenes.load_tasks("demo", 0)[0]
    chair = {"desc": "chair", "size": [0.5, 0.9, 0.5], "pos": [0.0, 0.0, 0.0], "rot": [0, 0, 0, 1]}
    scene = {"room_type": "bedroom", "bounds_top": [], "bounds_bottom": [], "objects": [chair] * 4}
    with pytest.raises(AgentFailure, match="4 objects, over the cap of 3"):
        scenes.score(task, scenes.read_outcome({"scene": scene}))
