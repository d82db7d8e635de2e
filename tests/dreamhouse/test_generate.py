"""DreamHouse generator: ids, determinism, validator certification, counts, split, skin, files."""

from __future__ import annotations

import json
import pickle
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buildbench.harness.errors import ConfigError
from buildbench.suites.dreamhouse.check.validate import validate
from buildbench.suites.dreamhouse.generate import (
    MAX_MEMBERS,
    MIN_MEMBERS,
    ROOF_TYPES,
    STYLE_CODES,
    GeneratedHouse,
    TaskId,
    build_house,
    count_report,
    dataset_task_ids,
    default_split,
    generate_structure,
    member_count_distribution,
    params_from_dict,
    read_dataset,
    style_code,
    style_sizes,
    write_dataset,
)
from buildbench.suites.dreamhouse.generate.ids import complexity_for_index, roof_for_index
from buildbench.suites.dreamhouse.model import SUBSYSTEM, Structure, classify, parse_document

PROFILES = ("paper", "released")


def _failures(structure: Structure) -> list[str]:
    out = []
    for prof in PROFILES:
        for r in validate(structure, prof).results:
            if not r.passed:
                out.append(f"{prof}/{r.name}: {r.messages[:2]}")
    return out


# -- task ids -------------------------------------------------------------------------------
def test_task_id_round_trip_and_paper_dash_form() -> None:
    tid = TaskId.parse("AF_01_0060")
    assert (tid.style, tid.config, tid.index) == ("AF", 1, 60)
    assert str(tid) == "AF_01_0060"
    assert TaskId.parse("COL-03-1834") == TaskId("COL", 3, 1834)


@pytest.mark.parametrize(
    ("text", "why"),
    [("AF0160", "form"), ("XX_01_0001", "unknown style"), ("AF_07_0001", "outside 01"), ("AF_01_60", "form")],
)
def test_bad_task_ids_say_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        TaskId.parse(text)


def test_style_names_and_codes() -> None:
    assert style_code("A-Frame") == "AF" and style_code("split-level") == "SL" and style_code("ZP") == "ZP"
    with pytest.raises(ConfigError, match="unknown DreamHouse style"):
        style_code("Bungalow")
    assert len(STYLE_CODES) == 13


def test_index_fixes_roof_and_complexity() -> None:
    h = generate_structure("BN_02_0273", 0)
    assert h.params.roof_type == roof_for_index(273) == "hip"
    assert h.params.complexity == complexity_for_index(273)
    assert h.structure.meta["task_id"] == "BN_02_0273"


def test_bad_seed_is_rejected() -> None:
    with pytest.raises(ConfigError, match="non-negative"):
        generate_structure("AF_01_0001", -1)


# -- determinism ----------------------------------------------------------------------------
def _bytes(h: GeneratedHouse) -> bytes:
    return json.dumps([h.structure.to_json_dict(), h.skin.to_json_dict()], sort_keys=True).encode()


def test_same_seed_same_bytes_other_seed_other_house() -> None:
    a, b = generate_structure("CR_04_0911", 7), generate_structure("CR_04_0911", 7)
    assert _bytes(a) == _bytes(b)
    c = generate_structure("CR_04_0911", 8)
    assert _bytes(a) != _bytes(c)


def test_house_pickles_with_its_lazy_skin() -> None:
    h = generate_structure("AF_02_0181", 0)
    back = pickle.loads(pickle.dumps(h))
    assert back.structure.names == h.structure.names and back.skin.names == h.skin.names


def test_params_round_trip_rebuilds_the_same_house() -> None:
    h = generate_structure("SL_02_0415", 3)
    p = params_from_dict(json.loads(json.dumps(h.params.to_dict())))
    assert p == h.params
    assert _bytes(build_house(p, 3)) == _bytes(h)
    with pytest.raises(ConfigError, match="malformed"):
        params_from_dict({"task_id": "x"})


def test_bad_params_are_rejected_with_the_section_named() -> None:
    p = generate_structure("RN_01_0004", 0).params
    main = p.sections[0]
    with pytest.raises(ConfigError, match="section 'main' has 4 stories"):
        replace(p, sections=(replace(main, stories=4),))
    with pytest.raises(ConfigError, match="roof kind 'dome'"):
        replace(p, sections=(replace(main, roof=replace(main.roof, kind="dome")),))
    with pytest.raises(ConfigError, match="roof_type"):
        replace(p, roof_type="flat")


