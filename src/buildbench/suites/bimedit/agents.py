"""BIM-Edit agents: the model agent, the oracle, a no-op and three flawed references.

The scripted agents act only through the env's tool, like a model would: each sends its code
as ``execute_ifc_code`` calls and then answers without a tool call. The flawed agents each make
one classic mistake on the kind of task it applies to, so their scores show what the metrics
see (and miss):

* ``door-without-opening`` (door/window updates): puts the filling where the ground truth has
  it but leaves its opening behind;
* ``wall-keeps-openings`` (wall deletes): deletes the wall and its space boundaries but leaves
  its openings (and their doors and windows) orphaned;
* ``uncontained-wall`` (wall creates): the reference edit, then the new wall is taken out of
  its storey.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buildbench.harness import Action, Agent, EpisodeContext, Observation, Task
from buildbench.harness.errors import ConfigError
from buildbench.harness.llm_agent import LLMAgent
from buildbench.llm import ToolCall

from .env import CODE_TOOL, PROMPT_FILES
from .options import BimEditOptions
from .tasks import BimTask, from_harness


def system_prompt() -> str:
    """The system prompt (our wording of the paper's App. F.3 content)."""
    return PROMPT_FILES.read("system.md").strip()


class ToolAgent(LLMAgent):
    """A chat model using the env's tools; a failed inference is forgotten, so the protocol's
    retry asks again with the same conversation instead of repeating the turn."""

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        if self.turns and self.turns[-1].reply is None:
            self.turns.pop()
        return await super().act(observation, ctx)


def llm(task: Task, model: Any, options: BimEditOptions) -> Agent:
    """The paper's agent: a model with the tool, temperature 0 (Table 5) unless overridden."""
    settings = {"temperature": 0.0, **options.agent_settings(), "use_tools": True}
    return ToolAgent(model, system_prompt=system_prompt(), name="llm", **settings)


class CodeAgent(Agent):
    """Sends ``snippets`` one per turn through ``execute_ifc_code``, then answers ``final_text``."""

    def __init__(self, snippets: Sequence[str], *, name: str, final_text: str = "Done.") -> None:
        self.snippets = list(snippets)
        self.name = name
        self.final_text = final_text
        self._turn = 0

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        turn, self._turn = self._turn, self._turn + 1
        if turn < len(self.snippets):
            call = ToolCall(id=f"{self.name}_{turn}", name=CODE_TOOL, arguments={"code": self.snippets[turn]})
            return Action(tool_calls=[call])
        return Action(text=self.final_text)


def _with_commit(code: str) -> str:
    return code.rstrip() + "\ncommit()\n"


def oracle(task: Task, model: Any, options: BimEditOptions) -> Agent:
    """Runs the task's reference code through the tool and commits."""
    bim = from_harness(task)
    if not bim.oracle_code.strip():
        raise ConfigError(f"task {task.id} has no oracle_code")
    return CodeAgent([_with_commit(bim.oracle_code)], name="oracle")


def noop(task: Task, model: Any, options: BimEditOptions) -> Agent:
    """Answers at once without touching the model (the baseline the spec asks to always report)."""
    return CodeAgent([], name="noop", final_text="No change is needed.")


def _require(bim: BimTask, agent: str, elements: tuple[str, ...], operation: str) -> None:
    if bim.element not in elements or bim.operation != operation:
        raise ConfigError(f"agent {agent} applies to {'/'.join(elements)} {operation} tasks only; "
                          f"task {bim.task_id} is a {bim.element} {bim.operation}")


def _target_of_class(bim: BimTask, model_path: str, classes: tuple[str, ...]) -> str:
    import ifcopenshell

    f = ifcopenshell.open(model_path)
    for g in bim.target_guids:
        try:
            if f.by_guid(g).is_a() in classes:
                return g
        except RuntimeError:
            continue
    raise ConfigError(f"task {bim.task_id}: no target of class {'/'.join(classes)} among {bim.target_guids}")


def door_without_opening(task: Task, model: Any, options: BimEditOptions) -> Agent:
    """Moves the door/window to its ground-truth placement, leaving its opening where it was."""
    import ifcopenshell
    import ifcopenshell.util.unit

    from .generate.edits import world_matrix_m

    bim = from_harness(task)
    _require(bim, "door-without-opening", ("door", "window"), "update")
    guid = _target_of_class(bim, bim.input_ifc, ("IfcDoor", "IfcWindow"))
    gt = ifcopenshell.open(bim.ground_truth_ifc)
    matrix = world_matrix_m(gt.by_guid(guid), float(ifcopenshell.util.unit.calculate_unit_scale(gt))).tolist()
    code = (f"api.geometry.edit_object_placement(ifc, product=ifc.by_guid({guid!r}), matrix={matrix!r}, "
            "is_si=True, should_transform_children=False)")
    return CodeAgent([_with_commit(code)], name="door-without-opening")


def wall_keeps_openings(task: Task, model: Any, options: BimEditOptions) -> Agent:
    """Deletes the wall and its boundaries; its openings lose their host but stay."""
    bim = from_harness(task)
    _require(bim, "wall-keeps-openings", ("wall",), "delete")
    guid = _target_of_class(bim, bim.input_ifc, ("IfcWall", "IfcWallStandardCase"))
    code = (f"wall = ifc.by_guid({guid!r})\n"
            "for b in list(wall.ProvidesBoundaries or ()):\n"
            "    api.boundary.remove_boundary(ifc, boundary=b)\n"
            "for rel in list(wall.HasOpenings or ()):\n"
            "    ifc.remove(rel)\n"
            "api.root.remove_product(ifc, product=wall)")
    return CodeAgent([_with_commit(code)], name="wall-keeps-openings")


def uncontained_wall(task: Task, model: Any, options: BimEditOptions) -> Agent:
    """The reference creation, then every new wall is unassigned from its storey."""
    bim = from_harness(task)
    _require(bim, "uncontained-wall", ("wall",), "create")
    code = ("_walls_before = {w.GlobalId for w in ifc.by_type('IfcWall')}\n"
            + bim.oracle_code.rstrip() + "\n"
            "for _w in ifc.by_type('IfcWall'):\n"
            "    if _w.GlobalId not in _walls_before:\n"
            "        api.spatial.unassign_container(ifc, products=[_w])")
    return CodeAgent([_with_commit(code)], name="uncontained-wall")

