"""The SceneReVis hybrid reward (spec §4.3): per-turn rewards and the trajectory return.

**Turn 0** (``init``): r_init, the format score of the room creation
(:func:`~.format.init_reward`), weight 1.

**Intermediate turns** (``turn``)::

    r_t = 0.10 r_fmt + 0.10 (R_col + R_oob + R_pen + R_oobvol) + 0.25 R_imp + 0.25 R_key

with the physics of the edited scene under the reward rules (any penetration; fewer than
3 objects → all four −1), R_imp the judge's before/after verdict, and R_key the relevance
of the objects added or replaced this turn (none irrelevant 1, all −1, ≤ half 0.5, more
−0.5) or, when the turn adds nothing, the presence check: −1 when an essential of the room
type is missing; else the judge's found/total of the mandatory objects: ≥ 0.99 → 1,
> 0.5 → 0, else −1.

**Final turn** (``final``: the turn that terminates or exhausts the budget)::

    R_final = 0.10 R_fmt + 0.20 R_key + 0.10 R_size
              + 0.08 R_col + 0.07 R_oob + 0.05 R_pen + 0.05 R_oobvol + 0.05 R_support
              + 0.10 (S_rationality + S_requirement_match + S_scene_graph)

with R_key the presence check. Fuse: if ``0.2 R_key + 0.1 R_size < 0`` every scene-level
term (physics and judge) is −1. Override: a final scene with fewer than 4 objects sets
R_key = −1 and R_final = −1.

**Trajectory**: ≤ 2 turns → −1; otherwise the last turn's reward weighs 0.6 and each
earlier turn, turn 0 included, 0.4 / (n − 1).

A judge that fails (model error, unreadable answer) leaves its term at 0, as the released
code does, and the failure is listed in the breakdown's ``notes``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from buildbench.scenes.assets import GeometryLevel
from buildbench.scenes.model import SceneFormatError

from ..actions import NEED_RETRIEVAL
from ..check.layout import parse_layout, scene_objects
from ..check.physics import REWARD, PhysicsRules, check_physics
from ..check.rooms import missing_essentials
from ..check.support import check_support
from ..judge.semantic import Judge, JudgeError, JudgeView, RuleJudge
from .format import format_reward, init_reward, parse_tool_calls
from .released import released_support_reward
from .size import size_reward

TURN_WEIGHTS = {
    "format": 0.10,
    "collision_rate": 0.10,
    "oob_rate": 0.10,
    "penetration_depth": 0.10,
    "oob_volume": 0.10,
    "scene_improvement": 0.25,
    "key_objects": 0.25,
}
FINAL_WEIGHTS = {
    "format": 0.10,
    "key_objects": 0.20,
    "size": 0.10,
    "collision_rate": 0.08,
    "oob_rate": 0.07,
    "penetration_depth": 0.05,
    "oob_volume": 0.05,
    "support": 0.05,
    "rationality": 0.10,
    "requirement_match": 0.10,
    "scene_graph": 0.10,
}
PHYSICS_TERMS = ("collision_rate", "oob_rate", "penetration_depth", "oob_volume")
SCENE_TERMS = (*PHYSICS_TERMS, "support", "rationality", "requirement_match", "scene_graph")
LAST_TURN_WEIGHT = 0.6
MIN_PHYSICS_OBJECTS = 3
MIN_FINAL_OBJECTS = 4


def _linear(x: float, knots: Sequence[tuple[float, float]]) -> float:
    """Piecewise-linear through ``knots`` (x ascending), constant beyond the last knot."""
    xs, ys = zip(*knots, strict=True)
    return float(np.interp(x, xs, ys))


def collision_rate_reward(pct: float) -> float:
    """R_col: 1 at 0 %, 0.5 at 20 %, 0 at 45 % (the SFT baseline), −1 at 100 %."""
    return _linear(pct, [(0, 1.0), (20, 0.5), (45, 0.0), (100, -1.0)])


def oob_rate_reward(pct: float) -> float:
    """R_oob: 1 at 0 %, 0.5 at 10 %, 0 at 30 % (the SFT baseline), −1 at 100 %."""
    return _linear(pct, [(0, 1.0), (10, 0.5), (30, 0.0), (100, -1.0)])


def penetration_reward(total_depth_m: float) -> float:
    """R_pen of the summed contact depths: 1, 0.5 at 0.1 m, 0 at 0.3, −0.5 at 0.6, −1 from 1 m."""
    return _linear(total_depth_m, [(0, 1.0), (0.1, 0.5), (0.3, 0.0), (0.6, -0.5), (1.0, -1.0)])


def oob_volume_reward(total_m3: float) -> float:
    """R_oobvol of the summed out-of-bounds volume: 1, 0.5 at 0.2 m³, 0 at 0.5, −0.5 at 1, −1 from 2."""
    return _linear(total_m3, [(0, 1.0), (0.2, 0.5), (0.5, 0.0), (1.0, -0.5), (2.0, -1.0)])


def support_reward(unsupported_pct: float) -> float:
    """R_support: 1 at 0 %, 0 at 10 %, −1 at 100 % unsupported."""
    return _linear(unsupported_pct, [(0, 1.0), (10, 0.0), (100, -1.0)])


def relevance_score(relevant: Sequence[bool]) -> float:
    """R_key from new objects' relevance: 1 none irrelevant, −1 all, 0.5 ≤ half, −0.5 more."""
    if not relevant:
        return 1.0
    share = 1.0 - sum(relevant) / len(relevant)
    if share == 0.0:
        return 1.0
    if share == 1.0:
        return -1.0
    return 0.5 if share <= 0.5 else -0.5


