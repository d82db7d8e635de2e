"""The shared TRL multi-turn adapter on the example suite, with a tiny random model on the CPU
(a character-level tokenizer and a 2-layer Qwen2: no downloaded weights)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import Env, Observation, Task
from buildbench.harness.errors import ConfigError
from buildbench.integrations.trl import (
    Sampling,
    episode_reward,
    observation_text,
    suite_rollout_func,
    verifier_metric,
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, make_tiny_lm: Callable[..., Any]) -> tuple[Any, Path]:
    path = tmp_path_factory.mktemp("tiny")
    return make_tiny_lm(path), path


class _Trainer:
    """What a rollout_func reads of a GRPOTrainer: the tokenizer, the model and the accelerator."""

    def __init__(self, tok: Any, path: Path) -> None:
        from transformers import AutoModelForCausalLM

        self.processing_class = tok
        self.model = AutoModelForCausalLM.from_pretrained(path)
        self.accelerator = self

    def unwrap_model(self, model: Any) -> Any:
        return model


def test_an_example_episode_becomes_masked_tokens_and_a_reward(tiny: tuple[Any, Path]) -> None:
    tok, path = tiny
    rollout = suite_rollout_func("example", sampling=Sampling(max_turns=2, max_new_tokens=8))
    out = rollout(["tower_0000_0001", "0"], _Trainer(tok, path))
    assert set(out) == {"prompt_ids", "completion_ids", "logprobs", "env_mask", "episode_reward"}
    for ids, mask, logps in zip(out["completion_ids"], out["env_mask"], out["logprobs"], strict=True):
        assert len(ids) == len(mask) == len(logps) and ids[-1] == tok.eos_token_id
        assert sum(mask) == 2 * 8  # two replies of 8 sampled tokens; the env's feedback is masked out
        assert all(lp <= 0.0 for lp, m in zip(logps, mask, strict=True) if m) and not any(
            lp for lp, m in zip(logps, mask, strict=True) if not m)
        observed = tok.decode([t for t, m in zip(ids, mask, strict=True) if m == 0])
        assert "User:" in observed and "Assistant:" in observed
    prompt = tok.decode(out["prompt_ids"][1])
    system = "You are a careful structural builder. Reply with JSON only."  # the suite's, as the SFT export's
    assert prompt.startswith(f"{system}\n\nUser: ") and "tower" in prompt.lower() and prompt.endswith("\nAssistant: ")
    plain = suite_rollout_func("example", sampling=Sampling(max_turns=1, max_new_tokens=2, system_prompt=""))
    assert tok.decode(plain(["0"], _Trainer(tok, path))["prompt_ids"][0]).startswith("User: ")
    assert out["episode_reward"] == [0.0, 0.0]  # random characters build no tower
    assert episode_reward(["a", "b"], ["c", "d"], out["episode_reward"]) == [0.0, 0.0]


def test_the_reward_can_be_a_verifier_metric_and_bad_settings_are_refused(tiny: tuple[Any, Path]) -> None:
    tok, path = tiny
    rollout = suite_rollout_func("example", reward="passed", sampling=Sampling(max_turns=1, max_new_tokens=4))
    assert rollout(["1"], _Trainer(tok, path))["episode_reward"] == [0.0]
    unscorable = verifier_metric(lambda task, outcome: {"passed": float("nan")}, "passed")
    assert unscorable(Task(id="t", suite="example"), _NoEnv(), []) is None
    with pytest.raises(ConfigError, match="no split 'nope'"):
        suite_rollout_func("example", split="nope")
    with pytest.raises(ConfigError):
        suite_rollout_func("example", options={"no_such_option": 1})
    with pytest.raises(ConfigError, match="no task 'missing'"):
        suite_rollout_func("example")(["missing"], _Trainer(tok, path))
    with pytest.raises(ValueError, match="max_turns"):
        Sampling(max_turns=0)


def test_observation_text_keeps_tool_results() -> None:
    obs = Observation(text="placed", tool_results=[("call_0_0", "ok"), ("call_0_1", "refused: overlap")])
    assert observation_text(obs) == "placed\n[call_0_0] ok\n[call_0_1] refused: overlap"


@pytest.mark.slow
def test_grpo_trains_through_the_shared_rollout(tiny: tuple[Any, Path], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    trl = pytest.importorskip("trl", reason="training is an extra: trl is not installed")
    datasets = pytest.importorskip("datasets", reason="training is an extra: datasets is not installed")
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    tok, path = tiny
    args = trl.GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=2, num_generations=2,
                          max_completion_length=1024, max_steps=1, learning_rate=1e-3, logging_steps=1,
                          report_to="none", use_cpu=True, save_strategy="no", beta=0.0, seed=0, bf16=False)
    ds = datasets.Dataset.from_list([{"prompt": "0"}, {"prompt": "1"}])
    trainer = trl.GRPOTrainer(model=str(path), reward_funcs=[episode_reward], args=args, train_dataset=ds,
                              processing_class=tok,
                              rollout_func=suite_rollout_func("example", sampling=Sampling(2, 6)))
    assert trainer.train().global_step == 1
    assert [h["reward"] for h in trainer.state.log_history if "reward" in h] == [0.0]


class _NoEnv(Env):
    def reset(self, task: Task, *, seed: int | None = None) -> Any:
        raise AssertionError("not played")

    def step(self, action: Any) -> Any:
        raise AssertionError("not played")

    def outcome(self) -> dict[str, Any]:
        return {}


def _qwen_template() -> str:
    trl = pytest.importorskip("trl", reason="training is an extra: trl is not installed")
    return (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()


def test_turns_follow_the_tokenizers_chat_template(tiny: tuple[Any, Path]) -> None:
    """Issue 25: turns were joined as "User:"/"Assistant:" text whatever the model's template."""
    from buildbench.integrations.trl import ChatTokens

    tok, _ = tiny
    tok.chat_template = _qwen_template()
    try:
        chat = ChatTokens(tok, "Build well.")
        prompt = chat.start("first observation")
        reply = '{"blocks": []}'
        reply_ids = tok(reply, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        answer = chat.answer(reply, reply_ids, "second observation")
        assert tok.decode(prompt) == ("<|im_start|>system\nBuild well.<|im_end|>\n<|im_start|>user\nfirst observation"
                                      "<|im_end|>\n<|im_start|>assistant\n")
        assert tok.decode(prompt + reply_ids[:-1] + answer) == tok.apply_chat_template(
            chat.messages, tokenize=False, add_generation_prompt=True)
        assert tok.decode(answer).startswith("<|im_end|>\n<|im_start|>user\nsecond observation")

        rollout = suite_rollout_func("example", sampling=Sampling(max_turns=2, max_new_tokens=6))
        out = rollout(["0"], _Trainer(tok, tiny[1]))
        assert tok.decode(out["prompt_ids"][0]).startswith("<|im_start|>system\n")  # Qwen's default system turn
        observed = tok.decode([t for t, m in zip(out["completion_ids"][0], out["env_mask"][0], strict=True) if m == 0])
        assert "<|im_start|>user\n" in observed and "User:" not in observed
    finally:
        tok.chat_template = None


def test_a_template_that_rewrites_earlier_turns_is_refused(tiny: tuple[Any, Path]) -> None:
    from buildbench.integrations.trl import ChatTokens

    tok, _ = tiny
    chat = ChatTokens(tok)
    chat.template = "{{ messages[-1]['content'] }}"  # shows only the newest message
    chat.start("first")
    with pytest.raises(ValueError, match="not prefix-preserving"):
        chat.answer("reply", [5], "second")
