"""The tower env: the agent submits a block list (JSON text, a tool call or data); the env
checks it and answers with test-by-test feedback. A bad submission leaves the last good
design in place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from buildbench.harness import Action, Env, Observation, ResetResult, StepResult, Task
from buildbench.harness.prompts import PromptFiles

from .check import check_tower
from .model import BlockListError, Blocks, extract_json, parse_blocks
from .options import ExampleOptions
from .outcome import TowerOutcome
from .spaces import TowerAction, TowerState

#: The prompt texts (``-o prompts=DIR`` replaces them): ``task.md`` is filled with the task's
#: inputs by ``str.format`` (literal braces doubled); ``system.md`` is the model agent's system message.
PROMPTS = PromptFiles(Path(__file__).with_name("prompts"), fields=True)


def _submit_tool() -> Any:
    """The submission tool; its parameters are the scripted agents' action record's JSON Schema."""
    from buildbench.llm import Tool

    return Tool(name="submit_blocks", description="Replace the design with this list of blocks and check it.",
                parameters=TowerAction.json_schema())


class TowerEnv(Env):
    """One tower task. Reward 1.0 on the step where every test passes."""

    state_type = TowerState
    action_type = TowerAction

    def __init__(self, task: Task) -> None:
        self._start(task)
        try:
            self.tools = [_submit_tool()]
        except ImportError:
            self.tools = []

    def _start(self, task: Task) -> None:
        self.task = task
        self.blocks: Blocks | None = None
        self.last_feedback = ""
        self.attempts = 0
        self.invalid_actions = 0
        self.passed = False

    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        self._start(task)
        text = PROMPTS.render("task.md", **task.inputs)
        return ResetResult(Observation(text=text, state=TowerState().to_dict()), {})

    def step(self, action: Action) -> StepResult:
        self.attempts += 1
        call_id = action.tool_calls[0].id if action.tool_calls else None
        try:
            blocks = parse_blocks(self._payload(action), max_blocks=int(self.task.inputs["max_blocks"]))
        except BlockListError as exc:
            self.invalid_actions += 1
            text = f"Invalid action: {exc}. Your previous design is unchanged."
            return self._result(text, call_id, reward=0.0, info={"invalid": str(exc)})
        self.blocks = blocks
        report = check_tower(blocks, target_height_m=float(self.task.inputs["target_height_m"]),
                             footprint_half_m=float(self.task.inputs["lot_half_width_m"]))
        self.passed = report.passed
        self.last_feedback = report.feedback()
        info = {"tests": {t.name: t.passed for t in report.tests}, "height_m": report.height_m}
        return self._result(self.last_feedback, call_id, reward=1.0 if report.passed else 0.0,
                            terminated=report.passed, info=info)

    def _payload(self, action: Action) -> Any:
        if action.data is not None:
            try:
                return TowerAction.from_data(action.data).to_dict()
            except ValueError as exc:
                raise BlockListError(str(exc)) from None
        if action.tool_calls:
            call = action.tool_calls[0]
            if getattr(call, "parse_error", None):
                raise BlockListError(f"tool call arguments are not valid JSON ({call.parse_error})")
            if call.name != "submit_blocks":
                raise BlockListError(f"unknown tool {call.name!r}; the only tool is submit_blocks")
            return call.arguments
        if action.text:
            return extract_json(action.text)
        raise BlockListError("empty action: send a JSON block list")

    def _result(self, text: str, call_id: str | None, *, reward: float, terminated: bool = False,
                info: dict[str, Any]) -> StepResult:
        results = [(call_id, text)] if call_id else []
        state = TowerState(self.blocks.to_list() if self.blocks else [])
        obs = Observation(text=text, tool_results=results, state=state.to_dict())
        return StepResult(obs, reward, terminated, False, info)

    def outcome(self) -> TowerOutcome:
        return TowerOutcome(blocks=self.blocks.to_list() if self.blocks else [], attempts=self.attempts,
                            invalid_actions=self.invalid_actions)


def make_env(task: Task, options: ExampleOptions) -> TowerEnv:
    """The suite's env factory (the tower env reads no option)."""
    return TowerEnv(task)


__all__ = ["PROMPTS", "TowerEnv", "make_env"]
