"""The LLM evaluator: identify → plan → select arguments and execute → validate, per
constraint in order, then AND over the constraints (§1.2, §4)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from buildbench.llm import ChatModel, Usage
from buildbench.scenes.model import Scene
from buildbench.suites.legoeval.spaces import LegoEvalAction
from buildbench.suites.legoeval.task_records import Verdict
from buildbench.suites.legoeval.tools import ToolContext

from .arguments import select_arguments
from .chat import Asker, StepFailed
from .execute import CallRecord, ToolCache, execute_plan
from .identify import LABELS, classify_constraint, identify_constraints
from .plan import ToolPlan, plan_tools
from .validate import validate_constraint


@dataclass
class ConstraintResult:
    """One constraint's verdict (``holds`` None: the pipeline could not judge it; ``error`` says why)."""

    id: str
    text: str
    type: str
    holds: bool | None
    explanation: str
    plan: ToolPlan = field(default_factory=ToolPlan)
    calls: list[CallRecord] = field(default_factory=list)
    error: str | None = None

    def verdict(self) -> Verdict:
        return Verdict(self.id, self.holds, self.explanation)

    def trace(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "plan": self.plan.to_json(), "plan_source": self.plan.source,
                "calls": [c.to_dict() for c in self.calls], "error": self.error}


@dataclass
class EvaluationResult:
    constraints: list[ConstraintResult]
    usage: Usage = Usage()
    cache_hits: int = 0

    @property
    def valid(self) -> bool | None:
        """False if any constraint fails; None if none fails but one could not be judged."""
        holds = [c.holds for c in self.constraints]
        if any(h is False for h in holds):
            return False
        return None if any(h is None for h in holds) else True

    def submission(self) -> LegoEvalAction:
        """The verdicts as an agent submits them to the env, with the plans (``trace``) and, beside
        them, the tool calls made and the cached results reused (the model usage is ``usage``)."""
        return LegoEvalAction(verdicts=[c.verdict() for c in self.constraints], valid=self.valid,
                              trace=[c.trace() for c in self.constraints],
                              extra={"tool_calls": sum(len(c.calls) for c in self.constraints),
                                     "cache_hits": self.cache_hits})


@dataclass
class LLMEvaluator:
    """LEGO-Eval with any chat models.

    Args:
        model: Planner, argument selector and text-only validator.
        vision_model: Image validator and multimodal tools (defaults to ``model``).
        constraint_model: Constraint identification and typing (defaults to ``model``).
        render: Render images for the environment tools.
        image_px: Rendered view size (the original sends 335 x 335 to the VLM).
        max_images: Images attached to one validation.
        disabled_groups: Tool groups removed from every menu (Table 2's ablations).
        wall_midpoint_positions: The original's door/window position behaviour.
        geometry: How rendered views draw objects (``box``, ``procedural`` or ``mesh``).
    """

    model: ChatModel
    vision_model: ChatModel | None = None
    constraint_model: ChatModel | None = None
    render: bool = True
    image_px: int = 336
    max_images: int = 8
    disabled_groups: tuple[str, ...] = ()
    wall_midpoint_positions: bool = False
    geometry: str = "box"
    seed: int | None = None

    async def evaluate(self, scene: Scene, instruction: str, constraints: list[dict[str, str]] | None = None,
                       plans: Mapping[str, ToolPlan] | None = None) -> EvaluationResult:
        """Judge ``scene`` against ``instruction``; ``constraints`` (``{"id", "text", "type"}``)
        skips identification (the paper's ``--lego_bench`` mode); a missing type is classified.
        ``plans`` (by constraint id) replace the planner for those constraints: the model then
        only selects arguments and validates (Table 7)."""
        asker = Asker(self.model, seed=self.seed)
        vision = Asker(self.vision_model or self.model, seed=self.seed)
        const = Asker(self.constraint_model or self.model, seed=self.seed)
        items = await self._constraints(const, instruction, constraints)
        ctx = ToolContext.for_scene(scene, vision_model=self.vision_model or self.model, render=self.render,
                                    image_px=self.image_px, wall_midpoint_positions=self.wall_midpoint_positions,
                                    geometry=self.geometry)
        cache = ToolCache()
        previous: list[str] = []
        results = []
        for item in items:
            given = (plans or {}).get(item["id"])
            result = await self._one(asker, vision, ctx, cache, instruction, item, previous, given)
            results.append(result)
            if result.holds is not None:
                previous.append(f"{result.id} ({result.text}): {result.holds}, {result.explanation}")
        return EvaluationResult(results, asker.usage + vision.usage + const.usage, cache.hits)

    async def _constraints(self, asker: Asker, instruction: str,
                           given: list[dict[str, str]] | None) -> list[dict[str, str]]:
        if given is None:
            texts = await identify_constraints(asker, instruction)
            given = [{"id": f"c{i}", "text": t} for i, t in enumerate(texts)]
        out = []
        for c in given:
            ctype = c.get("type") or await classify_constraint(asker, instruction, c["text"])
            ctype = LABELS.get(ctype.lower(), ctype)
            out.append({"id": c["id"], "text": c["text"], "type": ctype})
        return out

    async def _one(self, asker: Asker, vision: Asker, ctx: ToolContext, cache: ToolCache, instruction: str,
                   item: dict[str, str], previous: list[str], given: ToolPlan | None = None) -> ConstraintResult:
        ctx.constraint = item["text"]
        ctx.visual_targets, ctx.visual_images = [], {}
        result = ConstraintResult(item["id"], item["text"], item["type"], None, "")
        try:
            result.plan = given if given is not None else await plan_tools(
                asker, item["text"], item["type"], previous, disabled_groups=self.disabled_groups)
            plan_json = json.dumps(result.plan.to_json())

            async def choose(tool: str, outputs: dict[str, Any]) -> list[Any]:
                return await select_arguments(asker, tool, instruction=instruction, constraint=item["text"],
                                              plan_json=plan_json, reasoning=result.plan.reasoning,
                                              previous=previous, outputs=outputs)

            execution = await execute_plan(ctx, result.plan, choose, cache)
            result.calls = execution.calls
            images = list(execution.images.values())[: self.max_images]
            information: dict[str, Any] = dict(execution.text)
            if previous:
                information["previous constraint outputs"] = previous
            judge = vision if images else asker
            judgment = await validate_constraint(judge, instruction=instruction, constraint=item["text"],
                                                 ctype=item["type"], information=information, images=images)
            result.holds, result.explanation = judgment.holds, judgment.explanation
        except StepFailed as exc:
            result.error = str(exc)
            result.explanation = f"not judged: {exc}"
        return result
