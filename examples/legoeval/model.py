"""A rule-based "model" for LEGO-Eval, run with::

    buildbench run legoeval --model python:examples/legoeval/model.py:chat --split demo --limit 1

The suite's ``llm`` agent is the LEGO-Eval pipeline: it sends one prompt per stage, each
starting ``TASK: <stage>`` and ending with the reply format it wants. This function answers
every stage in that format with simple rules: it plans the listing and info tools of the
requirement's kind, passes every id the earlier tool outputs quoted, and judges a requirement
as met unless an inspection result says ``not found``. Replace :func:`chat` with your own
model; it receives OpenAI-style messages (views as ``image_url`` data URLs) and returns text.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Tool chains per requirement kind, as (from, to) edges; only tools the prompt lists are kept.
CHAINS = {
    "Floor Layout": [("START", "get_room_list"), ("get_room_list", "get_room_info"),
                     ("get_room_list", "get_door_list"), ("get_door_list", "get_door_info")],
    "default": [("START", "get_room_list"), ("get_room_list", "get_object_list"),
                ("get_object_list", "get_object_info")],
}


def _section(prompt: str, label: str) -> str:
    """The text after ``label`` up to the next blank line."""
    found = re.search(re.escape(label) + r"(.*?)(?:\n\s*\n|$)", prompt, re.S)
    return found.group(1).strip() if found else ""


def plan(prompt: str) -> str:
    kind = re.search(r"\(([A-Za-z ]+) requirement\)", prompt)
    edges = CHAINS.get(kind.group(1) if kind else "", CHAINS["default"])
    offered = set(re.findall(r"^- (get_[a-z_]+)\(", prompt, re.M))
    edges = [(a, b) for a, b in edges if b in offered and (a == "START" or a in offered)]
    sequence = json.dumps([{"from": a, "to": b} for a, b in edges])
    return f"Chain-of-Thought: list the elements, then read their facts.\nTool Sequence: {sequence}"


def arguments(prompt: str) -> str:
    outputs = _section(prompt, "Tool outputs so far:")
    ids = list(dict.fromkeys(re.findall(r"'([^'\s]+)'", outputs) + re.findall(r'"([^"\s]+)"', outputs)))
    ids = [i for i in ids if not i.endswith(":")][:20]
    return f"Chain-of-Thought: pass every id the earlier tools listed.\nArguments: {json.dumps(ids)}"


def validate(prompt: str) -> str:
    facts = _section(prompt, "Inspection results:").lower()
    holds = "not found" not in facts and "no such" not in facts
    word = "True" if holds else "False"
    return (f"Chain-of-Thought: the inspection results {'support' if holds else 'contradict'} it.\n"
            f"Evaluation: <<{word}, judged from the inspection results.>>")


def reply(prompt: str) -> str:
    """The answer to one pipeline prompt, in the format its last lines ask for."""
    stage = prompt.split("\n", 1)[0].removeprefix("TASK: ").strip()
    if stage == "tool planning":
        return plan(prompt)
    if stage == "argument selection":
        return arguments(prompt)
    if stage == "constraint validation":
        return validate(prompt)
    if stage == "constraint classification":
        return "Object Placement"
    if stage == "constraint identification":
        return "1. " + _section(prompt, "Description:").replace("\n", " ")
    if stage == "object categories":
        return "Categories: []"
    if stage == "property features":
        return "Features: colour and material of the item named in the requirement"
    if stage in ("object match",):
        return "Chain-of-Thought: it looks like its asset record says.\nObject Type: []"
    if stage in ("property description", "property verification"):
        return "Chain-of-Thought: as the asset record says.\nDescription: as its asset record describes it."
    if stage == "holistic judgment":
        return "Reasoning: nothing visible contradicts it.\nDescription: a furnished house.\nValidity: True"
    return "I do not know this task."


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **options: Any) -> str:
    """One pipeline prompt in, one answer out (each stage's prompt stands alone)."""
    return reply(_text(messages[-1]))
