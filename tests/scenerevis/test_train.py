"""GRPO pieces: advantages, multi-turn rollouts in the real environment with rewards, the TRL
reward function, and (slow) a TRL GRPOTrainer smoke run on a tiny random model."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.llm import ScriptedChat
from buildbench.suites.scenerevis.env import SceneReVisEnv
from buildbench.suites.scenerevis.generate.export import read_records
from buildbench.suites.scenerevis.generate.pipeline import ReverseOptions, generate_chains
from buildbench.suites.scenerevis.generate.rooms import generate_rooms
from buildbench.suites.scenerevis.options import SceneReVisOptions
from buildbench.suites.scenerevis.tasks import prompt_task
from buildbench.suites.scenerevis.train.grpo import chat_policy, grpo_advantages, rollout
from buildbench.suites.scenerevis.train.trl_adapter import SceneReVisTurnReward, turn_prompts


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    path = tmp_path_factory.mktemp("chains") / "chains.jsonl"
    generate_chains(generate_rooms(2, seed=6), path, ReverseOptions(seed=6, candidates=2, keep=2))
    return list(read_records(path))


def test_grpo_advantages() -> None:
    adv = grpo_advantages([1.0, 0.0, 0.5, -1.0, -1.0, -1.0], group=3)
    assert adv[:3] == pytest.approx([1.0, -1.0, 0.0], abs=1e-5)  # std with Bessel's correction is 0.5
    assert adv[3:] == [0.0, 0.0, 0.0]
    with_error = grpo_advantages([2.0, None, 0.0], group=3)
    assert with_error[1] is None and with_error[0] == pytest.approx(-with_error[2])
    assert grpo_advantages([None, 0.3], group=2) == [None, 0.0]
    with pytest.raises(ValueError, match="groups of 4"):
        grpo_advantages([0.0] * 6, group=4)
    with pytest.raises(ValueError, match="not finite"):
        grpo_advantages([0.0, math.nan], group=2)


def _assistant_turns(rec: dict) -> list[str]:
    return [m["content"] for m in rec["messages"] if m["role"] == "assistant"]


def _env() -> SceneReVisEnv:
    return SceneReVisEnv(SceneReVisOptions(max_turns=12, render=False))


def test_rollout_collects_rewards_and_advantages(records: list[dict]) -> None:
    rec = records[0]
    gold = _assistant_turns(rec)
    episodes: list[int] = []

    def policy(messages: list[dict[str, Any]]) -> str:
        if len(messages) == 2:  # system + first observation: a new episode
            episodes.append(0)
        if len(episodes) == 3:
            raise RuntimeError("model endpoint unreachable")
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return gold[turn] if len(episodes) == 1 else "I would rather not."

    task = prompt_task("bedroom", 0, rec["metadata"]["global_user_instruction"])
    group = rollout(_env, policy, task, 3, system_prompt=rec["messages"][0]["content"])
    good, bad, failed = group
    assert good.error is None and good.outcome is not None and good.outcome.termination == "terminate"
    assert len(good.turn_rewards) == len(gold) and good.ret is not None
    assert bad.error is None and bad.ret is not None and bad.ret < good.ret
    assert failed.error is not None and failed.ret is None and failed.advantage is None
    assert good.advantage == pytest.approx(-bad.advantage) and good.advantage > 0
    assert good.policy_turns == [i for i, m in enumerate(good.messages) if m["role"] == "assistant"]


def test_rollout_with_a_chat_model(records: list[dict]) -> None:
    gold = _assistant_turns(records[1])
    model = ScriptedChat(gold * 2)
    task = prompt_task("bedroom", 1, records[1]["metadata"]["global_user_instruction"])
    group = rollout(_env, chat_policy(model), task, 2)
    assert [t.error for t in group] == [None, None]
    assert group[0].ret == group[1].ret and group[0].advantage == 0.0
    assert len(model.requests) == 2 * len(gold)


def test_trl_reward_function_scores_replies(records: list[dict]) -> None:
    rows = turn_prompts(records[:1])
    gold = []
    msgs = records[0]["messages"]
    for i, m in enumerate(msgs):
        if m["role"] == "user" and "<current_scene>" in m["content"]:
            gold.append([{"role": "assistant", "content": msgs[i + 1]["content"]}])
    assert len(rows) == len(gold) and all("<image>" not in r["prompt"][-1]["content"] for r in rows)
    reward = SceneReVisTurnReward()
    cols = {"instruction": [r["instruction"] for r in rows], "scene": [r["scene"] for r in rows]}
    good = reward([r["prompt"] for r in rows], gold, **cols)
    bad = reward([r["prompt"] for r in rows], ["no tags here"] * len(rows), **cols)
    assert all(isinstance(v, float) for v in good + bad)
    assert sum(good) > sum(bad)
    assert reward.last_terms[0]["terms"]["format"] == -1.0
    broken = reward(["p"], ["x"], instruction=["i"], scene=["{not json"])
    assert broken == [None]


@pytest.mark.slow
def test_trl_grpo_smoke(records: list[dict], tmp_path: Path, make_tiny_lm: Callable[..., Any]) -> None:
    """Two GRPOTrainer steps of a randomly initialised 2-layer Qwen2 with a character-level
    tokenizer (no downloaded weights), rewarded by the environment. A random model writes no
    valid reply, so the rewards are the env's −1-ish scores and every group is flat: this
    checks the plumbing (generation, env reward, advantages, optimizer steps), not learning."""
    trl = pytest.importorskip("trl", reason="training is an extra: trl is not installed")
    datasets = pytest.importorskip("datasets", reason="training is an extra: datasets is not installed")
    tok = make_tiny_lm(tmp_path / "tiny", seed=0)
    rows = [{"prompt": r["prompt"][-1]["content"] + "\n<think>", "instruction": r["instruction"],
             "scene": r["scene"]} for r in turn_prompts(records[:1])[:4]]
    reward = SceneReVisTurnReward()
    args = trl.GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4,
                          max_completion_length=16, max_steps=2, learning_rate=1e-3, logging_steps=1,
                          report_to="none", use_cpu=True, save_strategy="no", beta=0.004, seed=0, bf16=False)
    trainer = trl.GRPOTrainer(model=str(tmp_path / "tiny"), reward_funcs=[reward], args=args,
                              train_dataset=datasets.Dataset.from_list(rows), processing_class=tok)
    result = trainer.train()
    assert result.global_step == 2
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) == 2
    assert all(-1.0 <= h["reward"] <= 1.0 and h["rewards/scenerevis_turn_reward/mean"] == h["reward"] for h in logged)
    assert reward.last_terms and all(t is not None and t["terms"]["format"] == -1.0 for t in reward.last_terms)
    assert json.dumps(result.metrics)


@pytest.mark.slow
def test_trl_multi_turn_rollout_func_smoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           make_tiny_lm: Callable[..., Any]) -> None:
    """Whole episodes through TRL's rollout_func: observations sit in the completion with
    env_mask 0, the policy's replies with 1, and the trajectory return is the reward."""
    trl = pytest.importorskip("trl", reason="training is an extra: trl is not installed")
    datasets = pytest.importorskip("datasets", reason="training is an extra: datasets is not installed")
    from buildbench.suites.scenerevis.train.trl_adapter import make_rollout_func, trajectory_reward

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    tok = make_tiny_lm(tmp_path / "tiny", seed=1)
    rollout_func = make_rollout_func(max_turns=3, max_new_tokens=10)
    args = trl.GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=2,
                          max_completion_length=4096, max_steps=2, learning_rate=1e-3, logging_steps=1,
                          report_to="none", use_cpu=True, save_strategy="no", beta=0.004, seed=0, bf16=False)
    ds = datasets.Dataset.from_list([{"prompt": "A small bedroom with a bed."}, {"prompt": "A study with a desk."}])
    trainer = trl.GRPOTrainer(model=str(tmp_path / "tiny"), reward_funcs=[trajectory_reward], args=args,
                              train_dataset=ds, processing_class=tok, rollout_func=rollout_func)
    out = rollout_func(["A small bedroom with a bed."], trainer)
    ids, mask, logps = out["completion_ids"][0], out["env_mask"][0], out["logprobs"][0]
    assert len(ids) == len(mask) == len(logps) and ids[-1] == tok.eos_token_id
    assert sum(mask) == 3 * 10  # three replies of 10 sampled tokens (turn 0 + two edits)
    observed = tok.decode([t for t, m in zip(ids, mask, strict=True) if m == 0])
    assert "could not create the room" in observed and "User:" in observed
    assert all(lp <= 0.0 for lp in logps) and out["trajectory_reward"] == [-1.0]
    result = trainer.train()
    assert result.global_step == 2
    assert [h["reward"] for h in trainer.state.log_history if "reward" in h] == [-1.0, -1.0]
