"""Furniture vocabulary for the data pipeline: categories, size priors, placement kinds,
descriptions, the essentials of each room type, and the asset pool Algorithm 1 draws from.

Size priors are plausible ranges in metres (width x, height y, depth z before rotation),
written for this project from common furniture dimensions; they agree with the reward's
size table (spec §4.3) where the two overlap. Descriptions are built from our own word lists.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from buildbench.jsonio import parse_json

Range = tuple[float, float]


@dataclass(frozen=True)
class CategorySpec:
    """How one furniture category looks and where it goes.

    Attributes:
        size_m: ``(width, height, depth)`` ranges in metres.
        placement: ``wall`` (back to a wall, facing in), ``floor`` (free-standing),
            ``beside`` (next to an anchor object, same facing), ``surface`` (on top of an
            anchor), ``front`` (in front of an anchor, facing it), ``center`` (mid-room).
        anchor: The category that ``beside``/``surface``/``front`` placements relate to.
        materials: Words the description may use for what it is made of.
    """

    name: str
    size_m: tuple[Range, Range, Range]
    placement: str
    anchor: str = ""
    materials: tuple[str, ...] = ("oak wood", "walnut wood", "white lacquer", "grey fabric")


_WOOD = ("oak wood", "walnut wood", "white-painted wood", "black ash wood", "light birch wood")
_FABRIC = ("grey linen", "beige boucle", "navy velvet", "cognac leather", "charcoal wool")
_METAL = ("brushed steel", "matte black metal", "brass", "chrome")

CATEGORIES: dict[str, CategorySpec] = {
    c.name: c
    for c in (
        CategorySpec("bed", ((1.4, 2.0), (0.45, 1.1), (1.95, 2.2)), "wall", materials=_FABRIC + _WOOD),
        CategorySpec("nightstand", ((0.4, 0.55), (0.45, 0.65), (0.35, 0.5)), "beside", "bed", _WOOD),
        CategorySpec("wardrobe", ((1.0, 2.2), (1.9, 2.3), (0.55, 0.65)), "wall", materials=_WOOD),
        CategorySpec("dresser", ((0.9, 1.5), (0.75, 1.0), (0.4, 0.55)), "wall", materials=_WOOD),
        CategorySpec("desk", ((1.0, 1.6), (0.72, 0.78), (0.55, 0.8)), "wall", materials=_WOOD + _METAL),
        CategorySpec("chair", ((0.45, 0.6), (0.8, 1.0), (0.45, 0.6)), "front", "desk", _FABRIC + _WOOD),
        CategorySpec("office chair", ((0.55, 0.7), (0.95, 1.2), (0.55, 0.7)), "front", "desk", _FABRIC),
        CategorySpec("table lamp", ((0.25, 0.4), (0.4, 0.6), (0.25, 0.4)), "surface", "nightstand", _METAL),
        CategorySpec("floor lamp", ((0.3, 0.5), (1.4, 1.8), (0.3, 0.5)), "floor", materials=_METAL),
        CategorySpec("rug", ((1.6, 3.0), (0.01, 0.02), (1.2, 2.2)), "center", materials=("wool", "jute", "cotton")),
        CategorySpec("mirror", ((0.5, 0.9), (1.4, 1.9), (0.04, 0.08)), "wall", materials=_METAL + _WOOD),
        CategorySpec("sofa", ((1.8, 2.8), (0.75, 0.95), (0.85, 1.05)), "wall", materials=_FABRIC),
        CategorySpec("coffee table", ((0.9, 1.3), (0.38, 0.48), (0.5, 0.75)), "front", "sofa", _WOOD + _METAL),
        CategorySpec("tv stand", ((1.2, 2.0), (0.45, 0.6), (0.38, 0.5)), "wall", materials=_WOOD),
        CategorySpec("armchair", ((0.7, 0.95), (0.75, 0.95), (0.75, 0.9)), "floor", materials=_FABRIC),
        CategorySpec("bookshelf", ((0.8, 1.2), (1.8, 2.1), (0.3, 0.4)), "wall", materials=_WOOD),
        CategorySpec("side table", ((0.4, 0.55), (0.45, 0.6), (0.4, 0.55)), "beside", "sofa", _WOOD + _METAL),
        CategorySpec("plant", ((0.35, 0.6), (0.8, 1.6), (0.35, 0.6)), "floor", materials=("ceramic pot", "terracotta pot")),
        CategorySpec("dining table", ((1.4, 2.2), (0.74, 0.78), (0.85, 1.05)), "center", materials=_WOOD),
        CategorySpec("dining chair", ((0.42, 0.52), (0.8, 0.95), (0.45, 0.55)), "front", "dining table", _WOOD + _FABRIC),
        CategorySpec("sideboard", ((1.4, 2.0), (0.75, 0.9), (0.42, 0.5)), "wall", materials=_WOOD),
        CategorySpec("cabinet", ((0.8, 1.2), (0.9, 1.9), (0.4, 0.5)), "wall", materials=_WOOD),
        CategorySpec("filing cabinet", ((0.4, 0.5), (0.7, 1.3), (0.5, 0.62)), "wall", materials=_METAL),
        CategorySpec("conference table", ((1.8, 2.6), (0.74, 0.78), (0.9, 1.2)), "center", materials=_WOOD),
        CategorySpec("whiteboard", ((1.2, 1.8), (1.5, 1.9), (0.5, 0.6)), "wall", materials=_METAL),
        CategorySpec("treadmill", ((0.75, 0.9), (1.3, 1.5), (1.8, 2.0)), "wall", materials=_METAL),
        CategorySpec("exercise bike", ((0.55, 0.65), (1.1, 1.4), (1.0, 1.2)), "floor", materials=_METAL),
        CategorySpec("dumbbell rack", ((1.0, 1.4), (0.7, 0.9), (0.45, 0.6)), "wall", materials=_METAL),
        CategorySpec("weight bench", ((0.5, 0.65), (0.45, 0.55), (1.2, 1.5)), "center", materials=_METAL),
        CategorySpec("yoga mat", ((0.6, 0.7), (0.01, 0.02), (1.8, 1.9)), "center", materials=("rubber", "cork")),
        CategorySpec("pool table", ((1.3, 1.5), (0.78, 0.82), (2.3, 2.6)), "center", materials=_WOOD),
        CategorySpec("gaming desk", ((1.2, 1.6), (0.72, 0.78), (0.6, 0.8)), "wall", materials=_METAL),
        CategorySpec("gaming chair", ((0.6, 0.7), (1.2, 1.35), (0.6, 0.7)), "front", "gaming desk", _FABRIC),
        CategorySpec("speaker", ((0.25, 0.4), (0.9, 1.2), (0.3, 0.4)), "wall", materials=_WOOD),
        CategorySpec("bar counter", ((1.5, 2.2), (1.0, 1.1), (0.5, 0.65)), "wall", materials=_WOOD),
        CategorySpec("bar stool", ((0.38, 0.45), (0.7, 0.8), (0.38, 0.45)), "front", "bar counter", _METAL),
    )
}

#: Core and optional furniture per room type (core first, as §2.2's lists order them).
ROOM_TEMPLATES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "bedroom": (("bed", "nightstand", "wardrobe"),
                ("nightstand", "dresser", "desk", "chair", "table lamp", "rug", "mirror", "plant")),
    "living room": (("sofa", "coffee table", "tv stand"),
                    ("armchair", "bookshelf", "floor lamp", "rug", "side table", "plant", "armchair")),
    "dining room": (("dining table", "dining chair", "dining chair", "sideboard"),
                    ("dining chair", "dining chair", "cabinet", "rug", "plant", "floor lamp")),
    "study room": (("desk", "office chair", "bookshelf"),
                   ("filing cabinet", "armchair", "floor lamp", "rug", "bookshelf", "plant")),
    "office": (("desk", "office chair", "filing cabinet"),
               ("conference table", "whiteboard", "sofa", "plant", "bookshelf", "filing cabinet")),
    "gym": (("treadmill", "dumbbell rack", "weight bench"),
            ("exercise bike", "yoga mat", "mirror", "speaker", "plant")),
    "entertainment room": (("sofa", "tv stand", "pool table"),
                           ("gaming desk", "gaming chair", "speaker", "speaker", "bar counter", "bar stool", "armchair")),
}

#: Room area ranges in m² (§1.3's size guidance; gym and entertainment as living rooms).
ROOM_AREA_M2: dict[str, Range] = {
    "bedroom": (10.0, 20.0), "living room": (15.0, 35.0), "dining room": (10.0, 25.0),
    "study room": (10.0, 25.0), "office": (10.0, 25.0), "gym": (15.0, 35.0),
    "entertainment room": (15.0, 35.0),
}

#: Objects a room of each type must have (§4.3's essential lists), with the words that count.
ESSENTIALS: dict[str, dict[str, tuple[str, ...]]] = {
    "bedroom": {"bed": ("bed",), "wardrobe": ("wardrobe", "armoire", "closet"),
                "nightstand": ("nightstand", "bedside", "night stand")},
    "living room": {"sofa": ("sofa", "couch", "loveseat"), "coffee table": ("coffee table", "tea table"),
                    "tv stand": ("tv stand", "tv cabinet", "media console", "tvstand")},
    "study room": {"desk": ("desk",), "chair": ("chair",), "bookshelf": ("bookshelf", "bookcase", "shelf")},
    "office": {"desk": ("desk",), "chair": ("chair",), "filing cabinet": ("filing cabinet", "file cabinet")},
    "gym": {"treadmill": ("treadmill", "exercise bike", "elliptical", "rowing"),
            "weight equipment": ("dumbbell", "weight", "barbell", "kettlebell")},
    "dining room": {"dining table": ("dining table", "table"), "dining chair": ("chair",),
                    "sideboard": ("sideboard", "buffet", "credenza")},
    "entertainment room": {},
}

STYLES = ("modern", "minimalist", "Scandinavian", "industrial", "mid-century modern", "classic",
          "rustic", "contemporary", "Japandi", "art deco")

_ALIASES = {"bedside table": "nightstand", "couch": "sofa", "bookcase": "bookshelf", "tvstand": "tv stand",
            "tv cabinet": "tv stand"}
#: Further category words real descriptions use, recognised as they are.
_PLAIN = ("lamp", "pendant lamp", "ceiling lamp", "chandelier", "table", "stool", "ottoman", "shelf", "bench",
          "loveseat", "chaise", "stand", "chest", "vase", "sculpture", "painting", "picture", "tv", "television",
          "dressing table", "side cabinet", "shoe cabinet", "coat rack", "wine cabinet", "sofa bed", "bunk bed")


def normalize_room_type(room_type: str) -> str:
    """``MasterBedroom`` / ``living_room`` / ``Living Room`` → the keys of ROOM_TEMPLATES."""
    t = re.sub(r"[_\-]+", " ", room_type).lower()
    for key, words in (("bedroom", ("bed",)), ("living room", ("living", "lounge")), ("dining room", ("dining",)),
                       ("study room", ("study", "library")), ("office", ("office",)), ("gym", ("gym", "fitness")),
                       ("entertainment room", ("entertainment", "game", "billiard", "theater", "ktv"))):
        if any(w in t for w in words):
            return key
    return t.strip() or "bedroom"


_VOCAB = sorted({*CATEGORIES, *_ALIASES, *_PLAIN}, key=len, reverse=True)
_VOCAB_RE = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in _VOCAB) + r")s?\b")


@lru_cache(maxsize=65536)
def category_of(desc: str) -> str:
    """The vocabulary word a description mentions (longest match wins), or its last noun."""
    text = desc.lower()
    found = [m.group(0) for m in _VOCAB_RE.finditer(text)]
    if found:
        best = max(found, key=len)
        best = best if best in _VOCAB else best[:-1]
        return _ALIASES.get(best, best)
    words = re.findall(r"[a-z]+", text.split(" with ")[0])
    return words[-1] if words else "object"


def describe(category: str, rng: np.random.Generator, style: str | None = None) -> str:
    """A one-line description in our own words: style (drawn unless given), material,
    category, one detail."""
    spec = CATEGORIES[category]
    style = style or STYLES[int(rng.integers(len(STYLES)))]
    material = spec.materials[int(rng.integers(len(spec.materials)))]
    detail = ("clean straight lines", "softly rounded edges", "slim tapered legs", "a low profile",
              "subtle brass accents", "a matte finish")[int(rng.integers(6))]
    return f"{style.capitalize()} {category} in {material} with {detail}"


@dataclass(frozen=True)
class PoolAsset:
    """One asset Algorithm 1 can insert as a distractor or swap in by ``replace``."""

    desc: str
    jid: str
    category: str


@lru_cache(maxsize=1)
def default_pool() -> tuple[PoolAsset, ...]:
    """Three described variants of every category, ids ``gen-<category>-<k>``: the pool used
    when no 3D-FUTURE description file is given."""
    rng = np.random.default_rng([7, 0])
    out = []
    for name in CATEGORIES:
        for k in range(3):
            out.append(PoolAsset(describe(name, rng), f"gen-{name.replace(' ', '-')}-{k}", name))
    return tuple(out)


def pool_from_descs_file(path: Path) -> tuple[PoolAsset, ...]:
    """Assets from the released ``model_info_3dfuture_assets_simple_descs.json`` (desc →
    category). The file has no asset ids, so each gets ``3dfuture-desc-<index>``."""
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the description file ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: expected a non-empty JSON object of description → category")
    return tuple(PoolAsset(str(d), f"3dfuture-desc-{i:05d}", str(c)) for i, (d, c) in enumerate(sorted(data.items())))
