"""Asset retrieval by description and aspect ratio (spec §2.3, "coarse-to-fine").

Candidates are the 16,561 real 3D-FUTURE asset descriptions with their categories (shipped
as package data, MIT, from the SceneReVis release). The released retrievers score text with
CLIP/SBERT/SigLIP embeddings; we have no encoder weights, so the semantic score is a TF-IDF
cosine over description words (×100, so it sits on the CLIP score's scale) plus a bonus when
the asset's category is named in the query. 3D-FUTURE metadata carries no sizes here, so an
asset's size is taken from :mod:`buildbench.scenes.catalogue`: among the catalogue assets of
its category, the one whose aspect ratios best match the request. The final score is the
Objaverse retriever's:

    score − 10 · mean_k |log r_k(target) − log r_k(candidate)|,  r = (x/y, z/y, x/z)

and the best is taken greedily. Asset ids are ``3dfuture-`` plus the first 12 hex digits of
the SHA-1 of the description (stable across runs and machines).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "assets_3dfuture.json"
#: Weight of the aspect-ratio term (the released ``size_weight``).
SIZE_WEIGHT = 10.0
#: Added to the semantic score of an asset whose category the query names.
CATEGORY_BONUS = 25.0
#: Semantic candidates kept before the aspect-ratio re-ranking (the released top-k).
TOP_K = 20

_WORD = re.compile(r"[a-z]+")
_STOP = frozenset("a an and the with of in on for to by its it is are at from as or featuring features "
                  "design style modern contemporary".split())
#: 3D-FUTURE category → catalogue category, where the names differ.
CATEGORY_ALIASES: dict[str, str] = {
    "tvstand": "tv stand", "bookcase": "bookshelf", "bookshelf": "bookshelf", "side_table": "side table",
    "end_table": "side table", "coffee_table": "coffee table", "diningtable": "dining table",
    "dressing_table": "dresser", "dressingtable": "dresser", "vanity": "dresser", "chest": "dresser",
    "loveseat": "sofa", "couch": "sofa", "bunkbed": "bed", "bunk bed": "bed", "loftbed": "bed",
    "barstool": "stool", "footstool": "ottoman", "pouf": "ottoman", "pouffe": "ottoman",
    "sideboard": "cabinet", "armoire": "wardrobe", "refrigerator": "fridge", "planter": "plant",
    "plantpot": "plant", "washing_machine": "washing machine", "artwork": "painting", "wallart": "painting",
    "wall_art": "painting", "picture": "painting", "chaise": "sofa", "recliner": "armchair",
}


@dataclass(frozen=True)
class Asset:
    """One retrievable asset: id, 3D-FUTURE category, description."""

    asset_id: str
    category: str
    description: str


@dataclass(frozen=True)
class Retrieved:
    """A retrieval result.

    Attributes:
        asset: The chosen asset.
        size_m: Its size (a catalogue asset of its category best matching the requested
            aspect ratios), or None when the catalogue has no such category.
        semantic: Semantic score (TF-IDF cosine × 100 plus the category bonus).
        score: Final score after the aspect-ratio penalty.
    """

    asset: Asset
    size_m: tuple[float, float, float] | None
    semantic: float
    score: float


def asset_id(description: str) -> str:
    return "3dfuture-" + hashlib.sha1(description.encode("utf-8")).hexdigest()[:12]


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower().replace("_", " ")) if w not in _STOP and len(w) > 1]


def log_ratio_distance(target: tuple[float, float, float], candidate: tuple[float, float, float]) -> float:
    """Mean |log r(target) − log r(candidate)| over the ratios x/y, z/y, x/z."""
    def ratios(s: tuple[float, float, float]) -> np.ndarray:
        x, y, z = (max(float(v), 1e-3) for v in s)
        return np.log([x / y, z / y, x / z])

    return float(np.abs(ratios(target) - ratios(candidate)).mean())


class AssetIndex:
    """The 3D-FUTURE descriptions as a TF-IDF index, with catalogue sizes per category."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.assets = [Asset(asset_id(d), c, d) for d, c in pairs]
        docs = [_words(f"{a.description} {a.category}") for a in self.assets]
        df = Counter(w for doc in docs for w in set(doc))
        n = len(docs)
        self.idf = {w: math.log((1 + n) / (1 + k)) + 1.0 for w, k in df.items()}
        self._postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for i, doc in enumerate(docs):
            tf = Counter(doc)
            weights = {w: k * self.idf[w] for w, k in tf.items()}
            norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
            for w, v in weights.items():
                self._postings[w].append((i, v / norm))
        self.categories = sorted({a.category for a in self.assets})
        self._by_id = {a.asset_id: a for a in self.assets}

    def get(self, asset_id: str) -> Asset | None:
        return self._by_id.get(asset_id)

    def semantic(self, query: str) -> dict[int, float]:
        """Semantic score per asset index for the assets sharing a word with ``query``."""
        tf = Counter(_words(query))
        weights = {w: k * self.idf[w] for w, k in tf.items() if w in self.idf}
        norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
        scores: dict[int, float] = defaultdict(float)
        for w, v in weights.items():
            for i, dv in self._postings[w]:
                scores[i] += 100.0 * v / norm * dv
        named = set(query_categories(query, self.categories))
        for i in list(scores):
            if self.assets[i].category in named:
                scores[i] += CATEGORY_BONUS
        return scores

    def rank(self, description: str, size_m: tuple[float, float, float], top: int = 1) -> list[Retrieved]:
        """The ``top`` best assets for ``description`` at ``size_m`` (best first; ties by
        catalogue order, so results never depend on dict iteration order)."""
        scores = self.semantic(description)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:max(TOP_K, top)]
        out = []
        for order, (i, sem) in enumerate(ranked):
            asset = self.assets[i]
            size = catalogue_size(asset.category, size_m)
            penalty = SIZE_WEIGHT * log_ratio_distance(size_m, size) if size is not None else 0.0
            out.append((-(sem - penalty), order, Retrieved(asset, size, sem, sem - penalty)))
        return [r for _, _, r in sorted(out, key=lambda t: (t[0], t[1]))[:top]]

    def retrieve(self, description: str, size_m: tuple[float, float, float]) -> Retrieved | None:
        """The best asset for ``description`` at ``size_m``; None when no word matches."""
        best = self.rank(description, size_m, 1)
        return best[0] if best else None


