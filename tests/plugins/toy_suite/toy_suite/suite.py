"""The toy suite: each task asks for a row of ``bricks`` bricks; the agent answers with a number.

Built only from buildbench's public harness names, the way a package outside this repository would.
"""

from __future__ import annotations

from typing import Any

from buildbench.harness import (
    Action,
    AgentSpec,
    Env,
    Observation,
    ProtocolSpec,
    ResetResult,
    ScriptedAgent,
    StepLoop,
    StepResult,
    Suite,
    Task,
)


def load_tasks(split: str, seed: int) -> list[Task]:
    lengths = {"default": (3, 5, 8), "demo": (4,)}[split]
    return [Task(id=f"row-{n}", suite="toy", inputs={"bricks": n}, target={"bricks": n}) for n in lengths]


class RowEnv(Env):
    """Reward 1 when the answer is the requested brick count; any other text is feedback."""

    def __init__(self) -> None:
        self.laid = 0
        self.task: Task | None = None

    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        self.task, self.laid = task, 0
        return ResetResult(Observation(text=f"Lay a row of {task.inputs['bricks']} bricks. Answer with a number."), {})

    def step(self, action: Action) -> StepResult:
        assert self.task is not None
        try:
            self.laid = int((action.text or "").strip())
        except ValueError:
            return StepResult(Observation(text="Answer with a whole number of bricks."), 0.0, False, False, {})
        done = self.laid == self.task.inputs["bricks"]
        return StepResult(Observation(text=f"{self.laid} bricks laid."), float(done), done, False, {})

    def outcome(self) -> dict[str, Any]:
        return {"laid": self.laid}


def _exact(task: Task, model: Any, options: dict[str, Any]) -> ScriptedAgent:
    return ScriptedAgent([Action(text=str(task.inputs["bricks"]))], name="exact")


def _score(task: Task, outcome: dict[str, Any]) -> dict[str, float]:
    return {"passed": float(outcome["laid"] == task.target["bricks"])}


suite = Suite(
    name="toy",
    description="Lay a row of bricks (third-party plugin test).",
    load_tasks=load_tasks,
    make_env=lambda task, options: RowEnv(),
    agents={"exact": AgentSpec("exact", _exact, "answers the requested count")},
    protocols={"once": ProtocolSpec("once", lambda task, options: StepLoop(1, name="once"))},
    score=_score,
    default_agent="exact",
    default_protocol="once",
)
