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

Episode end
    The protocol ends the episode; ``max_calls`` (option) truncates it. The
    product (``outcome``) is the final machine's replayable history, the
    histories of every machine it was assembled from, the chosen control
    design and the call statistics; ``metrics.score_episode`` rebuilds and simulates it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from buildbench.harness import Action, Env, Observation, ResetResult, StepResult, Task
from buildbench.llm import Tool

from .check import SimResult, simulate
from .controller import (
    ControlDesign,
    ControlDesignError,
    apply_design,
    not_moving,
    parse_design,
    trajectory_text,
)
from .library import COMMANDS, Workbench, tool_specs
from .library.released.convert import ReleasedStageBench, rebuild_released
from .library.replay import PROFILES, rebuild
from .metrics import failure_category
from .model import HistoryEntry, Machine, Rules
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


@dataclass(frozen=True)
class Evaluation:
    """A simulation of the current product, as feedback for a closed loop.

    Attributes:
        result: The simulation (None when there was nothing to simulate).
        text: Feedback for the model.
    """

    result: SimResult | None
    text: str

    @property
    def passed(self) -> bool:
        return bool(self.result is not None and self.result.passed)


@dataclass(frozen=True)
class ChosenTrial:
    """The best control trial so far: passing first, then the higher indicator, then the earlier trial.

    Attributes:
        rank: Sort key ``(passed, indicator, -generation)``.
        machine: The controlled copy of the machine (its history ends with the control calls).
        design: The control design that was applied.
    """

    rank: tuple[bool, float, int]
    machine: Machine
    design: ControlDesign


def _tools(groups: tuple[str, ...]) -> list[Tool]:
    return [
        Tool(s["function"]["name"], s["function"]["description"], s["function"]["parameters"])
        for s in tool_specs(*groups)
    ] if groups else []


def history_list(machine: Machine) -> list[dict[str, Any]]:
    """A machine's replayable history as JSON-ready dicts."""
    return [{"op": h.op, "params": h.params, "result": h.result} for h in machine.history]


def _entries(raw: list[dict[str, Any]]) -> list[HistoryEntry]:
    return [HistoryEntry(str(e["op"]), dict(e.get("params") or {}), str(e.get("result", ""))) for e in raw]


def _rebuild_all(histories: dict[str, list[dict[str, Any]]], rules: Rules) -> dict[str, Machine]:
    """Rebuild every named machine: plain machines first, then the assemblies that add them."""
    def is_assembly(hist: list[dict[str, Any]]) -> bool:
        return bool(hist) and hist[0].get("op") == "add_machine"

    built: dict[str, Machine] = {}
    for mid, hist in sorted(histories.items(), key=lambda kv: is_assembly(kv[1])):
        built[mid] = rebuild(_entries(hist), rules, saved=built)
    return built


def rebuild_outcome(outcome: dict[str, Any]) -> Machine | None:
    """The final machine of an ``outcome`` (None when the episode produced none).

    Raises:
        ValueError: When the outcome is not a BuildArena outcome.
    """
    if outcome.get("format") != OUTCOME_FORMAT:
        raise ValueError(f"not a buildarena outcome (expected format {OUTCOME_FORMAT!r})")
    final = outcome.get("machine") or []
    if not final:
        return None
    rules = Rules(**outcome.get("rules", {}))
    if outcome.get("profile") == "released" and not (final and final[0].get("op") == "add_machine"):
        return rebuild_released(_entries(final)).machine
    saved = _rebuild_all(dict(outcome.get("machines") or {}), rules)
    return rebuild(_entries(final), rules, saved=saved)


OUTCOME_FORMAT = "buildbench.buildarena.outcome/1"


