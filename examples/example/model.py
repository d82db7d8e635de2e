"""A rule-based "model" for the tower suite, run with::

    buildbench run example --model python:examples/example/model.py:chat --split demo --limit 1

It reads the goal out of the task prompt (the way a language model would) and answers with
the JSON block list the prompt asks for, or with a ``submit_blocks`` tool call when the run
offers tools (``-o tools=true``). Replace the body of :func:`chat` with a call to your own
model (a transformers pipeline, llama.cpp, ...): it gets OpenAI-style messages and tool
schemas and returns text or an assistant message dict.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any


def _prompt_text(messages: list[dict[str, Any]]) -> str:
    """The text of the first user message (the task); later ones are feedback."""
    for message in messages:
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in content if part.get("type") == "text")
    return ""


def _number(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    if found is None:
        raise ValueError(f"the prompt does not say {pattern!r}")
    return float(found.group(1))


def tower(prompt: str) -> list[dict[str, Any]]:
    """A column of equal blocks, each at most 1 m tall, reaching the height the prompt asks for."""
    height_m = _number(r"reach at least ([0-9.]+) m", prompt)
    half_width_m = _number(r"<= ([0-9.]+) m", prompt)
    max_blocks = int(_number(r"at most (\d+) blocks", prompt))
    count = max(1, min(max_blocks, math.ceil(height_m)))
    block_m = height_m / count
    side_m = min(0.6, half_width_m)
    return [{"center": [0.0, 0.0, round(k * block_m + block_m / 2, 6)], "size": [side_m, side_m, round(block_m, 6)]}
            for k in range(count)]


def chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **options: Any) -> Any:
    """One model turn: the block list as JSON text, or as a tool call when tools are offered."""
    blocks = tower(_prompt_text(messages))
    if tools:
        arguments = json.dumps({"blocks": blocks})
        return {"content": "", "tool_calls": [{"id": "call_0", "type": "function",
                                               "function": {"name": "submit_blocks", "arguments": arguments}}]}
    return json.dumps({"blocks": blocks})
