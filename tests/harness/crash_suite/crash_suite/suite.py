"""Tasks ``ok-N`` play and score normally; ``segv-env`` segfaults in the env step (ctypes reads
address 0), ``abort-env`` aborts there, ``abort-score`` aborts in the scorer. With ``CRASHY_CALM=1``
in the environment nothing crashes (a resumed run plays the crashed episodes again).

Agents: ``once`` (scripted, CPU-bound: the worker pool) and ``llm`` (the harness's chat agent, for
a model-backed run against a scripted server)."""

from __future__ import annotations

import ctypes
import os
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

IDS = ("ok-1", "segv-env", "ok-2", "abort-env", "ok-3", "abort-score", "ok-4")


def load_tasks(split: str, seed: int) -> list[Task]:
    return [Task(id=name, suite="crashy", inputs={}, target={}) for name in IDS]


class CrashEnv(Env):
    def __init__(self) -> None:
        self.task: Task | None = None

    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        self.task = task
        return ResetResult(Observation(text="Say anything."), {})

    def step(self, action: Action) -> StepResult:
        assert self.task is not None
        if os.environ.get("CRASHY_CALM") == "1":
            return StepResult(Observation(text="done"), 1.0, True, False, {"said": action.text})
        if self.task.id == "segv-env":
            ctypes.string_at(0)  # a native crash, as a bad pointer in FCL or MuJoCo would be
        if self.task.id == "abort-env":
            os.abort()
        return StepResult(Observation(text="done"), 1.0, True, False, {})

    def outcome(self) -> dict[str, Any]:
        return {"task": self.task.id if self.task else None}


def _score(task: Task, outcome: dict[str, Any]) -> dict[str, float]:
    if task.id == "abort-score" and os.environ.get("CRASHY_CALM") != "1":
        os.abort()
    return {"passed": 1.0}


def _llm(task: Task, model: Any, options: dict[str, Any]) -> Any:
    from buildbench.harness.llm_agent import LLMAgent

    return LLMAgent(model, system_prompt="Say anything.", max_tokens=64, temperature=0.0)


suite = Suite(
    name="crashy",
    description="Native crashes in env and scorer (runner test).",
    load_tasks=load_tasks,
    make_env=lambda task, options: CrashEnv(),
    agents={"once": AgentSpec("once", lambda task, model, options: ScriptedAgent([Action(text="hi")]), "says hi"),
            "llm": AgentSpec("llm", _llm, "a chat model says something", needs_model=True, kind="io")},
    protocols={"once": ProtocolSpec("once", lambda task, options: StepLoop(1, name="once"))},
    score=_score,
    default_agent="once",
    default_protocol="once",
)