# -- validator certification (property) -----------------------------------------------------
def test_one_house_per_style_and_roof_passes_every_test() -> None:
    """All 52 style × roof cells (complexities in turn), both profiles."""
    bad = {}
    for s, code in enumerate(STYLE_CODES):
        for r in range(len(ROOF_TYPES)):
            i = r + 4 * ((s + r) % 3) + 12 * s
            h = generate_structure(TaskId(code, 1 + s % 6, i), 0)
            if f := _failures(h.structure):
                bad[h.task_id] = f
            assert all(7.0 <= f <= 14.0 for f in h.params.footprint_m), (h.task_id, h.params.footprint_m)
    assert not bad, bad


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    style=st.sampled_from(STYLE_CODES),
    config=st.integers(1, 6),
    index=st.integers(0, 9999),
    seed=st.integers(0, 2**31 - 1),
)
def test_every_generated_house_passes_every_test(style: str, config: int, index: int, seed: int) -> None:
    h = generate_structure(TaskId(style, config, index), seed)
    assert MIN_MEMBERS <= len(h.structure) <= MAX_MEMBERS
    assert all(7.0 <= f <= 14.0 for f in h.params.footprint_m), h.params.footprint_m
    assert not _failures(h.structure)


# -- structure content ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def colonial() -> GeneratedHouse:
    return generate_structure("COL_02_0502", 0)


def test_names_annotations_and_support_edges(colonial: GeneratedHouse) -> None:
    s = colonial.structure
    assert len(set(s.names)) == len(s)
    assert all(classify(n, strict=True) is not None for n in s.names)
    index = {n: i for i, n in enumerate(s.names)}
    for i, (phase, sup) in enumerate(zip(s.phases, s.supported_by, strict=True)):
        assert phase == SUBSYSTEM[classify(s.names[i], strict=True)]
        assert all(index[p] < i for p in sup), f"{s.names[i]} is supported by a later member"
    grounded = s.aabb_min_m[:, 2] < 0.1
    no_parent = np.array([not sup for sup in s.supported_by])
    assert grounded[no_parent].all()


def test_house_survives_the_released_submission_format(colonial: GeneratedHouse) -> None:
    """Rounded to 6 decimals as the released exporter writes it, the frame still passes."""
    back = parse_document(json.loads(json.dumps(colonial.structure.to_submission())))
    assert back.names == colonial.structure.names
    assert not _failures(back)


def test_phase_steps_cover_members_in_build_order(colonial: GeneratedHouse) -> None:
    steps = colonial.phases
    assert steps[0].start == 0 and sum(x.count for x in steps) == len(colonial.structure)
    assert all(a.start + a.count == b.start for a, b in zip(steps, steps[1:], strict=False))
    order = {"foundation": 0, "floor": 1, "walls": 2, "roof": 3}
    for sec in dict.fromkeys(x.section for x in steps):
        mine = [x for x in steps if x.section == sec]
        assert mine[0].phase == "foundation" and mine[-1].phase == "roof"
        keys = [(x.story, order[x.phase]) for x in mine[1:-1]]
        assert keys == sorted(keys)
    assert sum(colonial.schedule.values()) == len(colonial.structure)


def test_multi_story_split_level_and_wings() -> None:
    tall = generate_structure("TH_04_1101", 0)  # complex townhouse: 3 stories + rear wing
    assert tall.params.stories == 3 and tall.params.wings == 1
    split = generate_structure("SL_01_0002", 0)
    assert {s.z_base_m for s in split.params.sections} == {0.0, 1.35}
    posts = [n for n in split.structure.names if n.startswith("BeamPost")]
    assert posts, "a raised split-level section stands on posts"
    c = split.constraints
    assert c["lot_width"] == pytest.approx(c["footprint_x"] + 2.0)
    assert 7.0 <= c["footprint_x"] <= 14.0 and 7.0 <= c["footprint_y"] <= 14.0


def test_openings_are_framed(colonial: GeneratedHouse) -> None:
    names = colonial.structure.names
    n_open = len(colonial.openings)
    assert n_open > 0 and any(o.door for o in colonial.openings)
    kings = sum(n.startswith("King") for n in names)
    assert kings >= 2 * n_open  # interior doors are framed too
    assert sum(n.startswith("Trimmer") for n in names) == kings
    assert sum(n.startswith("Header") and "sill" not in n for n in names) == kings
    windows = sum(not o.door for o in colonial.openings)
    assert sum(n.startswith("Header") and "sill" in n for n in names) == windows
    assert any(n.startswith("Cripple") for n in names)


