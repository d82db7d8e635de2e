"""The Planner's ``<building_plan>`` XML: extraction and parsing into plain dicts (spec 4.1, stage 1)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

_PLAN = re.compile(r"<building_plan>.*?</building_plan>", re.DOTALL)
_SUB = re.compile(r"sub_structure_(\d+)$")


class PlanError(ValueError):
    """The plan could not be read; the message says why (it is sent back to the Planner)."""


@dataclass(frozen=True)
class Plan:
    """A parsed building plan.

    Attributes:
        overall: Fields of ``<overall_structure>`` (description, functionality, assembly, motion_control).
        sub_structures: One dict of fields per ``<sub_structure_N>``, in N order.
        text: The plan's XML as the Planner wrote it.
    """

    overall: dict[str, str]
    sub_structures: list[dict[str, str]] = field(default_factory=list)
    text: str = ""


def _fields(node: ET.Element) -> dict[str, str]:
    return {child.tag: "".join(child.itertext()).strip() for child in node}


def parse_plan(text: str) -> Plan:
    """Parse the first ``<building_plan>`` element of ``text``.

    Raises:
        PlanError: No plan element, malformed XML, or no sub-structure.
    """
    match = _PLAN.search(text or "")
    if match is None:
        raise PlanError("no <building_plan>...</building_plan> element was found")
    try:
        root = ET.fromstring(match.group(0))
    except ET.ParseError as exc:
        raise PlanError(f"the XML is malformed ({exc})") from None
    overall_node = root.find("overall_structure")
    subs_node = root.find("sub_structures")
    if subs_node is None:
        raise PlanError("the plan has no <sub_structures> element")
    numbered = []
    for child in subs_node:
        found = _SUB.match(child.tag)
        if found is None:
            raise PlanError(f"unexpected element <{child.tag}> in <sub_structures>; use <sub_structure_1>, ...")
        numbered.append((int(found.group(1)), _fields(child)))
    if not numbered:
        raise PlanError("the plan lists no sub-structure")
    numbered.sort(key=lambda item: item[0])
    overall = _fields(overall_node) if overall_node is not None else {}
    return Plan(overall, [fields for _, fields in numbered], match.group(0))


def describe(fields: dict[str, str]) -> str:
    """Fields as ``name: value`` lines, for prompts."""
    return "\n".join(f"{key}: {value}" for key, value in fields.items())
