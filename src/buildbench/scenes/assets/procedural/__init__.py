"""Procedural furniture: part-based meshes, our own design, fitted to each object's box.

Each family module (beds, tables, seating, storage, …) maps *kinds* to builders; a kind is
resolved from the object's category (the catalogue's nouns and 3D-FUTURE's super-categories),
then the words of its description and asset id, and falls back to a generic block. Colours
come from :mod:`..colors`; the random proportions from a seed of what the object is (asset
id, category, description — not its id), so the same asset always gives byte-identical arrays.
"""

from __future__ import annotations

import hashlib

import numpy as np

from buildbench.scenes.assets.colors import palette
from buildbench.scenes.assets.mesh import ObjectMesh
from buildbench.scenes.assets.procedural import (
    appliances,
    beds,
    decor,
    fixtures,
    generic,
    lighting,
    seating,
    storage,
    tables,
)
from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec, words_of
from buildbench.scenes.model import SceneObject

__all__ = ["procedural_mesh", "kind_of", "KINDS"]

_FAMILIES = (beds, tables, seating, storage, lighting, decor, appliances, fixtures)
_BUILDERS: dict[str, Builder] = {**generic.BUILDERS}
for _family in _FAMILIES:
    _BUILDERS.update(_family.BUILDERS)

#: Category or description word/phrase -> kind (when it is not a kind itself).
_ALIASES: dict[str, str] = {
    "apple": "round thing", "egg": "round thing", "tomato": "round thing", "potato": "round thing",
    "ball": "round thing", "basket ball": "round thing", "soccer ball": "round thing", "pumpkin": "round thing",
    "wine bottle": "bottle", "soap bottle": "bottle", "spray bottle": "bottle", "cup": "vessel", "mug": "vessel",
    "pot": "vessel", "jar": "vessel", "pitcher": "vessel", "garbage can": "vessel", "trash can": "vessel",
    "trashcan": "vessel", "wastebasket": "vessel", "bin": "vessel", "candle": "vessel", "salt shaker": "vessel",
    "pepper shaker": "vessel", "kettle": "vessel", "planter": "vessel", "plantpot": "vessel",
    "book": "flat thing", "books": "flat thing", "cell phone": "flat thing", "credit card": "flat thing",
    "cd": "flat thing", "plate": "flat thing", "newspaper": "flat thing", "magazine": "flat thing",
    "tray": "flat thing", "remote control": "flat thing", "key chain": "flat thing",
    "aluminum foil": "flat thing", "butter knife": "flat thing", "knife": "flat thing", "fork": "flat thing",
    "spoon": "flat thing", "spatula": "flat thing", "ladle": "flat thing", "pen": "flat thing",
    "pencil": "flat thing", "cloth": "flat thing", "towel": "flat thing", "hand towel": "flat thing",
    "soap bar": "flat thing", "dish sponge": "flat thing", "scrub brush": "flat thing", "watch": "flat thing",
    "light switch": "flat thing", "switch": "flat thing", "tennis racket": "flat thing",
    "baseball bat": "flat thing", "pan": "flat thing", "chopsticks": "flat thing", "ruler": "flat thing",
    "bread": "round thing", "lettuce": "round thing", "garbage bag": "round thing", "dumbbell": "round thing",
    "kettlebell": "round thing", "balloon": "round thing", "stone": "round thing",
    "paper towel roll": "vessel", "toilet paper": "vessel", "laundry hamper": "vessel", "hamper": "vessel",
    "watering can": "vessel", "basket": "vessel", "plunger": "vessel", "candleholder": "vessel",
    "candle holder": "vessel", "diffuser": "vessel", "container": "vessel", "barrel": "vessel",
    "drum": "vessel", "tissue box": "object", "box": "object", "crate": "object", "suitcase": "object",
    "luggage": "object", "bag": "object", "backpack": "object", "handbag": "object", "boots": "object",
    "shoe": "object", "giftbox": "object", "gift": "object",
}
for _family in _FAMILIES:
    _ALIASES.update(_family.ALIASES)

#: Every kind a builder exists for.
KINDS: tuple[str, ...] = tuple(sorted(_BUILDERS))


#: Words that end a description's head noun phrase ("nightstand *with* two drawers").
_STOP = frozenset({"with", "on", "in", "near", "beside", "under", "above", "against", "by", "for", "and",
                   "featuring", "that", "which", "at", "from", "having", "including", "plus", "features",
                   "feature", "offers", "combines", "includes", "boasts", "has", "is", "comes", "provides",
                   "showcases", "displays", "sits", "holds", "adds", "exudes"})


def kind_of(obj: SceneObject) -> str:
    """The builder kind for ``obj`` (``object`` when nothing matches): its category, else the
    head of its description (the words before ``with``, ``and``…), else the whole
    description, else its asset id — the first of these whose shape the box can hold (a
    2 m deep "painting" is a bed whose description mentions its frame)."""
    desc = str(obj.attributes.get("description") or "")
    words = desc.replace(",", " , ").split()
    cut = next((i for i, w in enumerate(words) if i > 0 and (w.lower() in _STOP or w == ",")), len(words))
    head = _kind_in(" ".join(words[:cut]))
    found = _kind_in(obj.category)
    if found is not None and head is not None and head in _NARROWER.get(found, ()):
        found = head  # a broad category ("table", "lamp") gives way to the narrower kind named
    # in a whole sentence the thing described usually comes first ("sofa … with throw pillows")
    for kind in (found, head, *_kinds_in(desc), _kind_in(obj.asset_id)):
        if kind is not None and _fits(kind, obj.size):
            return kind
    return "object"


