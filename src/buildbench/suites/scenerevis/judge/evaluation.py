"""The evaluation judges of a final scene (SceneReVis spec §5.2): Ra, Spa and Ac, Avg their mean.

The paper scores each generated room with GPT-5 (temperature 0.1) on three integer scores
from 1 to 10, looking at the merged render and the room's metadata:

* **Ra** (rationality): physical problems, the room's size and the object count only; a
  floor area outside the room type's range, or fewer than 4 objects, caps it at 6;
* **Spa** (spatial layout): boundary compliance first (out-of-bounds costs 3 points),
  functional zoning, no crowding (60 cm between pieces), no large unused floor (> 70 %);
* **Ac** (accessibility): 80 cm walking clearance, gaps under 60 cm penalised, core
  furniture reachable;
* **Avg** = (Ra + Spa + Ac) / 3.

:class:`VisionEvalJudge` asks any chat model through :mod:`buildbench.llm` with our own
rubric text, the merged render and the metadata. :class:`RuleEvalJudge` scores the same
three criteria by deterministic rules (see its docstring); its scores are **not comparable
with the paper** and every record of them says so.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely

from buildbench.llm import ChatModel, ChatRequest, Message
from buildbench.scenes.assets import GeometryLevel, check_level
from buildbench.scenes.collision import FLOOR_COVERING_MAX_M
from buildbench.scenes.reachability import OBSTACLE_MAX_BOTTOM_M, reachable

from ..check.layout import RoomLayout, parse_layout
from ..check.meshes import layout_meshes
from ..check.navigation import cell_for, scene_of_layout
from ..check.physics import EVALUATION, PhysicsReport, physics_of
from ..check.rooms import match_room_type
from ..check.support import check_support
from .semantic import (
    DEFAULT_AREA_M2,
    VALID_AREA_M2,
    JudgeError,
    first_json_object,
    large_against_wall,
    large_furniture,
)

#: The three judged scores, in the paper's column order.
SCORE_KEYS = ("Ra", "Spa", "Ac")
#: The key each score has in the vision judge's JSON answer.
ANSWER_KEYS = {"Ra": "rationality", "Spa": "spatial_layout", "Ac": "accessibility"}
RULE_LABEL = "rule (deterministic; not comparable with the paper)"
#: The paper's cap on Ra for a room of the wrong size or with fewer than 4 objects.
RA_CAP = 6
MIN_OBJECTS = 4
#: Ra by the share of objects colliding or out of bounds: (largest share, score), then 2.
RA_BANDS = ((0.10, 8), (0.25, 7), (0.40, 6), (0.55, 5), (0.70, 4), (0.85, 3))
#: Walker radii, metres: a 60 cm gap lets one pass at all, 80 cm is comfortable clearance.
TIGHT_CLEARANCE_M = 0.30
COMFORT_CLEARANCE_M = 0.40
#: Gap, metres, below which two large pieces of furniture count as crowded.
CROWDED_GAP_M = 0.60
#: The merged render is resized to the paper's evaluation size (width, height), pixels.
EVAL_IMAGE_PX = (1080, 570)


@dataclass(frozen=True)
class EvalScores:
    """One judged scene: Ra, Spa, Ac as integers 1–10, the judge's label and its notes."""

    Ra: int
    Spa: int
    Ac: int
    judge: str
    comparable_with_paper: bool
    notes: tuple[str, ...] = field(default=())

    @property
    def avg(self) -> float:
        """The paper's Avg: the plain mean of Ra, Spa and Ac."""
        return (self.Ra + self.Spa + self.Ac) / 3.0

    def scores(self) -> dict[str, float]:
        return {"Ra": float(self.Ra), "Spa": float(self.Spa), "Ac": float(self.Ac), "Avg": self.avg}


class EvalJudge(ABC):
    """Scores a final scene on the paper's evaluation rubric."""

    label: str = "eval judge"
    comparable_with_paper: bool = False

    @abstractmethod
    async def evaluate(self, scene: Mapping[str, Any], instruction: str,
                       image: np.ndarray | None = None) -> EvalScores: ...


