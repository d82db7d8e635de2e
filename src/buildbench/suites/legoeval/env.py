"""The LEGO-Eval env: the evaluator is the agent.

``reset`` shows the instruction, its constraints (id, type, text) and a summary of the house,
and offers the 21 tools plus ``submit_verdicts``. Every tool call is an action answered with
the tool's text output (images ride along in ``Observation.images``), so a model or an RL
policy can drive the tools itself; a verdict action (the ``submit_verdicts`` tool, or
``data={"verdicts": [...], "valid": ...}``) ends the episode. A bad action is feedback and
changes nothing.

Reward: 0 for tool calls; on the verdict action, :func:`.reward.verdict_reward`, the agreement
of the verdicts with a labelled task's labels in [0, 1]. A generator's scene has no labels and
gives 0 (``info["reward"]`` says ``unlabelled``).

Outcome (:class:`~.outcome.LegoEvalOutcome`, scored by :func:`.score.score`)::

    {"verdicts": [{"id", "holds", "explanation"}], "valid": bool | None,
     "tool_calls": int, "invalid_actions": int, "trace": [...],   # trace: the agent's plans
     "identified": [...]}   # verdicts on constraints the agent identified itself (-o constraints=identify)
"""

from __future__ import annotations

import json
from typing import Any

from buildbench.harness import Action, Env, Observation, ResetResult, StepResult, Task
from buildbench.harness.errors import ConfigError
from buildbench.jsonio import JSONInputError, parse_json
from buildbench.scenes.model import Scene, SceneFormatError

from .options import Geometry, LegoEvalOptions
from .outcome import LegoEvalOutcome
from .prompts import fill
from .reward import verdict_reward
from .spaces import LegoEvalAction, LegoEvalState, Verdicts
from .task_records import OutcomeError, Verdict, holistic, in_task_order
from .tools import ToolArgumentError, ToolContext, is_image_key, llm_tools, run_tool

SUBMIT = "submit_verdicts"
#: Characters of one tool answer shown to the agent.
ANSWER_CHARS = 8000


def _submit_tool() -> Any:
    """The verdict tool; its parameters are the :class:`Verdicts` record's JSON Schema."""
    from buildbench.llm import Tool

    return Tool(SUBMIT, "Submit the verdict of every constraint and of the whole house; ends the check.",
                Verdicts.json_schema())


def load_task_scene(task: Task) -> Scene:
    """The task's scene as a :class:`Scene` (raises SceneFormatError naming what is wrong).

    Its reader's warnings were given once, naming the file, line and task, when the task came in
    (the task file check :func:`.task_records.check_task_record`, ``--scene``): the env and the
    agents read the scene again at every episode, where they would only repeat, unnamed."""
    from buildbench.scenes import scene_warnings
    from buildbench.scenes.io import load_scene

    try:
        with scene_warnings.dropped():
            return load_scene(dict(task.inputs["scene"]))
    except (KeyError, TypeError) as exc:
        raise SceneFormatError(f"task {task.id}: scene unreadable: {exc}") from None


def scene_summary(scene: Scene) -> str:
    rooms = ", ".join(f"{r.id!r} ({r.room_type or 'room'}, {r.area_m2:.1f} m2)" for r in scene.rooms)
    return (f"{len(scene.rooms)} rooms: {rooms}; {len(scene.doors)} doors, {len(scene.windows)} windows, "
            f"{len(scene.objects)} objects.")