def _kinds_in(text: str) -> list[str]:
    """Every kind ``text`` names, in the order it names them (longer phrases first at a word)."""
    words = " ".join(text.lower().replace("_", " ").replace("-", " ").split()).split()
    out: list[str] = []
    for i in range(len(words)):
        for n in (3, 2, 1):
            found = _kind_in(" ".join(words[i:i + n])) if i + n <= len(words) else None
            if found is not None:
                if found not in out:
                    out.append(found)
                break
    return out


def _fits(kind: str, size: tuple[float, float, float]) -> bool:
    """Whether a box of ``size`` can be a ``kind`` at all: flat things are flat, small
    things small."""
    sx, sy, sz = size
    if kind in _FLAT_FRONT:
        return sz <= max(0.3, 0.25 * min(sx, sy))
    if kind in ("rug",):
        return sy <= 0.1
    if kind in _SMALL:
        return max(size) <= 1.2
    return True


_FLAT_FRONT = frozenset({"painting", "mirror", "window", "door", "blinds", "curtain"})
_SMALL = frozenset({"flat thing", "round thing", "vessel", "bottle", "bowl", "teddy bear", "clock", "laptop"})


_NARROWER: dict[str, frozenset[str]] = {
    "table": frozenset({"coffee table", "dining table", "side table", "desk", "dressing table"}),
    "lamp": frozenset({"floor lamp", "table lamp", "ceiling lamp", "wall lamp"}),
    "chair": frozenset({"armchair", "office chair"}), "bed": frozenset({"bunk bed"}),
    "sofa": frozenset({"chaise"}), "cabinet": frozenset({"wardrobe", "dresser", "tv stand", "kitchen counter"}),
}


def _kind_in(text: str, *, first: bool = False) -> str | None:
    norm = " ".join(text.lower().replace("_", " ").replace("-", " ").split())
    if not norm:
        return None
    for name in (norm, norm.replace(" ", "")):
        if name in _BUILDERS and name != "object":
            return name
        if name in _ALIASES:
            return _ALIASES[name]
    # the longest known phrase in the text, the last one among equals (English head nouns end
    # a phrase), or the first one when ``first``
    words = norm.split()
    best: tuple[int, int, str] | None = None
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            phrase = " ".join(words[i:i + n])
            for cand in (phrase, phrase[:-1] if phrase.endswith("s") and len(phrase) > 3 else phrase):
                kind = _ALIASES.get(cand) or (cand if cand in _BUILDERS and cand != "object" else None)
                if kind is not None:
                    rank = (n, -i if first else i)
                    if best is None or rank > best[:2]:
                        best = (*rank, kind)
                    break
    return best[2] if best else None


def procedural_mesh(obj: SceneObject) -> ObjectMesh:
    """The procedural mesh of ``obj`` in its local frame (source ``procedural:<category>``)."""
    kind = kind_of(obj)
    size = (float(obj.size[0]), float(obj.size[1]), float(obj.size[2]))
    # Seeded by what the object *is*, never by its id: copies of one asset look alike (as real
    # assets do), and the physics, which may rename objects, meshes the shape the picture shows.
    what = (obj.asset_id, obj.category, str(obj.attributes.get("description") or ""))
    digest = hashlib.sha256("\0".join(what).encode("utf-8")).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    words = words_of(obj.category, obj.attributes.get("description"), obj.attributes.get("shape"), obj.asset_id)
    spec = Spec(kind, size, palette(obj, accent=_ACCENTS.get(kind), typical=_TYPICAL.get(kind, "")), words, rng)
    parts = Parts(size)
    _BUILDERS[kind](parts, spec)
    return parts.build(f"procedural:{obj.category}")


#: The material a kind usually has, for objects whose words name none.
_TYPICAL: dict[str, str] = {
    **dict.fromkeys(("bed", "bunk bed", "table", "dining table", "coffee table", "side table", "desk",
                     "dressing table", "wardrobe", "cabinet", "chest", "dresser", "nightstand", "shelf",
                     "tv stand", "chair", "stool", "bench", "door", "piano", "cart", "kitchen counter",
                     "coat rack"), "wood"),
    **dict.fromkeys(("sofa", "armchair", "chaise", "ottoman", "pillow", "curtain", "rug", "dog bed",
                     "office chair", "teddy bear"), "fabric"),
    **dict.fromkeys(("fridge", "washing machine", "oven", "microwave", "small machine", "toaster",
                     "coffee machine", "floor lamp", "ceiling lamp", "wall lamp"), "metal"),
    **dict.fromkeys(("toilet", "sink", "bathtub", "vase", "table lamp"), "stone"),
}

#: A kind's own accent colour where its look depends on one (leaves, screens, glass).
_LINEN, _SHADE = (0.93, 0.93, 0.91), (0.95, 0.9, 0.78)
_ACCENTS: dict[str, tuple[float, float, float]] = {
    "bed": _LINEN, "bunk bed": _LINEN, "dog bed": (0.85, 0.78, 0.64), "floor lamp": _SHADE, "table lamp": _SHADE,
    "ceiling lamp": _SHADE, "lamp": _SHADE, "wall lamp": _SHADE, "painting": (0.35, 0.5, 0.65),
    "kitchen counter": (0.85, 0.84, 0.82), "window": (0.7, 0.8, 0.88),
}
