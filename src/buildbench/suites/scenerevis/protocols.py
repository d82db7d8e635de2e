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
from typing import Any

import numpy as np

from buildbench.harness import Action, Agent, EpisodeContext, Observation, Protocol, StepLoop, Task
from buildbench.harness.option_model import ModelOptions
from buildbench.llm import ChatModel

from .env import SceneReVisEnv
from .judge.evaluation import VisionEvalJudge, eval_prompt, scores_record
from .judge.semantic import JudgeError
from .options import RULE, SceneReVisOptions, uses_model
from .vlm_feedback import critique

#: Characters of the judge's reply kept in the outcome.
REPLY_KEEP = 2000


def judge_model(spec: str, record_path: str | None, options: ModelOptions) -> ChatModel:
    """The chat model of a judge option (``eval_judge``, ``vlm_feedback``) with the run's
    ``timeout_s`` and ``max_retries``, wrapped for record/replay when ``record_path`` is set."""
    from buildbench.llm import RecordReplay, make_model

    overrides: dict[str, Any] = {} if spec.startswith("scripted") else options.client_settings()
    model = make_model(spec, **overrides)
    return RecordReplay(record_path, model, mode="auto") if record_path else model


def eval_judge_model(options: SceneReVisOptions) -> ChatModel:
    """The model evaluation judge of a run (``-o eval_judge`` naming a model, ``-o eval_judge_record``)."""
    return judge_model(options.eval_judge, options.eval_judge_record, options)


class DiagnoseActLoop(Protocol[SceneReVisEnv]):
    """Act, step, repeat until the env says the episode is over; then settle the evaluation judge.

    The env owns the budget, so the loop has no step count of its own; ``max_actions`` only
    guards against an env that never ends.

    Args:
        eval_judge: ``-o eval_judge``: ``rule``, ``none`` or the spec of ``eval_model``.
        eval_model: The model evaluation judge (when ``eval_judge`` names one).
        critic: The layout critique model (``-o vlm_feedback``), or None.
    """

    def __init__(self, *, max_actions: int = 1000, name: str = "diagnose-act", eval_judge: str = RULE,
                 eval_model: ChatModel | None = None, critic: ChatModel | None = None) -> None:
        if uses_model(eval_judge) and eval_model is None:
            raise ValueError(f"eval_judge {eval_judge!r} names a model: pass it as eval_model")
        self.max_actions = max_actions
        self.name = name
        self.eval_judge = eval_judge
        self.eval_model = eval_model
        self.critic = critic

    async def run(self, env: SceneReVisEnv, agent: Agent, ctx: EpisodeContext) -> None:
        await self._play(env, agent, ctx)
        await ctx.control(env.finish)
        await self.evaluate(env, ctx)

    async def _play(self, env: SceneReVisEnv, agent: Agent, ctx: EpisodeContext) -> None:
        # The env's turn budget truncates the episode; the step loop is only a backstop.
        if self.critic is None:
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

    async def _critiqued(self, env: SceneReVisEnv, ctx: EpisodeContext, observation: Observation) -> Observation:
        """``observation`` with the critic's layout critique in its feedback (unchanged when
        there is no room to show, no critique, or the call failed; every call is logged)."""
        assert self.critic is not None
        image = observation.images[0] if observation.images and isinstance(observation.images[0], np.ndarray) \
            else None
        if image is None:
            view = await ctx.control(env.final_view)
            if view is None:
                return observation
            image = view[1]
        instruction = str(ctx.task.inputs.get("instruction") or "")
        turn = int((observation.state or {}).get("turn", len(ctx.steps)))
        found = await critique(self.critic, image, instruction, turn)
        record = found.to_dict()
        # Called directly, not through ctx.control: a control step would log the whole new
        # observation, and the step logged below already records the critique as its text.
        updated = env.layout_feedback(record)
        if found.status != "ok":
            ctx.notes["vlm_feedback_errors"] = int(ctx.notes.get("vlm_feedback_errors", 0)) + 1
        # Logged as a protocol record whose text is what joined the agent's next prompt, so an SFT
        # export shows the critique as part of the env's answer, never as an assistant turn.
        ctx.log(Action(text=found.reply), Observation(text=found.text),
                role="protocol", info={"vlm_feedback": {k: v for k, v in record.items() if k != "reply"}},
                duration_s=found.latency_s)
        return updated or observation

    async def evaluate(self, env: SceneReVisEnv, ctx: EpisodeContext) -> None:
        """Judge the final scene (model judges) or note which judge the scorer applies, through
        the env's ``final_view`` and ``record_evaluation`` controls."""
        if not uses_model(self.eval_judge):
            status = "scored from the scene" if self.eval_judge == RULE else "off"
            await ctx.control(env.record_evaluation, {"judge": self.eval_judge, "status": status})
            return
        view = await ctx.control(env.final_view)
        if view is None:
            await ctx.control(env.record_evaluation, {"judge": self.eval_judge, "status": "skipped",
                                                      "error": "no room was created"})
            return
        scene, image = view
        model = self.eval_model
        assert model is not None  # __init__ refuses a model judge without its model
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
        await ctx.control(env.record_evaluation, record)
        ctx.notes["eval_judge"] = record["status"]
        ctx.log(Action(text=judge.last_reply), Observation(text=eval_prompt(scene, instruction), images=[image]),
                role="judge", info={"eval_judge": {k: v for k, v in record.items() if k != "reply"}},
                duration_s=record["latency_s"])


def diagnose_act(task: Task, options: SceneReVisOptions) -> DiagnoseActLoop:
    """The loop; a model eval judge's and a layout critic's clients are made here, so that an
    unknown provider or a missing API key stops the run before its first episode (the runner
    tries this factory first)."""
    critic = options.vlm_feedback
    return DiagnoseActLoop(
        eval_judge=options.eval_judge,
        eval_model=eval_judge_model(options) if uses_model(options.eval_judge) else None,
        critic=judge_model(critic, options.vlm_feedback_record, options) if uses_model(critic) else None)
