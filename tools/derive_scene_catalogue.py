"""Derive the shipped indoor-scene catalogue from the ProcTHOR asset databases.

Dev tool, run by hand when the catalogue changes; the product only reads its output,
``src/buildbench/scenes/data/catalogue.json``, never the shared data:

    .venv/bin/python tools/derive_scene_catalogue.py [--shared ../shared]

Inputs (allenai/procthor ``procthor/databases/``, Apache-2.0, in ``shared/data/holodeck``):
``asset-database.json`` (asset ids, object types, bounding boxes in metres, materials),
``material-database.json`` (material names by family) and ``wall-holes.json`` (door and
window hole sizes). Output: categories with synonyms and placement, a capped subset of THOR
assets per category with their real sizes, our own generic variants (several colours and
materials per category, for scenes that differ only in an attribute), and the material
lexicon (name -> rgb, family, colour word). Deterministic: same inputs, same bytes.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "src" / "buildbench" / "scenes" / "data" / "catalogue.json"
THOR_PER_TYPE = 14

#: Category -> (placement, receptacle, default shape, synonyms). Placement as AssetInfo's.
CATEGORIES: dict[str, tuple[str, bool, str, list[str]]] = {
    "bed": ("floor", True, "rectangular", ["bed", "double bed", "single bed", "bunk bed", "king bed"]),
    "sofa": ("floor", True, "rectangular", ["sofa", "couch", "loveseat", "sectional"]),
    "armchair": ("floor", True, "rectangular", ["armchair", "arm chair", "lounge chair", "recliner"]),
    "chair": ("floor", False, "rectangular", ["chair", "dining chair", "side chair"]),
    "office chair": ("floor", False, "round", ["office chair", "desk chair", "swivel chair"]),
    "stool": ("floor", False, "round", ["stool", "bar stool"]),
    "ottoman": ("floor", True, "rectangular", ["ottoman", "footstool", "pouf"]),
    "table": ("floor", True, "rectangular", ["table"]),
    "dining table": ("floor", True, "rectangular", ["dining table", "kitchen table"]),
    "coffee table": ("floor", True, "rectangular", ["coffee table", "tea table"]),
    "side table": ("floor", True, "rectangular", ["side table", "end table", "console table"]),
    "nightstand": ("floor", True, "rectangular", ["nightstand", "night stand", "bedside table",
                                                  "bedside cabinet", "night table"]),
    "desk": ("floor", True, "rectangular", ["desk", "writing desk", "computer desk"]),
    "shelf": ("floor", True, "rectangular", ["shelf", "shelving unit", "shelves", "shelving"]),
    "bookshelf": ("floor", True, "rectangular", ["bookshelf", "bookcase", "book shelf"]),
    "dresser": ("floor", True, "rectangular", ["dresser", "chest of drawers", "drawer chest"]),
    "wardrobe": ("floor", False, "rectangular", ["wardrobe", "closet", "armoire"]),
    "cabinet": ("floor", True, "rectangular", ["cabinet", "cupboard", "sideboard", "storage cabinet"]),
    "tv stand": ("floor", True, "rectangular", ["tv stand", "television stand", "media console",
                                                "tv cabinet", "entertainment center"]),
    "tv": ("small", False, "rectangular", ["tv", "television", "flat screen"]),
    "floor lamp": ("floor", False, "round", ["floor lamp", "standing lamp"]),
    "table lamp": ("small", False, "round", ["table lamp", "desk lamp", "bedside lamp", "lamp"]),
    "plant": ("floor", False, "round", ["plant", "houseplant", "potted plant", "house plant"]),
    "rug": ("floor", False, "rectangular", ["rug", "carpet", "mat"]),
    "fridge": ("floor", True, "rectangular", ["fridge", "refrigerator"]),
    "oven": ("floor", True, "rectangular", ["oven", "stove", "cooker", "range"]),
    "washing machine": ("floor", True, "rectangular", ["washing machine", "washer", "clothes dryer",
                                                       "dryer"]),
    "microwave": ("small", True, "rectangular", ["microwave"]),
    "kitchen counter": ("floor", True, "rectangular", ["kitchen counter", "counter", "countertop",
                                                       "counter top", "kitchen island"]),
    "toilet": ("floor", False, "rectangular", ["toilet"]),
    "bathtub": ("floor", False, "rectangular", ["bathtub", "bath tub", "tub"]),
    "sink": ("floor", True, "rectangular", ["sink", "basin", "washbasin", "vanity"]),
    "garbage can": ("floor", False, "round", ["garbage can", "trash can", "bin", "waste basket"]),
    "book": ("small", False, "rectangular", ["book", "books", "novel"]),
    "vase": ("small", False, "round", ["vase"]),
    "laptop": ("small", False, "rectangular", ["laptop", "notebook computer"]),
    "pillow": ("small", False, "rectangular", ["pillow", "cushion"]),
    "cup": ("small", False, "round", ["cup", "glass", "tumbler"]),
    "mug": ("small", False, "round", ["mug"]),
    "bowl": ("small", True, "round", ["bowl"]),
    "plate": ("small", True, "round", ["plate", "dish"]),
    "alarm clock": ("small", False, "rectangular", ["alarm clock", "clock"]),
    "candle": ("small", False, "round", ["candle"]),
    "statue": ("small", False, "irregular", ["statue", "sculpture", "figurine"]),
    "box": ("small", True, "rectangular", ["box"]),
    "painting": ("wall", False, "rectangular", ["painting", "picture", "artwork", "poster",
                                                "wall art", "frame"]),
    "mirror": ("wall", False, "rectangular", ["mirror"]),
    "door": ("wall", False, "rectangular", ["door", "doorway", "doorframe"]),
    "window": ("wall", False, "rectangular", ["window"]),
    "ceiling lamp": ("ceiling", False, "round", ["ceiling lamp", "pendant lamp", "chandelier",
                                                 "ceiling light"]),
}

#: THOR objectType -> our category (types not listed are left out of the catalogue).
THOR_TYPES = {
    "ArmChair": "armchair", "Bed": "bed", "Book": "book", "Bowl": "bowl", "Box": "box",
    "Candle": "candle", "Chair": "chair", "ClothesDryer": "washing machine",
    "CoffeeTable": "coffee table", "CounterTop": "kitchen counter", "Cup": "cup", "Desk": "desk",
    "DeskLamp": "table lamp", "DiningTable": "dining table", "Doorway": "door", "Dresser": "dresser",
    "FloorLamp": "floor lamp", "Footstool": "ottoman", "Fridge": "fridge", "GarbageCan": "garbage can",
    "HousePlant": "plant", "Laptop": "laptop", "Microwave": "microwave", "Mug": "mug",
    "Ottoman": "ottoman", "Painting": "painting", "Pillow": "pillow", "Plate": "plate",
    "ShelvingUnit": "shelf", "SideTable": "side table", "Sink": "sink", "Sofa": "sofa",
    "Statue": "statue", "Stool": "stool", "TVStand": "tv stand", "Television": "tv", "Toilet": "toilet",
    "Vase": "vase", "WashingMachine": "washing machine", "Window": "window", "AlarmClock": "alarm clock",
    "Doorframe": "door",
}

#: Colour word -> rgb in [0, 1]. Words found in material or asset names pick the colour.
COLOURS: dict[str, tuple[float, float, float]] = {
    "white": (0.93, 0.93, 0.91), "black": (0.1, 0.1, 0.1), "gray": (0.5, 0.5, 0.52),
    "brown": (0.45, 0.3, 0.18), "beige": (0.85, 0.78, 0.64), "cream": (0.95, 0.9, 0.78),
    "tan": (0.78, 0.65, 0.47), "red": (0.75, 0.15, 0.15), "orange": (0.9, 0.5, 0.15),
    "yellow": (0.92, 0.82, 0.25), "green": (0.25, 0.55, 0.3), "blue": (0.2, 0.35, 0.7),
    "purple": (0.5, 0.3, 0.6), "pink": (0.92, 0.6, 0.7), "silver": (0.75, 0.75, 0.78),
    "gold": (0.83, 0.68, 0.22), "clear": (0.8, 0.9, 0.95),
}
#: Name fragments (lower case) that imply a colour word.
COLOUR_ALIASES = {
    "grey": "gray", "eggshell": "cream", "creame": "cream", "ivory": "cream", "sand": "beige",
    "robinegg": "blue", "aqua": "blue", "navy": "blue", "dark": "brown", "pale": "beige",
    "rich": "brown", "marble": "white", "granite": "gray", "concrete": "gray", "steel": "silver",
    "aluminum": "silver", "brass": "gold", "copper": "orange", "walnut": "brown", "oak": "tan",
}
#: Material family (as in material-database.json) -> our family word and default colour word.
FAMILIES = {
    "Wood": ("wood", "brown"), "Fabric": ("fabric", "gray"), "Metal": ("metal", "silver"),
    "Glass": ("glass", "clear"), "Plastic": ("plastic", "white"), "Wall": ("stone", "white"),
    "Paper": ("paper", "white"), "Wax": ("wax", "cream"), "Grunge": ("stone", "gray"),
}
WALL_NAME_FAMILIES = {"drywall": "paint", "tile": "ceramic", "marble": "stone", "granite": "stone",
                      "brick": "brick", "concrete": "concrete", "porcelain": "ceramic",
                      "wallpaper": "paper", "plaster": "paint", "countertop": "stone"}
FABRIC_WORDS = ("fabric", "fabirc", "cloth", "carpet", "rug", "leather", "upholstery", "pillow")

#: Our own generic variants: category -> [(variant, size_m, colour, material, shape)].
GENERIC: dict[str, list[tuple[str, tuple[float, float, float], str, str, str]]] = {
    "bed": [("queen", (1.6, 0.55, 2.1), "gray", "fabric", "rectangular"),
            ("single", (1.0, 0.5, 2.0), "white", "wood", "rectangular"),
            ("king", (1.9, 0.6, 2.15), "brown", "wood", "rectangular"),
            ("blue", (1.6, 0.55, 2.1), "blue", "fabric", "rectangular")],
    "sofa": [("red", (2.0, 0.85, 0.9), "red", "fabric", "rectangular"),
             ("blue", (2.0, 0.85, 0.9), "blue", "fabric", "rectangular"),
             ("gray", (2.2, 0.85, 0.95), "gray", "fabric", "rectangular"),
             ("leather", (1.9, 0.8, 0.9), "brown", "leather", "rectangular"),
             ("lshape", (2.6, 0.85, 1.7), "beige", "fabric", "l-shaped")],
    "armchair": [("green", (0.85, 0.9, 0.85), "green", "fabric", "rectangular"),
                 ("leather", (0.85, 0.9, 0.85), "black", "leather", "rectangular"),
                 ("yellow", (0.8, 0.85, 0.8), "yellow", "fabric", "round")],
    "chair": [("wood", (0.45, 0.9, 0.5), "brown", "wood", "rectangular"),
              ("white", (0.45, 0.85, 0.5), "white", "plastic", "rectangular"),
              ("metal", (0.45, 0.85, 0.5), "black", "metal", "rectangular")],
    "office chair": [("black", (0.65, 1.1, 0.65), "black", "fabric", "round"),
                     ("gray", (0.65, 1.1, 0.65), "gray", "mesh", "round")],
    "stool": [("wood", (0.35, 0.65, 0.35), "brown", "wood", "round"),
              ("metal", (0.4, 0.75, 0.4), "silver", "metal", "round")],
    "ottoman": [("beige", (0.6, 0.42, 0.6), "beige", "fabric", "round"),
                ("gray", (0.8, 0.42, 0.5), "gray", "fabric", "rectangular")],
    "table": [("wood", (1.4, 0.75, 0.8), "brown", "wood", "rectangular"),
              ("white", (1.2, 0.75, 0.7), "white", "wood", "rectangular")],
    "dining table": [("oak", (1.6, 0.75, 0.9), "tan", "wood", "rectangular"),
                     ("round", (1.1, 0.75, 1.1), "white", "wood", "round"),
                     ("glass", (1.5, 0.75, 0.85), "clear", "glass", "rectangular")],
    "coffee table": [("wood", (1.1, 0.45, 0.6), "brown", "wood", "rectangular"),
                     ("round", (0.8, 0.42, 0.8), "white", "marble", "round"),
                     ("glass", (1.2, 0.42, 0.6), "clear", "glass", "rectangular")],
    "side table": [("wood", (0.5, 0.55, 0.5), "brown", "wood", "rectangular"),
                   ("round", (0.45, 0.55, 0.45), "black", "metal", "round")],
    "nightstand": [("white", (0.5, 0.55, 0.4), "white", "wood", "rectangular"),
                   ("walnut", (0.5, 0.55, 0.4), "brown", "wood", "rectangular"),
                   ("gray", (0.45, 0.5, 0.4), "gray", "wood", "rectangular")],
    "desk": [("oak", (1.2, 0.75, 0.6), "tan", "wood", "rectangular"),
             ("white", (1.4, 0.75, 0.7), "white", "wood", "rectangular"),
             ("black", (1.2, 0.75, 0.6), "black", "metal", "rectangular")],
    "shelf": [("white", (0.8, 1.5, 0.35), "white", "wood", "rectangular"),
              ("metal", (0.9, 1.8, 0.4), "black", "metal", "rectangular")],
    "bookshelf": [("oak", (0.9, 2.0, 0.35), "tan", "wood", "rectangular"),
                  ("white", (0.8, 1.9, 0.3), "white", "wood", "rectangular"),
                  ("dark", (1.0, 2.0, 0.35), "brown", "wood", "rectangular")],
    "dresser": [("white", (1.2, 0.8, 0.5), "white", "wood", "rectangular"),
                ("walnut", (1.4, 0.85, 0.5), "brown", "wood", "rectangular")],
    "wardrobe": [("white", (1.2, 2.1, 0.6), "white", "wood", "rectangular"),
                 ("oak", (1.5, 2.2, 0.6), "tan", "wood", "rectangular"),
                 ("black", (1.0, 2.0, 0.6), "black", "wood", "rectangular")],
    "cabinet": [("white", (0.8, 0.9, 0.45), "white", "wood", "rectangular"),
                ("gray", (1.0, 1.0, 0.45), "gray", "metal", "rectangular"),
                ("brown", (1.6, 0.8, 0.45), "brown", "wood", "rectangular")],
    "tv stand": [("black", (1.6, 0.5, 0.45), "black", "wood", "rectangular"),
                 ("oak", (1.8, 0.5, 0.45), "tan", "wood", "rectangular")],
    "tv": [("55in", (1.23, 0.72, 0.08), "black", "plastic", "rectangular"),
           ("40in", (0.9, 0.53, 0.08), "black", "plastic", "rectangular"),
           ("silver", (1.1, 0.65, 0.08), "silver", "metal", "rectangular")],
    "floor lamp": [("black", (0.4, 1.6, 0.4), "black", "metal", "round"),
                   ("gold", (0.4, 1.7, 0.4), "gold", "metal", "round"),
                   ("white", (0.45, 1.55, 0.45), "white", "fabric", "round")],
    "table lamp": [("white", (0.3, 0.5, 0.3), "white", "ceramic", "round"),
                   ("black", (0.25, 0.45, 0.25), "black", "metal", "round"),
                   ("blue", (0.3, 0.5, 0.3), "blue", "ceramic", "round")],
    "plant": [("ficus", (0.5, 1.2, 0.5), "green", "ceramic", "round"),
              ("small", (0.3, 0.45, 0.3), "green", "terracotta", "round"),
              ("palm", (0.7, 1.6, 0.7), "green", "ceramic", "round")],
    "rug": [("red", (2.0, 0.01, 1.4), "red", "wool", "rectangular"),
            ("blue", (2.0, 0.01, 1.4), "blue", "wool", "rectangular"),
            ("round", (1.6, 0.01, 1.6), "beige", "wool", "round"),
            ("gray", (3.0, 0.01, 2.0), "gray", "fabric", "rectangular")],
    "fridge": [("steel", (0.75, 1.8, 0.7), "silver", "metal", "rectangular"),
               ("white", (0.6, 1.7, 0.65), "white", "metal", "rectangular"),
               ("black", (0.9, 1.8, 0.7), "black", "metal", "rectangular")],
    "oven": [("steel", (0.6, 0.9, 0.6), "silver", "metal", "rectangular"),
             ("black", (0.6, 0.9, 0.6), "black", "metal", "rectangular")],
    "washing machine": [("white", (0.6, 0.85, 0.6), "white", "metal", "rectangular"),
                        ("gray", (0.6, 0.85, 0.6), "gray", "metal", "rectangular")],
    "microwave": [("steel", (0.5, 0.3, 0.4), "silver", "metal", "rectangular"),
                  ("black", (0.48, 0.28, 0.38), "black", "plastic", "rectangular")],
    "kitchen counter": [("marble", (2.0, 0.9, 0.6), "white", "marble", "rectangular"),
                        ("granite", (2.4, 0.9, 0.65), "gray", "granite", "rectangular"),
                        ("wood", (1.6, 0.9, 0.6), "tan", "wood", "rectangular")],
    "toilet": [("white", (0.4, 0.8, 0.7), "white", "ceramic", "rectangular"),
               ("black", (0.4, 0.8, 0.7), "black", "ceramic", "rectangular")],
    "bathtub": [("white", (1.7, 0.6, 0.75), "white", "ceramic", "rectangular"),
                ("freestanding", (1.6, 0.6, 0.8), "white", "acrylic", "round"),
                ("black", (1.7, 0.6, 0.75), "black", "stone", "rectangular")],
    "sink": [("white", (0.6, 0.85, 0.5), "white", "ceramic", "rectangular"),
             ("steel", (0.8, 0.9, 0.55), "silver", "metal", "rectangular")],
    "garbage can": [("steel", (0.3, 0.45, 0.3), "silver", "metal", "round"),
                    ("white", (0.3, 0.4, 0.3), "white", "plastic", "round")],
    "book": [("red", (0.15, 0.22, 0.04), "red", "paper", "rectangular"),
             ("blue", (0.15, 0.22, 0.04), "blue", "paper", "rectangular"),
             ("green", (0.17, 0.24, 0.03), "green", "paper", "rectangular")],
    "vase": [("white", (0.15, 0.3, 0.15), "white", "ceramic", "round"),
             ("blue", (0.15, 0.3, 0.15), "blue", "glass", "round"),
             ("gold", (0.12, 0.25, 0.12), "gold", "metal", "round")],
    "laptop": [("silver", (0.33, 0.02, 0.23), "silver", "metal", "rectangular"),
               ("black", (0.36, 0.025, 0.25), "black", "plastic", "rectangular")],
    "pillow": [("white", (0.5, 0.15, 0.35), "white", "fabric", "rectangular"),
               ("yellow", (0.45, 0.15, 0.45), "yellow", "fabric", "rectangular"),
               ("red", (0.45, 0.15, 0.45), "red", "fabric", "rectangular")],
    "cup": [("white", (0.08, 0.1, 0.08), "white", "ceramic", "round"),
            ("glass", (0.07, 0.12, 0.07), "clear", "glass", "round")],
    "mug": [("red", (0.12, 0.1, 0.09), "red", "ceramic", "round"),
            ("white", (0.12, 0.1, 0.09), "white", "ceramic", "round")],
    "bowl": [("white", (0.18, 0.08, 0.18), "white", "ceramic", "round"),
             ("wood", (0.2, 0.09, 0.2), "brown", "wood", "round")],
    "plate": [("white", (0.25, 0.02, 0.25), "white", "ceramic", "round")],
    "alarm clock": [("black", (0.15, 0.1, 0.08), "black", "plastic", "rectangular"),
                    ("red", (0.12, 0.12, 0.08), "red", "metal", "round")],
    "candle": [("white", (0.07, 0.15, 0.07), "white", "wax", "round")],
    "statue": [("bronze", (0.15, 0.35, 0.15), "gold", "metal", "irregular"),
               ("white", (0.15, 0.3, 0.15), "white", "stone", "irregular")],
    "box": [("cardboard", (0.4, 0.3, 0.3), "tan", "cardboard", "rectangular")],
    "painting": [("landscape", (1.0, 0.7, 0.04), "green", "canvas", "rectangular"),
                 ("abstract", (0.8, 0.8, 0.04), "red", "canvas", "square"),
                 ("portrait", (0.6, 0.9, 0.04), "brown", "canvas", "rectangular")],
    "mirror": [("round", (0.7, 0.7, 0.03), "silver", "glass", "round"),
               ("tall", (0.6, 1.6, 0.03), "gold", "glass", "rectangular")],
    "ceiling lamp": [("white", (0.5, 0.3, 0.5), "white", "glass", "round"),
                     ("black", (0.4, 0.4, 0.4), "black", "metal", "round")],
}


def words_of(name: str) -> list[str]:
    """Lower-case words of a CamelCase/snake_case asset or material name, digits dropped."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^a-zA-Z]+", spaced.lower()) if w]