def presence_score(found: int, total: int, essentials_missing: bool) -> float:
    """R_key from the presence check (see the module docstring)."""
    if essentials_missing:
        return -1.0
    if total <= 0:
        return 1.0
    ratio = found / total
    return 1.0 if ratio >= 0.99 else 0.0 if ratio > 0.5 else -1.0


def trajectory_return(turn_rewards: Sequence[float]) -> float:
    """J(τ): −1 for ≤ 2 turns; else 0.6 × last + 0.4 / (n − 1) × each earlier turn."""
    n = len(turn_rewards)
    if n <= 2:
        return -1.0
    others = (1.0 - LAST_TURN_WEIGHT) / (n - 1)
    return float(LAST_TURN_WEIGHT * turn_rewards[-1] + others * sum(turn_rewards[:-1]))


@dataclass
class TurnReward:
    """One turn's reward and its breakdown.

    Attributes:
        phase: ``init``, ``turn`` or ``final``.
        total: The turn reward.
        terms: Each term's value in its own units ([−1, 1]).
        weights: Each term's weight (the total is their dot product unless overridden).
        judge: The judge's label (says when it is not comparable with the paper).
        notes: Reasons: format problems, fuse/override, judge failures.
    """

    phase: str
    total: float
    terms: dict[str, float] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    judge: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "total": self.total,
            "terms": dict(self.terms),
            "weights": dict(self.weights),
            "judge": self.judge,
            "notes": list(self.notes),
        }


