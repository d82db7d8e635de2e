"""Every suite through ``gymnasium.make`` and Gymnasium's own env checker, deterministic by seed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings

import pytest

gymnasium = pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from buildbench.gym import AnyText, BuildbenchEnv, env_id  # noqa: E402
from buildbench.harness.errors import ConfigError  # noqa: E402
from buildbench.suites.example.agents import tower_design  # noqa: E402

# Each suite's -o options for these checks (none: the defaults are fast enough on the demo split).
SUITES: dict[str, dict[str, object]] = {name: {} for name in
                                        ("example", "dreamhouse", "buildarena", "bimedit", "legoeval", "scenerevis")}
IDS = {"example": "buildbench/Example-v0", "dreamhouse": "buildbench/DreamHouse-v0",
       "buildarena": "buildbench/BuildArena-v0", "bimedit": "buildbench/BimEdit-v0",
       "legoeval": "buildbench/LegoEval-v0", "scenerevis": "buildbench/SceneReVis-v0"}
# BIM-Edit's prompt names the episode's temporary working copy of the model.
TEMP_PATH = re.compile(r"/[^\s\"']*bimedit-[^/\s\"']+")


def _make(suite: str, **kwargs: object) -> gymnasium.Env:
    return gymnasium.make(IDS[suite], split="demo", options=SUITES[suite], **kwargs)


@pytest.mark.parametrize("suite", SUITES)
def test_registered_and_passes_the_env_checker(suite: str) -> None:
    assert env_id(suite) == IDS[suite] and IDS[suite] in gymnasium.registry
    env = _make(suite, task=0, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning fails the test too
        check_env(env.unwrapped, skip_render_check=True)
    env.close()


def _rollout(suite: str, seed: int, actions: list[str]) -> list[object]:
    env = _make(suite, task=0, seed=seed)
    obs, info = env.reset()
    trace: list[object] = [obs, info]
    for action in actions:
        out = env.step(action)
        trace.append(out)
        if out[2] or out[3]:
            break
    env.close()
    return json.loads(TEMP_PATH.sub("<workdir>", json.dumps(trace, sort_keys=True)))


@pytest.mark.parametrize("suite", SUITES)
def test_same_seed_same_episode(suite: str) -> None:
    actions = ["hello", '{"tool_calls": [{"name": "nothing", "arguments": {}}]}', "```python\nx = 1\n```"]
    first = _rollout(suite, 11, actions)
    assert _rollout(suite, 11, actions) == first
    assert first[1]["episode_seed"] != _rollout(suite, 12, actions[:1])[1]["episode_seed"]


def test_a_solved_example_is_scored_by_the_verifier() -> None:
    env = _make("example", task="tower_0003_0002", seed=3)
    obs, info = env.reset()
    task = env.unwrapped.task
    assert task.id == "tower_0003_0002"
    obs, reward, terminated, truncated, info = env.step(json.dumps({"blocks": tower_design(task)}))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["metrics"]["passed"] == 1.0 and info["metrics"]["height_ratio"] == 1.0
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step("more")
    env.reset()
    with pytest.raises(ValueError, match="an action is text of at most 1000000 characters, got 1000001 characters"):
        env.step("x" * 1_000_001)
    with pytest.raises(ValueError, match="got bytes"):
        env.step(b"{}")  # type: ignore[arg-type]
    assert env.step("{}")[4]["invalid"]  # the env is intact after the refusals


def test_tool_calls_travel_as_json_text() -> None:
    env = _make("example", task=1, seed=0)
    obs, info = env.reset()
    assert [t["name"] for t in info["tools"]] == ["submit_blocks"]
    design = tower_design(env.unwrapped.task, fraction=0.5)
    call = {"tool_calls": [{"name": "submit_blocks", "arguments": {"blocks": design}}]}
    obs, reward, terminated, _, info = env.step(json.dumps(call))
    assert reward == 0.0 and not terminated and info["tests"]["height"] is False
    assert json.loads(obs["state"])["blocks"] == design


def test_task_selection_and_options_are_checked() -> None:
    by_index = _make("example", task=-1, seed=2).unwrapped
    assert by_index.task.id == "tower_0002_0005"
    env = _make("example", task=0, seed=2)
    env.reset(options={"task": "tower_0002_0004"})
    assert env.unwrapped.task.id == "tower_0002_0004"
    with pytest.raises(ConfigError, match="task index 6 is out of range"):
        _make("example", task=6)
    with pytest.raises(ConfigError, match="no task 'nope'"):
        _make("example", task="nope")
    with pytest.raises(ValueError, match="no split 'huge'"):
        gymnasium.make(IDS["example"], split="huge")
    with pytest.raises(ConfigError, match="max_stepz"):
        gymnasium.make(IDS["example"], options={"max_stepz": 2})


def test_text_space_accepts_any_unicode_and_samples_short_ascii() -> None:
    space = AnyText(10)
    assert "× — °" in space and "x" * 11 not in space and 3 not in space
    space.seed(0)
    samples = [space.sample() for _ in range(20)]
    assert all(s.isascii() and 1 <= len(s) <= 64 for s in samples)
    space.seed(0)
    assert [space.sample() for _ in range(20)] == samples


def test_module_qualified_id_registers_in_a_fresh_interpreter() -> None:
    code = ("import gymnasium; env = gymnasium.make('buildbench.gym:buildbench/Example-v0', split='demo');"
            "obs, info = env.reset(); print(isinstance(env.unwrapped, __import__('buildbench.gym').gym.BuildbenchEnv))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_env_class_is_usable_without_the_registry() -> None:
    env = BuildbenchEnv("example", task=0, split="demo", seed=0)
    obs, _ = env.reset(seed=1)
    assert obs in env.observation_space


def test_observation_images_are_kept_beside_the_text() -> None:
    env = _make("dreamhouse", task=0, seed=0)
    obs, info = env.reset()
    assert len(env.unwrapped.images) == info["n_images"]
    assert "images" not in obs


def test_controls_travel_as_json_text() -> None:
    """RL code plays the protocol's part too: BuildArena's product is named by the set_final control."""
    env = _make("buildarena", task=0, seed=0)
    obs, info = env.reset()
    assert "set_final" in info["controls"] and "start" in {t["name"] for t in info["tools"]}
    start = {"tool_calls": [{"name": "start", "arguments": {}}]}
    assert env.step(json.dumps(start))[4]["ok"] is True
    obs, reward, terminated, truncated, info = env.step(json.dumps({"control": "set_final", "args": {"machine_id": "1"}}))
    assert (reward, terminated, truncated) == (0.0, False, False) and info["control"] == "set_final"
    outcome = env.unwrapped.outcome()
    assert outcome["final"] == "1" and outcome["parts"] == 1
    obs, *_, info = env.step(json.dumps({"control": "launch", "args": {}}))
    assert "Unknown control 'launch'" in obs["text"] and "set_final" in obs["text"] and "invalid" in info
    obs, *_ = env.step(json.dumps({"control": "set_final", "args": {"machine_id": "9"}}))
    assert obs["text"].startswith("Control set_final refused: no machine '9'")
    assert env.unwrapped.outcome()["final"] == "1"
