"""The paper's baselines (§6.4): a VLM judge on multi-view images with self-consistency, and
a fixed-criteria checker in the style of SceneEval.

VLM judge: the model sees a labelled top-down view of the house and views facing four
walls of its largest room, solid walls before empty ones (our stand-in for the paper's four
perspectives), answers ``Validity: True|False``, three times at a warm temperature; the
majority decides. It judges the whole instruction (holistic) and, when ``per_constraint``,
each constraint the same way.

SceneEval-style: only what SceneEval's predefined criteria cover is checked — object counts,
object attributes and a fixed set of object-object relations — by the deterministic checker;
floor layout, materials, room relations and any constraint the template grammar cannot read
are *unmeasurable*. ``mode="full"`` counts them as not satisfied (the paper's "Full
Dataset"), ``mode="measurable"`` leaves them out (``holds`` None; "Measurable Dataset").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from buildbench.llm import ChatModel
from buildbench.scenes.model import Scene
from buildbench.suites.legoeval.prompts import fill

from .chat import Asker

_VALIDITY = re.compile(r"Validity\s*:\s*\**\s*(True|False)", re.IGNORECASE)
#: Relations SceneEval's object-relationship criterion can test.
SCENEEVAL_RELATIONS = frozenset({"near", "far", "left_of", "right_of", "in_front_of", "behind", "facing",
                                 "on_top_of", "under", "against_wall", "in_corner", "in_middle"})


def parse_validity(reply: str) -> bool:
    match = _VALIDITY.search(reply)
    if match is None:
        raise ValueError("no 'Validity: True|False' in the reply")
    return match.group(1).lower() == "true"


def judge_views(scene: Scene, px: int = 336, geometry: str = "box") -> list[bytes]:
    """A top-down view of the house and views of the four walls of its largest room, objects
    drawn at the ``geometry`` level."""
    from buildbench.scenes import views
    from buildbench.suites.legoeval.tools.environment import png

    images = [png(views.topdown_scene(scene, px=px, geometry=geometry))]
    if scene.rooms:
        room = max(scene.rooms, key=lambda r: r.area_m2)
        # Solid walls first: a view facing an empty wall looks through it into the next
        # room of the open plan, so it is used only when the room has fewer solid walls.
        inside = [w for w in scene.walls if w.room_id == room.id and not w.exterior]
        walls = sorted(inside, key=lambda w: w.empty)[:4]
        images += [png(views.wall_view(scene, w.id, geometry=geometry)) for w in walls]
    return images


@dataclass
class VLMJudge:
    """Self-consistent VLM-as-a-judge.

    Args:
        samples: Answers per question (paper: 3); the majority decides, ties are False.
        temperature: Sampling temperature of the samples.
        per_constraint: Also judge each constraint (the partial level of Table 1).
    """

    model: ChatModel
    samples: int = 3
    temperature: float = 0.7
    per_constraint: bool = True
    image_px: int = 336
    geometry: str = "box"
    seed: int | None = None

    async def _majority(self, asker: Asker, text: str, images: list[bytes]) -> tuple[bool, str]:
        votes = []
        for k in range(self.samples):
            asker.seed = None if self.seed is None else self.seed + k
            votes.append(await asker.parsed("VLM judgment", fill("vlm_judge", INSTRUCTION=text), parse_validity,
                                            images=images, temperature=self.temperature, retries=2))
        yes = sum(votes)
        return yes * 2 > len(votes), f"VLM judge: {yes} of {len(votes)} samples say valid"

    async def judge(self, scene: Scene, instruction: str, constraints: list[dict[str, str]]) -> dict[str, Any]:
        asker = Asker(self.model, max_tokens=600)
        images = judge_views(scene, self.image_px, self.geometry)
        valid, why = await self._majority(asker, instruction, images)
        verdicts = []
        for c in constraints:
            if self.per_constraint:
                holds, note = await self._majority(asker, c["text"], images)
                verdicts.append({"id": c["id"], "holds": holds, "explanation": note})
            else:
                verdicts.append({"id": c["id"], "holds": valid, "explanation": why})
        return {"verdicts": verdicts, "valid": valid, "explanation": why, "usage": asker.usage.to_dict()}


def sceneeval_measurable(program: Any) -> bool:
    """Whether SceneEval's fixed criteria cover a program."""
    from buildbench.suites.legoeval.constraints import Attribute, Count, Relation

    if isinstance(program, Count | Attribute):
        return True
    return isinstance(program, Relation) and program.rel in SCENEEVAL_RELATIONS


def sceneeval_check(scene: Scene, constraints: list[dict[str, str]],
                    mode: Literal["full", "measurable"] = "full") -> dict[str, Any]:
    """Fixed-criteria verdicts for ``{"id", "text"}`` constraints."""
    from buildbench.suites.legoeval.check import evaluate
    from buildbench.suites.legoeval.constraints import ProgramError, parse

    verdicts = []
    for c in constraints:
        try:
            program = parse(c["text"], f"constraint {c['id']}")
        except ProgramError:
            program = None
        if program is None or not sceneeval_measurable(program):
            holds = False if mode == "full" else None
            verdicts.append({"id": c["id"], "holds": holds,
                             "explanation": "not measurable by SceneEval's fixed criteria"})
            continue
        v = evaluate(scene, [{"id": c["id"], "text": c["text"]}])[0]
        verdicts.append(v.to_dict())
    judged = [v["holds"] for v in verdicts if v["holds"] is not None]
    valid: bool | None = all(judged) if judged else (None if mode == "measurable" else False)
    return {"verdicts": verdicts, "valid": valid, "mode": mode}
