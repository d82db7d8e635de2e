"""LEGO-Eval agents: evaluators that end an episode with a verdict per constraint.

* ``llm``: the LEGO-Eval pipeline (plan, select arguments, run tools, validate) on any chat
  model; ``-o constraints=identify`` re-derives the constraints from the instruction
  (end-to-end, Table 4) instead of taking the task's; ``-o disable=environment,multimodal``
  drops tool groups (Table 2); ``-o render=false`` keeps the text tools only; ``-o
  plans=reference`` hands the pipeline each constraint's reference tool plan (tools and
  edges from ``task.target["plans"]``, never their arguments) so the model only selects
  arguments and validates (Table 7's setting).
* ``tool-agent``: a chat model driving the env's tools itself by function calling.
* ``deterministic``: typed programs from the template grammar, decided by the geometric checker.
* ``translate``: like ``deterministic``, with a chat model writing programs for sentences the
  grammar cannot read (the program, not the model, decides).
* ``vlm-judge``: the paper's VLM-as-a-judge, 3 samples, majority.
* ``sceneeval`` / ``sceneeval-measurable``: fixed criteria, SceneEval style (§6.4).
* ``always-valid`` / ``always-invalid``: constant predictors.

Agents read only ``task.inputs`` (the instruction, the scene, the constraint texts), never
the labels or programs in ``task.target``; the one exception is the experimental setting
``-o plans=reference``, which by design gives the planner's answer (tools and edges only).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from buildbench.harness import Action, Agent, AgentError, EpisodeContext, Observation, Task
from buildbench.harness.errors import ConfigError
from buildbench.llm import ApiError, ChatModel
from buildbench.scenes.model import SceneFormatError

from .env import check_geometry, load_task_scene
from .options import ConstraintSource, LegoEvalOptions
from .pipeline.chat import ModelUnavailable
from .task_records import Verdict, holistic

if TYPE_CHECKING:
    from .pipeline.evaluator import LLMEvaluator
    from .pipeline.plan import ToolPlan

#: What a verdict agent submits: the env's verdict action data (``spaces.LegoEvalAction``), plus
#: the model ``usage`` it spent, which the agent moves onto the action.
Submission = dict[str, Any]


def _unjudged(task: Task, why: str) -> Submission:
    return {"verdicts": [{"id": str(c["id"]), "holds": None, "explanation": why}
                         for c in task.inputs["constraints"]], "valid": None}


def _constraints(task: Task) -> list[dict[str, str]]:
    return [{"id": str(c["id"]), "text": str(c["text"]), "type": str(c["type"])} for c in task.inputs["constraints"]]


class VerdictAgent(Agent):
    """Judges the whole house at its first turn and submits the verdicts as one action.

    Args:
        judge: Computes the submission.
        evaluator: What judges, with its settings (the pipeline's ``LLMEvaluator``, a ``VLMJudge``),
            when ``judge`` uses one; kept so that the settings a run gave it can be read back.
    """

    def __init__(self, name: str, judge: Callable[[], Awaitable[Submission]], *, evaluator: object = None) -> None:
        self.name = name
        self._judge = judge
        self.evaluator = evaluator

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        try:
            submission = await self._judge()
        except SceneFormatError as exc:
            why = f"error: scene unreadable: {str(exc).splitlines()[0]}"
            submission = _unjudged(ctx.task, why)
        except ModelUnavailable as exc:
            # Errors are never scores: no verdicts, and the episode ends as the API error it is.
            error = exc.error if isinstance(exc.error, ApiError) else ApiError("api_error", str(exc))
            return Action(error=AgentError.from_api(error, after_reply=exc.after_reply))
        usage = submission.pop("usage", {}) if isinstance(submission.get("usage"), dict) else {}
        return Action(data=submission, usage=usage)


def _sync(fn: Callable[[], Submission]) -> Callable[[], Awaitable[Submission]]:
    async def run() -> Submission:
        return fn()

    return run


def _relations_level(options: LegoEvalOptions) -> str:
    """The geometry level the relation tools measure objects at (``-o geometry``); boxes in the
    original-compatible mode (``-o wall_midpoint_positions``), which keeps the original's
    own arithmetic."""
    level = check_geometry(options.geometry)
    return "box" if options.wall_midpoint_positions else level


def _measured(level: str, fn: Callable[[], Submission]) -> Callable[[], Submission]:
    """``fn`` with the relations measuring objects at ``level``."""
    from buildbench.scenes.relations import measured_with

    def run() -> Submission:
        with measured_with(level):
            return fn()

    return run


class PipelineAgent(VerdictAgent):
    """The LEGO-Eval pipeline as an agent (``llm``).

    Args:
        evaluator: The pipeline, with its settings.
        constraints: ``given``: judge the task's constraints; ``identify``: those the model
            identifies in the instruction (Table 4).
        plans: Reference tool plans by constraint id, run instead of the model's (``-o
            plans=reference``, Table 7); empty: the model plans every constraint.
    """

    def __init__(self, task: Task, evaluator: LLMEvaluator, constraints: ConstraintSource,
                 plans: dict[str, ToolPlan]) -> None:
        super().__init__("llm", self._pipeline)
        self.evaluator: LLMEvaluator = evaluator
        self.task = task
        self.constraints = constraints
        self.plans = plans

    async def _pipeline(self) -> Submission:
        task = self.task
        given = _constraints(task)
        result = await self.evaluator.evaluate(load_task_scene(task), str(task.inputs["instruction"]),
                                               given if self.constraints == "given" else None, self.plans)
        submission = result.submission()
        if self.constraints == "identify":
            # Identified constraints need not line up with the task's; a verdict per task
            # constraint is then the holistic one (the paper's Table 4 scores holistic/partial SR).
            submission = replace(submission, identified=submission.verdicts, verdicts=[
                Verdict(c["id"], result.valid, "holistic verdict") for c in given])
        return {**submission.to_dict(), "usage": result.usage.to_dict()}


def llm(task: Task, model: ChatModel | None, options: LegoEvalOptions) -> PipelineAgent:
    from .pipeline.evaluator import LLMEvaluator

    if model is None:
        raise ConfigError("agent llm needs --model")
    evaluator = LLMEvaluator(model, render=options.render, disabled_groups=options.disabled_groups,
                             wall_midpoint_positions=options.wall_midpoint_positions, image_px=options.image_px,
                             geometry=options.geometry)
    return PipelineAgent(task, evaluator, options.constraints, _given_plans(task, options))


def _given_plans(task: Task, options: LegoEvalOptions) -> dict[str, ToolPlan]:
    """The reference plans the pipeline runs instead of planning (``-o plans=reference``, which
    the options allow with the task's constraints only); a constraint without one (no program)
    is planned by the model as usual."""
    from .pipeline.plan import given_plan
    from .plans import task_plans

    if options.plans == "model":
        return {}
    out = {}
    for c, plan in zip(_constraints(task), task_plans(task), strict=True):
        if plan is not None:
            out[c["id"]] = given_plan(plan, c["type"], disabled_groups=options.disabled_groups)
    return out


def tool_agent(task: Task, model: ChatModel | None, options: LegoEvalOptions) -> Agent:
    from buildbench.harness.llm_agent import LLMAgent

    if model is None:
        raise ConfigError("agent tool-agent needs --model")
    settings = {"max_tokens": 2048, "temperature": 0.0, **options.agent_settings(), "use_tools": True}
    return LLMAgent(model, system_prompt="You inspect 3D houses with tools and judge them against descriptions.",
                    name="tool-agent", **settings)


def deterministic(task: Task, model: ChatModel | None, options: LegoEvalOptions) -> Agent:
    from .check import deterministic as check_task

    return VerdictAgent("deterministic", _sync(_measured(_relations_level(options), lambda: check_task(task))))


def translate(task: Task, model: ChatModel | None, options: LegoEvalOptions) -> Agent:
    from buildbench.scenes.relations import measured_with

    from .check import check
    from .constraints import ProgramError, constraint_type
    from .constraints.translate import translate as to_program

    level = _relations_level(options)

    async def judge() -> Submission:
        scene = load_task_scene(task)
        verdicts = []
        for c in _constraints(task):
            try:
                t = await to_program(model, c["text"], where=f"constraint {c['id']}")
                with measured_with(level):
                    result = check(scene, t.program)
                verdicts.append(Verdict(c["id"], result.holds,
                                                  f"[{constraint_type(t.program)}, {t.source}] {result.explanation}"))
            except (ProgramError, KeyError, ValueError) as exc:
                verdicts.append(Verdict(c["id"], None, f"error: {str(exc).splitlines()[0]}"))
        return {"verdicts": [v.to_dict() for v in verdicts], "valid": holistic(verdicts)}

    return VerdictAgent("translate", judge)


def vlm_judge(task: Task, model: ChatModel | None, options: LegoEvalOptions) -> Agent:
    from .pipeline.baselines import VLMJudge

    if model is None:
        raise ConfigError("agent vlm-judge needs --model")
    judge_ = VLMJudge(model, samples=options.samples_per_judgment, per_constraint=options.per_constraint,
                      geometry=options.geometry)

    async def judge() -> Submission:
        return await judge_.judge(load_task_scene(task), str(task.inputs["instruction"]), _constraints(task))

    return VerdictAgent("vlm-judge", judge, evaluator=judge_)


def _sceneeval(mode: str) -> Callable[[Task, ChatModel | None, LegoEvalOptions], Agent]:
    def factory(task: Task, model: ChatModel | None, options: LegoEvalOptions) -> Agent:
        from .pipeline.baselines import sceneeval_check

        level = _relations_level(options)
        return VerdictAgent(f"sceneeval-{mode}", _sync(_measured(
            level, lambda: sceneeval_check(load_task_scene(task), _constraints(task), mode))))  # type: ignore[arg-type]

    return factory


sceneeval = _sceneeval("full")
sceneeval_measurable = _sceneeval("measurable")


def always_valid(task: Task, model: ChatModel | None, options: LegoEvalOptions) -> Agent:
    from .check import always_valid as constant

    return VerdictAgent("always-valid", _sync(lambda: constant(task)))


def always_invalid(task: Task, model: ChatModel | None, options: LegoEvalOptions) -> Agent:
    from .check import always_invalid as constant

    return VerdictAgent("always-invalid", _sync(lambda: constant(task)))
