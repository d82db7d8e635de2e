"""The diagnose-and-act loop (spec §2.1): create the room, then diagnose and edit until the
agent terminates or the env's turn budget (``-o max_turns``, turn 0 included) is spent.

After the loop, the evaluation judge (spec §5.2, ``-o eval_judge``) is settled here, because
this is where model calls belong; the scorer must stay pure so it can run in a worker:

* ``rule`` (default): nothing is called; the scorer computes the rule judge's Ra/Spa/Ac from
  the final scene itself (labelled not comparable with the paper);
* ``none``: no judge scores;
* a model spec (``openai:gpt-5``, ``vllm:qwen@http://host/v1``…): the model scores the final
  scene and its merged render once, the scores (or the failure) go into the outcome under
  ``eval_judge``, and the call is logged as a ``judge`` step. A failed or unreadable answer
  leaves the scores absent with ``status: error``; the episode is still scored for physics.
  ``-o eval_judge_record=PATH`` answers from a record/replay JSONL when it can and records
  otherwise, so a judged run can be replayed offline.

With ``-o vlm_feedback=SPEC`` (a model spec; ``none``, the default, turns it off) a judge
model also critiques the layout after every step that leaves a turn to play, and the critique
joins the feedback of the observation the agent sees next (:mod:`.vlm_feedback`);
``-o vlm_feedback_record=PATH`` records and replays those calls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from buildbench.harness import Action, Agent, Env, EpisodeContext, Observation, Protocol, StepLoop, Task
from buildbench.harness.errors import ConfigError
from buildbench.harness.option_model import OptionsArg
from buildbench.llm import ChatModel

from .check.evaluate import VisionEvalJudge, eval_prompt, scores_record
from .check.judge import JudgeError
from .vlm_feedback import critique

#: ``-o eval_judge`` values that need no model.
RULE, NONE = "rule", "none"
#: Characters of the judge's reply kept in the outcome.
REPLY_KEEP = 2000


@dataclass(frozen=True)
class EvalJudgeSetting:
    """Which evaluation judge an episode uses (``-o eval_judge``, ``-o eval_judge_record``)."""

    spec: str = RULE
    record_path: str | None = None
    timeout_s: float | None = None
    max_retries: int | None = None

    @classmethod
    def from_options(cls, options: OptionsArg, key: str = "eval_judge", default: str = RULE) -> EvalJudgeSetting:
        """The setting of a run from options ``key`` and ``key_record`` (the eval judge's, or
        ``vlm_feedback``'s); ValueError names a malformed model spec (not yet a missing key:
        :meth:`make_model` checks that)."""
        spec = str(options.get(key, default)).strip() or default
        record = options.get(f"{key}_record")
        timeout, retries = options.get("timeout_s"), options.get("max_retries")
        setting = cls(spec, str(record) if record else None,
                      float(timeout) if timeout is not None else None,
                      int(retries) if retries is not None else None)
        if setting.uses_model:
            from buildbench.llm import parse_spec

            parse_spec(spec)
        return setting

    @property
    def uses_model(self) -> bool:
        return self.spec not in (RULE, NONE)

    def make_model(self) -> ChatModel:
        """The judge's chat model (wrapped for record/replay when a record path is set)."""
        from buildbench.llm import RecordReplay, RetryPolicy, make_model

        overrides: dict[str, Any] = {}
        if self.timeout_s is not None and not self.spec.startswith("scripted"):
            overrides["timeout_s"] = self.timeout_s
        if self.max_retries is not None and not self.spec.startswith("scripted"):
            overrides["retry"] = RetryPolicy(max_attempts=self.max_retries + 1)
        model = make_model(self.spec, **overrides)
        return RecordReplay(self.record_path, model, mode="auto") if self.record_path else model


