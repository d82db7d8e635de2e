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
from typing import TYPE_CHECKING, Any

from buildbench.harness import Action, Agent, AgentError, EpisodeContext, Observation, Task
from buildbench.harness.errors import ConfigError
from buildbench.harness.option_model import OptionsArg
from buildbench.llm import ApiError, ChatModel
from buildbench.scenes.model import SceneFormatError

from .env import load_task_scene
from .pipeline.chat import ModelUnavailable

if TYPE_CHECKING:
    from .pipeline.plan import ToolPlan

Outcome = dict[str, Any]


def _unjudged(task: Task, why: str) -> Outcome:
    return {"verdicts": [{"id": str(c["id"]), "holds": None, "explanation": why}
                         for c in task.inputs["constraints"]], "valid": None}


def _constraints(task: Task) -> list[dict[str, str]]:
    return [{"id": str(c["id"]), "text": str(c["text"]), "type": str(c["type"])} for c in task.inputs["constraints"]]


class VerdictAgent(Agent):
    """Computes the whole outcome at its first turn and submits it as one action."""

    def __init__(self, name: str, judge: Callable[[], Awaitable[Outcome]]) -> None:
        self.name = name
        self._judge = judge

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        try:
            outcome = await self._judge()
        except SceneFormatError as exc:
            why = f"error: scene unreadable: {str(exc).splitlines()[0]}"
            outcome = _unjudged(ctx.task, why)
        except ModelUnavailable as exc:
            # Errors are never scores: no verdicts, and the episode ends as the API error it is.
            error = exc.error if isinstance(exc.error, ApiError) else ApiError("api_error", str(exc))
            return Action(error=AgentError.from_api(error))
        usage = outcome.pop("usage", {}) if isinstance(outcome.get("usage"), dict) else {}
        return Action(data=outcome, usage=usage)


def _sync(fn: Callable[[], Outcome]) -> Callable[[], Awaitable[Outcome]]:
    async def run() -> Outcome:
        return fn()

    return run


def _relations_level(options: OptionsArg) -> str:
    """The geometry level the relation tools measure objects at (``-o geometry``); boxes in the
    original-compatible mode (``-o wall_midpoint_positions``), which keeps the original's
    own arithmetic."""
    from .env import geometry_option

    level = geometry_option(options)
    return "box" if _flag(options, "wall_midpoint_positions", False) else level


def _measured(level: str, fn: Callable[[], Outcome]) -> Callable[[], Outcome]:
    """``fn`` with the relations measuring objects at ``level``."""
    from buildbench.scenes.relations import measured_with

    def run() -> Outcome:
        with measured_with(level):
            return fn()

    return run


def _disabled(options: OptionsArg) -> tuple[str, ...]:
    # the run checked the names before it started (a ``set`` option: the names, comma-joined)
    return tuple(g for g in str(options.get("disable", "")).split(",") if g)


def _flag(options: OptionsArg, key: str, default: bool) -> bool:
    value = options.get(key, default)
    return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")


def llm(task: Task, model: ChatModel | None, options: OptionsArg) -> Agent:
    from .pipeline.evaluator import LLMEvaluator

    if model is None:
        raise ConfigError("agent llm needs --model")
    mode = str(options.get("constraints", "given"))
    image_px = int(options.get("image_px", 336))
    disabled = _disabled(options)
    evaluator = LLMEvaluator(model, render=_flag(options, "render", True), disabled_groups=disabled,
                             wall_midpoint_positions=_flag(options, "wall_midpoint_positions", False),
                             image_px=image_px, geometry=str(options.get("geometry", "box")))
    plans = _given_plans(task, options, mode, disabled)

    async def judge() -> Outcome:
        scene = load_task_scene(task)
        given = _constraints(task)
        result = await evaluator.evaluate(scene, str(task.inputs["instruction"]),
                                          given if mode == "given" else None, plans)
        outcome = result.outcome()
        if mode == "identify":
            # Identified constraints need not line up with the task's; a verdict per task
            # constraint is then the holistic one (the paper's Table 4 scores holistic/partial SR).
            outcome["identified"] = outcome.pop("verdicts")
            outcome["verdicts"] = [{"id": c["id"], "holds": result.valid, "explanation": "holistic verdict"}
                                   for c in given]
        return outcome

    return VerdictAgent("llm", judge)