class RuleEvalJudge(EvalJudge):
    """Deterministic Ra/Spa/Ac from the scene alone. NOT comparable with the paper.

    An empty room scores 1 on all three (there is no layout to judge). Otherwise, under the
    evaluation physics (> 1 cm penetration, > 1 % outside):

    * **Ra**: 10 when no object collides or is out of bounds and none floats, 9 when some
      float; else by the share of colliding-or-outside objects (:data:`RA_BANDS`, 8 down to
      3, then 2 above 85 %); at most 6 when the floor area is outside the room type's range or
      there are fewer than 4 objects;
    * **Spa**: 10, minus 3 if any object is out of bounds, minus 2 × the share of large
      furniture not within 0.3 m of a wall, minus 1 per pair of large pieces closer than
      60 cm (at most 3), minus 1 (2) when floor furniture covers over 45 % (60 %) of the
      floor, minus 1 (2) when it covers under 30 % (15 %);
    * **Ac**: 10 − 6 × (share of floor furniture unreachable through a 60 cm gap) − 3 ×
      (share unreachable with 80 cm clearance), from :func:`buildbench.scenes.reachability.reachable`.

    Each score is rounded and kept within 1–10. Collisions, out-of-bounds and floating are
    judged at the episode's geometry level (``geometry``: ``box``, ``procedural`` or ``mesh``,
    as :func:`..metrics.scene_metrics` judges them), so a chair tucked under a table is not a
    collision at a mesh level; crowding, wall distances and reachability stay box footprints.
    """

    label = RULE_LABEL
    comparable_with_paper = False

    def __init__(self, geometry: GeometryLevel = "box") -> None:
        self.geometry = check_level(geometry)

    async def evaluate(self, scene: Mapping[str, Any], instruction: str,
                       image: np.ndarray | None = None) -> EvalScores:
        return self.judge(scene, instruction)

    def judge(self, scene: Mapping[str, Any] | RoomLayout, instruction: str = "") -> EvalScores:
        """The rule scores of ``scene`` (sync: the scorer calls this)."""
        layout = scene if isinstance(scene, RoomLayout) else parse_layout(scene)
        if len(layout) == 0:
            return EvalScores(1, 1, 1, self.label, False, ("empty room",))
        notes: list[str] = []
        fallbacks: dict[int, str] = {}
        meshes = layout_meshes(layout, self.geometry, fallbacks=fallbacks) if self.geometry != "box" else None
        if fallbacks:  # judged on procedural stand-ins: said in the notes, never silently
            first, source = min(fallbacks.items())
            notes.append(f"mesh fallbacks: {len(fallbacks)} of {len(layout)} objects judged on procedural "
                         f"stand-ins (object {first}: {source})")
        report = physics_of(layout, EVALUATION, meshes, self.geometry)
        floating = check_support(layout, geometry=self.geometry, meshes=meshes).floating
        ra = _rationality(layout, report, bool(floating), instruction, notes)
        spa = _spatial(layout, report, notes)
        ac = _accessibility(layout, notes)
        return EvalScores(ra, spa, ac, self.label, False, tuple(notes))


class VisionEvalJudge(EvalJudge):
    """Asks a chat model (vision-capable for the render) to score the room on the rubric.

    One call per scene. An API error, or an answer without three integer scores from 1 to
    10, raises :class:`~.semantic.JudgeError`; :attr:`last_reply` keeps the model's text.
    """

    comparable_with_paper = True

    def __init__(self, model: ChatModel, temperature: float = 0.1, max_tokens: int = 1000) -> None:
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.label = f"vision:{model.provider}:{model.model}"
        self.last_reply = ""
        self.last_usage: dict[str, int] = {}

    def request(self, scene: Mapping[str, Any], instruction: str, image: np.ndarray | None) -> ChatRequest:
        images = [eval_image(image)] if image is not None else []
        return ChatRequest(
            messages=(Message.system(EVAL_SYSTEM), Message.user(eval_prompt(scene, instruction), images)),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )

    async def evaluate(self, scene: Mapping[str, Any], instruction: str,
                       image: np.ndarray | None = None) -> EvalScores:
        response = await self.model.generate(self.request(scene, instruction, image))
        self.last_reply = response.text or ""
        self.last_usage = response.usage.to_dict()
        if response.error is not None:
            raise JudgeError(f"{self.label}: {response.error}")
        return parse_scores(self.last_reply, self.label)


