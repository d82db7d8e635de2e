"""The DreamHouse env: one house, three action formats, validator feedback.

Description:
    The agent builds a timber frame as named boxes. Its scene persists across steps within
    an episode (the paper's retries start from the same scene); ``reset_scene`` (a method
    for protocols, a tool for agents) empties it. It is the whole Blender scene, objects that
    are not members included, as the released harness's saved ``.blend`` (:mod:`.scene_history`).
Action space (all accepted in every episode; ``action_format`` picks what the prompt teaches):
    Blender Python text run by the selected executor (``executor=fast|blender``); a JSON
    member list; tool calls (``add_members``, ``remove_members``, ``modify_members``,
    ``validate``, ``reset_scene``). See :mod:`.actions`.
Observation:
    Text (the task prompt, then validator feedback naming members, with the released
    summary block), the five target views as images when the task has them
    (:func:`.views.views_for`), and ``state`` with the member count and the last test flags.
Rewards and episode end:
    Reward 1.0 on a step whose structure passes every test of the profile
    (``terminated``), else 0.0: the paper's pass signal (every structural test passes), which
    the paper does not shape. Protocols own budgets and gating.
Controls (:func:`~buildbench.harness.env.control` methods, called as ``ctx.control(env.method, ...)``;
logged as control steps under their names):
    ``set_scope`` (which tests decide a step: all, early, phased), ``reset_scene``,
    ``checkpoint`` / ``restore`` (by label), ``evaluate`` (validate the scene; CPU-bound),
    ``visual_score`` (render and score against the target; CPU-bound) and ``note`` (the
    protocol's bookkeeping, kept in the outcome under ``protocol``).
Bad actions:
    Unreadable text, bad JSON, bad tool arguments, a failing or crashing script: each gets
    a message saying what was wrong and where, and the scene stays as it was.
Arguments (``-o key=value``, read from :class:`.options.DreamHouseOptions`):
    ``executor`` (fast|blender), ``profile`` (paper|released), ``condition`` (frame|facade),
    ``action_format`` (python|json|tools), ``isolation`` (auto|bwrap|process),
    ``images`` (on|off: show the target views; off for text-only runs and fast tests),
    ``renderer`` (raster|gl|cycles).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from buildbench.harness import Action, Env, Observation, ResetResult, StepResult, Task
from buildbench.harness.env import control
from buildbench.harness.errors import ConfigError

from . import actions
from .check import MEMBER_CHECK, ValidationReport, validate
from .model import SUBSYSTEM, Structure, StructureFormatError
from .options import DreamHouseOptions
from .outcome import DreamHouseOutcome, compact_structure, structure_from_compact
from .prompts import task_prompt
from .scene_history import SceneHistory
from .spaces import DreamHouseAction, DreamHouseState
from .views import VisualScore, VisualScorer, views_for

CheckScope = Literal["all", "early", "phased"]
T = TypeVar("T")

# A GL context belongs to one thread (``buildbench.render.context``), while the harness runs
# env calls on a pool of threads: every render of this suite's env and protocols goes
# through this one thread.
def render_call(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(*args)`` (anything that renders) on the process's GL thread."""
    from buildbench.render import on_gl_thread

    return on_gl_thread(fn, *args)


#: The mid-phase subset 𝒱_mid (paper §4.4; released ``EARLY_TESTS``), plus the member check.
EARLY_TESTS: tuple[str, ...] = (MEMBER_CHECK, "load_path", "stability_score")
#: Characters of a script traceback shown to the agent (the released scaffold shows 1,000).
TRACEBACK_CHARS = 1000


@dataclass(frozen=True)
class Evaluation:
    """The validator's verdict on the current scene, as shown to the agent.

    Attributes:
        scope: Which tests decided ``passed`` (``all``, ``early`` or ``phased``).
        passed: The scope's tests pass.
        all_passed: Every test of the profile passes.
        report: The full validation report of the scene.
        text: Feedback for the agent.
        failed_phase: For ``phased``: 1-based index of the first phase that failed.
    """

    scope: str
    passed: bool
    all_passed: bool
    report: ValidationReport
    text: str
    failed_phase: int | None = None

    @property
    def reward(self) -> float:
        """The pass signal: 1.0 when every test of the profile passes."""
        return 1.0 if self.all_passed else 0.0

    def info(self) -> dict[str, Any]:
        """JSON-able diagnostics for the step log."""
        return {
            "scope": self.scope,
            "passed": self.passed,
            "all_passed": self.all_passed,
            "tests": {r.name: r.passed for r in self.report.results},
            "n_members": self.report.n_members,
            "failed_phase": self.failed_phase,
        }


