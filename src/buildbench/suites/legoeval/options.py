"""LEGO-Eval's ``-o`` options, declared once: default, bounds and help of each. The harness parses
them into :class:`LegoEvalOptions` before a run starts (a rule among them is one ``error:`` line)
and hands that object to the env, agent and protocol factories, which read its fields."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import model_validator

from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.option_model import ModelOptions, option, shared_option
from buildbench.harness.prompts import PROMPTS_OPTION

from .tools.registry import Group

ConstraintSource = Literal["given", "identify"]
PlanSource = Literal["model", "reference"]
#: How rendered views draw objects, and what the relations measure them as.
Geometry = Literal["box", "procedural", "mesh"]
#: The tool groups ``-o disable`` may name (Table 2's ablations).
TOOL_GROUPS: tuple[str, ...] = get_args(Group)


class LegoEvalOptions(ModelOptions):
    """The options of a LEGO-Eval run (beside the model agent's common ones); frozen."""

    max_steps: int = option("int", "tool calls plus the verdict per episode", minimum=1, maximum=10_000,
                            default=40)
    render: bool = option("bool", "environment tools render images (false: text-only tools)", default=True)
    wall_midpoint_positions: bool = option(
        "bool", "tools answer as the original does (door/window positions at the wall midpoint, file values "
        "unrounded, its footprint corners)", default=False)
    per_constraint: bool = option(
        "bool", "vlm-judge also judges each constraint (Table 1's partial level), not only the whole instruction",
        default=True)
    constraints: ConstraintSource = option("str", "constraints given with the task, or identified by the model",
                                           choices=get_args(ConstraintSource), default="given")
    #: The disabled groups, comma-joined in the order given (the harness checked each name).
    disable: str = option("set", "tool groups to disable", choices=TOOL_GROUPS, default="")
    plans: PlanSource = option("str", "tool plans by the model, or the task's reference plans (only arguments "
                               "are then chosen by the model, Table 7)", choices=get_args(PlanSource), default="model")
    image_px: int = option("int", "side of rendered tool images, pixels", minimum=32, maximum=2048, default=336,
                           unit="px")
    geometry: Geometry = option(
        "str", "how rendered tool and judge images draw objects: boxes, procedural part-based furniture, or "
        "asset meshes (3D-FUTURE/Objaverse where available); also what the checker's object distances, "
        "'under' and 'overlaps' measure (boxes in the wall_midpoint_positions compatible mode)",
        choices=get_args(Geometry), default="box")
    samples_per_judgment: int = option("int", "VLM-judge self-consistency samples", minimum=1, maximum=100,
                                       default=3)
    prompts: str | None = shared_option(PROMPTS_OPTION)
    degrade: float = shared_option(DEGRADE_OPTION)

    @model_validator(mode="after")
    def _reference_plans_need_given_constraints(self) -> LegoEvalOptions:
        # A reference plan belongs to one of the task's constraints; identified constraints have none.
        if self.plans == "reference" and self.constraints != "given":
            raise ValueError("plans=reference needs the task's constraints (constraints=given), "
                             f"got constraints={self.constraints}")
        return self

    @property
    def disabled_groups(self) -> tuple[str, ...]:
        """The tool groups ``-o disable`` names, in the order given."""
        return tuple(group for group in self.disable.split(",") if group)

