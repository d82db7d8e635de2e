"""Rule-based chain filter: our stand-in for the GPT filter of §3.3 (no model is called).

Every chain of a scene ends at the same room, so, as in the original, only the *process*
is graded, on the same four axes and point ranges (overall = their sum, 0–100):

* coherence (0–40): coarse-to-fine order, as SFT wants it. 28 points × the share of
  ordered pairs of forward ``add_object`` calls in which the bigger box (size product)
  comes first (ties count half), + 12 points × (1 − the share of adds that are later
  deleted again beyond one in four: some mistake-and-fix steps are wanted, a chain that
  mostly adds clutter is not).
* naturalness (0–35): 21 points × the share of edited objects whose centre, in the scene
  the call is applied to, lies inside the room (a distractor dropped outside the walls is
  not a mistake a designer makes) + 14 points × the share of turns after the first with at
  most :data:`MAX_NATURAL_CALLS` calls.
* instruction following (0–15): how early the room type's essentials (§4.3 lists) appear:
  the mean over essentials present in the final room of 1 − (first turn holding it − 1) /
  turns; 15 when the room type has none.
* visual transition (0–10): the share of turns whose change shows in a render: any add,
  remove or replace, a move of ≥ 10 cm, a turn of ≥ 10° or a rescale of ≥ 10 %.

:func:`keep_best` keeps the top k of the candidates by overall grade, ties by candidate
order. Chains that do not replay to the source room never get here (the generator checks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .assets import ESSENTIALS, normalize_room_type
from .diagnose import point_in_polygon
from .flat import Scene, quat_yaw_deg, room_polygon_xz, volume_m3
from .reverse import ReverseChain

MAX_NATURAL_CALLS = 8
VISIBLE_MOVE_M, VISIBLE_TURN_DEG, VISIBLE_SCALE = 0.10, 10.0, 0.10


@dataclass(frozen=True)
class ChainGrade:
    coherence: float
    naturalness: float
    instruction_following: float
    visual_transition: float

    @property
    def overall(self) -> float:
        return self.coherence + self.naturalness + self.instruction_following + self.visual_transition

    def to_dict(self) -> dict[str, float | str]:
        return {
            "coherence_score": round(self.coherence, 2),
            "naturalness_score": round(self.naturalness, 2),
            "instruction_following_score": round(self.instruction_following, 2),
            "visual_transition_score": round(self.visual_transition, 2),
            "overall_score": round(self.overall, 2),
            "scorer": "rule-based (buildbench), not the GPT filter",
        }


def _coarse_to_fine(volumes: list[float]) -> float:
    n = len(volumes)
    if n < 2:
        return 1.0
    good = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            good += 1.0 if volumes[i] > volumes[j] else 0.5 if volumes[i] == volumes[j] else 0.0
    return good / (n * (n - 1) / 2)


def _coherence(chain: ReverseChain) -> float:
    adds = [c for t in chain.turns for c in t.calls if c["name"] == "add_object"]
    volumes = [volume_m3({"size": c["arguments"]["size"]}) for c in adds]
    removed = sum(1 for t in chain.turns for c in t.calls if c["name"] == "remove_object")
    excess = max(0.0, removed / max(len(adds), 1) - 0.25)
    return 28.0 * _coarse_to_fine(volumes) + 12.0 * max(0.0, 1.0 - excess)


def _target(scene: Scene, call: dict) -> dict | None:
    handle = call["arguments"].get("jid", call["arguments"].get("jid_to_replace"))
    return next((o for o in scene["objects"] if o["id"] == handle), None)


def _naturalness(chain: ReverseChain) -> float:
    poly = room_polygon_xz(chain.source)
    inside = total = 0
    for t in chain.turns:
        for c in t.calls:
            o = _target(t.before, c)
            if o is not None:
                total += 1
                inside += point_in_polygon(poly, o["pos"][0], o["pos"][2])
    later = chain.turns[1:]
    small = sum(1 for t in later if len(t.calls) <= MAX_NATURAL_CALLS)
    return 21.0 * (inside / total if total else 1.0) + 14.0 * (small / len(later) if later else 1.0)


def _instruction_following(chain: ReverseChain) -> float:
    needs = ESSENTIALS.get(normalize_room_type(chain.source.get("room_type", "")), {})
    scores = []
    for words in needs.values():
        first = next(
            (k for k, t in enumerate(chain.turns)
             if any(w in o["desc"].lower() for o in t.after["objects"] for w in words)),
            None,
        )
        if first is not None:
            scores.append(1.0 - first / len(chain.turns))
    return 15.0 * (sum(scores) / len(scores) if scores else 1.0)


def _visible(before: Scene, call: dict) -> bool:
    name = call["name"]
    if name in ("add_object", "remove_object", "replace_object"):
        return True
    o = _target(before, call)
    if o is None:
        return False
    a = call["arguments"]
    if name == "move_object":
        return math.dist(o["pos"], a["new_position"]) >= VISIBLE_MOVE_M
    if name == "rotate_object":
        d = abs(quat_yaw_deg(o["rot"]) - quat_yaw_deg(a["new_rotation"])) % 360.0
        return min(d, 360.0 - d) >= VISIBLE_TURN_DEG
    ratio = max(n / max(c, 1e-9) for n, c in zip(a["new_size"], o["size"], strict=True))
    return abs(ratio - 1.0) >= VISIBLE_SCALE or abs(1.0 / max(ratio, 1e-9) - 1.0) >= VISIBLE_SCALE


def _visual_transition(chain: ReverseChain) -> float:
    if not chain.turns:
        return 0.0
    shown = sum(1 for t in chain.turns if any(_visible(t.before, c) for c in t.calls))
    return 10.0 * shown / len(chain.turns)


def grade_chain(chain: ReverseChain) -> ChainGrade:
    """The chain's grade on the four axes (module docstring)."""
    return ChainGrade(_coherence(chain), _naturalness(chain), _instruction_following(chain),
                      _visual_transition(chain))


def keep_best(chains: list[ReverseChain], k: int) -> list[tuple[ReverseChain, ChainGrade]]:
    """The k best chains by overall grade (ties: earlier candidate first)."""
    graded = [(ch, grade_chain(ch), i) for i, ch in enumerate(chains)]
    graded.sort(key=lambda x: (-round(x[1].overall, 9), x[2]))
    return [(ch, g) for ch, g, _ in graded[:k]]
