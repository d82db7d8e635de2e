"""Procedural furniture: part-based meshes, our own design, fitted to each object's box.

Each family module (beds, tables, seating, storage, …) maps *kinds* to builders; a kind is
resolved from the object's category (the catalogue's nouns and 3D-FUTURE's super-categories),
then the words of its description and asset id, and falls back to a generic block. Colours
come from :mod:`..colors`; the random proportions from a seed of the object's identity, so
the same object always gives byte-identical arrays.
"""

from __future__ import annotations

import hashlib

import numpy as np

from buildbench.scenes.assets.colors import palette
from buildbench.scenes.assets.mesh import ObjectMesh
from buildbench.scenes.assets.procedural import generic
from buildbench.scenes.assets.procedural.parts import Parts
from buildbench.scenes.assets.procedural.spec import Builder, Spec, words_of
from buildbench.scenes.model import SceneObject

__all__ = ["procedural_mesh", "kind_of", "KINDS"]

_BUILDERS: dict[str, Builder] = {**generic.BUILDERS}

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
}

#: Every kind a builder exists for.
KINDS: tuple[str, ...] = tuple(sorted(_BUILDERS))


def kind_of(obj: SceneObject) -> str:
    """The builder kind for ``obj`` (``object`` when nothing matches)."""
    for text in (obj.category, str(obj.attributes.get("description") or ""), obj.asset_id):
        found = _kind_in(text)
        if found is not None:
            return found
    return "object"


def _kind_in(text: str) -> str | None:
    norm = " ".join(text.lower().replace("_", " ").replace("-", " ").split())
    if not norm:
        return None
    for name in (norm, norm.replace(" ", "")):
        if name in _BUILDERS and name != "object":
            return name
        if name in _ALIASES:
            return _ALIASES[name]
    # the longest known phrase in the text, the last one among equals (English head nouns end a phrase)
    words = norm.split()
    for n in (3, 2, 1):
        for i in range(len(words) - n, -1, -1):
            phrase = " ".join(words[i:i + n])
            for cand in (phrase, phrase.rstrip("s") if len(phrase) > 3 else phrase):
                if cand in _ALIASES:
                    return _ALIASES[cand]
                if cand in _BUILDERS and cand != "object":
                    return cand
    return None


def procedural_mesh(obj: SceneObject) -> ObjectMesh:
    """The procedural mesh of ``obj`` in its local frame (source ``procedural:<category>``)."""
    kind = kind_of(obj)
    size = (float(obj.size[0]), float(obj.size[1]), float(obj.size[2]))
    digest = hashlib.sha256("\0".join((obj.id, obj.asset_id, obj.category)).encode("utf-8")).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    words = words_of(obj.category, obj.attributes.get("description"), obj.attributes.get("shape"), obj.asset_id)
    spec = Spec(kind, size, palette(obj, accent=_ACCENTS.get(kind)), words, rng)
    parts = Parts(size)
    _BUILDERS[kind](parts, spec)
    return parts.build(f"procedural:{obj.category}")


#: A kind's own accent colour where its look depends on one (leaves, screens, glass).
_ACCENTS: dict[str, tuple[float, float, float]] = {}
