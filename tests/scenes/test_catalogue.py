"""The shipped catalogue: sizes, attributes, categories from ids and descriptions, materials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.scenes.catalogue import (
    MATERIALS,
    catalogue_from_dict,
    category_of,
    default_catalogue,
    material_info,
)

DATA = Path(__file__).resolve().parents[2] / "src" / "buildbench" / "scenes" / "data" / "catalogue.json"
SHARED_DB = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "holodeck" / "procthor_databases"

REQUIRED = ["bed", "sofa", "armchair", "dining table", "coffee table", "side table", "chair", "desk",
            "office chair", "shelf", "bookshelf", "dresser", "nightstand", "wardrobe", "cabinet", "tv stand",
            "tv", "floor lamp", "table lamp", "plant", "rug", "fridge", "oven", "washing machine", "microwave",
            "kitchen counter", "toilet", "bathtub", "sink", "book", "vase", "laptop", "pillow", "cup",
            "painting", "mirror", "door", "window"]


def test_every_required_category_has_variants_with_distinct_colours() -> None:
    cat = default_catalogue()
    for name in REQUIRED:
        assets = cat.by_category(name)
        assert assets, name
        assert all(min(a.size_m) >= 0 and max(a.size_m) < 5 for a in assets), name
        if name not in ("plate", "box"):
            assert len({a.color for a in assets}) >= 2, name


def test_shipped_file_is_small_and_cached() -> None:
    assert DATA.stat().st_size < 400_000
    assert default_catalogue() is default_catalogue()


def test_pick_by_attribute_and_errors() -> None:
    cat = default_catalogue()
    assert cat.pick("sofa", color="red").color == "red"
    assert cat.pick("sofa", color="blue").color == "blue"
    with pytest.raises(KeyError, match="no sofa asset with color=purple"):
        cat.pick("sofa", color="purple")
    with pytest.raises(KeyError, match="unknown category 'spaceship'"):
        cat.pick("spaceship")


@pytest.mark.parametrize(("text", "category"), [
    ("Modern queen-sized bed with gray fabric headboard", "bed"),
    ("bedside table with two drawers", "nightstand"),
    ("Desk lamp on a desk", "table lamp"),
    ("TV stand with a TV", "tv stand"),
    ("A set of books", "book"),
    ("Bed_12", "bed"),
    ("RoboTHOR_sofa_alrid", "sofa"),
    ("Sofa_221_1", "sofa"),
    ("CoffeeTable", "coffee table"),
    ("sofa-0 (living room)", "sofa"),
    ("pillow-2|bookshelf-0 (bedroom 1)", "pillow"),
    ("CellPhone|surface|3|23", "cell phone"),
    ("Window_Fixed_60x48", "window"),
    ("a thing of no kind", None),
    ("", None),
])
def test_category_of(text: str, category: str | None) -> None:
    assert category_of(text) == category


def test_doors_and_windows_carry_hole_sizes() -> None:
    cat = default_catalogue()
    door = cat.get("Doorway_1")
    assert door is not None and door.hole_m is not None and 0.9 < door.hole_m[0] < 1.2
    assert all(a.hole_m for a in cat.by_category("window") if a.source == "thor")


def test_materials_lexicon() -> None:
    rgb, family, word = MATERIALS["DarkWoodFloors"]
    assert family == "wood" and word == "brown" and all(0 <= c <= 1 for c in rgb)
    assert material_info("OrangeDrywall 1") is not None and material_info("OrangeDrywall 1")[2] == "orange"
    assert material_info("NoSuchMaterial") is None


def test_bad_catalogue_data_is_refused() -> None:
    data = json.loads(DATA.read_text())
    data["assets"] = [{**data["assets"][0], "category": "unicorn"}]
    with pytest.raises(ValueError, match="unknown categories: unicorn"):
        catalogue_from_dict(data)
    data["assets"] = [{**json.loads(DATA.read_text())["assets"][0], "placement": "roof"}]
    with pytest.raises(ValueError, match="bad placement 'roof'"):
        catalogue_from_dict(data)


def test_thor_sizes_match_the_shared_database() -> None:
    db = SHARED_DB / "asset-database.json"
    if not db.exists():
        pytest.skip("shared ProcTHOR database absent (../shared/data/holodeck)")
    records = json.loads(db.read_text())
    cat = default_catalogue()
    for thor_type in ("Bed", "Sofa", "Television", "Fridge"):
        for rec in records[thor_type][:5]:
            asset = cat.get(rec["assetId"])
            assert asset is not None
            bb = rec["boundingBox"]
            assert asset.size_m == pytest.approx((bb["x"], bb["y"], bb["z"]), abs=1e-4)