EVAL_SYSTEM = ("You review 3D indoor room layouts for a benchmark. Look at the render and the data, "
               "then answer with a single JSON object and nothing else.")


def eval_prompt(scene: Mapping[str, Any], instruction: str) -> str:
    """Our rubric text, with the room's metadata and object list (spec §5.2)."""
    layout = parse_layout(scene)
    room = match_room_type(str(scene.get("room_type") or instruction)) or str(scene.get("room_type") or "room")
    lo, hi = VALID_AREA_M2.get(room, DEFAULT_AREA_M2)
    (x0, z0), (x1, z1) = layout.floor_xz.min(axis=0), layout.floor_xz.max(axis=0)
    objects = "\n".join(
        f"- {d[:80] or '(no description)'} | bottom centre {np.round(p, 2).tolist()} | size {np.round(s, 2).tolist()}"
        for d, p, s in zip(layout.descs, layout.bottoms, layout.sizes, strict=True)) or "- (none)"
    return (
        f"Request: {instruction}\n"
        f"Room type: {room}; footprint {x1 - x0:.2f} m x {z1 - z0:.2f} m; floor area "
        f"{_area_m2(layout):.1f} m2 (a sensible {room} has {lo}-{hi} m2); {len(layout)} objects:\n{objects}\n\n"
        "The image shows the room from above (left) and from a diagonal (right). Give three whole-number "
        "scores from 1 (very poor) to 10 (flawless):\n"
        "1. rationality: only physical soundness (pieces passing through each other, pieces poking out of "
        "the room), the room's size and how many objects it holds. If the floor area is outside the "
        "sensible range, or the room holds fewer than 4 objects, give at most 6. 9-10 nothing wrong, 7-8 "
        "a trifle, 5-6 clearly visible problems, 3-4 several problems, 1-2 badly broken.\n"
        "2. spatial_layout: first, everything must stay inside the walls (take 3 points off for any piece "
        "outside); then sensible functional zones, no crowding (keep about 60 cm between pieces), and no "
        "large stretches of wasted floor (more than 70 % of the room unused is a fault).\n"
        "3. accessibility: a person needs about 80 cm to walk; penalise passages under 60 cm; the main "
        "furniture should be reachable from more than one side, and walking routes should flow naturally.\n"
        'Reply as JSON: {"rationality": n, "spatial_layout": n, "accessibility": n, "comment": "one sentence"}'
    )


def parse_scores(text: str, label: str) -> EvalScores:
    """The three scores of a judge's answer; JudgeError names what is missing or out of range."""
    answer = first_json_object(text, label)
    values: dict[str, int] = {}
    for key, name in ANSWER_KEYS.items():
        value = answer.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value) \
                or not 1 <= value <= 10:
            raise JudgeError(f"{label}: {name} must be a whole number from 1 to 10, got {value!r}")
        values[key] = int(value)
    comment = answer.get("comment")
    notes = (str(comment)[:300],) if isinstance(comment, str) and comment else ()
    return EvalScores(values["Ra"], values["Spa"], values["Ac"], label, True, notes)


def eval_image(image: np.ndarray) -> np.ndarray:
    """The merged render resized to :data:`EVAL_IMAGE_PX`, as the paper's evaluation sends it."""
    from PIL import Image

    pil = Image.fromarray(np.ascontiguousarray(image[..., :3]))
    return np.asarray(pil.resize(EVAL_IMAGE_PX, Image.Resampling.LANCZOS))


# --- rule scores -------------------------------------------------------------------------------
def _clamp(score: float) -> int:
    return int(min(10, max(1, round(score))))


def _area_m2(layout: RoomLayout) -> float:
    return float(shapely.Polygon(layout.floor_xz).area)


