"""A scripted stand-in for the evaluator's models, for the demo and the tests (no network).

:class:`ReferenceScript` answers every prompt of the pipeline in the shape a real model
must: constraint lists, type labels, ``Tool Sequence`` plans (from
:func:`~.plan.reference_plan`), ``Arguments`` (from :func:`~.arguments.reference_arguments`),
multimodal descriptions (from the asset record quoted in the prompt) and ``<<True|False,
...>>`` verdicts. Its verdicts come from the deterministic checker run on the scene it was
given: it shows the pipeline's plumbing end to end, not a model's judgment, and is labelled
as such wherever it is used.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from buildbench.scenes.model import Scene
from buildbench.suites.legoeval.tools import ToolContext
from buildbench.suites.legoeval.tools.multimodal import mentioned_categories

from .arguments import reference_arguments
from .identify import LABELS
from .plan import ToolPlan, on_menu, reference_plan

_MENU_ITEM = re.compile(r"^- (get_\w+)\(", re.MULTILINE)
_LINE = re.compile(r"^(?P<key>[A-Za-z ]+?)(?: \([A-Za-z ]+\))?: (?P<value>.*)$", re.MULTILINE)


def prompt_fields(prompt: str) -> dict[str, str]:
    """The first value of each ``Key: value`` line of a prompt (``Requirement (Type): ...``
    counts as ``Requirement``)."""
    out: dict[str, str] = {}
    for m in _LINE.finditer(prompt):
        out.setdefault(m.group("key").strip(), m.group("value").strip())
    return out


class ReferenceScript:
    """Answers the pipeline's prompts for one scene.

    Args:
        scene: The scene being evaluated.
        constraints: ``{"id", "text", "type"}`` dicts, for identification/classification prompts.
    """

    def __init__(self, scene: Scene, constraints: list[dict[str, str]]) -> None:
        self.scene = scene
        self.constraints = constraints
        self.ctx = ToolContext.for_scene(scene, render=False)
        self.calls: dict[str, int] = {}

    def __call__(self, prompt: str) -> str:
        task = prompt.split("\n", 1)[0].removeprefix("TASK:").strip()
        self.calls[task] = self.calls.get(task, 0) + 1
        fields = {**prompt_fields(prompt), "_prompt": prompt}
        answer: Callable[[dict[str, str]], str] | None = getattr(self, "_" + task.replace(" ", "_"), None)
        if answer is None:
            return "I cannot help with that."
        return answer(fields)

    def for_server(self) -> Callable[[Any], str]:
        """The reply function of a :class:`buildbench.llm.ScriptedServer`."""
        return lambda request: self(request.last_user_text())

    def for_chat(self) -> Callable[[Any], str]:
        """The reply function of a :class:`buildbench.llm.ScriptedChat`."""
        return lambda request: self(request.messages[-1].text)

    def _constraint_identification(self, f: dict[str, str]) -> str:
        return "\n".join(f"{i + 1}. {c['text']}" for i, c in enumerate(self.constraints))

    def _constraint_classification(self, f: dict[str, str]) -> str:
        names = {v: k.title() for k, v in LABELS.items()}
        for c in self.constraints:
            if c["text"] == f.get("Requirement"):
                return names[c["type"]]
        return "Object Placement"

    def _tool_planning(self, f: dict[str, str]) -> str:
        ctype = next((c["type"] for c in self.constraints if c["text"] == f.get("Requirement")), "OP")
        plan = reference_plan(f.get("Requirement", ""), ctype)
        # Plan only with the tools the prompt offers (a tool-group ablation shortens the menu).
        menu = tuple(_MENU_ITEM.findall(f.get("_prompt", "")))
        edges = on_menu(list(plan.edges), menu) if menu else list(plan.edges)
        return f"Chain-of-Thought: {plan.reasoning}\nTool Sequence: {ToolPlan(tuple(edges)).to_json()}"

    def _argument_selection(self, f: dict[str, str]) -> str:
        args = reference_arguments(self.ctx, f.get("Tool", ""), f.get("Requirement", ""))
        return f"Chain-of-Thought: ids named by the requirement's rooms and object kinds\nArguments: {args!r}"

    def _constraint_validation(self, f: dict[str, str]) -> str:
        from buildbench.suites.legoeval.check import evaluate

        text = f.get("Requirement", "")
        verdict = evaluate(self.scene, [{"id": "c", "text": text}])[0]
        if verdict.holds is None:
            return "Chain-of-Thought: the requirement is outside what I can check.\nEvaluation: unsure"
        return f"Chain-of-Thought: checked the inspection results.\nEvaluation: <<{verdict.holds}, {verdict.explanation}>>"

    def _object_categories(self, f: dict[str, str]) -> str:
        return f"Categories: {mentioned_categories(self.ctx, f.get('Requirement', ''))!r}"

    def _object_match(self, f: dict[str, str]) -> str:
        record = re.search(r"category: ([^;\n]+)", f.get("_prompt", ""))
        kinds = re.search(r"these kinds the item is: (\[.*?\])", f.get("_prompt", ""))
        own = record.group(1).strip() if record else ""
        matched = [own] if kinds and repr(own) in kinds.group(1) else []
        return f"Chain-of-Thought: compared the record's category\nObject Type: {matched!r}"

    def _property_description(self, f: dict[str, str]) -> str:
        record = re.search(r"record says: (.*)", f.get("_prompt", ""))
        return f"Chain-of-Thought: read the record\nDescription: {record.group(1) if record else 'unknown'}"

    def _property_features(self, f: dict[str, str]) -> str:
        return "Features: colour, material and shape"

    def _property_verification(self, f: dict[str, str]) -> str:
        return self._property_description(f)