def early_text(report: ValidationReport, label: str) -> tuple[bool, str]:
    """Pass flag and feedback of the early tests (member check, load path, stability)."""
    results = [report[name] for name in EARLY_TESTS]
    failed = [r for r in results if not r.passed]
    if not failed:
        return True, f"[SUCCESS] {label} passed stability + load_path ({report.n_members} members)."
    lines = [f"[VALIDATION FAILED — {label}]", f"  Passed: {len(results) - len(failed)}/{len(results)}"]
    for r in failed:
        lines.append(f"{r.label}:")
        lines += [f"  {m}" for m in r.messages]
    return False, "\n".join(lines)


def phase_runs(structure: Structure) -> list[tuple[str, int]]:
    """Phases in build order: maximal runs of one subsystem in creation order, as ``(phase, end)``.

    The agent's script creates members phase by phase in the order it chose; each change
    of subsystem (foundation, floor, walls, roof) closes a phase. Unknown names form
    their own runs.
    """
    phases = [SUBSYSTEM.get(c or "", "unknown") for c in structure.categories]
    runs: list[tuple[str, int]] = []
    for i, p in enumerate(phases):
        if runs and runs[-1][0] == p:
            runs[-1] = (p, i + 1)
        else:
            runs.append((p, i + 1))
    return runs