def colour_word(names: list[str]) -> str | None:
    for name in names:
        joined = "".join(words_of(name))
        for word in words_of(name) + [joined]:
            if word in COLOURS:
                return word
            for alias, colour in COLOUR_ALIASES.items():
                if alias in word:
                    return colour
    return None


def material_family(family: str, name: str) -> str:
    lower = name.lower()
    if any(w in lower for w in ("leather",)):
        return "leather"
    if family in ("Wall", "Grunge") or family not in FAMILIES:
        for fragment, fam in WALL_NAME_FAMILIES.items():
            if fragment in lower:
                return fam
        if any(w in lower for w in FABRIC_WORDS):
            return "fabric"
        if "wood" in lower:
            return "wood"
        if "metal" in lower or "steel" in lower:
            return "metal"
        if "glass" in lower:
            return "glass"
        if "ceramic" in lower:
            return "ceramic"
        # object-specific families (AlarmClock, HousePlant...) name no substance: say plastic
        return FAMILIES[family][0] if family in FAMILIES else "plastic"
    return FAMILIES[family][0]


def derive_materials(material_db: dict[str, list[str]]) -> dict[str, list[Any]]:
    """Every material name of the architectural and generic families -> (rgb, family, word)."""
    out: dict[str, list[Any]] = {}
    for family in ("Wall", "Wood", "Fabric", "Metal", "Glass", "Plastic", "Paper", "Grunge", "Wax"):
        for name in sorted(material_db.get(family, [])):
            fam = material_family(family, name)
            word = colour_word([name]) or FAMILIES.get(family, ("", "white"))[1]
            rgb = [round(c, 3) for c in COLOURS[word]]
            out[name] = [rgb, fam, word]
    for word, colour in COLOURS.items():  # plain paints, for scenes made in code
        out.setdefault(f"{word.capitalize()}Paint", [[round(c, 3) for c in colour], "paint", word])
    return dict(sorted(out.items()))


