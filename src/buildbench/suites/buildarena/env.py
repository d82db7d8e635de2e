"""The construction env: library tool calls in, the library's answers out (spec 2, 4.1).

Description
    One episode builds one or more machines with the spatial geometric
    computation library. A protocol opens *stages* (``begin``): a fresh
    machine to build, a copy of a built machine to refine, an assembly of
    built machines, or the Controller's control trials. Each stage offers the
    tool groups of the released workflow (spec 2.1).

Action space
    One library call per step, as in the paper's Builder: the first tool call
    of ``Action.tool_calls`` is run and any further calls of the same reply
    are answered "not executed"; scripted agents send
    ``Action(data={"op": ..., "params": {...}})``. In a control stage the
    action is the Controller's JSON design (text or data). Malformed
    arguments, unknown tools, tools outside the stage and bad parameters get
    a clear message and leave the machine unchanged.

Observation
    The library's text (``tool_results`` answer the call id); ``state`` holds
    the stage, machine id and block count.

Controls (``EpisodeContext.control(env.begin, ...)``)
    ``begin`` (open a stage), ``approve``, ``set_final``, ``new_control_round``,
    ``evaluate_round`` (simulate the product and note a closed-loop round; CPU-bound),
    ``query`` (a read-only library call on a machine) and ``has_powered_wheel``.

Reward
    The paper's pass signal where the env simulates: a control trial's step gets the trial's
    indicator shaped into [0, 1) (``reward.trial_reward``), and 1.0 when the trial passes. Library
    calls get 0: whether a half-built machine is good is only known when it is simulated, and
    the paper scores the final machine only.

Episode end
    The protocol ends the episode; ``max_calls`` (option) truncates it. The
    product (``outcome``, a ``BuildArenaOutcome``) is the final machine's replayable history, the
    histories of every machine it was assembled from, the chosen control
    design and the call statistics; ``score.score_episode`` rebuilds and simulates it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from buildbench.harness import Action, Env, Observation, ResetResult, StepResult, Task
from buildbench.harness.env import control
from buildbench.llm import Tool

from .check import SimResult, simulate, simulation
from .controller import (
    ControlDesignError,
    apply_design,
    not_moving,
    parse_design,
    trajectory_text,
)
from .library import COMMANDS, Workbench, tool_specs
from .library.released.convert import ReleasedStageBench, assemble_released, rebuild_released
from .library.replay import rebuild
from .model import HistoryEntry, Machine, Rules
from .options import BuildArenaOptions
from .outcome import BuildArenaOutcome, ChosenTrial, Evaluation, Round, history_list
from .outcome import rebuild_outcome as rebuild_outcome  # re-exported: the outcome's reader beside its writer
from .physics import Simulation
from .physics.config import config_for
from .reward import trial_reward
from .score import failure_category
from .spaces import BuildArenaCall, BuildArenaState
from .tasks import TaskSpec, get_task, load_levels

#: Tool groups of each stage kind (released ``spatial/agent.py``; spec 2.1, 4.1).
STAGE_GROUPS: dict[str, tuple[str, ...]] = {
    "build": ("build_only", "build", "refine", "default"),
    "refine": ("refine", "default"),
    "assemble": ("build", "refine", "default", "assembly"),
    # Scripted designs (reference agents, negative controls) also bind their own controls.
    "script": ("build_only", "build", "refine", "default", "control"),
    "script-assemble": ("build", "refine", "default", "assembly", "control"),
    # Closed loop (paper Table 6): a copy of the product, edited after simulator feedback.
    "revise": ("build", "refine", "default"),
    "control": (),
}

#: Library calls that read a machine without changing it (the ``query`` control).
QUERIES: tuple[str, ...] = ("get_machine_summary", "review_powered_blocks", "review_control_config",
                            "review_control_sequence")

NOT_EXECUTED = "Not executed: only one tool call is run per reply; send the next call in your next reply."


@dataclass(frozen=True)
class Stage:
    """The stage the env is in.

    Attributes:
        kind: A key of ``STAGE_GROUPS``.
        machine_id: Id of the machine being edited (or controlled).
        tool_names: Library tools allowed.
    """

    kind: str
    machine_id: str
    tool_names: tuple[str, ...]


def _tools(groups: tuple[str, ...]) -> list[Tool]:
    return [
        Tool(s["function"]["name"], s["function"]["description"], s["function"]["parameters"])
        for s in tool_specs(*groups)
    ] if groups else []



class BuildArenaEnv(Env):
    """One BuildArena task.

    Args:
        task: The harness task (id = a BuildArena task id such as ``support-1``).
        options: The run's options (default: every option's default). The env reads
            ``sim_duration_s`` (shorten every simulation: control trials, closed-loop feedback,
            scoring), ``max_calls`` (the step that reaches it is truncated), ``control_trials``,
            ``profile`` (``released``: the original library's answers, quirks and crashes in build,
            refine and assembly stages; control stages use ours), ``max_shift`` (the library's
            rules), ``levels`` (task statements replacing ours) and ``physics`` (the profile of
            every simulation, recorded in the outcome).

    Raises:
        ValueError: An unreadable or foreign ``levels`` file, or a bad physics profile.
    """

    observation_description = ("text: the library's answer to the call (tool_results answer its id); state: "
                               "stage kind, machine id, block count")
    action_description = ("one library tool call of the stage's groups (tools), or data {'op', 'params'}; in a "
                          "control stage a JSON control design (keys and timed presses, s)")
    state_type = BuildArenaState
    action_type = BuildArenaCall

    def __init__(self, task: Task, options: BuildArenaOptions | None = None) -> None:
        self.task = task
        self.options = options or BuildArenaOptions()
        self.rules = Rules(max_shift=self.options.max_shift)
        self.task_texts = load_levels(self.options.levels) if self.options.levels else {}
        self.physics = config_for(self.options.physics)
        self.seed = 0
        self._reset_state()

    def _reset_state(self) -> None:
        self.spec: TaskSpec = get_task(self.task.id)
        self.machines: dict[str, Machine] = {}
        self.approved: dict[str, bool] = {}
        self.final: str | None = None
        self.bench: Workbench | ReleasedStageBench = self._fresh_bench()
        self.stage = Stage("build", "1", ())
        self.tools = []
        self.calls = 0
        self.invalid_calls = 0
        self.extra_calls = 0
        self.failures: dict[str, int] = {}
        self.trials: list[dict[str, Any]] = []
        self.best_trial: ChosenTrial | None = None
        self.trials_open = 0
        self.control_errors = 0
        self.rounds: list[dict[str, Any]] = []

    # -- stages -------------------------------------------------------------------------------

    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        self.task = task
        self.seed = int(seed or 0)
        self._reset_state()
        observation = self.begin("build", "1")
        # The stage line stays out: every role's prompt quotes this text, and the tools travel as specs.
        text = f"Task {self.spec.id}:\n{self.task_texts.get(self.spec.id, self.spec.text)}"
        info = {"task": self.spec.id, "category": self.spec.category, "control_trials": self.options.control_trials}
        return ResetResult(dataclasses.replace(observation, text=text), info)

    @control(doc="open a stage: kind, machine_id, source, candidates")
    def begin(self, kind: str, machine_id: str, *, source: str | None = None,
              candidates: Sequence[str] = ()) -> Observation:
        """Open a stage (protocols call this between roles).

        Args:
            kind: ``build`` / ``script`` (fresh machine), ``refine`` / ``revise`` (a copy of ``source``),
                ``assemble`` / ``script-assemble`` (an empty assembly of ``candidates``), or
                ``control`` (trials on machine ``machine_id``).
            machine_id: Id under which the stage's machine is kept.
            source: The machine a refine stage copies.
            candidates: Machines an assembly may add.

        Raises:
            ValueError: Unknown kind, or a source/candidate/control machine that does not exist.
        """
        if kind not in STAGE_GROUPS:
            raise ValueError(f"unknown stage kind {kind!r}; kinds: {', '.join(STAGE_GROUPS)}")
        self._save_active()
        if kind == "control":
            self._machine(machine_id)
            self.bench = Workbench(rules=self.rules)
        elif kind in ("refine", "revise") and self.options.profile == "released":
            self.bench = rebuild_released(self._machine(source or "").history, self._histories())
        elif kind in ("refine", "revise"):
            base = self._machine(source or "")
            self.bench = Workbench(rebuild(base.history, self.rules, saved=self.machines), self.rules,
                                   saved=dict(self.machines))
        elif kind in ("assemble", "script-assemble") and self.options.profile == "released":
            self.bench = assemble_released({c: self._machine(c).history for c in tuple(candidates)})
        elif kind in ("assemble", "script-assemble"):
            saved = {c: self._machine(c) for c in tuple(candidates)}
            self.bench = Workbench(Machine(is_assembly=True), self.rules, saved=saved)
        else:
            self.bench = self._fresh_bench()
        self.stage = Stage(kind, machine_id, tuple(c.name for c in COMMANDS.values()
                                                   if c.group in STAGE_GROUPS[kind]))
        self.tools = _tools(STAGE_GROUPS[kind])
        if kind != "control":
            self.machines[machine_id] = self.bench.machine
        names = ", ".join(self.stage.tool_names) or "none (send a JSON control design)"
        return Observation(text=f"Stage {kind} on machine {machine_id}. Tools: {names}.",
                           state=self._state())

    def _histories(self) -> dict[str, list[HistoryEntry]]:
        """Every kept machine's history by id (what a released assembly finds saved)."""
        return {mid: machine.history for mid, machine in self.machines.items()}

    def _fresh_bench(self) -> Workbench | ReleasedStageBench:
        return ReleasedStageBench() if self.options.profile == "released" else Workbench(rules=self.rules)

    def _machine(self, machine_id: str) -> Machine:
        if machine_id not in self.machines:
            raise ValueError(f"no machine {machine_id!r}; machines: {', '.join(self.machines) or 'none'}")
        return self.machines[machine_id]

    def _save_active(self) -> None:
        # ``reset`` inside the library replaces the workbench's machine object.
        if self.stage.kind != "control" and self.stage.machine_id in self.machines:
            self.machines[self.stage.machine_id] = self.bench.machine

    @control(doc="record whether the workflow approved a machine")
    def approve(self, machine_id: str, approved: bool = True) -> None:
        """Record whether the workflow approved a machine (an objection or a turn limit does not)."""
        self._save_active()
        self._machine(machine_id)
        self.approved[machine_id] = approved

    @control(doc="name the machine that is the episode's product")
    def set_final(self, machine_id: str) -> None:
        """Name the machine that is the episode's product."""
        self._save_active()
        self._machine(machine_id)
        self.final = machine_id

    @control(doc="a read-only library call on a machine, as text")
    def query(self, machine_id: str, op: str) -> str:
        """The library's answer to a read-only call ``op`` (e.g. ``get_machine_summary``) on a machine."""
        if op not in QUERIES:
            raise ValueError(f"query: {op!r} is not a read-only library call; queries: {', '.join(QUERIES)}")
        return Workbench(self.machine(machine_id), self.rules).call(op).text

    @control(doc="whether a machine has a powered wheel")
    def has_powered_wheel(self, machine_id: str) -> bool:
        """Whether a machine has a powered wheel (the workflow then refines its rotations)."""
        return any(b.type == "Powered Wheel" for b in self.machine(machine_id).blocks.values())

    def machine(self, machine_id: str | None = None) -> Machine:
        """A machine by id (default: the one the current stage edits)."""
        self._save_active()
        return self._machine(machine_id or self.stage.machine_id)

    def _state(self) -> dict[str, Any]:
        machine = self.machines.get(self.stage.machine_id)
        return BuildArenaState(self.stage.kind, self.stage.machine_id,
                               machine.num_blocks if machine is not None else 0).to_dict()

    # -- steps --------------------------------------------------------------------------------

    def step(self, action: Action) -> StepResult:
        if self.stage.kind == "control":
            return self._control_step(action)
        call_id, op, params, refusal = self._read_call(action)
        if self.options.max_calls is not None and self.calls >= self.options.max_calls:
            text = f"The call budget of {self.options.max_calls} library calls is spent; nothing was executed."
            return self._result(action, call_id, text, {"ok": False, "budget": True}, truncated=True)
        self.calls += 1
        if refusal is None:
            outcome = self.bench.call(op, params)
            text, ok, changed = outcome.text, outcome.ok, outcome.changed
        else:
            text, ok, changed = refusal, False, False
        failure = None
        if not ok:
            self.invalid_calls += 1
            failure = failure_category(text)
            self.failures[failure] = self.failures.get(failure, 0) + 1
        self._save_active()
        info = {"op": op, "ok": ok, "changed": changed, "failure": failure, **self._state()}
        truncated = self.options.max_calls is not None and self.calls >= self.options.max_calls
        return self._result(action, call_id, text, info, truncated=truncated)

    def _read_call(self, action: Action) -> tuple[str | None, str, Any, str | None]:
        """``(call id, op, params, refusal)``; refusal is the message when the call cannot run."""
        params: Any  # unchecked here: a tool call's arguments or a data action's ``params``
        if action.tool_calls:
            self.extra_calls += len(action.tool_calls) - 1
            call = action.tool_calls[0]
            if call.parse_error:
                return call.id, call.name, {}, (
                    f"The arguments of your {call.name} call are not valid JSON ({call.parse_error}); "
                    "nothing was changed. Send one tool call whose arguments are a JSON object."
                )
            op, params = call.name, call.arguments
            call_id: str | None = call.id
        elif isinstance(action.data, dict) and "op" in action.data:
            try:
                data = BuildArenaCall.from_data(action.data)
            except ValueError as exc:
                return None, str(action.data["op"]), {}, f"{exc}; nothing was changed."
            op, params, call_id = data.op, data.params, None
        else:
            return None, "", {}, ("There was no tool call in your reply; nothing was changed. "
                                  "Reply with exactly one tool call.")
        if not isinstance(op, str) or op not in COMMANDS:
            return call_id, str(op), params, (
                f"Unknown operation {op!r}; the tools of this stage are: {', '.join(self.stage.tool_names)}."
            )
        if op not in self.stage.tool_names:
            return call_id, op, params, (
                f"Tool {op!r} is not available in this stage ({self.stage.kind}); "
                f"available tools: {', '.join(self.stage.tool_names)}."
            )
        return call_id, op, params, None

    def _result(self, action: Action, call_id: str | None, text: str, info: dict[str, Any], *,
                truncated: bool = False, terminated: bool = False, reward: float = 0.0) -> StepResult:
        results = []
        if call_id is not None:
            results.append((call_id, text))
            results += [(c.id, NOT_EXECUTED) for c in action.tool_calls[1:]]
        observation = Observation(text=text, tool_results=results, state=self._state())
        return StepResult(observation, reward, terminated, truncated, info)

    # -- control trials -----------------------------------------------------------------------

    def _control_step(self, action: Action) -> StepResult:
        generation = len(self.trials) - self.trials_open + 1
        call_id = action.tool_calls[0].id if action.tool_calls else None
        if generation > self.options.control_trials:
            text = f"All {self.options.control_trials} control trials are used; nothing was run."
            return self._result(action, call_id, text, {"ok": False}, terminated=True)
        trial: dict[str, Any] = {"generation": generation, "passed": False, "indicator": 0.0}
        try:
            raw = action.data if action.data is not None else (
                action.tool_calls[0].arguments if action.tool_calls else action.text or "")
            design = parse_design(raw)
        except ControlDesignError as exc:
            trial["error"] = str(exc)
            self.trials.append(trial)
            self.control_errors += 1
            text = f"Trial {generation} could not run: {exc}."
            return self._result(action, call_id, text, {"ok": False, "trial": trial},
                                terminated=generation >= self.options.control_trials)
        history = self._machine(self.stage.machine_id).history
        if self.options.profile == "released":
            machine = rebuild_released(history, self._histories()).machine
        else:
            machine = rebuild(history, self.rules, saved=self.machines)
        bench = Workbench(machine, self.rules, saved=dict(self.machines))
        applied = apply_design(bench, design)
        self.control_errors += len(applied.errors)
        lines = [f"Trial {generation}:"] + applied.errors
        stop = generation >= self.options.control_trials
        if applied.bindings == 0 or applied.presses == 0:
            trial["error"] = "No control keys assigned" if applied.bindings == 0 else "No control sequence found"
            lines.append(f"{trial['error']}: the machine was not run.")
        else:
            try:
                result = self._simulate(bench.machine)
            except ValueError as exc:  # nothing solid to simulate
                trial["error"] = str(exc)
                self.trials.append(trial)
                lines.append(f"The machine could not be simulated: {exc}.")
                return self._result(action, call_id, "\n".join(lines), {"ok": False, "trial": trial}, terminated=True)
            trial.update(passed=result.passed, indicator=float(result.indicator), reason=result.reason)
            lines += [f"Result: {'passed' if result.passed else 'failed'} ({result.reason}); "
                      f"indicator {result.indicator:.3f}.",
                      "Trajectory (offsets from the start, [east, north, up]):", trajectory_text(result.trajectory)]
            if generation > 1 and not_moving(result.trajectory):
                lines.append("The machine is not moving at all; no further trials.")
                trial["error"] = "The machine is not moving at all"
                stop = True
            rank = (bool(result.passed), float(result.indicator), -generation)
            if self.best_trial is None or rank > self.best_trial.rank:
                self.best_trial = ChosenTrial(rank, bench.machine, design)
        self.trials.append(trial)
        return self._result(action, call_id, "\n".join(lines), {"ok": "error" not in trial, "trial": trial},
                            terminated=stop, reward=trial_reward(bool(trial["passed"]), float(trial["indicator"])))

    def _simulate(self, machine: Machine) -> SimResult:
        return simulate(machine, self.spec.id, seed=self.seed, duration_s=self.options.sim_duration_s, config=self.physics)

    def simulation(self, machine_id: str | None = None) -> Simulation:
        """The product (or machine ``machine_id``) in the task's scene as a steppable simulation,
        for RL code that advances it tick by tick (the env's own checks run it to the end).

        Raises:
            ValueError: No such machine, no product yet, or a machine without solid blocks.
            simulation.ModelRefused: MuJoCo could not build the machine's model (out of memory
                compiling it, its arena too big to allocate, another MuJoCo error). Not a
                ValueError: its ``output`` is the run stopped at 0 s, with the reason
                (``diverged_reason``: ``memory``, ``mujoco``) and what MuJoCo said, which
                ``check.simulate`` (the env's ``simulate`` tool, ``evaluate``, the score) judges as
                a failure of the machine, or an unscored fault for an error that is not a limit.
                A model MuJoCo builds but stops at its first step comes back as a simulation
                that is already done.
        """
        machine = self.machine(machine_id) if machine_id is not None else self.product()
        if machine is None:
            raise ValueError("simulation: there is no product yet; name a machine")
        return simulation(machine, self.spec.id, duration_s=self.options.sim_duration_s, config=self.physics)

    @control(doc="fresh control trials for a revised machine")
    def new_control_round(self) -> None:
        """Forget the chosen control so a revised machine gets fresh trials (closed loop)."""
        self.best_trial = None
        self.trials_open = len(self.trials)

    def record_round(self, evaluation: Evaluation) -> dict[str, Any]:
        """Note one closed-loop round's result (paper Table 6: SR, load, parts, invalid rate, calls)."""
        product = self.product()
        entry = {
            "round": len(self.rounds) + 1,
            "machine": self.final,
            "passed": evaluation.passed,
            "indicator": float(evaluation.result.indicator) if evaluation.result is not None else 0.0,
            "parts": product.num_blocks if product is not None else 0,
            "calls": self.calls,
            "invalid_calls": self.invalid_calls,
        }
        self.rounds.append(entry)
        return entry

    def product(self) -> Machine | None:
        """The machine that will be scored: the best control trial's, else the final machine."""
        if self.best_trial is not None:
            return self.best_trial.machine
        if self.final is None:
            return None
        return self.machine(self.final)

    @control(cpu_bound=True, doc="simulate the product and note a closed-loop round")
    def evaluate_round(self) -> Round:
        """Simulate the product and note the closed-loop round (paper Table 6)."""
        evaluation = self.evaluate()
        return Round(evaluation, self.record_round(evaluation))

    def evaluate(self) -> Evaluation:
        """Simulate the current product (closed-loop feedback, paper Table 6)."""
        machine = self.product()
        if machine is None or not machine.blocks:
            return Evaluation(None, "There is no machine to test.")
        try:
            result = self._simulate(machine)
        except ValueError as exc:
            return Evaluation(None, f"The machine could not be simulated: {exc}.")
        lines = [f"Simulation of task {self.spec.id}: {'passed' if result.passed else 'failed'} — {result.reason}.",
                 f"Indicator: {result.indicator:.3f}; parts: {machine.num_blocks}."]
        if result.broken:
            lines.append("Joints that broke: " + "; ".join(result.broken[:8]))
        lines += ["Trajectory (offsets from the start, [east, north, up]):", trajectory_text(result.trajectory)]
        return Evaluation(result, "\n".join(lines))

    # -- product ------------------------------------------------------------------------------

    def outcome(self) -> BuildArenaOutcome:
        self._save_active()
        product = self.product()
        design = self.best_trial.design.to_json() if self.best_trial is not None else None
        return BuildArenaOutcome(
            task_id=self.spec.id, seed=self.seed, sim_duration_s=self.options.sim_duration_s,
            rules=dataclasses.asdict(self.rules), profile=self.options.profile, physics=self.physics.record(),
            final=self.final,
            approved=bool(self.final is not None and self.approved.get(self.final, False)),
            machine=history_list(product) if product is not None else [],
            machines={mid: history_list(m) for mid, m in self.machines.items()},
            parts=product.num_blocks if product is not None else 0, control=design,
            trials=list(self.trials), rounds=list(self.rounds),
            stats={"calls": self.calls, "invalid_calls": self.invalid_calls, "extra_calls": self.extra_calls,
                   "control_errors": self.control_errors, "failures": dict(sorted(self.failures.items()))},
        )

