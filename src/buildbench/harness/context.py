"""``EpisodeContext``: what a protocol and its agents share while one episode runs."""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np

from .env import Action, AgentError, Env, Observation, ResetResult, StepResult, control_mark
from .episode import Step, add_usage
from .option_model import ModelOptions
from .task import Task

T = TypeVar("T")
P = ParamSpec("P")


@dataclass
class EpisodeContext:
    """Per-episode state: the task, its seed, the step log and where artifacts go.

    Env calls go through :meth:`reset` / :meth:`step` so that every transition is logged
    the same way whatever the protocol. Env work runs in a thread so a slow check does not
    stall other episodes' model calls on the event loop.
    """

    task: Task
    seed: int
    sample: int = 0
    artifact_dir: Path | None = None
    #: The run's options, typed (`buildbench.harness.option_model`); the factories got the same object.
    options: ModelOptions = field(default_factory=ModelOptions)
    steps: list[Step] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    #: The env's tools, set at reset, for agents that act by function calling.
    tools: list[Any] = field(default_factory=list)
    #: Why the agent stopped acting, when it did (the runner turns its kind into a status).
    agent_error: AgentError | None = None

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking env work off the event loop."""
        return await asyncio.to_thread(fn, *args)

    async def reset(self, env: Env) -> ResetResult:
        result = await self.call(lambda: env.reset(self.task, seed=self.seed))
        self.tools = list(env.tools)
        return result

    async def step(self, env: Env, action: Action, *, role: str = "agent") -> StepResult:
        """Apply ``action`` to ``env`` and log the transition."""
        t0 = time.perf_counter()
        result = await self.call(env.step, action)
        self.log(action, result.observation, role=role, reward=result.reward,
                 terminated=result.terminated, truncated=result.truncated, info=result.info,
                 duration_s=time.perf_counter() - t0)
        return result

    async def control(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Call the env control ``fn`` (a :func:`~buildbench.harness.env.control` method of the
        env, e.g. ``env.final_view``) as the protocol, log it as a control step, return its result.

        The step's action is ``{"control": name, "args": {...}}`` (arguments by parameter name);
        its observation is the result when that is an ``Observation`` or has a ``text``; its
        ``info`` carries the result's ``info`` (or the result itself when it is a JSON value) and
        its ``reward``. CPU-bound controls run in a worker thread.

        Raises:
            TypeError: ``fn`` is not a control method.
        """
        return await self.control_as("protocol", fn, *args, **kwargs)

    async def control_as(self, role: str, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """:meth:`control`, logged under ``role`` (``validator``, ``simulator``: who asked)."""
        mark = control_mark(fn)
        if mark is None:
            raise TypeError(f"{getattr(fn, '__qualname__', fn)!r} is not an env control (declare it with @control)")
        named = inspect.signature(fn).bind(*args, **kwargs).arguments
        t0 = time.perf_counter()
        run = partial(fn, *args, **kwargs)
        result = await self.call(run) if mark.cpu_bound else run()
        observation, info, reward = _control_record(result)
        logged = {key: _loggable(value) for key, value in named.items()}
        self.log(Action(data={"control": mark.name, "args": logged}), observation, role=role, reward=reward,
                 info={"control": mark.name, **info}, duration_s=time.perf_counter() - t0)
        return result

    def fail(self, error: AgentError, action: Action | None = None, observation: Observation | None = None, *,
             role: str = "agent", info: dict[str, Any] | None = None) -> Step:
        """End the episode on an agent error: log the failed turn and keep the error for the runner."""
        self.agent_error = error
        return self.log(action or Action(error=error), observation or Observation(), role=role, terminated=True,
                        info={**(info or {}), "agent_error": error.to_dict()})

    def log(self, action: Action, observation: Observation, *, role: str = "agent", reward: float = 0.0,
            terminated: bool = False, truncated: bool = False, info: dict[str, Any] | None = None,
            duration_s: float = 0.0) -> Step:
        """Append one step record (protocols call this for turns that do not touch the env)."""
        index = len(self.steps)
        text = action.text
        if text is None and action.data is not None:
            text = json.dumps(action.data, default=str)
        if action.finish_reason not in (None, "stop", "tool_calls"):
            info = {**(info or {}), "finish_reason": action.finish_reason}
        step = Step(
            index=index,
            role=role,
            action_text=text,
            tool_calls=[_call_dict(c) for c in action.tool_calls],
            observation_text=observation.text,
            image_paths=self.save_images(observation.images, f"step{index:03d}"),
            reward=float(reward),
            terminated=terminated,
            truncated=truncated,
            info=_jsonable(info or {}),
            usage=dict(action.usage),
            duration_s=duration_s,
        )
        self.steps.append(step)
        self.usage = add_usage(self.usage, action.usage)
        return step

    def save_images(self, images: list[np.ndarray | bytes], stem: str) -> list[str]:
        """Write observation images as PNG artifacts; return their paths relative to the run."""
        if not images or self.artifact_dir is None:
            return []
        from PIL import Image

        self.artifact_dir.mkdir(parents=True, exist_ok=True)
        paths = []
        for i, img in enumerate(images):
            path = self.artifact_dir / f"{stem}_view{i}.png"
            if isinstance(img, bytes):
                path.write_bytes(img)
            else:
                buf = io.BytesIO()
                Image.fromarray(np.ascontiguousarray(img)).save(buf, format="PNG")
                path.write_bytes(buf.getvalue())
            paths.append(str(path.relative_to(self.artifact_dir.parent.parent)))
        return paths


def _loggable(value: Any) -> Any:
    """A control argument as the trajectory keeps it: JSON values as they are, a function by its
    qualified name, anything else by its type (never a repr with a memory address)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        if callable(value) and hasattr(value, "__qualname__"):
            return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
        return f"<{type(value).__name__}>"
    return value


def _control_record(result: Any) -> tuple[Observation, dict[str, Any], float]:
    """What a control step logs of a control's result: observation, info and reward."""
    if isinstance(result, Observation):
        return result, {}, 0.0
    if isinstance(result, dict):
        return Observation(), dict(result), 0.0
    if isinstance(result, str):
        return Observation(text=result), {}, 0.0
    if result is None or isinstance(result, int | float | bool):
        return Observation(), {"result": result}, 0.0
    text = getattr(result, "text", "")
    info = getattr(result, "info", {})
    info = info() if callable(info) else info
    reward = getattr(result, "reward", 0.0)
    return (Observation(text=text if isinstance(text, str) else ""), dict(info) if isinstance(info, dict) else {},
            float(reward) if isinstance(reward, int | float) else 0.0)


def _call_dict(call: Any) -> dict[str, Any]:
    if isinstance(call, dict):
        return call
    return {"id": getattr(call, "id", None), "name": getattr(call, "name", None),
            "arguments": getattr(call, "arguments", None)}


def _jsonable(value: Any) -> Any:
    """Best-effort conversion of env ``info`` to JSON types (numpy scalars, arrays, tuples)."""
    return json.loads(json.dumps(value, default=_default))


def _default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    return repr(obj)