def _given_plans(task: Task, options: OptionsArg, mode: str, disabled: tuple[str, ...]) -> dict[str, ToolPlan]:
    """The reference plans the pipeline runs instead of planning (``-o plans=reference``);
    a constraint without one (no program) is planned by the model as usual."""
    from .pipeline.plan import given_plan
    from .plans import task_plans

    source = str(options.get("plans", "model"))
    if source == "model":
        return {}
    if mode != "given":
        raise ConfigError("-o plans=reference needs the task's constraints (-o constraints=given)")
    out = {}
    for c, plan in zip(_constraints(task), task_plans(task), strict=True):
        if plan is not None:
            out[c["id"]] = given_plan(plan, c["type"], disabled_groups=disabled)
    return out


def tool_agent(task: Task, model: ChatModel | None, options: OptionsArg) -> Agent:
    from buildbench.harness.llm_agent import LLMAgent, llm_agent_options

    if model is None:
        raise ConfigError("agent tool-agent needs --model")
    settings = {"max_tokens": 2048, "temperature": 0.0, **llm_agent_options(options), "use_tools": True}
    return LLMAgent(model, system_prompt="You inspect 3D houses with tools and judge them against descriptions.",
                    name="tool-agent", **settings)


def deterministic(task: Task, model: ChatModel | None, options: OptionsArg) -> Agent:
    from .check import deterministic as check_task

    return VerdictAgent("deterministic", _sync(_measured(_relations_level(options), lambda: check_task(task))))


def translate(task: Task, model: ChatModel | None, options: OptionsArg) -> Agent:
    from buildbench.scenes.relations import measured_with

    from .check import check
    from .constraints import ProgramError, constraint_type
    from .constraints.translate import translate as to_program
    from .tasks import ConstraintVerdict, holistic

    level = _relations_level(options)

    async def judge() -> Outcome:
        scene = load_task_scene(task)
        verdicts = []
        for c in _constraints(task):
            try:
                t = await to_program(model, c["text"], where=f"constraint {c['id']}")
                with measured_with(level):
                    result = check(scene, t.program)
                verdicts.append(ConstraintVerdict(c["id"], result.holds,
                                                  f"[{constraint_type(t.program)}, {t.source}] {result.explanation}"))
            except (ProgramError, KeyError, ValueError) as exc:
                verdicts.append(ConstraintVerdict(c["id"], None, f"error: {str(exc).splitlines()[0]}"))
        return {"verdicts": [v.to_dict() for v in verdicts], "valid": holistic(verdicts)}

    return VerdictAgent("translate", judge)


def vlm_judge(task: Task, model: ChatModel | None, options: OptionsArg) -> Agent:
    from .pipeline.baselines import VLMJudge

    if model is None:
        raise ConfigError("agent vlm-judge needs --model")
    judge_ = VLMJudge(model, samples=int(options.get("samples_per_judgment", 3)),
                      per_constraint=_flag(options, "per_constraint", True),
                      geometry=str(options.get("geometry", "box")))

    async def judge() -> Outcome:
        return await judge_.judge(load_task_scene(task), str(task.inputs["instruction"]), _constraints(task))

    return VerdictAgent("vlm-judge", judge)


def _sceneeval(mode: str) -> Callable[[Task, ChatModel | None, OptionsArg], Agent]:
    def factory(task: Task, model: ChatModel | None, options: OptionsArg) -> Agent:
        from .pipeline.baselines import sceneeval_check

        level = _relations_level(options)
        return VerdictAgent(f"sceneeval-{mode}", _sync(_measured(
            level, lambda: sceneeval_check(load_task_scene(task), _constraints(task), mode))))  # type: ignore[arg-type]

    return factory


sceneeval = _sceneeval("full")
sceneeval_measurable = _sceneeval("measurable")


def always_valid(task: Task, model: ChatModel | None, options: OptionsArg) -> Agent:
    from .check import always_valid as constant

    return VerdictAgent("always-valid", _sync(lambda: constant(task)))


def always_invalid(task: Task, model: ChatModel | None, options: OptionsArg) -> Agent:
    from .check import always_invalid as constant

    return VerdictAgent("always-invalid", _sync(lambda: constant(task)))
