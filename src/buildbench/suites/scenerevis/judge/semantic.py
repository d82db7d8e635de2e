"""The judge behind the reward's semantic terms (SceneReVis spec §4.3).

The paper's judge is Qwen3-VL-235B behind an OpenAI-compatible endpoint. :class:`Judge`
is what the reward asks of it; :class:`VisionJudge` asks any chat model through
:mod:`buildbench.llm` (renders attached as images), :class:`RuleJudge` answers
deterministically from physics and the room type's furniture and is **not comparable
with the paper** (its ``label`` says so, and every reward breakdown carries the label).

Questions (answers in the units the reward uses):

* ``improvement(before, after)`` → 1 improved (any positive change counts), 0 changed but
  neutral, −1 worse *or unchanged*;
* ``relevance(descs)`` → for each newly added description, whether it belongs here;
* ``mandatory_objects()`` → the 5–15 objects the room must hold (asked once an episode);
* ``presence(mandatory, view)`` → ``(found, total)``;
* ``scene_scores(view)`` → ``rationality``, ``requirement_match``, ``scene_graph``, each in
  {−1, −0.5, 0, 0.5, 1}.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from buildbench.llm import ChatModel, ChatRequest, Message

from ..check.layout import RoomLayout, parse_layout, scene_objects
from ..check.physics import EVALUATION, REWARD, check_physics
from ..check.rooms import (
    ESSENTIALS,
    ROOM_WORDS,
    essentials_of,
    fits_room,
    match_room_type,
    mentions,
    missing_essentials,
)
from ..check.support import check_support

LEVELS = (-1.0, -0.5, 0.0, 0.5, 1.0)
SCENE_SCORES = ("rationality", "requirement_match", "scene_graph")
#: Valid floor areas per room type, m² (the evaluation prompt's ranges, spec §5.2).
VALID_AREA_M2 = {
    "bedroom": (10, 25),
    "living room": (15, 35),
    "dining room": (10, 25),
    "study room": (10, 25),
}
DEFAULT_AREA_M2 = (10, 40)


class JudgeError(RuntimeError):
    """The judge could not answer (model error or an unreadable answer)."""


@dataclass(frozen=True)
class JudgeView:
    """What the judge looks at: the scene dict and, for vision judges, its merged render."""

    scene: Mapping[str, Any]
    image: np.ndarray | None = None

    def descs(self) -> list[str]:
        return [str(o.get("desc") or "") for _, o in scene_objects(self.scene) if isinstance(o, Mapping)]

    def summary(self) -> str:
        """One line per object: description, position and size (the released compact summary)."""
        rows = []
        for k, (_, o) in enumerate(scene_objects(self.scene)):
            if isinstance(o, Mapping):
                rows.append(
                    f"{k}. {str(o.get('desc') or '')[:80]} | pos {o.get('pos')} | size {o.get('size')}"
                )
        return "\n".join(rows) or "(no objects)"


class Judge(ABC):
    """The semantic judge of the hybrid reward."""

    #: Shown in every reward breakdown.
    label: str = "judge"
    comparable_with_paper: bool = False

    @abstractmethod
    def improvement(self, before: JudgeView, after: JudgeView, instruction: str) -> float: ...

    @abstractmethod
    def relevance(self, descs: Sequence[str], instruction: str, room_type: str) -> list[bool]: ...

    @abstractmethod
    def mandatory_objects(self, instruction: str, room_type: str) -> list[str]: ...

    @abstractmethod
    def presence(self, mandatory: Sequence[str], view: JudgeView) -> tuple[int, int]: ...

    @abstractmethod
    def scene_scores(self, view: JudgeView, instruction: str) -> dict[str, float]: ...


def to_level(share: float) -> float:
    """A share in [0, 1] on the five-level scale: ≥.95 → 1, ≥.75 → .5, ≥.5 → 0, ≥.25 → −.5, else −1."""
    for threshold, level in ((0.95, 1.0), (0.75, 0.5), (0.5, 0.0), (0.25, -0.5)):
        if share >= threshold:
            return level
    return -1.0


class RuleJudge(Judge):
    """Deterministic judge from physics and furniture coverage. NOT comparable with the paper.

    * improvement: (violations removed) + (essentials gained), violations being colliding
      plus out-of-bounds objects under the reward rules; > 0 → 1, < 0 → −1, 0 → 0, and
      −1 when the scene did not change;
    * relevance: the description names furniture that fits the room type;
    * mandatory objects: the room type's essentials; presence: alias matches;
    * rationality: the share of objects neither colliding nor out of bounds (evaluation
      rules), capped at 0 for fewer than 4 objects or a floor area outside the room type's
      range; requirement match: the share of essentials and of furniture words of the
      instruction present; scene graph: the mean of the supported share and the share of
      large furniture standing within 0.3 m of a wall. Shares map by :func:`to_level`.
    """

    label = "rule (deterministic; not comparable with the paper)"

    def improvement(self, before: JudgeView, after: JudgeView, instruction: str) -> float:
        if _pose_key(before.scene) == _pose_key(after.scene):
            return -1.0
        room = str(after.scene.get("room_type") or instruction)
        gain = (_violations(before.scene) - _violations(after.scene)) + (
            len(_missing(room, before)) - len(_missing(room, after))
        )
        return float(np.sign(gain))

    def relevance(self, descs: Sequence[str], instruction: str, room_type: str) -> list[bool]:
        return [fits_room(d, room_type or instruction) for d in descs]

    def mandatory_objects(self, instruction: str, room_type: str) -> list[str]:
        return list(essentials_of(room_type or instruction))

    def presence(self, mandatory: Sequence[str], view: JudgeView) -> tuple[int, int]:
        descs = view.descs()
        aliases = {name: al for room in ESSENTIALS.values() for name, al in room[1].items()}
        found = sum(any(mentions(d, aliases.get(m, (m,))) for d in descs) for m in mandatory)
        return found, len(mandatory)

    def scene_scores(self, view: JudgeView, instruction: str) -> dict[str, float]:
        layout = parse_layout(view.scene)
        n = len(layout)
        if n == 0:
            return dict.fromkeys(SCENE_SCORES, -1.0)
        report = check_physics(layout, EVALUATION)
        clean = 1.0 - len(set(report.colliding) | set(report.out_of_bounds)) / n
        room = match_room_type(str(view.scene.get("room_type") or instruction)) or ""
        lo, hi = VALID_AREA_M2.get(room, DEFAULT_AREA_M2)
        area = float(shapely.Polygon(layout.floor_xz).area)
        rationality = to_level(clean)
        if n < 4 or not lo <= area <= hi:
            rationality = min(rationality, 0.0)
        wanted = list(essentials_of(room)) + [
            w for w in ROOM_WORDS.get(room, ()) if mentions(instruction, (w,))
        ]
        descs = layout.descs
        present = [m for m in wanted if not _missing_one(m, descs)]
        requirement = to_level(len(present) / len(wanted)) if wanted else 1.0
        support = check_support(layout)
        graph = to_level((1.0 - support.unsupported_pct / 100.0 + large_against_wall(layout)) / 2.0)
        return {"rationality": rationality, "requirement_match": requirement, "scene_graph": graph}


class VisionJudge(Judge):
    """Asks a chat model (vision-capable for the renders) through :mod:`buildbench.llm`.

    Every question asks for one JSON object; a failed call or an answer without the
    expected fields raises :class:`JudgeError`, which the reward records.
    """

    def __init__(self, model: ChatModel, temperature: float = 0.1, max_tokens: int = 800) -> None:
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.label = f"vision:{model.provider}:{model.model}"

    def improvement(self, before: JudgeView, after: JudgeView, instruction: str) -> float:
        answer = self._ask(
            f"Request: {instruction}\nBEFORE objects:\n{before.summary()}\n"
            f"AFTER objects:\n{after.summary()}\n"
            "The images show the room before and after one editing turn. Be encouraging: any real "
            'improvement toward the request counts. Reply as JSON {"verdict": 1} if the room improved, '
            "0 if it changed without getting better or worse, -1 if it got worse or did not change.",
            [v.image for v in (before, after)],
        )
        return _choice(answer, "verdict", (-1.0, 0.0, 1.0))

    def relevance(self, descs: Sequence[str], instruction: str, room_type: str) -> list[bool]:
        listed = "\n".join(f"{k}. {d}" for k, d in enumerate(descs))
        answer = self._ask(
            f"Request: {instruction}\nRoom type: {room_type}\nNewly added objects:\n{listed}\n"
            "For each object say whether it belongs in this room for this request. Reply as JSON "
            '{"relevant": [true, false, ...]} with one entry per object, in order.',
            [],
        )
        flags = answer.get("relevant")
        if (
            not isinstance(flags, list)
            or len(flags) != len(descs)
            or not all(isinstance(f, bool) for f in flags)
        ):
            raise JudgeError(f"relevance: expected {len(descs)} booleans, got {flags!r}")
        return list(flags)

    def mandatory_objects(self, instruction: str, room_type: str) -> list[str]:
        answer = self._ask(
            f"Request: {instruction}\nRoom type: {room_type}\nList the 5 to 15 objects this room must "
            "contain to satisfy the request, repeating an object once per required copy (four dining "
            'chairs = four entries). Reply as JSON {"objects": ["...", ...]}.',
            [],
        )
        objects = answer.get("objects")
        if not isinstance(objects, list) or not objects or not all(isinstance(o, str) for o in objects):
            raise JudgeError(f"mandatory_objects: expected a list of names, got {objects!r}")
        return objects

    def presence(self, mandatory: Sequence[str], view: JudgeView) -> tuple[int, int]:
        answer = self._ask(
            f"Required objects: {json.dumps(list(mandatory))}\nObjects in the scene:\n{view.summary()}\n"
            "Using the image and the list, count how many required entries are present. Reply as JSON "
            '{"found_count": n, "total_count": m}.',
            [view.image],
        )
        found, total = answer.get("found_count"), answer.get("total_count")
        if not (isinstance(found, int) and isinstance(total, int) and 0 <= found <= total):
            raise JudgeError(f"presence: bad counts {found!r}/{total!r}")
        return found, total

    def scene_scores(self, view: JudgeView, instruction: str) -> dict[str, float]:
        description = self._ask(
            f"Objects in the scene:\n{view.summary()}\nDescribe this room in detail: inventory, positions, "
            "orientations, relationships between objects and visible problems. Reply as JSON "
            '{"description": "..."}.',
            [view.image],
        ).get("description", "")
        answer = self._ask(
            f"Request: {instruction}\nScene description: {description}\nObjects:\n{view.summary()}\n"
            "Score the room on three criteria, each one of -1, -0.5, 0, 0.5, 1: rationality (complete, "
            "well distributed, realistic sizes), requirement_match (explicit and implicit requirements, "
            "relevance, style), scene_graph (sensible groups, orientations, access, furniture "
            "against walls). "
            'Reply as JSON {"rationality": s, "requirement_match": s, "scene_graph": s}.',
            [view.image],
        )
        return {k: _choice(answer, k, LEVELS) for k in SCENE_SCORES}

    def _ask(self, prompt: str, images: list[np.ndarray | None]) -> dict[str, Any]:
        shown = [i for i in images if i is not None]
        request = ChatRequest(
            messages=(
                Message.system("You judge 3D indoor room layouts. Answer with one JSON object only."),
                Message.user(prompt, shown),
            ),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        response = _run(self.model.generate(request))
        if response.error is not None:
            raise JudgeError(f"{self.label}: {response.error}")
        return first_json_object(response.text, self.label)


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to completion from sync code, also inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


#: Where a JSON object can start: "{" before a key or "}". A run of other "{" is passed over
#: without a decode attempt at each (its error's line number costs time linear in the answer).
_OBJECT_START = re.compile(r'\{\s*["}]')


def first_json_object(text: str, label: str) -> dict[str, Any]:
    for match in _OBJECT_START.finditer(text):
        try:
            value, _ = json.JSONDecoder().raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        except (ValueError, RecursionError) as exc:
            # A 10,000-digit integer or nesting past the stack: refused, not searched past.
            what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
            raise JudgeError(f"{label}: the JSON in the answer is refused ({what})") from None
        if isinstance(value, dict):
            return value
    raise JudgeError(f"{label}: no JSON object in the answer {text[:80]!r}")


def _choice(answer: Mapping[str, Any], key: str, allowed: Sequence[float]) -> float:
    value = answer.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or float(value) not in allowed:
        raise JudgeError(f"{key}: expected one of {list(allowed)}, got {value!r}")
    return float(value)


def _pose_key(scene: Mapping[str, Any]) -> list[Any]:
    return [
        (o.get("desc"), o.get("size"), o.get("pos"), o.get("rot"))
        for _, o in scene_objects(scene)
        if isinstance(o, Mapping)
    ]


def _violations(scene: Mapping[str, Any]) -> int:
    report = check_physics(parse_layout(scene), REWARD)
    return len(report.colliding) + len(report.out_of_bounds)


def _missing(room: str, view: JudgeView) -> list[str]:
    return missing_essentials(room, view.descs())


def _missing_one(name: str, descs: Sequence[str]) -> bool:
    aliases = {n: al for room in ESSENTIALS.values() for n, al in room[1].items()}.get(name, (name,))
    return not any(mentions(d, aliases) for d in descs)


_LARGE = re.compile(r"\b(bed|wardrobe|sofa|couch|desk|bookshelf|bookcase|tv stand|cabinet|dresser|sideboard)")


def large_furniture(layout: RoomLayout) -> list[int]:
    """Indices of the large pieces (bed, wardrobe, sofa, desk, shelves, cabinets…) by description."""
    return [i for i, d in enumerate(layout.descs) if _LARGE.search(d.lower())]


def large_against_wall(layout: RoomLayout) -> float:
    """Share of large furniture whose footprint comes within 0.3 m of a wall (1 when none)."""
    large = large_furniture(layout)
    if not large:
        return 1.0
    boundary = shapely.Polygon(layout.floor_xz).exterior
    corners = layout.corners()[large][:, :, [0, 2]]
    near = [float(shapely.distance(boundary, shapely.multipoints(c))) <= 0.3 for c in corners]
    return sum(near) / len(large)
