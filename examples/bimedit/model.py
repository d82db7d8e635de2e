"""A rule-based "model" for BIM-Edit, run with::

    buildbench run bimedit --model python:examples/bimedit/model.py:chat --split demo --limit 1

It uses the suite's one tool, ``execute_ifc_code``, the way a model would: first a call that
inspects the model (schema, length unit, wall count), then — for an instruction it has a rule
for ("Delete the wall with ID ... together with its openings ...") — a call that makes the edit
with IfcOpenShell and commits it, then a final answer without a tool call. For any other
instruction it stops after the inspection and says so. Replace :func:`chat` with your own
model: it receives OpenAI-style messages and the tool schema, and returns an assistant
message dict with ``tool_calls``, or plain text to finish.
"""

from __future__ import annotations

import json
import re
from typing import Any

INSPECT = """\
import ifcopenshell.util.unit as unit_util
result = {"schema": ifc.schema, "length_unit_m": unit_util.calculate_unit_scale(ifc),
          "walls": len(ifc.by_type("IfcWall")), "storeys": len(ifc.by_type("IfcBuildingStorey"))}
"""

DELETE_WALL = """\
wall = ifc.by_guid({guid!r})
removed = []
for rel in list(wall.HasOpenings):
    opening = rel.RelatedOpeningElement
    for fill in list(opening.HasFillings):
        removed.append(fill.RelatedBuildingElement.GlobalId)
        api.root.remove_product(ifc, product=fill.RelatedBuildingElement)
    removed.append(opening.GlobalId)
    api.root.remove_product(ifc, product=opening)
api.root.remove_product(ifc, product=wall)
commit()
result = {{"removed": [{guid!r}, *removed]}}
"""


def edit_code(instruction: str) -> str | None:
    """IfcOpenShell code carrying out ``instruction``, or None when no rule covers it."""
    found = re.search(r"Delete the wall with ID (\S+) together with its openings", instruction)
    if found:
        return DELETE_WALL.format(guid=found.group(1))
    return None


def _call(code: str, number: int) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"id": f"call_{number}", "type": "function", "function": {
        "name": "execute_ifc_code", "arguments": json.dumps({"code": code})}}]}


def reply(instruction: str, calls_made: int) -> dict[str, Any] | str:
    """The next turn, given how many tool calls were made so far."""
    if calls_made == 0:
        return _call(INSPECT, 0)
    code = edit_code(instruction)
    if calls_made == 1 and code is not None:
        return _call(code, 1)
    if code is None:
        return "I inspected the model but have no rule for this edit, so I left it unchanged."
    return "The wall, its openings and their doors and windows are deleted and the model is saved."


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **options: Any) -> Any:
    """One model turn of the tool loop."""
    instruction = next((_text(m) for m in messages if m["role"] == "user"), "")
    calls_made = sum(len(m.get("tool_calls") or []) for m in messages if m["role"] == "assistant")
    return reply(instruction, calls_made)
