"""What a BuildArena episode produces: the outcome format (replayable machine histories) and
the typed results of the simulations run during an episode (closed-loop evaluations, control
trials) with their reward (:mod:`.reward`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buildbench.harness.outcome import OPTIONAL, OutcomeRecord

from .check import SimResult
from .controller import ControlDesign
from .library.released.convert import rebuild_released
from .library.replay import rebuild
from .model import HistoryEntry, Machine, Rules
from .reward import trial_reward


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
class Round:
    """One closed-loop round: the simulation of the product and the row noted for Table 6.

    Attributes:
        evaluation: The simulation and its feedback text.
        entry: ``round``, ``machine``, ``passed``, ``indicator``, ``parts``, ``calls``, ``invalid_calls``.
    """

    evaluation: Evaluation
    entry: dict[str, Any]

    @property
    def text(self) -> str:
        return self.evaluation.text

    @property
    def info(self) -> dict[str, Any]:
        return self.entry

    @property
    def reward(self) -> float:
        result = self.evaluation.result
        return 0.0 if result is None else trial_reward(result.passed, result.indicator)


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
        built[mid] = rebuild(_entries(hist), rules, saved=built, strict=True)
    return built


def rebuild_outcome(outcome: dict[str, Any] | BuildArenaOutcome) -> Machine | None:
    """The final machine of an ``outcome`` (None when the episode produced none).

    Raises:
        ValueError: When the outcome is not a BuildArena outcome, or a call of a stored history
            fails on replay (the histories hold only calls that succeeded: a machine rebuilt
            without one is not the episode's).
    """
    if not isinstance(outcome, BuildArenaOutcome):
        if not isinstance(outcome, dict) or outcome.get("format") != OUTCOME_FORMAT:
            raise ValueError(f"not a buildarena outcome (expected format {OUTCOME_FORMAT!r})")
        outcome = BuildArenaOutcome.from_dict(outcome)
    if not outcome.machine:
        return None
    # Records from before ``Rules.drop_links`` were made with remove_block keeping the connectors: replayed so.
    rules = Rules(**{"drop_links": False, **outcome.rules})
    if outcome.profile == "released":
        saved_histories = {mid: _entries(hist) for mid, hist in outcome.machines.items()}
        return rebuild_released(_entries(outcome.machine), saved_histories, strict=True).machine
    saved = _rebuild_all(dict(outcome.machines), rules)
    return rebuild(_entries(outcome.machine), rules, saved=saved, strict=True)


OUTCOME_FORMAT = "buildbench.buildarena.outcome/1"


@dataclass
class BuildArenaOutcome(OutcomeRecord):
    """``BuildArenaEnv.outcome()``, typed: replayable histories, not built machines, so the scorer
    rebuilds and re-simulates everything itself.

    Attributes:
        task_id: The BuildArena task (or variant) id.
        seed: The episode seed (simulation noise).
        sim_duration_s: Simulated seconds of every simulation (None: the task's own duration).
        rules: The construction rules (``Rules`` fields).
        profile: ``default`` or ``released`` (the original library's behaviour).
        physics: The physics profile every simulation of the episode used: ``name``, ``sha256`` and
            ``values`` (``PhysicsConfig.record``; absent in outcomes written before profiles existed, which
            rescore under the default profile).
        final: The id of the machine named as the product (None when none was).
        approved: Whether the workflow approved the final machine.
        machine: The product's history: ``{"op", "params", "result"}`` per library call.
        machines: Every named machine's history, by id (assemblies refer to them).
        parts: Blocks of the product (count).
        control: The applied control design (``ControlDesign.to_json``), when control trials ran.
        trials: The control trials, one record each.
        rounds: The closed-loop rounds (Table 6 rows).
        stats: ``calls``, ``invalid_calls``, ``extra_calls``, ``control_errors`` (counts) and
            ``failures`` (count by kind).
        extra: Keys of a stored outcome this type does not know (kept for the round trip).
    """

    FORMAT = OUTCOME_FORMAT
    SUITE = "buildarena"

    task_id: str
    seed: int = 0
    sim_duration_s: float | None = None
    rules: dict[str, Any] = field(default_factory=dict)
    profile: str = "default"
    physics: dict[str, Any] | None = field(default=None, metadata=OPTIONAL)
    final: str | None = None
    approved: bool = False
    machine: list[dict[str, Any]] = field(default_factory=list)
    machines: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    parts: int = 0
    control: Any = None
    trials: list[Any] = field(default_factory=list)
    rounds: list[Any] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
