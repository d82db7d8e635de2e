"""DreamHouse structure model: taxonomy, oriented boxes, arrays, JSON I/O (ours and released)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from buildbench.geometry import Boxes
from buildbench.suites.dreamhouse.model import (
    CATEGORIES,
    PAPER_CATEGORIES,
    SUBSYSTEM,
    UNKNOWN_CODE,
    Member,
    Structure,
    StructureFormatError,
    classify,
    load_structure,
    parse_document,
)

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "dreamhouse"
SUBMISSION = SHARED / "4_submission.json"
needs_fixture = pytest.mark.skipif(
    not SUBMISSION.exists(), reason=f"released fixture {SUBMISSION} not present"
)


# -- taxonomy ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "lenient", "strict"),
    [
        ("Sill_front", "Sill", "Sill"),
        ("BeamPost_01", "BeamPost", "BeamPost"),  # longest prefix beats Post
        ("Post_3", "Post", "Post"),
        ("GableStud_2", "GableStud", "GableStud"),  # beats Stud
        ("Trimmer_1", "Trimmer", "Trimmer"),  # not Rim, the substring pitfall of spec §2.3
        ("Wall_Trimmer_2", "Trimmer", None),  # keyword inside the name: longest keyword wins
        ("CenterBeam_A", "CenterBeam", "CenterBeam"),
        ("TopPlate_n", "TopPlate", "TopPlate"),
        ("SolePlate_n", "SolePlate", "SolePlate"),
        ("Plate_7", "Plate", None),  # README alias
        ("Raf_7", "Rafter", None),  # README alias of Rafter
        ("HipRafter_1", "Hip", None),
        ("Valley_1", "Valley", None),
        ("Foundation_pad", "Foundation", None),
        ("stud_01", "Stud", None),  # paper prefixes are case-sensitive
        ("beam_001", None, None),
        ("vertical_member", None, None),
        ("", None, None),
    ],
)
def test_classify(name: str, lenient: str | None, strict: str | None) -> None:
    assert classify(name) == lenient
    assert classify(name, strict=True) == strict


def test_every_category_has_a_subsystem_and_the_paper_list_is_complete() -> None:
    assert len(PAPER_CATEGORIES) == 19
    assert set(CATEGORIES) == set(SUBSYSTEM)
    assert {SUBSYSTEM[c] for c in CATEGORIES} == {"foundation", "floor", "walls", "roof"}
    for c in PAPER_CATEGORIES:
        assert classify(f"{c}_01", strict=True) == c


# -- members and arrays --------------------------------------------------------------------
def test_member_from_aabb_and_category() -> None:
    m = Member.from_aabb("Joist_014", (1.0, 2.0, 0.038), (1.038, 5.6, 0.273), phase="floor", section="main")
    assert m.category == "Joist"
    np.testing.assert_allclose(m.size_m, [0.038, 3.6, 0.235])
    np.testing.assert_allclose(m.location_m, [1.019, 3.8, 0.1555])
    assert (m.phase, m.section, m.supported_by) == ("floor", "main", ())


def test_rotated_member_world_aabb_is_hand_computed() -> None:
    # A 2 m x 0.038 x 0.184 rafter pitched 30 degrees about x: Δy = 2cos30 + 0.184 sin30, Δz = 2 sin30 + 0.184 cos30.
    m = Member.box("Rafter_1", (0.038, 2.0, 0.184), (0.0, 1.0, 3.0), (math.radians(30), 0, 0))
    s = Structure.from_members([m])
    dy = 2 * math.cos(math.radians(30)) + 0.184 * 0.5
    dz = 2 * 0.5 + 0.184 * math.cos(math.radians(30))
    np.testing.assert_allclose(s.aabb_max_m[0] - s.aabb_min_m[0], [0.038, dy, dz], atol=1e-12)
    np.testing.assert_allclose((s.aabb_max_m[0] + s.aabb_min_m[0]) / 2, [0.0, 1.0, 3.0], atol=1e-12)


def test_structure_arrays_round_trip_members() -> None:
    ms = [
        Member.from_aabb("Sill_1", (0, 0, 0), (4, 0.14, 0.038), phase="foundation"),
        Member.from_aabb("Joist_1", (0, 0.038, 0.038), (0.038, 3.6, 0.273), supported_by=("Sill_1",)),
    ]
    s = Structure.from_members(ms, meta={"task_id": "AF_01_0001"})
    assert len(s) == 2 and s.sizes_m.shape == (2, 3) and s.matrices.shape == (2, 4, 4)
    assert s.categories == ("Sill", "Joist")
    assert s.category_codes.tolist() == [CATEGORIES.index("Sill"), CATEGORIES.index("Joist")]
    back = s.members()
    assert [m.name for m in back] == ["Sill_1", "Joist_1"]
    assert back[1].supported_by == ("Sill_1",) and back[0].phase == "foundation"
    sub = s.subset([1])
    assert sub.names == ("Joist_1",) and sub.meta == {"task_id": "AF_01_0001"}
    both = s.concat(sub)
    assert both.names == ("Sill_1", "Joist_1", "Joist_1")
    assert s.subset(np.array([False, True])).names == ("Joist_1",)


def test_unknown_names_get_the_unknown_code() -> None:
    s = Structure.from_aabbs(["beam_1"], np.zeros((1, 3)), np.ones((1, 3)))
    assert s.category_codes.tolist() == [UNKNOWN_CODE] and s.categories == (None,)


def test_empty_structure_has_empty_arrays() -> None:
    s = Structure.from_members([])
    assert len(s) == 0 and s.aabb_min_m.shape == (0, 3) and s.category_codes.shape == (0,)
    assert s.to_submission() == {"members": []}


def test_scale_in_the_matrix_is_stripped_and_mirrors_become_rotations() -> None:
    mat = np.diag([2.0, -3.0, 1.0, 1.0])
    mat[:3, 3] = [1, 2, 3]
    s = Structure(("Stud_1",), [[0.038, 0.089, 2.4]], [mat])
    rot = s.matrices[0, :3, :3]
    np.testing.assert_allclose(rot.T @ rot, np.eye(3), atol=1e-12)
    assert np.linalg.det(rot) > 0
    np.testing.assert_allclose(s.aabb_max_m[0] - s.aabb_min_m[0], [0.038, 0.089, 2.4])


def test_mismatched_array_shapes_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"needs sizes_m of shape \(2, 3\)"):
        Structure(("Sill_1", "Sill_2"), np.ones((2, 2)), np.tile(np.eye(4), (2, 1, 1)))


def test_mismatched_annotation_lengths_are_rejected() -> None:
    with pytest.raises(ValueError, match="phases has 1 entries for 2 members"):
        Structure(
            ("Sill_1", "Sill_2"), np.ones((2, 3)), np.tile(np.eye(4), (2, 1, 1)), phases=("foundation",)
        )


def test_boxes_round_trip() -> None:
    m = Member.box("Rafter_1", (0.038, 2.0, 0.184), (0.5, 1.0, 3.0), (0.4, 0.1, 0.2))
    s = Structure.from_members([m, Member.from_aabb("Sill_1", (0, 0, 0), (1, 1, 1))])
    boxes = s.to_boxes()
    assert isinstance(boxes, Boxes) and len(boxes) == 2
    back = Structure.from_boxes(boxes, s.names)
    np.testing.assert_allclose(back.aabb_min_m, s.aabb_min_m, atol=1e-12)
    np.testing.assert_allclose(back.sizes_m, s.sizes_m)
    with pytest.raises(ValueError, match="2 names for 1 boxes"):
        Structure.from_boxes(boxes.subset([0]), ["a", "b"])


# -- JSON ----------------------------------------------------------------------------------
@needs_fixture
def test_released_submission_fixture_loads_and_writes_back_identically() -> None:
    s = load_structure(SUBMISSION)
    assert s.names == ("Sill_01", "Sill_02", "Stud_01")
    assert s.categories == ("Sill", "Sill", "Stud")
    np.testing.assert_allclose(s.aabb_min_m[2], [-0.0445, 0.0, 0.181])
    np.testing.assert_allclose(s.aabb_max_m[2], [0.0445, 0.038, 2.619])
    assert s.to_submission() == json.loads(SUBMISSION.read_text())


def test_our_json_round_trip_keeps_annotations(tmp_path: Path) -> None:
    ms = [
        Member.from_aabb("Sill_1", (0, 0, 0), (4, 0.14, 0.038), phase="foundation", section="main"),
        Member.box("Rafter_1", (0.038, 2.0, 0.184), (0.0, 1.0, 3.0), (0.5, 0, 0), supported_by=("Sill_1",)),
    ]
    s = Structure.from_members(ms, meta={"task_id": "RN_01_0001", "stories": 1})
    path = tmp_path / "s.json"
    s.save(path)
    t = load_structure(path)
    assert t.names == s.names and t.phases == s.phases and t.sections == s.sections
    assert t.supported_by == s.supported_by and t.meta == s.meta
    np.testing.assert_allclose(t.matrices, s.matrices)
    s.save(path, released=True)
    r = load_structure(path)
    np.testing.assert_allclose(r.aabb_min_m, s.aabb_min_m, atol=1e-6)
    assert r.phases == (None, None)


def test_released_entry_without_matrix_falls_back_to_location() -> None:
    doc = {
        "members": [{"name": "Sill_01", "location": [3.66, 0.0, 0.019], "dimensions": [7.32, 0.14, 0.038]}]
    }
    s = parse_document(doc)
    np.testing.assert_allclose(s.aabb_min_m[0], [0.0, -0.07, 0.0], atol=1e-12)


def test_nan_and_zero_sizes_are_read_for_the_validator_to_report() -> None:
    doc = {"members": [{"name": "Stud_1", "location": [0, 0, 0], "dimensions": [float("nan"), 0, -1]}]}
    s = parse_document(doc)
    assert math.isnan(s.sizes_m[0, 0]) and s.sizes_m[0, 2] == -1


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("house", "must be a JSON object, got the string 'house'"),
        ({}, 'has no "members" list'),
        ({"members": {}}, 'needs a "members" list'),
        ({"members": [], "meta": []}, '"meta" must be a JSON object'),
        ({"format": "other", "members": []}, "unknown structure format 'other'"),
        ({"members": [5]}, "member 0: expected a JSON object, got the number 5"),
        ([5], "member 0: expected a JSON object, got the number 5"),
        ({"members": [{"dimensions": [1, 1, 1]}]}, "member 0: field 'name' must be a string"),
        (
            {"members": [{"name": "Sill_1", "location": [0, 0, 0]}]},
            r"member 0 \('Sill_1'\): missing field 'dimensions'",
        ),
        (
            {"members": [{"name": "Sill_1", "dimensions": [1, 1]}]},
            r"member 0 \('Sill_1'\): field 'dimensions' is invalid",
        ),
        ({"members": [{"name": "Sill_1", "dimensions": [1, 1, "x"]}]}, "field 'dimensions' is invalid"),
        ({"members": [{"name": "Sill_1", "dimensions": [1, 1, 1]}]}, "needs 'matrix_world' or 'location'"),
        (
            {"members": [{"name": "S", "dimensions": [1, 1, 1], "matrix_world": [[1, 0, 0]]}]},
            "field 'matrix_world' is invalid: expected a 4x4 matrix",
        ),
        (
            {"format": "buildbench.dreamhouse.structure", "members": [{"name": "S", "size_m": [1, 1, 1]}]},
            "missing field 'matrix_world'",
        ),
        (
            {
                "format": "buildbench.dreamhouse.structure",
                "members": [
                    {"name": "S", "size_m": [1, 1, 1], "matrix_world": np.eye(4).tolist(), "phase": 3}
                ],
            },
            "field 'phase' must be a string",
        ),
        (
            {
                "format": "buildbench.dreamhouse.structure",
                "members": [
                    {
                        "name": "S",
                        "size_m": [1, 1, 1],
                        "matrix_world": np.eye(4).tolist(),
                        "supported_by": "x",
                    }
                ],
            },
            "'supported_by' must be a list of names",
        ),
    ],
)
def test_malformed_documents_name_the_member_and_field(doc: object, message: str) -> None:
    with pytest.raises(StructureFormatError, match=message):
        parse_document(doc)


def test_unreadable_files_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(StructureFormatError, match="cannot read structure file"):
        load_structure(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(StructureFormatError, match="is not valid JSON"):
        load_structure(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"members": [{"name": "A"}]}))
    with pytest.raises(
        StructureFormatError, match=r"wrong.json: member 0 \('A'\): missing field 'dimensions'"
    ):
        load_structure(wrong)


def test_a_diagonal_brace_rounded_to_six_decimals_is_still_a_rotation(tmp_path: Path) -> None:
    # matrix_world is rotation x size rounded to 6 decimals: divided by a 38 mm section its
    # columns were 1.3e-5 off orthogonal and scoring crashed ("not a proper rotation").
    from scipy.spatial.transform import Rotation

    rot = Rotation.from_euler("xyz", [0.3, 0.7, 1.1]).as_matrix()
    size = np.array([0.038, 0.089, 2.4])
    mat = np.eye(4)
    mat[:3, :3], mat[:3, 3] = rot * size, [1.0, 2.0, 3.0]
    path = tmp_path / "brace.json"
    member = {"name": "Stud_brace", "location": [1, 2, 3], "dimensions": size.tolist(),
              "matrix_world": np.round(mat, 6).tolist()}
    path.write_text(json.dumps({"members": [member]}))
    built = load_structure(path)
    assert np.abs(built.matrices[0, :3, :3] - rot).max() < 1e-4
    built.to_boxes()  # a proper rotation: no ValueError
    # A real shear, far beyond rounding, is still kept for the validator to report.
    shear = np.eye(4)
    shear[:3, :3] = np.array([[1.0, 0.3, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]) * size
    path.write_text(json.dumps({"members": [{**member, "matrix_world": shear.tolist()}]}))
    with pytest.raises(ValueError, match="not a proper rotation"):
        load_structure(path).to_boxes()
