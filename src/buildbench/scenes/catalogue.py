"""The built-in asset catalogue: categories, asset sizes and attributes, materials.

Shipped as ``data/catalogue.json`` (written by ``tools/derive_scene_catalogue.py`` from the
ProcTHOR asset databases, see ``data/README.md``): real THOR asset ids with their bounding
boxes, our own generic variants (``bb_…``; several colours and materials per category so
two scenes can differ in one attribute), and THOR material names with an rgb colour, a
family (wood, fabric, stone…) and a colour word. Sizes are metres ``(sx, sy, sz)`` before
rotation; the front of an asset faces +z.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

Placement = Literal["floor", "wall", "small", "ceiling"]
Rgb = tuple[float, float, float]
_PLACEMENTS = ("floor", "wall", "small", "ceiling")


@dataclass(frozen=True)
class AssetInfo:
    """One asset. ``placement``: where it goes (``small`` = on a receptacle);
    ``hole_m``: ``(width, height)`` of the wall hole a door or window cuts, metres;
    ``source``: ``thor`` (a real THOR asset id with attributes), ``thor-size`` (a THOR id
    known only by its size and type) or ``buildbench`` (our generic variant)."""

    asset_id: str
    category: str
    size_m: tuple[float, float, float]
    placement: Placement
    color: str
    material: str
    shape: str
    description: str
    receptacle: bool
    hole_m: tuple[float, float] | None = None
    source: str = "buildbench"


@dataclass(frozen=True)
class CategoryInfo:
    name: str
    placement: Placement
    receptacle: bool
    shape: str
    synonyms: tuple[str, ...]


class Catalogue:
    """Assets by id and by category, in file order (deterministic)."""

    def __init__(self, assets: list[AssetInfo], categories: dict[str, CategoryInfo],
                 thor_types: dict[str, str] | None = None) -> None:
        self._assets = {a.asset_id: a for a in assets}
        self._lower = {a.asset_id.lower(): a for a in assets}
        self._by_category: dict[str, list[AssetInfo]] = {}
        for a in assets:
            self._by_category.setdefault(a.category, []).append(a)
        self.category_info = categories
        self.thor_types = dict(thor_types or {})
        self._phrases = sorted(((tuple(s.split()), name) for name, c in categories.items()
                                for s in c.synonyms), key=lambda p: -len(p[0]))
        # Phrases by length, longest first; a phrase keeps its first rank in _phrases.
        self._by_length: dict[int, dict[tuple[str, ...], tuple[int, str]]] = {}
        for rank, (phrase, name) in enumerate(self._phrases):
            self._by_length.setdefault(len(phrase), {}).setdefault(phrase, (rank, name))

    def __len__(self) -> int:
        return len(self._assets)

    def __contains__(self, asset_id: object) -> bool:
        return isinstance(asset_id, str) and asset_id in self._assets

    def get(self, asset_id: str) -> AssetInfo | None:
        """The asset with this id (exact, else case-insensitive), or None."""
        return self._assets.get(asset_id) or self._lower.get(asset_id.lower())

    def by_category(self, category: str) -> list[AssetInfo]:
        return list(self._by_category.get(category, []))

    def categories(self) -> list[str]:
        return sorted(self.category_info)

    def pick(self, category: str, *, color: str | None = None, material: str | None = None,
             shape: str | None = None) -> AssetInfo:
        """The first asset of ``category`` (generic variants first) matching the given
        attributes. Raises KeyError naming the category and what was asked for."""
        if category not in self.category_info:
            raise KeyError(f"unknown category {category!r} (known: {', '.join(self.categories())})")
        wanted = {"color": color, "material": material, "shape": shape}
        order = {"buildbench": 0, "thor": 1}
        pool = sorted(self.by_category(category), key=lambda a: order.get(a.source, 2))
        for asset in pool:
            if all(v is None or getattr(asset, k) == v for k, v in wanted.items()):
                return asset
        asked = ", ".join(f"{k}={v}" for k, v in wanted.items() if v is not None)
        have = sorted({f"{a.color}/{a.material}/{a.shape}" for a in pool})
        raise KeyError(f"no {category} asset with {asked} (have colour/material/shape: {', '.join(have)})")

    def category_of(self, text: str) -> str | None:
        """The category a THOR asset id, an object id (``sofa-0 (living room)``), a THOR
        object type (``CoffeeTable``) or a free-text description names, or None.

        Known asset ids answer directly. Otherwise the longest synonym phrase found in the
        text's head (the words before ``with``/``on``/``in``…) wins; among equally long
        ones the last, since an English noun phrase ends with its head noun."""
        if not text:
            return None
        asset = self.get(text)
        if asset is not None:
            return asset.category
        first = re.split(r"[|(]", text, maxsplit=1)[0].strip()
        if first in self.thor_types:
            return self.thor_types[first]
        object_name = re.match(r"([^|()]+?)-\d+$", first)  # Holodeck ids: "{category}-{k} (room)"
        words = _words(object_name.group(1) if object_name else first or text)
        head = _head(words)
        for part in (head, words):
            found = self._longest_phrase(part)
            if found is not None:
                return found
        return None

    def _longest_phrase(self, words: list[str]) -> str | None:
        """The longest phrase in ``words`` (each word as written or singular); among equally
        long ones the last in the text, then the first in ``_phrases``."""
        singular = [_singular(w) for w in words]
        for n, phrases in self._by_length.items():
            for i in range(len(words) - n, -1, -1):
                found = [phrases[p] for p in (tuple(words[i:i + n]), tuple(singular[i:i + n])) if p in phrases]
                if found:
                    return min(found)[1]
        return None


_STOP = {"with", "on", "in", "near", "next", "beside", "under", "above", "against", "by", "for",
         "and", "featuring", "that", "which", "at", "from", "having"}


def _words(text: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return [w for w in re.split(r"[^a-z]+", spaced.lower()) if w]


def _head(words: list[str]) -> list[str]:
    for i, w in enumerate(words):
        if w in _STOP and i > 0:
            return words[:i]
    return words


def _singular(word: str) -> str:
    if word.endswith("ves") and len(word) > 4:
        return word[:-3] + "f"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _asset_from(record: dict[str, Any]) -> AssetInfo:
    hole = record.get("hole_m")
    placement = record["placement"]
    if placement not in _PLACEMENTS:
        raise ValueError(f"catalogue asset {record['asset_id']!r}: bad placement {placement!r}")
    return AssetInfo(
        asset_id=record["asset_id"], category=record["category"],
        size_m=(float(record["size_m"][0]), float(record["size_m"][1]), float(record["size_m"][2])),
        placement=placement, color=record["color"], material=record["material"],
        shape=record["shape"], description=record["description"], receptacle=bool(record["receptacle"]),
        hole_m=(float(hole[0]), float(hole[1])) if hole else None, source=record.get("source", "buildbench"))


def catalogue_from_dict(data: dict[str, Any]) -> Catalogue:
    """A catalogue from the shipped JSON layout (``categories``, ``assets``, ``thor_types``)."""
    categories = {
        name: CategoryInfo(name, c["placement"], bool(c["receptacle"]), c["shape"], tuple(c["synonyms"]))
        for name, c in data["categories"].items()}
    assets = [_asset_from(r) for r in data["assets"]]
    thor_types = data.get("thor_types", {})
    for thor_type, rows in data.get("thor_sizes", {}).items():
        category = thor_types.get(thor_type)
        info = categories.get(category or "")
        if info is None:
            raise ValueError(f"catalogue thor_sizes: type {thor_type!r} has no category")
        for asset_id, sx, sy, sz, receptacle in rows:
            assets.append(AssetInfo(asset_id, info.name, (float(sx), float(sy), float(sz)), info.placement,
                                    "gray", "unknown", info.shape, f"{info.name} (THOR {thor_type})",
                                    bool(receptacle), source="thor-size"))
    unknown = sorted({a.category for a in assets} - set(categories))
    if unknown:
        raise ValueError(f"catalogue assets name unknown categories: {', '.join(unknown)}")
    return Catalogue(assets, categories, data.get("thor_types"))


@lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    text = resources.files("buildbench.scenes").joinpath("data/catalogue.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@lru_cache(maxsize=1)
def default_catalogue() -> Catalogue:
    """The shipped catalogue (cached: one instance per process)."""
    return catalogue_from_dict(_shipped())


def _materials() -> dict[str, tuple[Rgb, str, str]]:
    out: dict[str, tuple[Rgb, str, str]] = {}
    for name, (rgb, family, word) in _shipped()["materials"].items():
        out[name] = ((float(rgb[0]), float(rgb[1]), float(rgb[2])), family, word)
    return out


#: Material name (THOR's, e.g. ``DarkWoodFloors``) -> (rgb in [0, 1], family, colour word).
MATERIALS: dict[str, tuple[Rgb, str, str]] = _materials()

#: Colour word -> rgb in [0, 1] (the words AssetInfo.color and MATERIALS use).
COLOURS: dict[str, Rgb] = {k: (float(v[0]), float(v[1]), float(v[2])) for k, v in _shipped()["colours"].items()}


def category_of(text: str) -> str | None:
    """:meth:`Catalogue.category_of` on the default catalogue."""
    return default_catalogue().category_of(text)


def material_info(name: str) -> tuple[Rgb, str, str] | None:
    """MATERIALS entry for ``name`` (exact, else case-insensitive, else a trailing `` 1``-style
    copy number dropped), or None."""
    if name in MATERIALS:
        return MATERIALS[name]
    lower = {k.lower(): v for k, v in MATERIALS.items()}
    base = re.sub(r"\s+\d+$", "", name).lower()
    return lower.get(name.lower()) or lower.get(base)


def asset_rgb(asset: AssetInfo) -> Rgb:
    """Display colour of an asset: its colour word's rgb (mid gray when unknown)."""
    return COLOURS.get(asset.color, (0.5, 0.5, 0.5))