class DreamHouseEnv(Env):
    """One DreamHouse task (see the module docstring)."""

    observation_description = ("text: task prompt, then validator feedback naming members; images: the five "
                               "target views (RGBA); state: n_members, passed, all_passed, tests")
    action_description = ("Blender Python text, a JSON member list (boxes in metres), or tool calls add_members, "
                          "remove_members, modify_members, validate, reset_scene")
    state_type = DreamHouseState
    action_type = DreamHouseAction

    def __init__(self, task: Task, options: DreamHouseOptions | None = None) -> None:
        self.task = task
        #: The run's options (the env reads executor, profile, condition, action_format,
        #: isolation, images and renderer).
        self.options = options or DreamHouseOptions()
        self.tools = actions.tools()
        #: Which tests decide a step's verdict; protocols set it before stepping.
        self.check_scope: CheckScope = "all"
        self._executor: Any = None
        self._history = SceneHistory(self.collection)  # how the executor gets the whole scene back
        self._init_episode()

    def _init_episode(self) -> None:
        self._scene = Structure.from_members([])
        self._history.collection = self.collection
        self._history.reset()
        self.attempts = 0
        self.invalid_actions = 0
        self.script_errors = 0
        self.last: Evaluation | None = None
        self.notes: dict[str, Any] = {}
        self._checkpoints: dict[str, Structure] = {}

    # -- episode ------------------------------------------------------------------------
    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        self.task = task
        self._init_episode()
        self.check_scope = "all"
        images = self._views(task)
        text = task_prompt(task, condition=self.options.condition, n_images=len(images),
                           action_format=self.options.action_format)
        state = DreamHouseState("task", n_members=0, collection=self.collection).to_dict()
        return ResetResult(Observation(text=text, images=list(images), state=state), {"n_images": len(images)})

    def _views(self, task: Task) -> list[Any]:
        if self.options.images == "off":
            return []
        from buildbench.render import RenderUnavailableError

        try:
            return list(render_call(views_for, task, self.options.condition, self.options.renderer))
        except RenderUnavailableError:
            return []  # no headless OpenGL here: the episode runs on the text context alone

    @property
    def collection(self) -> str:
        """The Blender collection scripts must build into (the task id, as in the released harness)."""
        return str(self.task.inputs.get("collection") or self.task.id)

    @property
    def structure(self) -> Structure:
        """The current scene."""
        return self._scene

    @control(doc="which tests decide a step: all, early or phased")
    def set_scope(self, scope: CheckScope) -> None:
        """Which tests decide the verdict of the next steps."""
        if scope not in ("all", "early", "phased"):
            raise ValueError(f"set_scope: unknown scope {scope!r}; scopes: all, early, phased")
        self.check_scope = scope

    def _members_observation(self, text: str) -> Observation:
        return Observation(text=f"{text} ({len(self._scene)} members).",
                           state=DreamHouseState(n_members=len(self._scene)).to_dict())

    @control(name="reset_scene", doc="empty the scene")
    def reset_scene_control(self) -> Observation:
        """Empty the scene; the observation says so."""
        self.reset_scene()
        return self._members_observation("The scene was emptied")

    @control(name="checkpoint", doc="remember the scene under a label")
    def save_checkpoint(self, label: str) -> Observation:
        """Remember the current scene under ``label``."""
        self._checkpoints[label] = self._scene
        return self._members_observation(f"Checkpoint {label!r} saved")

    @control(name="restore", doc="put a labelled scene back")
    def restore_checkpoint(self, label: str) -> Observation:
        """Put the scene saved under ``label`` back.

        Raises:
            ValueError: No checkpoint has that label.
        """
        if label not in self._checkpoints:
            raise ValueError(f"restore: no checkpoint {label!r}; checkpoints: {', '.join(self._checkpoints) or 'none'}")
        self.restore(self._checkpoints[label])
        return self._members_observation(f"Checkpoint {label!r} restored")

    @control(cpu_bound=True, doc="visual fidelity S of the scene against the target views")
    def visual_score(self, scorer: VisualScorer) -> VisualScore:
        """Visual fidelity of the current scene against the task's target, by ``scorer`` (on the GL thread)."""
        return render_call(scorer, self.task, self._scene, self.options.condition, self.options.renderer)

    @control(doc="the protocol's bookkeeping, kept in the outcome")
    def note(self, values: dict[str, Any]) -> None:
        """Merge the protocol's bookkeeping into the outcome's ``protocol`` notes."""
        self.notes.update(values)

    def checkpoint(self) -> Structure:
        """The current scene, to :meth:`restore` later (structures are immutable)."""
        return self._scene

    def restore(self, scene: Structure) -> None:
        """Put a checkpointed scene's members back (the executor rebuilds them before the next
        script; objects that are not members stay as they are now)."""
        if scene is not self._scene:
            self._edited(scene)

    def reset_scene(self) -> None:
        """Empty the scene, objects that are not members included (the explicit reset between
        regenerations)."""
        self._scene = Structure.from_members([])
        self._history.reset()

    def _edited(self, scene: Structure) -> None:
        """``scene``'s members replace the scene's, made outside a script (a JSON or tool edit, a
        restored checkpoint): the executor rebuilds them in its scene before the next script."""
        self._scene = scene
        self._history.edited(scene)

    # -- acting -------------------------------------------------------------------------
    def step(self, action: Action) -> StepResult:
        self.attempts += 1
        if action.tool_calls:
            return self._step_tools(action)
        try:
            kind, payload = self._read(action)
            if kind == "python":
                scene = self._run_python(payload)
            else:
                listed = actions.parse_member_list(payload)
                scene = actions.add_members(self._scene, listed.members, replace=listed.replace)
        except actions.ActionError as exc:
            return self._invalid(str(exc))
        if kind == "python":
            self._scene = scene
        else:
            self._edited(scene)
        ev = self.evaluate()
        note = ""
        if len(scene) == 0:
            note = (f"\nNote: no members were found in the collection \"{self.collection}\"; "
                    "link every member into it.")
        return self._result(ev.text + note, ev)

    def _read(self, action: Action) -> tuple[str, Any]:
        data = action.data
        if data is not None and not isinstance(data, str):
            try:
                typed = DreamHouseAction.from_data(data)
            except ValueError as exc:
                raise actions.ActionError(str(exc)) from None
            if typed.code is not None:
                return "python", typed.code
            return "json", {"members": typed.members, "replace": typed.replace}
        text = data if isinstance(data, str) else action.text
        if not text or not text.strip():
            raise actions.ActionError("empty action: send a Blender Python script, a JSON member list or tool calls")
        parsed = actions.read_text(text)
        return (parsed.kind, parsed.code) if parsed.kind == "python" else (parsed.kind, parsed.document)

    def _executor_for_run(self) -> Any:
        if self._executor is None:
            from .executors import BlenderUnavailable, make_executor

            try:
                self._executor = make_executor(self.options.executor, collection=self.collection,
                                               isolation=self.options.isolation)
            except BlenderUnavailable as exc:
                raise ConfigError(str(exc)) from exc
        self._history.sync(self._executor, self._scene)
        return self._executor

    def _run_python(self, code: str) -> Structure:
        ex = self._executor_for_run()
        result = ex.run(code)
        self._history.rejected()  # until the run is accepted: the scene holds what the script did
        if not result.ok:
            # Like the released harness, a failed run is not saved: the scene stays as before.
            self.script_errors += 1
            tb = (result.traceback or "").strip()
            detail = f"{result.error}\n{tb[-TRACEBACK_CHARS:]}" if tb else str(result.error)
            raise actions.ActionError(f"[ERROR] Blender failed:\n{detail}")
        try:
            scene = result.structure()
        except StructureFormatError as exc:
            # What the script built is the agent's output (e.g. over the member limit): a bad
            # action with its reason, the scene kept as before, never an error of the episode.
            self.script_errors += 1
            raise actions.ActionError(f"[ERROR] the script's structure was refused: {exc}") from None
        self._history.accepted(ex, scene)
        return scene

    def _step_tools(self, action: Action) -> StepResult:
        answers: list[tuple[str, str]] = []
        for call in action.tool_calls:
            answers.append((call.id, self._apply_tool(call)))
        ev = self.evaluate()
        text = "\n\n".join(f"{name}: {answer}" for name, (_, answer) in
                           zip((c.name for c in action.tool_calls), answers, strict=True))
        return self._result(text, ev, tool_results=answers)

    def _apply_tool(self, call: Any) -> str:
        if call.parse_error:
            self.invalid_actions += 1
            return f"Invalid call: the arguments are not a JSON object ({call.parse_error}); nothing changed."
        args = call.arguments or {}
        try:
            if call.name == "add_members":
                self._edited(actions.add_members(self._scene, actions.parse_members(args.get("members"))))
            elif call.name == "remove_members":
                self._edited(actions.remove_members(self._scene, args.get("names")))
            elif call.name == "modify_members":
                self._edited(actions.modify_members(self._scene, args.get("changes")))
            elif call.name == "reset_scene":
                self.reset_scene()
            elif call.name == "validate":
                return self.evaluate().text
            else:
                raise actions.ActionError(f"unknown tool {call.name!r}; tools: {', '.join(actions.TOOL_SPECS)}")
        except actions.ActionError as exc:
            self.invalid_actions += 1
            return f"Invalid call: {exc}. Nothing changed."
        return f"OK: the scene has {len(self._scene)} members."

    def _invalid(self, message: str) -> StepResult:
        if not message.startswith("[ERROR]"):
            self.invalid_actions += 1
        text = f"{message}\nThe scene is unchanged ({len(self._scene)} members)."
        info = {"invalid": message, "n_members": len(self._scene)}
        state = DreamHouseState("feedback", n_members=len(self._scene), invalid=True).to_dict()
        return StepResult(Observation(text=text, state=state), 0.0, False, False, info)

    def _result(self, text: str, ev: Evaluation, tool_results: list[tuple[str, str]] | None = None) -> StepResult:
        state = DreamHouseState("feedback", n_members=len(self._scene), passed=ev.passed,
                                all_passed=ev.all_passed, tests=ev.info()["tests"]).to_dict()
        obs = Observation(text=text, tool_results=tool_results or [], state=state)
        return StepResult(obs, 1.0 if ev.all_passed else 0.0, ev.all_passed, False, ev.info())

    # -- checking -----------------------------------------------------------------------
    @control(cpu_bound=True, doc="validate the scene under a scope")
    def evaluate(self, scope: CheckScope | None = None) -> Evaluation:
        """Validate the current scene under ``scope`` (default: :attr:`check_scope`)."""
        scope = scope or self.check_scope
        report = validate(self._scene, self.options.profile)
        if scope == "early":
            ok, text = early_text(report, "early tests")
            ev = Evaluation(scope, ok, report.passed, report, text)
        elif scope == "phased":
            ev = self._phased(report)
        else:
            ev = Evaluation(scope, report.passed, report.passed, report, report.feedback())
        self.last = ev
        return ev

    def _phased(self, report: ValidationReport) -> Evaluation:
        runs = phase_runs(self._scene)
        for k, (phase, end) in enumerate(runs[:-1], start=1):
            sub = validate(self._scene.subset(np.arange(end)), self.options.profile)
            ok, text = early_text(sub, f"phase {k}/{len(runs)} ({phase}, members 1-{end})")
            if not ok:
                text += f"\nPhases {k + 1}-{len(runs)} are invalidated; rewrite the whole submission."
                return Evaluation("phased", False, False, report, text, failed_phase=k)
        return Evaluation("phased", report.passed, report.passed, report, report.feedback(),
                          failed_phase=None if report.passed else len(runs))

    # -- results ------------------------------------------------------------------------
    def outcome(self) -> DreamHouseOutcome:
        return DreamHouseOutcome(
            structure=compact_structure(self._scene), attempts=self.attempts, invalid_actions=self.invalid_actions,
            script_errors=self.script_errors, condition=self.options.condition, profile=self.options.profile,
            executor=self.options.executor, renderer=self.options.renderer, protocol=dict(self.notes),
        )

    def close(self) -> None:
        self._history.close()
        if self._executor is not None:
            self._executor.close()
            self._executor = None


def make_env(task: Task, options: DreamHouseOptions) -> DreamHouseEnv:
    """The suite's env factory."""
    return DreamHouseEnv(task, options)


__all__ = [
    "EARLY_TESTS", "CheckScope", "DreamHouseEnv", "Evaluation", "compact_structure",
    "early_text", "make_env", "phase_runs", "render_call", "structure_from_compact",
]  # fmt: skip