class LegoEvalEnv(Env):
    """One instruction–scene pair.

    Args:
        options: The run's options; the env reads ``render`` (environment tools render images;
            off: text only), ``image_px`` (the side of those images), ``wall_midpoint_positions``
            (the original's door/window positions, §2.5) and ``geometry`` (how rendered views draw
            objects). None: the declared defaults.
    """

    state_type = LegoEvalState
    action_type = LegoEvalAction

    def __init__(self, task: Task, options: LegoEvalOptions | None = None) -> None:
        self.options = options if options is not None else LegoEvalOptions()
        try:
            self.tools = [*llm_tools(), _submit_tool()]
        except ImportError:
            self.tools = []
        self._start(task)

    def _start(self, task: Task) -> None:
        self.task = task
        self.ctx: ToolContext | None = None
        self.scene_error: str | None = None
        self.result: dict[str, Any] | None = None
        self.tool_calls = 0
        self.invalid_actions = 0

    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        self._start(task)
        try:
            scene = load_task_scene(task)
            self.ctx = ToolContext.for_scene(scene, render=self.options.render, image_px=self.options.image_px,
                                             geometry=self.options.geometry,
                                             wall_midpoint_positions=self.options.wall_midpoint_positions)
            summary = scene_summary(scene)
        except (SceneFormatError, ValueError) as exc:
            self.scene_error = str(exc).splitlines()[0]
            summary = f"(the scene could not be read: {self.scene_error})"
        constraints = "\n".join(f"- {c['id']} [{c['type']}] {c['text']}" for c in task.inputs["constraints"])
        text = fill("agent_task", INSTRUCTION=task.inputs["instruction"], CONSTRAINTS=constraints, SUMMARY=summary)
        state = LegoEvalState(task.inputs["instruction"], list(task.inputs["constraints"]), self.scene_error).to_dict()
        return ResetResult(Observation(text=text, state=state), {"scene_error": self.scene_error})

    def step(self, action: Action) -> StepResult:
        if isinstance(action.data, dict) and ("verdicts" in action.data or "tool" in action.data):
            return self._data(action.data)
        if action.tool_calls:
            calls: list[tuple[str | None, str, Any]] = []
            for call in action.tool_calls:
                if call.parse_error:
                    return self._invalid(f"tool call {call.name}: arguments are not valid JSON ({call.parse_error})",
                                         call.id)
                if call.name == SUBMIT:
                    try:
                        submitted = Verdicts.from_data(call.arguments)
                    except ValueError as exc:
                        return self._invalid(str(exc), call.id)
                    return self._submit(submitted.verdicts, submitted.valid, call.id)
                calls.append((call.id, call.name, call.arguments))
            return self._tools(calls)
        if action.text:
            try:
                data = parse_json(action.text[action.text.find("{"): action.text.rfind("}") + 1])
            except JSONInputError as exc:
                return self._invalid(f"the JSON in the reply is refused: {exc.msg}", None)
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict) and "verdicts" in data:
                return self._data(data)
        return self._invalid("no tool call and no verdicts; call a tool or submit_verdicts", None)

    def _data(self, data: dict[str, Any]) -> StepResult:
        """A scripted agent's action data (or verdicts a model wrote as JSON text), read by the
        action record."""
        try:
            typed = LegoEvalAction.from_data(data)
        except ValueError as exc:
            return self._invalid(str(exc), None)
        if typed.verdicts is None:
            return self._tools([(None, str(typed.tool), typed.args)])
        return self._submit(typed.verdicts, typed.valid, None, trace=typed.trace, identified=typed.identified)

    def _invalid(self, message: str, call_id: str | None) -> StepResult:
        self.invalid_actions += 1
        text = f"Invalid action: {message}. Nothing changed."
        results = [(call_id, text)] if call_id else []
        return StepResult(Observation(text=text, tool_results=results), 0.0, False, False, {"invalid": message})

    def _tools(self, calls: list[tuple[str | None, str, Any]]) -> StepResult:
        if self.ctx is None:
            return self._invalid(f"the scene could not be read ({self.scene_error}); only submit_verdicts works",
                                 calls[0][0])
        answers: list[tuple[str, str]] = []
        images: list[bytes] = []
        texts = []
        for call_id, name, args in calls:
            try:
                output = run_tool(self.ctx, name, args)
            except ToolArgumentError as exc:
                self.invalid_actions += 1
                text = f"error: {exc}"
            else:
                self.tool_calls += 1
                shown = {k: v for k, v in output.items() if not is_image_key(k)}
                keys = [k for k in output if is_image_key(k)]
                images += [output[k] for k in keys]
                text = json.dumps(shown, default=str)[:ANSWER_CHARS]
                if keys:
                    text += f"\nimages attached: {keys}"
            texts.append(f"{name}: {text}")
            if call_id:
                answers.append((call_id, text))
        obs = Observation(text="\n".join(texts), images=list(images), tool_results=answers)
        return StepResult(obs, 0.0, False, False, {"tools": [c[1] for c in calls]})

    def _submit(self, given: list[Verdict], valid: bool | None, call_id: str | None, *,
                trace: list[Any] | None = None, identified: list[Verdict] | None = None) -> StepResult:
        try:
            verdicts = in_task_order(given, self.task, "legoeval action: ")
        except OutcomeError as exc:
            return self._invalid(str(exc), call_id)
        if valid is None:
            valid = holistic(verdicts)
        self.result = {"verdicts": [v.to_dict() for v in verdicts], "valid": valid}
        if trace is not None:  # the pipeline's plans
            self.result["trace"] = trace
        if identified is not None:  # its verdicts on the constraints it identified itself
            self.result["identified"] = [v.to_dict() for v in identified]
        text = f"verdicts recorded: the house is judged {'valid' if valid else 'invalid' if valid is False else 'unknown'}"
        obs = Observation(text=text, tool_results=[(call_id, text)] if call_id else [])
        reward = verdict_reward(self.task, [v.holds for v in verdicts], valid)
        info = {"valid": valid, "reward": "unlabelled" if reward is None else "agreement"}
        return StepResult(obs, 0.0 if reward is None else reward, True, False, info)

    def outcome(self) -> LegoEvalOutcome:
        base = self.result or {"verdicts": [{"id": str(c["id"]), "holds": None, "explanation": "no verdict submitted"}
                                            for c in self.task.inputs["constraints"]], "valid": None}
        return LegoEvalOutcome(verdicts=base["verdicts"], valid=base["valid"], trace=base.get("trace"),
                               identified=base.get("identified"), tool_calls=self.tool_calls,
                               invalid_actions=self.invalid_actions, scene_error=self.scene_error)


def make_env(task: Task, options: LegoEvalOptions) -> LegoEvalEnv:
    """``-o render=false`` gives text-only tools; ``-o image_px=N`` sizes their images; ``-o
    wall_midpoint_positions=true`` the original's positions; ``-o geometry=procedural|mesh`` renders
    objects as meshes."""
    check_geometry(options.geometry)
    return LegoEvalEnv(task, options)


def check_geometry(geometry: Geometry) -> Geometry:
    """``geometry`` when this machine can draw and measure objects so; ConfigError when ``mesh``
    is asked for with no asset folder (a run checks it once before it starts: ``suite.check_run``)."""
    if geometry == "mesh":
        from buildbench.scenes.views import ViewInputError
        from buildbench.scenes.views.meshes import default_library

        try:
            configured = default_library().configured
        except ViewInputError as exc:
            raise ConfigError(f"option geometry: {exc}") from None
        if not configured:
            raise ConfigError("option geometry=mesh needs an asset folder (BUILDBENCH_3DFUTURE_DIR or "
                              "BUILDBENCH_OBJAVERSE_DIR); use geometry=procedural without one")
    return geometry
