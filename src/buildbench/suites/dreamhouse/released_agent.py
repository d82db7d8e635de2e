"""Agents written for the released DreamHouse CLI, run by our harness unchanged.

The released CLI (``dreamhouse run --agent module:function``) calls
``generate(prompt: str, images: list[str], feedback: list[dict]) -> str`` once per attempt
and runs the returned Blender Python. Here the same function is named with a prefix::

    buildbench run dreamhouse --agent released:path/to/agent.py:generate -o profile=released
    buildbench run dreamhouse --agent released:my_package.my_agent:generate

and called the way the released quickstart calls it:

* ``prompt`` is ``"Build a " + description`` on every attempt;
* ``images`` are paths of the five target views as PNG files named as the released client
  saves them (``front.png``, ``back.png``, ``left.png``, ``right.png``, ``top.png``; ``top``
  is the front-right view), or an empty list when the run shows no images;
* ``feedback`` is the list of earlier attempts, each ``{attempt, status, member_count,
  all_passed, pass_rate, tests, failed_tests, feedback}`` for a checked attempt (``status``
  ``passed`` or ``failed``), ``{attempt, status: "blender_error", error, feedback}`` when
  the script failed, or ``{attempt, status: "export_empty", feedback}`` when it built no
  member. ``tests`` has the profile's test names (``-o profile=released``: the released
  ten); ``feedback`` is the text our protocol shows a model after that attempt.

``COLLECTION_NAME`` in the returned code is replaced by the task's collection, as the
released quickstart does. An exception from ``generate``, or a reply that is not a
non-empty string, ends the episode as an agent error (never a score).

The released interface has no Phase 0 and no per-step requests. Our planner protocols ask
for a plan first: the adapter answers it itself with the ``safe-house`` layout sized from
the lot (a plan the checker accepts; its step in the log says so), and the agent's own
frames are what gets built and scored. Protocols that build step by step
(``planner-managed``, ``planner-managed-visual``) need per-step answers the interface
cannot give; there the first step request ends the episode as an agent error that says so.
Use ``planner-atomic`` (the default, closest to the released retry loop), ``planner-reactive``
or ``iterative-refinement``.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from buildbench.harness import Action, Agent, AgentSpec, EpisodeContext, Observation, Task
from buildbench.harness.env import AgentError
from buildbench.harness.errors import ConfigError

from .check import MEMBER_CHECK
from .options import DreamHouseOptions

#: The ``--agent`` prefix that names a released-style ``generate`` function.
PREFIX = "released"
#: File names of the views, in observation order, as the released client saves them.
IMAGE_FILES: tuple[str, ...] = ("front.png", "back.png", "left.png", "right.png", "top.png")
#: The collection placeholder of released agents' code.
COLLECTION_PLACEHOLDER = "COLLECTION_NAME"
#: Characters of a script error kept in a feedback entry (the released quickstart keeps 200).
ERROR_CHARS = 200
#: Written before the plan the adapter answers, so the episode's step log says whose plan it is.
PLAN_NOTE = ("Phase-0 plan supplied by the released-agent adapter (safe-house layout from the lot size); "
             "the released interface has no planning step")

Generate = Callable[[str, list[str], list[dict[str, Any]]], Any]


def released_prompt(task: Task) -> str:
    """The prompt the released quickstart passes: ``"Build a "`` and the task description."""
    return f"Build a {task.inputs.get('description', '')}"


def adapter_plan(task: Task) -> dict[str, Any]:
    """The Phase-0 plan the adapter answers for a released agent: the safe-house layout."""
    from .agents import plan_for, safe_params
    from .generate import build_house

    house = build_house(safe_params(task))
    return plan_for(house, dict(task.inputs["lot_size"]))


class ReleasedAgent(Agent):
    """Calls a released-style ``generate`` once per whole-frame attempt (see the module docstring).

    Args:
        generate: ``generate(prompt, images, feedback) -> str`` (Blender Python).
        task: The episode's task.
        name: Label recorded with episodes.
    """

    def __init__(self, generate: Generate, task: Task, *, name: str = PREFIX) -> None:
        self.generate = generate
        self.task = task
        self.name = name
        self.prompt = released_prompt(task)
        self.collection = str(task.inputs.get("collection") or task.id)
        self.history: list[dict[str, Any]] = []
        self._images: list[str] | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._step_mark: int | None = None  # ctx.steps index of the last code action's step

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        images = self._image_paths(observation)
        request = observation.state.get("request")
        if request == "plan":
            try:
                plan = await asyncio.to_thread(adapter_plan, self.task)
            except ValueError as exc:
                return Action(error=AgentError("agent", f"released-agent adapter: no plan for this lot: {exc}"))
            return Action(text=f"({PLAN_NOTE})\n```json\n" + json.dumps(plan) + "\n```")
        if request == "step":
            return Action(error=AgentError("agent", "a released-style agent builds whole frames and cannot "
                                                    "answer per-step requests; run it under planner-atomic, "
                                                    "planner-reactive or iterative-refinement"))
        self._record_last_attempt(observation, ctx)
        feedback = json.loads(json.dumps(self.history))  # a copy the agent may change freely
        try:
            code = await asyncio.to_thread(self.generate, self.prompt, list(images), feedback)
        except Exception as exc:  # noqa: BLE001 - the user's function; its failure ends the episode
            return Action(error=AgentError("agent", f"generate() raised {type(exc).__name__}: {exc}"))
        if not isinstance(code, str) or not code.strip():
            return Action(error=AgentError("agent", "generate() must return non-empty Blender Python code as a "
                                                    f"string, got {type(code).__name__}"))
        self._step_mark = len(ctx.steps)
        return Action(data={"code": code.replace(COLLECTION_PLACEHOLDER, self.collection)})

    def _image_paths(self, observation: Observation) -> list[str]:
        """The target views as PNG files, written from the episode's first observation (the task's;
        later ones may carry other images, such as refinement's side-by-side comparisons)."""
        if self._images is not None:
            return self._images
        self._images = []
        if not observation.images:
            return self._images
        from .views import png_bytes

        self._folder = tempfile.TemporaryDirectory(prefix="buildbench-released-agent-")
        paths = []
        for file_name, image in zip(IMAGE_FILES, observation.images, strict=False):
            path = Path(self._folder.name) / file_name
            path.write_bytes(image if isinstance(image, bytes) else png_bytes(image))
            paths.append(str(path))
        self._images = paths
        return paths

    def _record_last_attempt(self, observation: Observation, ctx: EpisodeContext) -> None:
        """Add the previous attempt to ``history`` from its logged step and the protocol's answer."""
        mark, self._step_mark = self._step_mark, None
        if mark is None or mark >= len(ctx.steps):
            return
        info = ctx.steps[mark].info
        entry: dict[str, Any] = {"attempt": len(self.history) + 1}
        if "invalid" in info:
            entry.update(status="blender_error", error=str(info["invalid"])[:ERROR_CHARS])
        elif not info.get("n_members"):
            entry.update(status="export_empty")
        else:
            tests = {k: bool(v) for k, v in dict(info.get("tests") or {}).items() if k != MEMBER_CHECK}
            entry.update(status="passed" if info.get("all_passed") else "failed",
                         member_count=int(info["n_members"]), all_passed=bool(info.get("all_passed")),
                         pass_rate=round(sum(tests.values()) / len(tests), 4) if tests else 0.0,
                         tests=tests, failed_tests=[k for k, v in tests.items() if not v])
        entry["feedback"] = observation.text or ctx.steps[mark].observation_text
        self.history.append(entry)


def released_agent_spec(target: str) -> AgentSpec:
    """The agent spec of ``--agent released:TARGET`` (TARGET: ``path/to/file.py:fn`` or ``module:fn``).

    Raises:
        ConfigError: When the function cannot be loaded (one line naming the target).
    """
    from buildbench.llm import LLMConfigError
    from buildbench.llm.python_model import load_callable

    try:
        generate = load_callable(target, what="released agent function")
    except LLMConfigError as exc:
        raise ConfigError(str(exc)) from None

    def make(task: Task, model: Any, options: DreamHouseOptions) -> Agent:
        return ReleasedAgent(generate, task, name=f"{PREFIX}:{target}")

    return AgentSpec(f"{PREFIX}:{target}", make, f"released-style generate() from {target}", kind="io")