def query_categories(query: str, categories: list[str]) -> list[str]:
    """The 3D-FUTURE categories a query names (whole words; ``tv stand`` matches ``tvstand``)."""
    text = " " + " ".join(_WORD.findall(query.lower())) + " "
    squashed = text.replace(" ", "")
    out = []
    for cat in categories:
        words = " ".join(_WORD.findall(cat.replace("_", " ")))
        if words and (f" {words} " in text or (len(words) > 5 and " " not in words and words in squashed)):
            out.append(cat)
    return out


@lru_cache(maxsize=1)
def default_index() -> AssetIndex:
    """The shipped 3D-FUTURE index (built once per process, ~0.5 s)."""
    record = json.loads(DATA.read_text(encoding="utf-8"))
    return AssetIndex([(str(d), str(c)) for d, c in record["assets"]])


@lru_cache(maxsize=512)
def catalogue_category(category: str) -> str | None:
    """The :mod:`buildbench.scenes.catalogue` category of a 3D-FUTURE category, if any."""
    from buildbench.scenes.catalogue import default_catalogue

    cat = default_catalogue()
    name = CATEGORY_ALIASES.get(category, category.replace("_", " "))
    return name if name in set(cat.categories()) else cat.category_of(name)


@lru_cache(maxsize=512)
def _catalogue_sizes(category: str) -> tuple[tuple[float, float, float], ...]:
    from buildbench.scenes.catalogue import default_catalogue

    name = catalogue_category(category)
    if name is None:
        return ()
    return tuple(tuple(float(v) for v in a.size_m) for a in default_catalogue().by_category(name))  # type: ignore[misc]


def catalogue_size(category: str, target: tuple[float, float, float]) -> tuple[float, float, float] | None:
    """The catalogue size of ``category`` whose aspect ratios best match ``target``."""
    sizes = _catalogue_sizes(category)
    if not sizes:
        return None
    return min(sizes, key=lambda s: (log_ratio_distance(target, s), s))
