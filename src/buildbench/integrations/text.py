"""Text in, text out: what an outside toolkit hands our envs and gets back.

Gymnasium agents and Inspect models speak text. A text action is passed to the env as model text,
except two JSON objects:

- ``{"tool_calls": [{"name": ..., "arguments": {...}}, ...]}`` becomes function calls, for envs that
  act by tool calls (BuildArena, BIM-Edit, LEGO-Eval…);
- ``{"control": NAME, "args": {...}}`` calls one of the env's controls (``Env.controls``: what a
  protocol does besides stepping, e.g. BuildArena's ``set_final``), in the form the episode log
  records a control step.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from buildbench.harness import Action, Env, Observation, StepResult, Task
from buildbench.harness.errors import ConfigError
from buildbench.jsonio import parse_json

#: The key of a text action that carries tool calls.
TOOL_CALLS_KEY = "tool_calls"


def select_task(tasks: Sequence[Task], selector: int | str, *, where: str) -> Task:
    """The task at index ``selector`` or with id ``selector``.

    Raises:
        ConfigError: Out-of-range index or unknown id (the message names ``where``).
    """
    if not tasks:
        raise ConfigError(f"{where}: the split has no tasks")
    if isinstance(selector, bool) or not isinstance(selector, int | str):
        raise ConfigError(f"{where}: task must be an index or a task id, got {selector!r}")
    if isinstance(selector, int):
        if not -len(tasks) <= selector < len(tasks):
            raise ConfigError(f"{where}: task index {selector} is out of range (the split has {len(tasks)} tasks)")
        return tasks[selector]
    for task in tasks:
        if task.id == selector:
            return task
    shown = ", ".join(t.id for t in tasks[:5]) + (", …" if len(tasks) > 5 else "")
    raise ConfigError(f"{where}: no task {selector!r}; tasks: {shown}")


def action_from_text(text: str, turn: int) -> Action:
    """The env action for one text reply (see the module docstring); call ids are ``call_<turn>_<i>``."""
    calls = _tool_calls(text)
    if calls is None:
        return Action(text=text)
    from buildbench.llm import ToolCall

    return Action(tool_calls=[ToolCall.parse(f"call_{turn}_{i}", name, args) for i, (name, args) in enumerate(calls)])


def _tool_calls(text: str) -> list[tuple[str, Any]] | None:
    stripped = text.strip()
    if not (stripped.startswith("{") and TOOL_CALLS_KEY in stripped):
        return None
    try:
        data = parse_json(stripped)  # bounded: an agent's 100,000 brackets or 10,000 digits are text
    except json.JSONDecodeError:
        return None
    calls = data.get(TOOL_CALLS_KEY) if isinstance(data, dict) and len(data) == 1 else None
    if not isinstance(calls, list) or not calls:
        return None
    out = []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return None  # not our encoding: the env reads it as plain text and says what is wrong
        out.append((call["name"], call.get("arguments", {})))
    return out


def control_from_text(text: str) -> tuple[str, dict[str, Any]] | None:
    """``(name, args)`` when ``text`` is one control call (see the module docstring), else None."""
    stripped = text.strip()
    if not (stripped.startswith("{") and '"control"' in stripped):
        return None
    try:
        data = parse_json(stripped)  # bounded: an agent's 100,000 brackets or 10,000 digits are text
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("control"), str) or set(data) - {"control", "args"}:
        return None
    args = data.get("args") or {}
    return (data["control"], args) if isinstance(args, dict) else None


def control_result(result: Any) -> tuple[Observation, dict[str, Any]]:
    """What a control's return value shows the agent: an observation and JSON info."""
    if isinstance(result, Observation):
        return result, {}
    if isinstance(result, str):
        return Observation(text=result), {}
    if isinstance(result, dict):
        return Observation(text=json.dumps(plain_json(result), sort_keys=True)), plain_json(result)
    if result is None or isinstance(result, int | float | bool):
        return Observation(text=json.dumps(result)), {"result": result}
    text = getattr(result, "text", "")
    return Observation(text=text if isinstance(text, str) else repr(result)), {}


def run_control(env: Env, name: str, args: dict[str, Any]) -> StepResult:
    """Call ``env``'s control ``name``; an unknown name or refused arguments are feedback, not errors."""
    controls = env.controls
    if name not in controls:
        text = f"Unknown control {name!r}; controls: {', '.join(sorted(controls)) or 'none'}. Nothing changed."
        return StepResult(Observation(text=text), 0.0, False, False, {"invalid": text})
    try:
        result = controls[name].fn(**args)
    except (TypeError, ValueError) as exc:  # bad arguments are feedback, as a bad action is
        text = f"Control {name} refused: {exc}".splitlines()[0]
        return StepResult(Observation(text=text), 0.0, False, False, {"invalid": text})
    observation, info = control_result(result)
    return StepResult(observation, 0.0, False, False, {"control": name, **info})


def apply_text(env: Env, text: str, turn: int) -> StepResult:
    """Play one text reply on ``env``: a control call, tool calls or model text (module docstring)."""
    control = control_from_text(text)
    if control is not None:
        return run_control(env, *control)
    return env.step(action_from_text(text, turn))


def plain_json(value: Any) -> Any:
    """``value`` as plain JSON types (numpy scalars and arrays, tuples, sets), as a fresh copy."""
    return json.loads(json.dumps(value, default=_default, sort_keys=True))


def _default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=repr)
    if isinstance(obj, bytes):
        return f"<{len(obj)} bytes>"
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    return repr(obj)


def png_bytes(image: np.ndarray | bytes) -> bytes:
    """An observation image as PNG bytes (images may already be PNG)."""
    if isinstance(image, bytes):
        return image
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image)).save(buf, format="PNG")
    return buf.getvalue()
