"""Asset retrieval: the shipped 3D-FUTURE descriptions, the semantic score and the
aspect-ratio (log-ratio) re-ranking."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from buildbench.suites.scenerevis import retrieval
from buildbench.suites.scenerevis.retrieval import AssetIndex, asset_id, default_index, log_ratio_distance

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scenerevis"


def test_the_shipped_index_holds_every_asset_and_category():
    index = default_index()
    assert len(index.assets) == 16561 and len(index.categories) == 272
    assert retrieval.DATA.is_relative_to(Path(retrieval.__file__).parent)  # package data, not /work/shared


def test_the_shipped_file_matches_the_shared_original():
    original = SHARED / "model_info_3dfuture_assets_simple_descs.json"
    if not original.exists():
        pytest.skip(f"shared data not found at {original}")
    source = json.loads(original.read_text())
    shipped = json.loads(retrieval.DATA.read_text())
    assert "MIT" in shipped["license"]
    assert [d for d, _ in shipped["assets"]] == [d.strip() for d in source]


def test_asset_ids_are_stable_hashes():
    desc = default_index().assets[0].description
    assert asset_id(desc) == "3dfuture-" + hashlib.sha1(desc.encode()).hexdigest()[:12]


def test_log_ratio_distance_anchors():
    assert log_ratio_distance((1, 2, 3), (1, 2, 3)) == 0.0
    assert log_ratio_distance((1, 2, 3), (2, 4, 6)) == pytest.approx(0.0)  # ratios ignore scale
    # x/y doubles, z/y equal, x/z doubles: mean |Δlog| = (2 ln 2) / 3.
    assert log_ratio_distance((2, 1, 1), (1, 1, 1)) == pytest.approx(2 * math.log(2) / 3)


def test_retrieval_matches_the_category_the_description_names():
    hit = default_index().retrieve("walnut nightstand with two drawers", (0.5, 0.55, 0.42))
    assert hit is not None and hit.asset.category == "nightstand" and hit.size_m is not None
    assert default_index().retrieve("zzzz qqqq", (1, 1, 1)) is None


def test_the_aspect_ratio_term_reranks_equal_texts():
    index = AssetIndex([("plain wooden cabinet", "cabinet"), ("plain wooden wardrobe", "wardrobe")])
    tall = index.rank("plain wooden", (1.0, 2.1, 0.6), 2)
    low = index.rank("plain wooden", (1.0, 0.8, 0.45), 2)
    if tall[0].size_m is None or low[0].size_m is None:
        pytest.skip("the scene catalogue has no sizes for these categories")
    assert tall[0].semantic == pytest.approx(tall[1].semantic)
    assert tall[0].asset.category == "wardrobe" and low[0].asset.category == "cabinet"


def test_ranking_is_deterministic():
    first = [r.asset.asset_id for r in default_index().rank("grey fabric sofa", (2.2, 0.85, 0.9), 5)]
    assert first == [r.asset.asset_id for r in default_index().rank("grey fabric sofa", (2.2, 0.85, 0.9), 5)]