def _rationality(layout: RoomLayout, report: PhysicsReport, floating: bool, instruction: str,
                 notes: list[str]) -> int:
    n = len(layout)
    share = len(set(report.colliding) | set(report.out_of_bounds)) / n
    if share == 0:
        score = 9 if floating else 10
    else:
        score = next((s for limit, s in RA_BANDS if share <= limit), 2)
        notes.append(f"{share:.0%} of objects collide or stand outside")
    room = match_room_type(layout.room_type or instruction) or ""
    lo, hi = VALID_AREA_M2.get(room, DEFAULT_AREA_M2)
    area = _area_m2(layout)
    if not lo <= area <= hi or n < MIN_OBJECTS:
        notes.append(f"Ra capped at {RA_CAP}: {area:.1f} m2 (range {lo}-{hi}), {n} objects")
        score = min(score, RA_CAP)
    return score


def _floor_furniture(layout: RoomLayout) -> list[int]:
    """Objects standing on the floor that one walks around (rugs and wall pieces excluded)."""
    heights_y = layout.corners()[:, :, 1] - layout.floor_y
    bottoms = heights_y.min(axis=1)
    heights = heights_y.max(axis=1) - bottoms
    return [i for i in range(len(layout)) if bottoms[i] <= OBSTACLE_MAX_BOTTOM_M and heights[i] > FLOOR_COVERING_MAX_M]


def _footprints(layout: RoomLayout, keep: Sequence[int]) -> list[shapely.Geometry]:
    corners = layout.corners()[:, :, [0, 2]]
    return [shapely.multipoints(corners[i]).convex_hull for i in keep]


def _occupancy_penalty(occupancy: float) -> int:
    """Points off for the share of the floor under furniture: crowded above 45 %, wasted
    (more than 70 % unused) below 30 %; twice over above 60 % or below 15 %."""
    if occupancy > 0.60 or occupancy < 0.15:
        return 2
    return 1 if occupancy > 0.45 or occupancy < 0.30 else 0


def _spatial(layout: RoomLayout, report: PhysicsReport, notes: list[str]) -> int:
    score = 10.0
    if report.out_of_bounds:
        score -= 3
        notes.append("Spa: objects outside the room")
    score -= 2 * (1.0 - large_against_wall(layout))
    large = large_furniture(layout)
    shapes = _footprints(layout, large)
    crowded = sum(float(shapely.distance(shapes[a], shapes[b])) < CROWDED_GAP_M
                  for a in range(len(shapes)) for b in range(a + 1, len(shapes)))
    if crowded:
        notes.append(f"Spa: {crowded} pair(s) of large furniture closer than {CROWDED_GAP_M} m")
    score -= min(crowded, 3)
    floor = shapely.Polygon(layout.floor_xz)
    covered = shapely.union_all(_footprints(layout, _floor_furniture(layout))).intersection(floor).area
    score -= _occupancy_penalty(float(covered) / max(float(floor.area), 1e-9))
    return _clamp(score)


def _accessibility(layout: RoomLayout, notes: list[str]) -> int:
    floor = _floor_furniture(layout)
    if not floor:
        return 10
    scene = scene_of_layout(layout)
    cell_m = cell_for(layout)
    shares = []
    for clearance in (TIGHT_CLEARANCE_M, COMFORT_CLEARANCE_M):
        reach = reachable(scene, "room", clearance_m=clearance, cell_m=cell_m)
        blocked = set(reach.unreachable_objects)
        shares.append(sum(f"object_{i}" in blocked for i in floor) / len(floor))
    if shares[1]:
        notes.append(f"Ac: {shares[0]:.0%} unreachable through 60 cm, {shares[1]:.0%} without 80 cm")
    return _clamp(10 - 6 * shares[0] - 3 * shares[1])


def scores_record(scores: EvalScores) -> dict[str, Any]:
    """The JSON record of one judged scene (kept in the episode outcome)."""
    return {"judge": scores.judge, "comparable_with_paper": scores.comparable_with_paper,
            **{k: getattr(scores, k) for k in SCORE_KEYS}, "notes": list(scores.notes)}