class BuildArenaEnv(Env):
    """One BuildArena task.

    Args:
        task: The harness task (id = a BuildArena task id such as ``support-1``).
        rules: Library rules (default: ours, see the library README).
        sim_duration_s: Shorten every simulation (control trials, closed-loop feedback, scoring);
            None runs the task's full duration.
        max_calls: Library calls allowed per episode; the step that reaches it is truncated.
        control_trials: Controller generations allowed (3 in the paper).
        profile: ``default`` (our library) or ``released`` (the original library's answers, quirks
            and crashes, in build and refine stages; assembly and control stages use ours).
        task_texts: Task statements replacing ours, by task id (the released ``levels.yaml``).
    """

    def __init__(self, task: Task, *, rules: Rules | None = None, sim_duration_s: float | None = None,
                 max_calls: int | None = None, control_trials: int = 3, profile: str = "default",
                 task_texts: dict[str, str] | None = None) -> None:
        if profile not in PROFILES:
            raise ValueError(f"unknown library profile {profile!r}; profiles: {', '.join(PROFILES)}")
        self.task = task
        self.profile = profile
        self.task_texts = dict(task_texts or {})
        self.rules = rules or Rules()
        self.sim_duration_s = sim_duration_s
        self.max_calls = max_calls
        self.control_trials = control_trials
        self.seed = 0
        self._reset_state()

    def _reset_state(self) -> None:
        self.spec: TaskSpec = get_task(self.task.id)
        self.machines: dict[str, Machine] = {}
        self.approved: dict[str, bool] = {}
        self.final: str | None = None
        self.bench: Workbench | ReleasedStageBench = self._fresh_bench()
        self.stage = Stage("build", "1", ())
        self.tools: list[Tool] = []
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
        return ResetResult(dataclasses.replace(observation, text=text), {"task": self.spec.id})

    def begin(self, kind: str, machine_id: str, *, source: str | None = None,
              candidates: tuple[str, ...] = ()) -> Observation:
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
        elif kind in ("refine", "revise") and self.profile == "released":
            self.bench = rebuild_released(self._machine(source or "").history)
        elif kind in ("refine", "revise"):
            base = self._machine(source or "")
            self.bench = Workbench(rebuild(base.history, self.rules, saved=self.machines), self.rules,
                                   saved=dict(self.machines))
        elif kind in ("assemble", "script-assemble"):
            saved = {c: self._machine(c) for c in candidates}
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

    def _fresh_bench(self) -> Workbench | ReleasedStageBench:
        return ReleasedStageBench() if self.profile == "released" else Workbench(rules=self.rules)

    def _machine(self, machine_id: str) -> Machine:
        if machine_id not in self.machines:
            raise ValueError(f"no machine {machine_id!r}; machines: {', '.join(self.machines) or 'none'}")
        return self.machines[machine_id]

    def _save_active(self) -> None:
        # ``reset`` inside the library replaces the workbench's machine object.
        if self.stage.kind != "control" and self.stage.machine_id in self.machines:
            self.machines[self.stage.machine_id] = self.bench.machine

    def approve(self, machine_id: str, approved: bool = True) -> None:
        """Record whether the workflow approved a machine (an objection or a turn limit does not)."""
        self._save_active()
        self._machine(machine_id)
        self.approved[machine_id] = approved

    def set_final(self, machine_id: str) -> None:
        """Name the machine that is the episode's product."""
        self._save_active()
        self._machine(machine_id)
        self.final = machine_id

    def machine(self, machine_id: str | None = None) -> Machine:
        """A machine by id (default: the one the current stage edits)."""
        self._save_active()
        return self._machine(machine_id or self.stage.machine_id)

    def _state(self) -> dict[str, Any]:
        machine = self.machines.get(self.stage.machine_id)
        return {"stage": self.stage.kind, "machine": self.stage.machine_id,
                "blocks": machine.num_blocks if machine is not None else 0}

    # -- steps --------------------------------------------------------------------------------

    def step(self, action: Action) -> StepResult:
        if self.stage.kind == "control":
            return self._control_step(action)
        call_id, op, params, refusal = self._read_call(action)
        if self.max_calls is not None and self.calls >= self.max_calls:
            text = f"The call budget of {self.max_calls} library calls is spent; nothing was executed."
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
        truncated = self.max_calls is not None and self.calls >= self.max_calls
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
            op, params, call_id = action.data["op"], action.data.get("params"), None
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
        if generation > self.control_trials:
            text = f"All {self.control_trials} control trials are used; nothing was run."
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
                                terminated=generation >= self.control_trials)
        history = self._machine(self.stage.machine_id).history
        if self.profile == "released" and not (history and history[0].op == "add_machine"):
            machine = rebuild_released(history).machine
        else:
            machine = rebuild(history, self.rules, saved=self.machines)
        bench = Workbench(machine, self.rules, saved=dict(self.machines))
        applied = apply_design(bench, design)
        self.control_errors += len(applied.errors)
        lines = [f"Trial {generation}:"] + applied.errors
        stop = generation >= self.control_trials
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
                            terminated=stop)

    def _simulate(self, machine: Machine) -> SimResult:
        return simulate(machine, self.spec.id, seed=self.seed, duration_s=self.sim_duration_s)

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

    def outcome(self) -> dict[str, Any]:
        self._save_active()
        product = self.product()
        design = self.best_trial.design.to_json() if self.best_trial is not None else None
        return {
            "format": OUTCOME_FORMAT,
            "task_id": self.spec.id,
            "seed": self.seed,
            "sim_duration_s": self.sim_duration_s,
            "rules": dataclasses.asdict(self.rules),
            "profile": self.profile,
            "final": self.final,
            "approved": bool(self.final is not None and self.approved.get(self.final, False)),
            "machine": history_list(product) if product is not None else [],
            "machines": {mid: history_list(m) for mid, m in self.machines.items()},
            "parts": product.num_blocks if product is not None else 0,
            "control": design,
            "trials": list(self.trials),
            "rounds": list(self.rounds),
            "stats": {
                "calls": self.calls,
                "invalid_calls": self.invalid_calls,
                "extra_calls": self.extra_calls,
                "control_errors": self.control_errors,
                "failures": dict(sorted(self.failures.items())),
            },
        }


def make_env(task: Task, options: dict[str, Any]) -> BuildArenaEnv:
    """Env factory for the suite (``-o sim_duration_s=…``, ``-o max_calls=…``, ``-o control_trials=…``,
    ``-o max_shift=…``, ``-o profile=default|released``, ``-o levels=levels.yaml``).

    Raises:
        ValueError: An unreadable or foreign ``levels`` file, or an unknown profile.
    """
    duration = options.get("sim_duration_s")
    max_calls = options.get("max_calls")
    rules = Rules()
    if "max_shift" in options:
        shift = options["max_shift"]
        rules = Rules(max_shift=None if shift in (None, "none") else float(shift))
    return BuildArenaEnv(
        task,
        rules=rules,
        sim_duration_s=None if duration is None else float(duration),
        max_calls=None if max_calls is None else int(max_calls),
        control_trials=int(options.get("control_trials", 3)),
        profile=str(options.get("profile", "default")),
        task_texts=load_levels(options["levels"]) if options.get("levels") else None,
    )
