"""Reference, baseline, single-fault and model-backed DreamHouse agents.

- ``oracle``: the ground truth, as Blender Python by default (``-o action_format=json|tools``
  for the other formats); its plan is the generator's own sections and phase steps, so
  it passes under every protocol.
- ``safe-house``: ignores the images; frames one rectangular section from the context
  fields (lot size, stories, roof type) with the generator's code-compliant rules.
- ``fault-*``: the oracle with one defect (:data:`FAULTS`), each failing known tests.
- ``llm``: a chat model with our prompts and the protocol's Table 6 settings.

Scripted agents answer by ``observation.state["request"]``: ``plan`` → the plan JSON;
``step`` → the members of that plan step; anything else → the whole frame, built to
replace what the scene holds (as a careful agent would on a retry).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from buildbench.harness import Action, Agent, EpisodeContext, Observation, Task

from .generate import GeneratedHouse, HouseParams, RoofSpec, SectionSpec, build_house
from .generate.frame import MODULE
from .generate.layout import resolve_joist_axes
from .model import SUBSYSTEM, Structure
from .options import ActionFormat, DreamHouseOptions
from .prompts import system_prompt
from .scripts import euler_xyz, fenced, structure_to_bpy
from .tasks import ground_truth


def plan_for(house: GeneratedHouse, lot: dict[str, float]) -> dict[str, Any]:
    """A Phase-0 plan that describes ``house`` exactly (sections, phase steps, member counts)."""
    s = house.structure
    cats = s.categories
    sections = [
        {"name": sec.name,
         "bounds": {"x_min": round(sec.x0_m, 2), "x_max": round(sec.x1_m, 2), "y_min": round(sec.y0_m, 2),
                    "y_max": round(sec.y1_m, 2), "z_base": round(sec.z_base_m, 2)},
         "stories": sec.stories, "systems": ["foundation", "floor", "walls", "roof"],
         "dependencies": [] if i == 0 else [house.params.sections[0].name]}
        for i, sec in enumerate(house.params.sections)
    ]  # fmt: skip
    order = []
    prev: tuple[str, str] | None = None
    for ph in house.phases:
        counts = Counter(c for c in cats[ph.start:ph.start + ph.count] if c)
        kind = "critical" if prev != (ph.section, ph.phase) else "safe"
        prev = (ph.section, ph.phase)
        order.append({"step": ph.step, "section": ph.section, "phase": ph.phase, "story": ph.story + 1,
                      "step_type": kind, "members": [{"type": t, "count": n} for t, n in sorted(counts.items())],
                      "depends_on": [ph.step - 1] if ph.step > 1 else []})
    return {
        "analysis": {"description": house.description, "stories": house.params.stories,
                     "sections": [sec["name"] for sec in sections], "roof_type": house.params.roof_type,
                     "complexity": house.params.complexity, "lot_size": dict(lot)},
        "sections": sections,
        "construction_order": order,
        "expected_member_counts": dict(sorted(Counter(c for c in cats if c).items())),
    }


def member_entries(structure: Structure) -> list[dict[str, Any]]:
    """The JSON member-list entries of ``structure`` (size, centre, XYZ Euler rotation)."""
    out = []
    for i, name in enumerate(structure.names):
        entry: dict[str, Any] = {"name": name, "size": np.round(structure.sizes_m[i], 6).tolist(),
                                 "location": np.round(structure.centers_m[i], 6).tolist()}
        rot = euler_xyz(structure.matrices[i, :3, :3])
        if any(abs(a) > 1e-12 for a in rot):
            entry["rotation_euler"] = [round(a, 9) for a in rot]
        out.append(entry)
    return out


class HouseAgent(Agent):
    """Builds a known house: answers plan, step and build requests (see the module docstring).

    Args:
        house: The house whose frame and phases are emitted.
        structure: The frame to emit (the house's own, or a faulted copy in the same order).
        lot: The injected lot size, copied into the plan.
        collection: Collection scripts build into.
        action_format: ``python``, ``json`` or ``tools``.
        kept: For a faulted copy, the index in the house's frame of each member of
            ``structure`` (which plan step it belongs to); None when it is the house's own.
        name: Label recorded with episodes.
    """

    def __init__(self, house: GeneratedHouse, structure: Structure, *, lot: dict[str, float], collection: str,
                 action_format: ActionFormat = "python", kept: np.ndarray | None = None,
                 name: str = "oracle") -> None:
        self.house = house
        self.structure = structure
        self.plan = plan_for(house, lot)
        self.collection = collection
        self.action_format = action_format
        self.name = name
        self._calls = 0
        self._step_of = np.zeros(len(structure), dtype=np.int64)
        if kept is None:
            kept = np.arange(len(structure))
        owner = np.zeros(len(house.structure), dtype=np.int64)
        for ph in house.phases:
            owner[ph.start:ph.start + ph.count] = ph.step
        self._step_of = owner[np.asarray(kept, dtype=np.int64)]

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        request = observation.state.get("request")
        if request == "plan":
            return Action(text="```json\n" + json.dumps(self.plan) + "\n```")
        if request == "step":
            step = int(observation.state["step"]["step"])
            return self._emit(self.structure.subset(np.flatnonzero(self._step_of == step)), replace=False)
        return self._emit(self.structure, replace=True)

    def _emit(self, part: Structure, *, replace: bool) -> Action:
        if self.action_format == "python":
            code = structure_to_bpy(part, self.collection, clear=replace)
            return Action(text=fenced(code))
        if self.action_format == "json":
            return Action(text="```json\n" + json.dumps({"members": member_entries(part), "replace": replace}) + "\n```")
        from buildbench.llm import ToolCall

        calls: list[tuple[str, dict[str, Any]]] = [("reset_scene", {})] if replace else []
        calls += [("add_members", {"members": member_entries(part)}), ("validate", {})]
        out = []
        for tool, args in calls:
            self._calls += 1
            out.append(ToolCall(f"call_{self._calls}", tool, args, json.dumps(args)))
        return Action(tool_calls=out)


# -- faults ---------------------------------------------------------------------------------
class Faulted(NamedTuple):
    """A faulted frame and, for each of its members, its index in the original frame."""

    structure: Structure
    kept: np.ndarray


def _first(structure: Structure, category: str) -> int:
    idx = [i for i, c in enumerate(structure.categories) if c == category]
    if not idx:
        raise ValueError(f"the structure has no {category} member to fault")
    return idx[0]


def _lone_stud(s: Structure) -> int:
    """The stud farthest (in plan) from every other vertical wall member, so nothing
    beside it can stand in for the plates it bears on."""
    vertical = [i for i, c in enumerate(s.categories) if c in ("Stud", "GableStud", "King", "Trimmer", "Cripple")]
    studs = [i for i in vertical if s.categories[i] == "Stud"]
    if not studs:
        raise ValueError("the structure has no Stud member to fault")
    centers = s.centers_m[vertical, :2]
    best, best_gap = studs[0], -1.0
    for i in studs:
        d = np.linalg.norm(centers - s.centers_m[i, :2], axis=1)
        gap = float(np.sort(d)[1]) if len(d) > 1 else np.inf
        if gap > best_gap:
            best, best_gap = i, gap
    return best


def drop_roof(s: Structure) -> Faulted:
    """Leave out every roof member (the footprint is left uncovered)."""
    kept = np.array([k for k, c in enumerate(s.categories) if SUBSYSTEM.get(c or "") != "roof"], dtype=np.int64)
    return Faulted(s.subset(kept), kept)


#: Length of the over-spanned joist, metres (paper T5 allows at most 4.76 m even for a 2x12).
OVERSPAN_M = 5.5


def overspan_joist(s: Structure) -> Faulted:
    """Stretch the first joist to 5.5 m, past any 2x10/2x12 span and deflection limit."""
    i = _first(s, "Joist")
    sizes, mats = s.sizes_m.copy(), s.matrices.copy()
    axis = int(np.argmax(sizes[i]))
    grow = max(0.0, OVERSPAN_M - sizes[i, axis])
    sizes[i, axis] += grow
    mats[i, :3, 3] += mats[i, :3, axis] * grow / 2.0
    return Faulted(Structure(s.names, sizes, mats, s.phases, s.sections, s.supported_by, dict(s.meta)),
                   np.arange(len(s)))


def float_stud(s: Structure) -> Faulted:
    """Lift one stud 0.3 m off its sole plate."""
    i = _lone_stud(s)
    mats = s.matrices.copy()
    mats[i, 2, 3] += 0.3
    return Faulted(Structure(s.names, s.sizes_m, mats, s.phases, s.sections, s.supported_by, dict(s.meta)),
                   np.arange(len(s)))


def bad_name(s: Structure) -> Faulted:
    """Rename the first member to a name outside the taxonomy."""
    names = ("beam_001", *s.names[1:])
    return Faulted(Structure(names, s.sizes_m, s.matrices, s.phases, s.sections, s.supported_by, dict(s.meta)),
                   np.arange(len(s)))


#: Single-fault agents: name → (fault, description).
FAULTS: dict[str, tuple[Callable[[Structure], Faulted], str]] = {
    "fault-no-roof": (drop_roof, "oracle without its roof (roof coverage and gap detection fail)"),
    "fault-overspan-joist": (overspan_joist, "oracle with one joist stretched to 5.5 m (span and deflection fail)"),
    "fault-floating-stud": (float_stud, "oracle with one stud lifted 0.3 m (dual-end connection fails)"),
    "fault-bad-name": (bad_name, "oracle with one member named outside the taxonomy (member check fails)"),
}


# -- factories ------------------------------------------------------------------------------
def oracle(task: Task, model: Any, options: DreamHouseOptions) -> Agent:
    house = ground_truth(task)
    return HouseAgent(house, house.structure, lot=dict(task.inputs["lot_size"]),
                      collection=str(task.inputs["collection"]), action_format=options.action_format, name="oracle")


def fault_agent(name: str) -> Callable[[Task, Any, DreamHouseOptions], Agent]:
    """The factory of the single-fault agent ``name`` (a key of :data:`FAULTS`)."""
    fault = FAULTS[name][0]

    def factory(task: Task, model: Any, options: DreamHouseOptions) -> Agent:
        house = ground_truth(task)
        faulted = fault(house.structure)
        return HouseAgent(house, faulted.structure, lot=dict(task.inputs["lot_size"]),
                          collection=str(task.inputs["collection"]), action_format=options.action_format,
                          kept=faulted.kept, name=name)

    return factory


#: Safe-house sections: whole 4 ft modules, 6–11 of them a side (the generator's range).
_SAFE_MODULES = (6, 11)
#: Safe-house roof pitches (rise over run): modest and code-friendly.
_SAFE_PITCH = {"gable": 0.5, "hip": 0.5, "gambrel": 0.5, "shed": 0.25}


def safe_params(task: Task) -> HouseParams:
    """One rectangular section sized from the lot (lot minus the 1 m margins), plain roof, no openings."""
    inp = task.inputs
    lot = inp["lot_size"]

    def modules(extent: float) -> int:
        return int(min(max(int((extent - 2.0) / MODULE + 1e-6), _SAFE_MODULES[0]), _SAFE_MODULES[1]))

    w, d = modules(float(lot["width"])), modules(float(lot["depth"]))
    roof_type = str(inp["roof_type"])
    roof = RoofSpec(roof_type, "x" if w >= d else "y", _SAFE_PITCH[roof_type], lower_pitch=1.5)
    section = SectionSpec("main", 0.0, 0.0, round(w * MODULE, 4), round(d * MODULE, 4), 0.0,
                          int(inp["stories"]), roof)
    sections = resolve_joist_axes((section,))
    if sections is None:
        raise ValueError(f"no joist layout for a {w}x{d}-module section")
    return HouseParams(task.id, "RN", 1, roof_type, "simple", sections, 0.0, False)


def safe_house(task: Task, model: Any, options: DreamHouseOptions) -> Agent:
    house = build_house(safe_params(task))
    return HouseAgent(house, house.structure, lot=dict(task.inputs["lot_size"]),
                      collection=str(task.inputs["collection"]), action_format=options.action_format, name="safe-house")


def llm(task: Task, model: Any, options: DreamHouseOptions) -> Agent:
    """A chat model; protocols fill in Table 6's max tokens and history unless options set them."""
    from buildbench.harness.llm_agent import LLMAgent, llm_agent_options

    settings: dict[str, Any] = {"temperature": 0.0, "use_tools": options.action_format == "tools",
                                **llm_agent_options(options)}
    return LLMAgent(model, system_prompt=system_prompt(), name="llm", **settings)