# -- skin -----------------------------------------------------------------------------------
def test_skin_is_thin_separate_and_leaves_openings_open(colonial: GeneratedHouse) -> None:
    skin = colonial.skin
    assert skin.names and all(n.startswith(("Sheathing", "Roofing")) for n in skin.names)
    assert (skin.sizes_m.min(axis=1) <= 0.0161).all()
    assert not set(skin.names) & set(colonial.structure.names)
    rot, centre, half = skin.matrices[:, :3, :3], skin.centers_m, skin.sizes_m / 2
    for o in colonial.openings:
        a = 0 if o.axis == "x" else 1
        p = np.zeros(3)
        p[a], p[1 - a], p[2] = o.center_m, o.face_m, (o.bottom_m + o.top_m) / 2
        local = np.einsum("nji,nj->ni", rot, p - centre)  # exact point-in-box test
        inside = (np.abs(local) <= half + 1e-3).all(axis=1)
        assert not inside.any(), f"opening at {p} is covered by {np.array(skin.names)[inside]}"


def test_skin_roofing_covers_every_rafter() -> None:
    h = generate_structure("FH_03_0605", 0)  # a hip roof
    n_rafters = sum(n.startswith("Rafter") for n in h.structure.names)
    assert any("_hip_" in n for n in h.structure.names)
    assert sum(n.startswith("Roofing") for n in h.skin.names) == n_rafters


# -- dataset, split, counts -----------------------------------------------------------------
def test_dataset_ids_and_style_shares() -> None:
    sizes = style_sizes(26543)
    assert sum(sizes.values()) == 26543 and max(sizes.values()) - min(sizes.values()) <= 1
    ids = dataset_task_ids(26)
    assert len(ids) == 26 and Counter(t.style for t in ids) == dict.fromkeys(STYLE_CODES, 2)
    assert {t.config for t in dataset_task_ids(130) if t.style == "AF"} == {1, 2, 3, 4, 5, 6}


def test_default_split_is_stratified() -> None:
    split = default_split()
    assert len(split) == 1200 == len(set(split))
    per_style = Counter(t.style for t in split)
    assert sorted(set(per_style.values())) == [92, 93]
    per_roof = Counter(roof_for_index(t.index) for t in split)
    assert per_roof == dict.fromkeys(ROOF_TYPES, 300)
    cells = Counter((t.style, roof_for_index(t.index)) for t in split)
    assert len(cells) == 52 and sorted(Counter(cells.values()).items()) == [(23, 48), (24, 4)]
    assert {complexity_for_index(t.index) for t in split} == {"simple", "moderate", "complex"}
    assert {t.config for t in split} == {1, 2, 3, 4, 5, 6}


def test_member_counts_fall_in_the_paper_range() -> None:
    report = member_count_distribution(78, seed=0, workers=1)
    assert report.overall.n == 78
    assert MIN_MEMBERS <= report.overall.min and report.overall.max <= MAX_MEMBERS
    assert 500 <= report.overall.mean <= 850, report.table()
    assert set(report.per_style) == set(STYLE_CODES)
    assert "all" in report.table().splitlines()[-1]


def test_count_report_of_nothing() -> None:
    assert count_report({}).overall.n == 0


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_write_and_read_dataset(tmp_path: Path, fmt: str) -> None:
    ids = [TaskId("AF", 1, 0), TaskId("SH", 2, 5)]
    m1 = write_dataset(tmp_path / "a", 0, seed=4, fmt=fmt, workers=1, task_ids=ids)
    m2 = write_dataset(tmp_path / "b", 0, seed=4, fmt=fmt, workers=2, task_ids=ids)
    assert m1["files"] == m2["files"] and m1["n"] == 2
    back = list(read_dataset(tmp_path / "a"))
    assert [b.task_id for b in back] == ["AF_01_0000", "SH_02_0005"]
    ref = generate_structure("SH_02_0005", 4)
    got = back[1].structure
    assert got.names == ref.structure.names and got.phases == ref.structure.phases
    assert np.allclose(got.matrices, ref.structure.matrices, atol=1e-6)
    assert back[1].params == ref.params and len(back[1].skin) == len(ref.skin)
    assert not _failures(got)


def test_write_dataset_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="format"):
        write_dataset(tmp_path, 1, fmt="csv")
    with pytest.raises(ConfigError, match="manifest"):
        list(read_dataset(tmp_path / "missing"))
