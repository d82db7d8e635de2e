"""A rule-based "model" for BuildArena, run with::

    buildbench run buildarena --model python:examples/buildarena/model.py:chat --split demo --limit 1

The suite's ``llm`` agent plays every role of the workflow with one model; each role's system
prompt starts ``Role: <name>.`` and says how to answer. This function answers each role in
its format: a one-sub-structure ``<building_plan>``, a blueprint of the Starting Block alone,
an approving review, one library call per builder turn (``start``, then the machine summary), a
guidance engineer that ends the build, and a controller JSON with no keys bound. The machine
it leaves is the bare Starting Block: a format example, not a design that passes. Replace
:func:`chat` with your own model; it receives OpenAI-style messages and, for the builder, the
library's tools as OpenAI function schemas.
"""

from __future__ import annotations

import json
import re
from typing import Any

PLAN = """<building_plan>
  <overall_structure>
    <description>A single sub-structure grown from the Starting Block.</description>
    <functionality>Holds together; it has no powered parts.</functionality>
    <assembly>Only one sub-structure, nothing to assemble.</assembly>
    <motion_control>None.</motion_control>
  </overall_structure>
  <sub_structures>
    <sub_structure_1>
      <name>body</name>
      <description>The Starting Block.</description>
      <components>Starting Block</components>
      <assembly>Block 1 is the Starting Block.</assembly>
      <motion_control>None.</motion_control>
      <function>The machine's body.</function>
      <design_requirements>Keep it in one piece. Block positions may be adjusted slightly in later stages to
      resolve conflicts, as long as the function is kept.</design_requirements>
    </sub_structure_1>
  </sub_structures>
</building_plan>"""

BLUEPRINT = "1 - Starting Block - the body - origin"
CONTROL = {"control_design": "the machine has no powered blocks, so nothing is driven",
           "control_config": [], "control_sequence": []}


def role_of(messages: list[dict[str, Any]]) -> str:
    """The workflow role named at the top of the system prompt (``Planner``, ``Builder``...)."""
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    found = re.match(r"Role: (\w+)\.", system if isinstance(system, str) else "")
    return found.group(1) if found else ""


def builder_call(tools: list[dict[str, Any]], turn: int) -> dict[str, Any]:
    """One library call: ``start`` on the first turn, then the machine summary; every required
    string argument (the ``note``) is filled."""
    names = [t["function"]["name"] for t in tools]
    wanted = "start" if turn == 0 else "get_machine_summary"
    name = wanted if wanted in names else names[0]
    schema = next(t["function"]["parameters"] for t in tools if t["function"]["name"] == name)
    arguments = {key: "the machine's body" for key in schema.get("required", [])
                 if schema.get("properties", {}).get(key, {}).get("type") == "string"}
    return {"content": f"I call {name}.", "tool_calls": [
        {"id": f"call_{turn}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def _turn(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m["role"] == "assistant")


def chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **options: Any) -> Any:
    """One workflow turn, answered in the format of the role the system prompt names."""
    role = role_of(messages)
    if role == "Planner":
        return PLAN
    if role == "Drafter":
        return BLUEPRINT
    if role == "Reviewer":
        return "The blueprint is complete and correct. TERMINATE"
    if role == "Builder" and tools:
        return builder_call(tools, _turn(messages))
    if role == "Guidance":
        if _turn(messages) == 0:
            return "Start the machine, then call get_machine_summary so we can review it."
        return "The machine matches the blueprint. TERMINATE"
    if role == "Controller":
        return "```json\n" + json.dumps(CONTROL) + "\n```"
    return "TERMINATE"
