"""The user instruction of each chain, written from the finished room (in place of the GPT
instructions of §3.2; template-made and deterministic, in our own words).

Half the chains get a *brief* instruction (one sentence, at most 20 words) and half a
*detailed* one, as the released pipeline does. Brief styles and weights: A simple goal .3,
B basic requirements .4, C style + function .3. Detailed styles: highly specific .25,
category-focused .20, style and aesthetic .20, functional lifestyle .15, spatial and layout
.10, mixed .10. Every statement is true of the final room: the objects named are in it,
the style words come from its descriptions.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .assets import ROOM_AREA_M2, category_of, normalize_room_type
from .flat import Scene, room_area_m2, volume_m3

BRIEF_STYLES = (("simple goal", 0.3), ("basic requirements", 0.4), ("style and function", 0.3))
DETAILED_STYLES = (("highly specific", 0.25), ("category-focused", 0.20), ("style and aesthetic", 0.20),
                   ("functional lifestyle", 0.15), ("spatial and layout", 0.10), ("mixed", 0.10))

_STYLE_WORDS = ("modern", "contemporary", "minimalist", "scandinavian", "industrial", "mid-century",
                "classic", "traditional", "rustic", "japandi", "art deco", "vintage", "farmhouse", "luxury")
_COLOUR_WORDS = ("white", "black", "grey", "gray", "beige", "brown", "walnut", "oak", "navy", "green",
                 "blue", "gold", "brass", "cream", "pink", "wood")
_PURPOSE = {"bedroom": "rest and store clothes", "living room": "relax, watch TV and host friends",
            "dining room": "share meals", "study room": "read and work quietly", "office": "focused work and meetings",
            "gym": "work out at home", "entertainment room": "play games and watch films"}


@dataclass(frozen=True)
class Instruction:
    text: str
    kind: str  # "brief" or "detailed"
    style: str


def _pick(styles: tuple[tuple[str, float], ...], rng: np.random.Generator) -> str:
    w = np.array([p for _, p in styles])
    return styles[int(np.searchsorted(np.cumsum(w) / w.sum(), rng.random(), side="right"))][0]


def _words(scene: Scene, vocab: tuple[str, ...]) -> list[str]:
    text = " ".join(o["desc"].lower() for o in scene["objects"])
    counts = Counter({w: len(re.findall(rf"\b{re.escape(w)}\b", text)) for w in vocab})
    return [w for w, c in counts.most_common() if c > 0]


def _inventory(scene: Scene) -> list[tuple[str, int]]:
    """Categories by total volume, biggest first, with counts."""
    vol: dict[str, float] = {}
    count: Counter[str] = Counter()
    for o in scene["objects"]:
        c = category_of(o["desc"])
        vol[c] = vol.get(c, 0.0) + volume_m3(o)
        count[c] += 1
    return [(c, count[c]) for c in sorted(vol, key=lambda k: -vol[k])]


def _listing(items: list[tuple[str, int]]) -> str:
    words = [f"{'two' if n == 2 else str(n) if n > 2 else 'a'} {c}{'s' if n > 1 else ''}" for c, n in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def make_instruction(scene: Scene, rng: np.random.Generator) -> Instruction:
    room = normalize_room_type(scene.get("room_type", ""))
    inv = _inventory(scene) or [("bed" if room == "bedroom" else "table", 1)]
    style = (_words(scene, _STYLE_WORDS) or ["modern"])[0]
    colours = _words(scene, _COLOUR_WORDS)[:2]
    area = room_area_m2(scene)
    if rng.random() < 0.5:
        kind = _pick(BRIEF_STYLES, rng)
        if kind == "simple goal":
            text = f"Design a comfortable {style} {room} for everyday use."
        elif kind == "basic requirements":
            text = f"Create a {room} with {_listing(inv[:3])}."
        else:
            text = f"Make a {style} {room} where I can {_PURPOSE.get(room, 'live comfortably')}."
        return Instruction(text, "brief", kind)
    kind = _pick(DETAILED_STYLES, rng)
    palette = f" in {' and '.join(colours)} tones" if colours else ""
    lo, hi = ROOM_AREA_M2.get(room, (10.0, 40.0))
    size_word = "compact" if area < (lo + hi) / 2 - 3 else "generous" if area > (lo + hi) / 2 + 3 else "medium-sized"
    if kind == "highly specific":
        text = (f"Furnish this {size_word} {room} of about {area:.0f} m² with {_listing(inv[:6])}. "
                f"Keep every piece inside the walls, leave clear walkways, and give it a {style} look{palette}.")
    elif kind == "category-focused":
        main = inv[0][0]
        text = (f"Build the {room} around a {main}; add {_listing(inv[1:5]) if len(inv) > 1 else 'what it needs'} "
                f"so that each piece has a clear role and nothing overlaps.")
    elif kind == "style and aesthetic":
        text = (f"I want a {style} {room}{palette}: calm, uncluttered, with {_listing(inv[:3])} "
                "chosen to match one another.")
    elif kind == "functional lifestyle":
        text = (f"I use this {room} to {_PURPOSE.get(room, 'live')}. Arrange {_listing(inv[:4])} "
                "so daily routines flow naturally and storage is easy to reach.")
    elif kind == "spatial and layout":
        text = (f"Lay out a {size_word} {room} (about {area:.0f} m²): large pieces against the walls, "
                f"{_listing(inv[:4])}, and an open path from the door.")
    else:
        text = (f"A {style} {room}{palette} for someone who wants to {_PURPOSE.get(room, 'relax')}: "
                f"{_listing(inv[:5])}, balanced across the floor with room to move.")
    return Instruction(text, "detailed", kind)