def thor_asset(record: dict[str, Any], category: str, holes: dict[str, Any]) -> dict[str, Any]:
    bb = record["boundingBox"]
    mats = [m for m in record.get("materials", []) if isinstance(m, list) and len(m) == 2]
    main = mats[0] if mats else ["", ""]
    material = material_family(main[0], main[1]) if mats else "plastic"
    colour = colour_word([m[1] for m in mats] + [record["assetId"]]) or (
        FAMILIES.get(main[0], ("", "gray"))[1] if mats else "gray")
    placement, receptacle, shape, _ = CATEGORIES[category]
    entry: dict[str, Any] = {
        "asset_id": record["assetId"], "category": category,
        "size_m": [round(bb["x"], 4), round(bb["y"], 4), round(bb["z"], 4)],
        "placement": placement, "color": colour, "material": material, "shape": shape,
        "description": f"{colour} {material} {category} (THOR {record['objectType']})",
        "receptacle": "Receptacle" in (record.get("secondaryProperties") or []) or receptacle,
        "source": "thor",
    }
    hole = holes.get(record["assetId"])
    if hole:
        entry["hole_m"] = [round(hole["max"]["x"] - hole["min"]["x"], 4),
                           round(hole["max"]["y"] - hole["min"]["y"], 4)]
    return entry


