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
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from buildbench.harness import Action, Agent, Env, EpisodeContext, Observation, Protocol, StepLoop, Task
from buildbench.harness.option_model import OptionsArg
from buildbench.llm import ChatModel

from .check.evaluate import VisionEvalJudge, eval_prompt, scores_record
from .check.judge import JudgeError

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
    def from_options(cls, options: OptionsArg) -> EvalJudgeSetting:
        """The setting of a run; ValueError names a malformed model spec (not yet a missing key:
        :meth:`make_model` checks that)."""
        spec = str(options.get("eval_judge", RULE)).strip() or RULE
        record = options.get("eval_judge_record")
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
                 eval_judge: EvalJudgeSetting | None = None, eval_model: ChatModel | None = None) -> None:
        self.max_actions = max_actions
        self.name = name
        self.eval_judge = eval_judge or EvalJudgeSetting()
        self.eval_model = eval_model

    async def run(self, env: Env, agent: Agent, ctx: EpisodeContext) -> None:
        await self._play(env, agent, ctx)
        if {"finish", "final_view", "record_evaluation"} <= set(env.controls):
            await ctx.control(env, "finish", role="protocol")
            await self.evaluate(env, ctx)

    async def _play(self, env: Env, agent: Agent, ctx: EpisodeContext) -> None:
        # The env's turn budget truncates the episode; the step loop is only a backstop.
        await StepLoop(self.max_actions, name=self.name).run(env, agent, ctx)

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


def diagnose_act(task: Task, options: OptionsArg) -> DiagnoseActLoop:
    """The loop; a model eval judge's client is made here, so that a bad spec or a missing API
    key stops the run before its first episode (the runner tries this factory first)."""
    setting = EvalJudgeSetting.from_options(options)
    return DiagnoseActLoop(eval_judge=setting, eval_model=setting.make_model() if setting.uses_model else None)
