"""Step 2: the tool plan, a DAG of tool calls given as ``{"from", "to"}`` edges (§4.3).

Nodes are tool names; ``START`` is the virtual root. :func:`parse_plan` reads a planner
reply and rejects tools outside the constraint type's menu and cycles;
:func:`reference_plan` is a keyword-rule planner (§12's suggestion) used by the scripted
reference model and as a labelled plan when no planner model is configured;
:func:`given_plan` turns a task's reference plan into the plan the pipeline runs when the
planner is bypassed (``-o plans=reference``, Table 7).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from buildbench.jsonio import JSONInputError, parse_json
from buildbench.suites.legoeval.literal import model_literal
from buildbench.suites.legoeval.prompts import fill
from buildbench.suites.legoeval.tools import TOOLS, tool_menu

from .chat import Asker
from .identify import TYPE_NAMES

START = "START"
_SEQUENCE = re.compile(r"Tool Sequence\s*:\s*(\[.*\])", re.IGNORECASE | re.DOTALL)
_REASON = re.compile(r"Chain-of-Thought\s*:\s*(.*?)(?:\n\s*Tool Sequence|\Z)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class ToolPlan:
    """A tool DAG: ``edges`` as ``(from, to)`` pairs (``from`` may be ``START``)."""

    edges: tuple[tuple[str, str], ...] = ()
    reasoning: str = ""
    source: str = "model"

    @property
    def nodes(self) -> list[str]:
        """Tools in first-mention order."""
        return list(dict.fromkeys(n for e in self.edges for n in e if n != START))

    def predecessors(self, node: str) -> list[str]:
        return [a for a, b in self.edges if b == node and a != START]

    def to_json(self) -> list[dict[str, str]]:
        return [{"from": a, "to": b} for a, b in self.edges]


def check_plan(edges: list[tuple[str, str]], menu: tuple[str, ...]) -> None:
    """Raise ValueError for tools off the menu, self-loops or cycles."""
    for a, b in edges:
        for n in (a, b):
            if n != START and n not in menu:
                where = "unknown tool" if n not in TOOLS else "tool not on this constraint type's menu"
                raise ValueError(f"{where}: {n!r}")
        if b == START:
            raise ValueError("an edge leads into START")
        if a == b:
            raise ValueError(f"self-loop on {a!r}")
    import networkx as nx

    graph = nx.DiGraph(edges)
    if not nx.is_directed_acyclic_graph(graph):
        raise ValueError(f"the plan has a cycle: {nx.find_cycle(graph)}")


def parse_plan(reply: str, menu: tuple[str, ...]) -> ToolPlan:
    """The plan in a planner reply; an empty list is a valid (empty) plan."""
    match = _SEQUENCE.search(reply)
    if match is None:
        raise ValueError("no 'Tool Sequence: [...]' in the reply")
    body = match.group(1)
    try:
        raw: Any = parse_json(body)
    except JSONInputError as exc:
        # refused (too deep, a huge integer): no other reading of it is wanted
        raise ValueError(f"the tool sequence is refused: {exc.msg}") from None
    except json.JSONDecodeError:
        try:
            raw = model_literal(body)
        except ValueError as exc:
            raise ValueError(f"the tool sequence is not a list of edges: {exc}") from None
    if not isinstance(raw, list):
        raise ValueError("the tool sequence is not a list")
    edges = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict) or not isinstance(e.get("from"), str) or not isinstance(e.get("to"), str):
            raise ValueError(f"edge {i} is not {{'from': str, 'to': str}}")
        edges.append((e["from"], e["to"]))
    # A node named only as a source gets its START edge, as the original's runner assumes.
    targets = {b for _, b in edges}
    edges += [(START, a) for a in dict.fromkeys(a for a, _ in edges) if a != START and a not in targets]
    check_plan(edges, menu)
    reason = _REASON.search(reply)
    return ToolPlan(tuple(edges), reason.group(1).strip() if reason else "")


async def plan_tools(asker: Asker, constraint: str, ctype: str, previous: list[str], *,
                     disabled_groups: tuple[str, ...] = ()) -> ToolPlan:
    menu = tool_menu(ctype, disabled_groups=disabled_groups)
    listing = "\n".join(f"- {n}({TOOLS[n].param or ''}): {TOOLS[n].description}" for n in menu)
    prompt = fill("plan", TYPE_NAME=TYPE_NAMES[ctype], TOOL_MENU=listing, PREVIOUS=_previous(previous),
                  CONSTRAINT=constraint)
    return await asker.parsed("tool planning", prompt, lambda r: parse_plan(r, menu), retries=3)


def _previous(previous: list[str]) -> str:
    return "\n".join(f"- {p}" for p in previous) if previous else "(none)"


_WORDS = {
    "door": ("door",), "window": ("window",), "wall": ("wall",),
    "relation": ("left", "right", "front", "behind", "near", "next to", "beside", "facing", "face", "between",
                 "corner", "middle", "against", "under", "on top", " on ", "closer", "aligned", "same direction"),
}


def reference_plan(constraint: str, ctype: str, *, disabled_groups: tuple[str, ...] = ()) -> ToolPlan:
    """A rule planner keyed on the type and on words of the constraint (§12)."""
    text = f" {constraint.lower()} "
    has = {k: any(w in text for w in words) for k, words in _WORDS.items()}
    edges: list[tuple[str, str]] = [(START, "get_room_list")]
    if ctype == "FL":
        edges.append(("get_room_list", "get_room_info"))
        for kind in ("door", "window"):
            if has[kind]:
                edges += [("get_room_list", f"get_{kind}_list"), (f"get_{kind}_list", f"get_{kind}_info")]
        if has["wall"]:
            edges += [("get_room_list", "get_wall_list"), ("get_wall_list", "get_wall_info")]
        edges.append((START, "get_topdown_scene"))
    elif ctype == "MS":
        edges += [("get_room_list", "get_room_info"), ("get_room_list", "get_wall_list"),
                  ("get_wall_list", "get_wall_info"), ("get_room_info", "get_material_image"),
                  ("get_wall_info", "get_material_image"), ("get_material_image", "get_property_description")]
    elif ctype == "OS":
        edges += [("get_room_list", "get_object_list"), ("get_object_list", "get_object_info"),
                  ("get_object_list", "get_multiview_rendered_object"),
                  ("get_multiview_rendered_object", "get_property_verification")]
        for kind in ("door", "window"):
            if has[kind]:
                edges += [("get_room_list", f"get_{kind}_list"), (f"get_{kind}_list", f"get_{kind}_info"),
                          (f"get_{kind}_list", "get_multiview_rendered_object")]
    else:
        edges += [("get_room_list", "get_object_list"), ("get_object_list", "get_object_info")]
        if has["relation"]:
            edges += [("get_object_list", "get_spatial_relation")]
        if has["wall"]:
            edges += [("get_room_list", "get_wall_list"), ("get_wall_list", "get_wall_info")]
        if has["door"] or has["window"]:
            for kind in ("door", "window"):
                edges += [("get_room_list", f"get_{kind}_list"), (f"get_{kind}_list", f"get_{kind}_info")]
    kept = on_menu(edges, tool_menu(ctype, disabled_groups=disabled_groups))
    return ToolPlan(tuple(kept), f"rule plan for a {TYPE_NAMES[ctype]} constraint", source="rules")


def on_menu(edges: list[tuple[str, str]], menu: tuple[str, ...]) -> list[tuple[str, str]]:
    """The edges among ``START`` and menu tools that are still reachable from ``START`` (a
    tool whose only way in went through a removed tool goes too)."""
    kept = [(a, b) for a, b in dict.fromkeys(edges) if (a == START or a in menu) and b in menu]
    reachable, grew = {START}, True
    while grew:
        grew = False
        for a, b in kept:
            if a in reachable and b not in reachable:
                reachable.add(b)
                grew = True
    return [(a, b) for a, b in kept if a in reachable]


def given_plan(reference: dict[str, Any], ctype: str, *, disabled_groups: tuple[str, ...] = ()) -> ToolPlan:
    """A reference plan (:mod:`buildbench.suites.legoeval.plans`) as the pipeline's plan: its
    tools and edges only, never its arguments, less the tools of disabled groups (Table 7
    gives the planner's answer and asks the model for the arguments)."""
    edges = [(str(e["from"]), str(e["to"])) for e in reference["edges"]]
    kept = on_menu(edges, tool_menu(ctype, disabled_groups=disabled_groups))
    return ToolPlan(tuple(kept), "the reference plan for this constraint", source="reference")