class DiagnoseActLoop(Protocol):
    """Act, step, repeat until the env says the episode is over; then settle the evaluation judge.

    The env owns the budget, so the loop has no step count of its own; ``max_actions`` only
    guards against an env that never ends.
    """

    def __init__(self, *, max_actions: int = 1000, name: str = "diagnose-act",
                 eval_judge: EvalJudgeSetting | None = None, eval_model: ChatModel | None = None,
                 critic: ChatModel | None = None) -> None:
        self.max_actions = max_actions
        self.name = name
        self.eval_judge = eval_judge or EvalJudgeSetting()
        self.eval_model = eval_model
        self.critic = critic

    async def run(self, env: Env, agent: Agent, ctx: EpisodeContext) -> None:
        await self._play(env, agent, ctx)
        if {"finish", "final_view", "record_evaluation"} <= set(env.controls):
            await ctx.control(env, "finish", role="protocol")
            await self.evaluate(env, ctx)

    async def _play(self, env: Env, agent: Agent, ctx: EpisodeContext) -> None:
        # The env's turn budget truncates the episode; the step loop is only a backstop.
        if self.critic is None or "layout_feedback" not in env.controls:
            await StepLoop(self.max_actions, name=self.name).run(env, agent, ctx)
            return
        observation, _ = await ctx.reset(env)
        try:
            for _ in range(self.max_actions):
                action = await agent.act(observation, ctx)
                if action.error is not None:
                    ctx.fail(action.error, action, observation)
                    return
                result = await ctx.step(env, action)
                if result.terminated or result.truncated:
                    return
                observation = await self._critiqued(env, ctx, result.observation)
        finally:
            await self.critic.aclose()

    async def _critiqued(self, env: Env, ctx: EpisodeContext, observation: Observation) -> Observation:
        """``observation`` with the critic's layout critique in its feedback (unchanged when
        there is no room to show, no critique, or the call failed; every call is logged)."""
        assert self.critic is not None
        image = observation.images[0] if observation.images and isinstance(observation.images[0], np.ndarray) \
            else None
        if image is None:
            view = await ctx.control(env, "final_view", role="protocol")
            if view is None:
                return observation
            image = view[1]
        instruction = str(ctx.task.inputs.get("instruction") or "")
        turn = int((observation.state or {}).get("turn", len(ctx.steps)))
        found = await critique(self.critic, image, instruction, turn)
        record = found.to_dict()
        # Called directly, not through ctx.control: a control step would log the whole new
        # observation, and the step logged below already records the critique as its text.
        updated = env.controls["layout_feedback"].fn(record=record)
        if found.status != "ok":
            ctx.notes["vlm_feedback_errors"] = int(ctx.notes.get("vlm_feedback_errors", 0)) + 1
        # Logged as a protocol record whose text is what joined the agent's next prompt, so an SFT
        # export shows the critique as part of the env's answer, never as an assistant turn.
        ctx.log(Action(text=found.reply), Observation(text=found.text),
                role="protocol", info={"vlm_feedback": {k: v for k, v in record.items() if k != "reply"}},
                duration_s=found.latency_s)
        return updated if isinstance(updated, Observation) else observation

    async def evaluate(self, env: Env, ctx: EpisodeContext) -> None:
        """Judge the final scene (model judges) or note which judge the scorer applies, through
        the env's ``final_view`` and ``record_evaluation`` controls."""
        if not self.eval_judge.uses_model:
            status = "scored from the scene" if self.eval_judge.spec == RULE else "off"
            await _record(env, ctx, {"judge": self.eval_judge.spec, "status": status})
            return
        view = await ctx.control(env, "final_view", role="protocol")
        if view is None:
            await _record(env, ctx, {"judge": self.eval_judge.spec, "status": "skipped",
                                     "error": "no room was created"})
            return
        scene, image = view
        model = self.eval_model or self.eval_judge.make_model()
        judge = VisionEvalJudge(model)
        instruction = str(ctx.task.inputs.get("instruction") or "")
        t0 = time.perf_counter()
        try:
            scores = await judge.evaluate(scene, instruction, image)
            record: dict[str, Any] = {**scores_record(scores), "status": "ok"}
        except JudgeError as exc:
            record = {"judge": judge.label, "comparable_with_paper": True, "status": "error", "error": str(exc)}
        finally:
            await model.aclose()
        record.update(latency_s=round(time.perf_counter() - t0, 4), reply=judge.last_reply[:REPLY_KEEP],
                      usage=judge.last_usage)
        await _record(env, ctx, record)
        ctx.notes["eval_judge"] = record["status"]
        ctx.log(Action(text=judge.last_reply), Observation(text=eval_prompt(scene, instruction), images=[image]),
                role="judge", info={"eval_judge": {k: v for k, v in record.items() if k != "reply"}},
                duration_s=record["latency_s"])


async def _record(env: Env, ctx: EpisodeContext, record: dict[str, Any]) -> None:
    await ctx.control(env, "record_evaluation", {"record": record}, role="protocol")


def critic_setting(options: OptionsArg) -> EvalJudgeSetting:
    """The layout critic of a run (``-o vlm_feedback``, default ``none``: no critique, and
    ``-o vlm_feedback_record``); ConfigError for ``rule``, which is no model."""
    critic = EvalJudgeSetting.from_options(options, "vlm_feedback", NONE)
    if critic.spec == RULE:
        raise ConfigError("option vlm_feedback: 'rule' is not a model; give a model spec "
                          "(e.g. openai:gpt-5) or 'none'")
    return critic


def diagnose_act(task: Task, options: OptionsArg) -> DiagnoseActLoop:
    """The loop; a model eval judge's client is made here, so that a bad spec or a missing API
    key stops the run before its first episode (the runner tries this factory first)."""
    setting = EvalJudgeSetting.from_options(options)
    critic = critic_setting(options)
    return DiagnoseActLoop(eval_judge=setting, eval_model=setting.make_model() if setting.uses_model else None,
                           critic=critic.make_model() if critic.uses_model else None)
