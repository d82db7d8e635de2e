"""BIM-Edit's reward: the paper's final score of the last commit, on the step that ends the episode."""

from __future__ import annotations

import pytest

from buildbench.harness import Action, Task
from buildbench.suites.bimedit import score as episode_score
from buildbench.suites.bimedit.env import BimEditEnv
from buildbench.suites.bimedit.options import BimEditOptions
from buildbench.suites.bimedit.reward import REWARD_SEED

from .test_env_tool import call, door_task  # noqa: F401 (the fixture)


def _play(task: Task, codes: list[str]) -> tuple[list[float], float, dict]:
    env = BimEditEnv(BimEditOptions())
    try:
        env.reset(task)
        rewards = [env.step(call(code, i)).reward for i, code in enumerate(codes)]
        done = env.step(Action(text="done"))
        assert done.terminated
        return rewards, done.reward, env.outcome()
    finally:
        env.close()


@pytest.mark.timeout(300)
def test_the_final_reward_is_the_scorers_final_metric(door_task: Task) -> None:  # noqa: F811
    assert REWARD_SEED == episode_score.SCORE_SEED
    oracle = door_task.target["oracle_code"] + "\ncommit()"
    rewards, final, outcome = _play(door_task, [oracle])
    assert rewards == [0.0]
    assert final == pytest.approx(episode_score.score(door_task, outcome)["final"]) == pytest.approx(1.0)
    _, untouched, outcome = _play(door_task, ["result = 1"])
    assert untouched == pytest.approx(episode_score.score(door_task, outcome)["final"]) and untouched < 1.0
