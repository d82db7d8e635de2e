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
    with pytest.raises(ConfigError, match=r"^buildbench/Example: no split 'huge'; splits: default, demo$"):
        gymnasium.make(IDS["example"], split="huge")
    with pytest.raises(ConfigError, match=r"^unknown option 'max_stepz' for buildbench/Example; options: "):
        gymnasium.make(IDS["example"], options={"max_stepz": 2})
    with pytest.raises(ConfigError, match=r"^option max_steps='many': ") as info:
        gymnasium.make(IDS["example"], options={"max_steps": "many"})
    assert "\n" not in str(info.value)


def test_options_are_parsed_once_into_the_suites_options_class() -> None:
    from buildbench.harness import get_suite

    suite = get_suite("example")
    made = BuildbenchEnv("example", split="demo", options={"max_steps": "3"})
    assert isinstance(made.options, suite.options_model()) and made.options.given() == {"max_steps": 3}
    made.reset()
    made.close()


@pytest.mark.parametrize("suite", SUITES)
def test_reset_info_schemas_are_standard_json_schema_of_the_state(suite: str) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (dev extra) is not installed")
    env = _make(suite, task=0, seed=0)
    obs, info = env.reset()
    env.close()
    for key in ("state_schema", "action_schema"):
        if info[key] is not None:
            jsonschema.Draft202012Validator.check_schema(info[key])
    state = json.loads(obs["state"])
    if state:  # validates against what the same record declares
        jsonschema.validate(state, info["state_schema"], cls=jsonschema.Draft202012Validator)


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


@pytest.mark.parametrize("mode", ["async", "sync"])
@pytest.mark.parametrize("suite", SUITES)
def test_vector_envs_in_both_modes(suite: str, mode: str) -> None:
    """Issue 25: ``make_vec(..., vectorization_mode="async")`` raised KeyError '{' after 74 s spent
    allocating shared memory for 16 M-character text spaces. Shared memory now holds any text.
    Async workers start by forkserver: a worker forked from this process, which has rendered with
    OpenGL in earlier tests, cannot render (DreamHouse then shows no images)."""
    import buildbench.gym

    gymnasium.register_envs(buildbench.gym)
    vector_kwargs = {"context": "forkserver"} if mode == "async" else {}
    envs = gymnasium.make_vec(IDS[suite], num_envs=2, vectorization_mode=mode, split="demo", seed=4,
                              options=SUITES[suite], vector_kwargs=vector_kwargs)
    try:
        obs, info = envs.reset(seed=9)
        single = _make(suite, task=0, seed=4)
        first, _ = single.reset(seed=9)
        single.close()
        assert isinstance(obs["text"], tuple) and len(obs["text"]) == 2
        for key in ("text", "state"):
            assert TEMP_PATH.sub("", obs[key][0]) == TEMP_PATH.sub("", first[key])
        actions = ("Größe × 3 — °", json.dumps({"control": "nope", "args": {}}))
        obs, reward, terminated, truncated, info = envs.step(actions)
        assert obs["text"][1].startswith("Unknown control 'nope'") and reward.shape == (2,)
        assert all(t in envs.single_observation_space["text"] for t in obs["text"])
    finally:
        envs.close()


def test_shared_text_memory_round_trips_any_unicode_to_the_bound() -> None:
    import copy
    import pickle

    from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

    space = AnyText(12)
    memory = create_shared_memory(space, n=3)
    view = read_from_shared_memory(space, memory, n=3)
    texts = ("", "日本語 × 🙂", "x" * 12)
    for i, text in enumerate(texts):
        write_to_shared_memory(space, i, text, memory)
    assert tuple(view) == texts and view == texts and view[1:] == texts[1:]
    assert copy.deepcopy(view) == texts and type(copy.deepcopy(view)) is tuple
    assert pickle.loads(pickle.dumps(view)) == texts
    write_to_shared_memory(space, 0, "later", memory)
    assert view[0] == "later"  # a view follows the workers' writes
    with pytest.raises(ValueError, match="cannot hold a text of 13 characters"):
        write_to_shared_memory(space, 0, "y" * 13, memory)


def test_an_observation_over_the_bound_is_refused_by_name() -> None:
    env = _make("example", task=0, seed=0, max_observation_chars=100)
    with pytest.raises(ValueError, match="the observation's text has 559 characters, over max_observation_chars=100"):
        env.reset()
    with pytest.raises(ConfigError, match="max_observation_chars must be >= 1"):
        _make("example", max_observation_chars=0)


def _example(name: str) -> object:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "gym" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"gym_example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_max_turns_truncates_and_scores() -> None:
    env = _make("example", task=0, seed=0, max_turns=2)
    env.reset()
    assert env.step("one")[2:4] == (False, False)
    obs, reward, terminated, truncated, info = env.step("two")
    assert (terminated, truncated) == (False, True) and info["metrics"]["passed"] == 0.0
    with pytest.raises(ConfigError, match="max_turns must be >= 1 or None"):
        _make("example", max_turns=0)


def test_the_worked_examples_run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    assert _example("random_policy").main(["--mode", "sync", "--episodes", "2", "--episode-steps", "2"]) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert out.count("episode over, return 0, verifier: {'attempts': 2.0") == 2 and "2 episodes finished" in out
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the default model spec is a path from the repo root
    assert _example("llm_policy").main(["--task", "1"]) == 0  # type: ignore[attr-defined]
    assert "return 1; verifier: {" in capsys.readouterr().out