class HybridReward:
    """The reward of one episode: call :meth:`init_turn`, :meth:`turn` for each editing
    turn and :meth:`final` for the last, then :func:`trajectory_return` over the totals.

    Args:
        instruction: The user's request.
        room_type: The room type (defaults to what the instruction names).
        judge: The semantic judge (default :class:`RuleJudge`, not comparable with the paper).
        physics_rules: The physics of R_col, R_oob, R_pen, R_oobvol (the released mode passes
            :data:`~..check.physics.REWARD_RELEASED`).
        released_support: R_support by the released rules
            (:func:`~.released.released_support_reward`) instead of :mod:`..check.support`'s.
        geometry: The object shapes of those terms (``box``, ``procedural``, ``mesh``); at a
            mesh level R_pen sums each colliding pair's deepest contact and R_support rests
            objects on the meshes' surfaces. Rules that are the release's box arithmetic
            (``REWARD_RELEASED``, ``released_support``) ignore it.
    """

    def __init__(self, instruction: str, room_type: str = "", judge: Judge | None = None, *,
                 physics_rules: PhysicsRules = REWARD, released_support: bool = False,
                 geometry: GeometryLevel = "box") -> None:
        self.instruction = instruction
        self.room_type = room_type or instruction
        self.judge = judge or RuleJudge()
        self.physics_rules = physics_rules
        self.released_support = released_support
        self.geometry = geometry
        self._mandatory: list[str] | None = None

    def init_turn(self, reply: str) -> TurnReward:
        score, why = init_reward(reply, self.instruction)
        return TurnReward("init", score, {"format": score}, {"format": 1.0}, self.judge.label, [why])

    def turn(
        self,
        reply: str,
        before: Mapping[str, Any],
        after: Mapping[str, Any],
        *,
        before_image: np.ndarray | None = None,
        after_image: np.ndarray | None = None,
        scene_ids: Collection[str] | None = None,
    ) -> TurnReward:
        """Reward of an intermediate turn that edited ``before`` into ``after``."""
        notes: list[str] = []
        terms = {"format": self._format(reply, before, scene_ids, notes)}
        terms.update(self._physics(after, notes))
        terms["scene_improvement"] = self._ask(
            lambda: self.judge.improvement(
                JudgeView(before, before_image), JudgeView(after, after_image), self.instruction
            ),
            "improvement",
            notes,
        )
        added = _added_descs(reply)
        if added:
            terms["key_objects"] = self._ask(
                lambda: relevance_score(self.judge.relevance(added, self.instruction, self.room_type)),
                "relevance",
                notes,
            )
        else:
            terms["key_objects"] = self._presence(JudgeView(after, after_image), notes)
        return _weighted("turn", terms, TURN_WEIGHTS, self.judge.label, notes)

    def final(
        self,
        reply: str,
        before: Mapping[str, Any],
        after: Mapping[str, Any],
        *,
        after_image: np.ndarray | None = None,
        scene_ids: Collection[str] | None = None,
    ) -> TurnReward:
        """Reward of the final turn, which left the scene ``after``."""
        notes: list[str] = []
        view = JudgeView(after, after_image)
        objects = [o for _, o in scene_objects(after) if isinstance(o, Mapping)]
        terms = {
            "format": self._format(reply, before, scene_ids, notes),
            "key_objects": self._presence(view, notes),
            "size": size_reward(objects).score,
        }
        few = len(objects) < MIN_FINAL_OBJECTS
        if few:
            terms["key_objects"] = -1.0
        fused = (
            FINAL_WEIGHTS["key_objects"] * terms["key_objects"] + FINAL_WEIGHTS["size"] * terms["size"] < 0
        )
        if fused:
            notes.append("fuse: the object level scored below 0, so every scene-level term is -1")
            terms.update(dict.fromkeys(SCENE_TERMS, -1.0))
        else:
            terms.update(self._physics(after, notes))
            terms["support"] = self._support(after, notes)
            scores = self._ask(lambda: self.judge.scene_scores(view, self.instruction), "scene scores", notes)
            for key in ("rationality", "requirement_match", "scene_graph"):
                terms[key] = scores[key] if isinstance(scores, dict) else 0.0
        reward = _weighted("final", terms, FINAL_WEIGHTS, self.judge.label, notes)
        if few:
            reward.total = -1.0
            reward.notes.append(f"override: the final scene has {len(objects)} < {MIN_FINAL_OBJECTS} objects")
        return reward

    # --- terms -------------------------------------------------------------------------
    def _format(
        self, reply: str, before: Mapping[str, Any], ids: Collection[str] | None, notes: list[str]
    ) -> float:
        if ids is not None:
            score, why = format_reward(reply, ids)
        else:
            score, why = format_reward(reply, _scene_ids(before, ("id", "jid")), _scene_ids(before, ("id", "uid")))
        if why != "ok":
            notes.append(f"format: {why}")
        return score

    def _physics(self, scene: Mapping[str, Any], notes: list[str]) -> dict[str, float]:
        try:
            layout = parse_layout(scene)
        except SceneFormatError as exc:
            notes.append(f"physics: unreadable scene ({exc})")
            return dict.fromkeys(PHYSICS_TERMS, -1.0)
        if len(layout) < MIN_PHYSICS_OBJECTS:
            notes.append(f"physics: {len(layout)} < {MIN_PHYSICS_OBJECTS} objects")
            return dict.fromkeys(PHYSICS_TERMS, -1.0)
        report = check_physics(layout, self.physics_rules, geometry=self.geometry)
        if report.mesh_fallbacks:  # rewarded on procedural stand-ins: said, never silently
            first, source = report.mesh_fallbacks[0]
            notes.append(f"physics: {len(report.mesh_fallbacks)} of {len(layout)} objects on procedural "
                         f"stand-ins (object {first}: {source})")
        return {
            "collision_rate": collision_rate_reward(report.collision_rate_pct),
            "oob_rate": oob_rate_reward(report.oob_rate_pct),
            "penetration_depth": penetration_reward(report.total_penetration_m),
            "oob_volume": oob_volume_reward(report.total_oob_volume_m3),
        }

    def _support(self, scene: Mapping[str, Any], notes: list[str]) -> float:
        if self.released_support:
            return released_support_reward(scene)
        try:
            return support_reward(check_support(parse_layout(scene), geometry=self.geometry).unsupported_pct)
        except SceneFormatError as exc:
            notes.append(f"support: unreadable scene ({exc})")
            return -1.0

    def _presence(self, view: JudgeView, notes: list[str]) -> float:
        missing = missing_essentials(self.room_type, view.descs())
        if missing:
            notes.append(f"key objects: essentials missing: {', '.join(missing)}")
            return -1.0
        if self._mandatory is None:
            asked = self._ask(
                lambda: self.judge.mandatory_objects(self.instruction, self.room_type),
                "mandatory objects",
                notes,
            )
            if not isinstance(asked, list):
                return 0.0
            self._mandatory = asked
        mandatory = self._mandatory
        counts = self._ask(lambda: self.judge.presence(mandatory, view), "presence", notes)
        if not isinstance(counts, tuple) or len(counts) != 2:
            return 0.0
        present, total = counts
        return presence_score(present, total, essentials_missing=False)

    def _ask(self, question: Any, what: str, notes: list[str]) -> Any:
        try:
            return question()
        except (JudgeError, SceneFormatError) as exc:
            notes.append(f"judge failed ({what}): {exc}; term left at 0")
            return 0.0


def _weighted(
    phase: str, terms: dict[str, float], weights: dict[str, float], judge: str, notes: list[str]
) -> TurnReward:
    total = float(sum(weights[k] * terms[k] for k in weights))
    return TurnReward(phase, total, terms, dict(weights), judge, notes)


def _scene_ids(scene: Mapping[str, Any], keys: tuple[str, ...] = ("id", "jid", "uid")) -> set[str]:
    """The values of ``keys`` over the scene's objects (the retrieval placeholder is no id)."""
    ids: set[str] = set()
    for _, obj in scene_objects(scene):
        if isinstance(obj, Mapping):
            ids.update(str(obj[k]) for k in keys if obj.get(k) and obj[k] != NEED_RETRIEVAL)
    return ids


def _added_descs(reply: str) -> list[str]:
    """Descriptions of objects this reply adds or swaps in."""
    out = []
    for call in parse_tool_calls(reply) or []:
        if not isinstance(call, dict) or not isinstance(call.get("arguments"), dict):
            continue
        name = call.get("name")
        key = {"add_object": "object_description", "replace_object": "new_object_description"}.get(
            name if isinstance(name, str) else ""
        )
        if key and call["arguments"].get(key):
            out.append(str(call["arguments"][key]))
    return out