def hole_only_asset(asset_id: str, hole: dict[str, Any]) -> dict[str, Any]:
    """Window/door ids known only from wall-holes.json (Holodeck's window types)."""
    category = "door" if asset_id.startswith("Doorway") else "window"
    w, h = hole["max"]["x"] - hole["min"]["x"], hole["max"]["y"] - hole["min"]["y"]
    d = hole["max"]["z"] - hole["min"]["z"]
    return {"asset_id": asset_id, "category": category,
            "size_m": [round(w, 4), round(h, 4), round(d, 4)], "placement": "wall",
            "color": "white", "material": "wood" if category == "door" else "glass",
            "shape": "rectangular", "description": f"white {category} (THOR {asset_id})",
            "receptacle": False, "source": "thor", "hole_m": [round(w, 4), round(h, 4)]}


def generic_assets() -> list[dict[str, Any]]:
    out = []
    for category, variants in GENERIC.items():
        placement, receptacle, _, _ = CATEGORIES[category]
        for variant, size, colour, material, shape in variants:
            slug = category.replace(" ", "_")
            out.append({"asset_id": f"bb_{slug}_{variant}", "category": category, "size_m": list(size),
                        "placement": placement, "color": colour, "material": material, "shape": shape,
                        "description": f"{colour} {material} {shape} {category}",
                        "receptacle": receptacle, "source": "buildbench"})
    return out


def derive(shared: Path) -> dict[str, Any]:
    db = shared / "data" / "holodeck" / "procthor_databases"
    assets_db = json.loads((db / "asset-database.json").read_text())
    materials_db = json.loads((db / "material-database.json").read_text())
    holes = json.loads((db / "wall-holes.json").read_text())
    assets = generic_assets()
    for thor_type in sorted(THOR_TYPES):
        records = sorted(assets_db.get(thor_type, []), key=lambda r: r["assetId"])
        step = max(1, len(records) // THOR_PER_TYPE)  # spread the cap over the whole range
        for record in records[::step][:THOR_PER_TYPE]:
            assets.append(thor_asset(record, THOR_TYPES[thor_type], holes))
    known = {a["asset_id"] for a in assets}
    for asset_id in sorted(holes):
        if asset_id not in known:
            assets.append(hole_only_asset(asset_id, holes[asset_id]))
    known = {a["asset_id"] for a in assets}
    categories = {name: {"placement": p, "receptacle": r, "shape": s, "synonyms": syn}
                  for name, (p, r, s, syn) in CATEGORIES.items()}
    thor_types = dict(THOR_TYPES)
    for thor_type in sorted(assets_db):
        if thor_type not in thor_types:  # e.g. CellPhone -> "cell phone", sizes only
            name = " ".join(words_of(thor_type))
            thor_types[thor_type] = name
            pickup = any(r.get("primaryProperty") == "CanPickup" for r in assets_db[thor_type])
            categories.setdefault(name, {"placement": "small" if pickup else "floor", "receptacle": False,
                                         "shape": "irregular", "synonyms": [name]})
    return {"format": "buildbench-scene-catalogue/1", "categories": categories,
            "thor_types": thor_types, "colours": {k: list(v) for k, v in COLOURS.items()},
            "assets": assets, "thor_sizes": thor_sizes(assets_db, known), "materials": derive_materials(materials_db)}


def thor_sizes(assets_db: dict[str, list[dict[str, Any]]], known: set[str]) -> dict[str, list[list[Any]]]:
    """Every other THOR asset: type -> [[assetId, sx, sy, sz, receptacle 0/1], ...] (metres)."""
    out: dict[str, list[list[Any]]] = {}
    for thor_type in sorted(assets_db):
        rows = []
        for r in sorted(assets_db[thor_type], key=lambda r: r["assetId"]):
            if r["assetId"] in known:
                continue
            bb = r["boundingBox"]
            rows.append([r["assetId"], round(bb["x"], 4), round(bb["y"], 4), round(bb["z"], 4),
                         int("Receptacle" in (r.get("secondaryProperties") or []))])
        if rows:
            out[thor_type] = rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=REPO / ".." / "shared")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    data = derive(args.shared)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=None, separators=(",", ":"), sort_keys=False) + "\n")
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes, {len(data['assets'])} assets, "
          f"{len(data['materials'])} materials)")


if __name__ == "__main__":
    main()
