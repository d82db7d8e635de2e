"""House files as other exporters write them, through `dreamhouse validate FILE`.

The released submission (spec §2.2) is ``{"members": [{"name", "dimensions", "matrix_world",
"location"?, "bbox_world_corners"?}]}`` read as JSON, so JSON's own freedoms (key order,
integers for whole numbers, exponents, ``-0.0``, escapes, whitespace) and keys the
released rebuild ignores (rotation keys, scale) must give the verdict of the plain file. A gzip
file is read as its content. What the format does not allow is one ``error:`` line naming the
file, the member (index and name) and the field, exit status 2, nothing on stdout; a key given
twice in one object is refused too, naming the key and its line (JSON leaves its meaning open:
Python keeps the last, other readers the first)
(test_real_variety.py holds the first variants: BOM, CRLF, strings, no corners, bare list).
"""

from __future__ import annotations

import copy
import gzip
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.suites.dreamhouse.check import validate
from buildbench.suites.dreamhouse.generate import generate_structure
from buildbench.suites.dreamhouse.model import StructureFormatError, load_structure, parse_document

Doc = dict[str, Any]
_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d+(?:e-?\d+)?")  # numbers only: names hold no '.'


@pytest.fixture(scope="module")
def house() -> Doc:
    """A generated house in the released form (sloped rafters included); it passes every test."""
    return generate_structure("RN_01_0001", 0).structure.to_submission()


def _each(edit: Callable[[dict[str, Any]], None]) -> Callable[[Doc], bytes]:
    def write(doc: Doc) -> bytes:
        out = copy.deepcopy(doc)
        for m in out["members"]:
            edit(m)
        return json.dumps(out).encode()
    return write


def _whole(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _full_turn(m: dict[str, Any]) -> None:
    """The member turned once more by 360° about Z, as an exporter's float math writes it."""
    c, s = math.cos(2 * math.pi), math.sin(2 * math.pi)
    rows = m["matrix_world"]
    m["matrix_world"] = [[c * rows[0][j] - s * rows[1][j] for j in range(4)],
                         [s * rows[0][j] + c * rows[1][j] for j in range(4)], rows[2], rows[3]]
    m["matrix_world"][0][3], m["matrix_world"][1][3] = rows[0][3], rows[1][3]


def _rotation_keys(m: dict[str, Any]) -> None:
    """Keys a Blender export may add; the released rebuild places boxes by matrix_world alone."""
    m.update(rotation_euler=[0.0, 0.0, 90.0], rotation_mode="XYZ", rotation_quaternion=[2.0, 0.0, 0.0, 0.0],
             scale=[1.0, 1.0, 1.0], parent=None)


def _repeated_key(doc: Doc) -> bytes:
    """Every member's "dimensions" written twice, a wrong one first: Python's json keeps the last,
    other readers the first or refuse, so the file is refused."""
    text = json.dumps(doc)
    return text.replace('"dimensions": ', '"dimensions": [9, 9, 9], "dimensions": ').encode()


def _other_local_axes(m: dict[str, Any]) -> None:
    """The same box with its local axes taken in another order (a stud modelled lying along x
    and turned upright): sizes (y, z, x) and the matrix turned to match, so the world box
    is unchanged. Exporters differ in which local axis is the long one."""
    m["dimensions"] = [m["dimensions"][1], m["dimensions"][2], m["dimensions"][0]]
    rows = m["matrix_world"]
    m["matrix_world"] = [[row[1], row[2], row[0], row[3]] for row in rows[:3]] + [rows[3]]


def _mirrored(m: dict[str, Any]) -> None:
    for row in m["matrix_world"][:3]:
        row[0] = -row[0]


#: variant -> writer; each must give the plain file's verdicts (both profiles)
SAME_VERDICT: dict[str, Callable[[Doc], bytes]] = {
    "whole numbers as integers": lambda d: json.dumps(_whole(d)).encode(),
    "exponent notation": lambda d: _FLOAT.sub(lambda x: f"{float(x.group()):.15E}", json.dumps(d)).encode(),
    "numbers as strings in exponent notation": _each(lambda m: m.update(
        dimensions=[f"{v:e}" if v else "0e0" for v in m["dimensions"]])),
    "every zero negative": lambda d: re.sub(r"(?<![\w.-])0\.0\b", "-0.0", json.dumps(d)).encode(),
    "keys in reverse order": lambda d: json.dumps(
        {"members": [dict(reversed(list(m.items()))) for m in d["members"]]}).encode(),
    "gzip-compressed": lambda d: gzip.compress(json.dumps(d).encode()),
    "rotation and scale keys": _each(_rotation_keys),
    "turned a full 360 degrees": _each(_full_turn),
    "long side on another local axis": _each(_other_local_axes),
    # Blender keeps dimensions positive under a negative scale; the box is the same
    "mirrored by a negative x scale": _each(_mirrored),
    # the released rebuild places a box by matrix_world alone: a mesh whose origin is not its
    # centre exports corners and a location that disagree with it, and both are ignored
    "corners and location of an off-centre origin": _each(lambda m: m.update(
        location=[m["location"][0], m["location"][1], m["location"][2] - 1.0],
        bbox_world_corners=[[x, y, z + 0.5] for x, y, z in m["bbox_world_corners"]])),
    "tabs, blank lines, escaped slashes": lambda d: (json.dumps(d, indent="\t").replace("_", "\\u005f")
                                                    + "\n\n").encode(),
}


def _verdicts(path: Path) -> dict[str, Any]:
    """Both profiles' results, measured numbers to 12 significant digits (a matrix turned by
    360° in full float precision differs from the plain one by 1e-16)."""
    return _rounded({p: validate(load_structure(path), p).to_json() for p in ("paper", "released")})


def _rounded(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return float(f"{value:.12g}") if isinstance(value, float) else value


@pytest.mark.parametrize("variant", sorted(SAME_VERDICT))
def test_exporter_variant_gives_the_verdict_of_the_plain_file(house: Doc, variant: str, tmp_path: Path) -> None:
    plain, other = tmp_path / "plain.json", tmp_path / "variant.json"
    plain.write_text(json.dumps(house))
    other.write_bytes(SAME_VERDICT[variant](house))
    assert other.read_bytes() != plain.read_bytes()
    assert _verdicts(other) == _verdicts(plain)


def test_unicode_names_keep_their_prefix_categories(house: Doc, tmp_path: Path) -> None:
    doc = copy.deepcopy(house)
    for m in doc["members"]:
        m["name"] += "_Süd_北_🏠"
    path = tmp_path / "unicode.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    plain = parse_document(house)
    read = load_structure(path)
    assert read.names[0].endswith("_Süd_北_🏠") and read.categories == plain.categories
    assert validate(read, "released").passed and validate(plain, "released").passed


def test_a_house_in_millimetres_is_read_in_metres_and_fails_as_in_the_original(house: Doc, tmp_path: Path) -> None:
    """The format has no unit field (metres, spec §2.1): the released rebuild reads mm values as
    metres too, so the house is 1000 times too big and its lumber is no standard size."""
    doc = copy.deepcopy(house)
    for m in doc["members"]:
        m["dimensions"] = [v * 1000 for v in m["dimensions"]]
        for row in m["matrix_world"][:3]:
            row[3] *= 1000
        del m["location"], m["bbox_world_corners"]
    path = tmp_path / "mm.json"
    path.write_text(json.dumps({**doc, "units": "mm"}))
    read = load_structure(path)
    assert read.sizes_m.max() > 1000
    assert "standard_lumber" in validate(read, "paper").failed
    assert "span_limits" in validate(read, "released").failed
    assert main(["dreamhouse", "validate", str(path)]) == 1


@pytest.mark.parametrize(("dims", "says"), [([0, 0.038, 0.089], "must be at least 0.0001 m on every axis"),
                                            ([2.4, 0.038, -0.089], "must be at least 0.0001 m on every axis")])
def test_zero_and_negative_sizes_are_a_failing_verdict_naming_the_member(
        house: Doc, dims: list[float], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = copy.deepcopy(house)
    doc["members"][5]["dimensions"] = dims
    path = tmp_path / "zero.json"
    path.write_text(json.dumps(doc))
    assert main(["dreamhouse", "validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"#5 ({doc['members'][5]['name']!r}) size" in out and says in out


def test_duplicate_names_are_a_failing_verdict_naming_both(house: Doc, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    doc = copy.deepcopy(house)
    doc["members"][3]["name"] = doc["members"][1]["name"]
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(doc))
    assert main(["dreamhouse", "validate", "--profile", "released", str(path)]) == 1
    assert f"name {doc['members'][1]['name']!r} is used by 2 members (#1, #3)" in capsys.readouterr().out


def _first(edit: Callable[[dict[str, Any]], None]) -> Callable[[Doc], bytes]:
    def write(doc: Doc) -> bytes:
        out = copy.deepcopy(doc)
        edit(out["members"][0])
        return json.dumps(out).encode()
    return write


def _set(key: str, value: Any) -> Callable[[Doc], bytes]:
    return _first(lambda m: m.__setitem__(key, value))


_ROW = [1.0, 0.0, 0.0, 0.0]
#: variant -> (writer, what the one error line says after the file name)
MALFORMED: dict[str, tuple[Callable[[Doc], bytes], str]] = {
    # Refused by the JSON reader (jsonio), where it is read, with its line and column.
    "integer too large for a float": (lambda d: json.dumps(d).replace("4.8768", "9" * 400, 1).encode(),
                                      "is not valid JSON: an integer of 400 digits is out of the range of a "
                                      "finite number: line 1 column 96"),
    "NaN as a string": (_set("dimensions", ["NaN", "0.14", "0.038"]), "'NaN' is not a finite number ([0])"),
    "Infinity as a string": (_set("dimensions", [2.4, "-Infinity", 0.038]), "'-Infinity' is not a finite number"),
    "1e999 as a string": (_set("dimensions", [2.4, 0.14, "1e999"]), "'1e999' is not a finite number ([2])"),
    "digit separators": (_set("dimensions", ["2_438", 0.14, 0.038]), "'2_438' is not a number ([0])"),
    "decimal comma": (_set("dimensions", ["2,4384", 0.14, 0.038]), "'2,4384' is not a number ([0])"),
    "Arabic-Indic digits": (_set("dimensions", ["\u0662", 0.14, 0.038]), "'\u0662' is not a number ([0])"),
    "sizes nested one level deeper": (_set("dimensions", [[2.4, 0.14, 0.038]]),
                                      "field 'dimensions' is invalid: expected 3 numbers [x, y, z], got a list of "
                                      "1 item"),
    "ragged matrix row": (_first(lambda m: m["matrix_world"][2].pop()),
                          "field 'matrix_world' is invalid: expected 4 numbers per row, got a list of 3 items at [2]"),
    "3x4 affine matrix": (_first(lambda m: m["matrix_world"].pop()), "expected a 4x4 matrix (4 rows of 4 numbers)"),
    "matrix entry an object": (_first(lambda m: m["matrix_world"][1].__setitem__(3, {"y": 0})),
                               "field 'matrix_world' is invalid: expected a number, got an object ([1][3])"),
    "location of 2 numbers": (_first(lambda m: m.update(matrix_world=None, location=[1, 2])),
                              "field 'location' is invalid: expected 3 numbers [x, y, z], got a list of 2 items"),
    "name a number": (_set("name", 17), "member 0: field 'name' must be a string, got the number 17"),
    "100,000-character name": (_first(lambda m: m.update(name="Sill_" + "x" * 100_000, dimensions=[1, 1])),
                               "member 0 ('Sill_" + "x" * 72 + "'...): field 'dimensions' is invalid"),
    "member null": (lambda d: json.dumps({"members": [None, *d["members"]]}).encode(),
                    "member 0: expected a JSON object, got null"),
    "bare list of numbers": (lambda d: b"[1, 2, 3]", "member 0: expected a JSON object, got the number 1"),
    "members under another key": (lambda d: json.dumps({"objects": d["members"]}).encode(),
                                  'has no "members" list (its keys: objects)'),
    "members a string": (lambda d: b'{"members": "Sill_01"}', "needs a \"members\" list, got the string 'Sill_01'"),
    "a newer version of our format": (lambda d: json.dumps({"format": "buildbench.dreamhouse.structure",
                                                            "version": 2, "members": []}).encode(),
                                      "field 'version' is 2; this reader reads version 1"),
    "repeated key": (_repeated_key, "is not valid JSON: key 'dimensions' given twice in one object: line 1"),
    "UTF-16 with byte-order mark": (lambda d: json.dumps(d).encode("utf-16"),
                                    "UTF-16 little-endian byte-order mark: it is not UTF-8 text"),
    "trailing comma": (lambda d: json.dumps(d)[:-2].encode() + b",]}", "is not valid JSON: Expecting value"),
    "JSON5 comment": (lambda d: b"// exported by hand\n" + json.dumps(d).encode(),
                      "is not valid JSON: Expecting value: line 1 column 1"),
    "two documents": (lambda d: json.dumps(d).encode() * 2, "is not valid JSON: Extra data"),
    "empty file": (lambda d: b"", "is not valid JSON: Expecting value: line 1 column 1"),
    "NaN literal": (lambda d: json.dumps(d).replace("2.4384", "NaN", 1).encode(), "NaN is not a finite number"),
    "nested 500 deep": (lambda d: b'{"members": ' + b"[" * 500 + b"]" * 500 + b"}", "nested deeper than"),
    "truncated gzip": (lambda d: gzip.compress(json.dumps(d).encode())[:200], "not a gzip file"),
}


@pytest.mark.parametrize("variant", sorted(MALFORMED))
def test_malformed_file_is_one_error_line_naming_file_and_field(
        house: Doc, variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write, says = MALFORMED[variant]
    path = tmp_path / "house.json"
    path.write_bytes(write(house))
    with pytest.raises(StructureFormatError, match=re.escape(says)):
        load_structure(path)
    for args in ([], ["--json"], ["--profile", "released"]):
        assert main(["dreamhouse", "validate", *args, str(path)]) == 2
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert captured.out == "" and len(lines) == 1, (captured.out[:200], lines)
        assert lines[0].startswith("error: ") and str(path) in lines[0] and says in lines[0], lines[0]


def test_an_empty_bare_list_is_an_empty_house_like_an_empty_member_list(tmp_path: Path) -> None:
    bare, wrapped = tmp_path / "bare.json", tmp_path / "wrapped.json"
    bare.write_text("[]")
    wrapped.write_text('{"members": []}')
    assert _verdicts(bare) == _verdicts(wrapped)
    assert main(["dreamhouse", "validate", str(bare)]) == 1


def test_a_20000_member_house_is_read_whole(house: Doc, tmp_path: Path) -> None:
    """20,000 members (the default BUILDBENCH_LIMIT_HOUSE_MEMBERS) are read, each where the file puts it."""
    members: list[dict[str, Any]] = []
    for k in range(20_000 // len(house["members"]) + 1):
        for m in house["members"]:
            rows = copy.deepcopy(m["matrix_world"])
            rows[0][3] += 30.0 * k
            members.append({"name": f"{m['name']}_h{k}", "dimensions": m["dimensions"], "matrix_world": rows})
    del members[20_000:]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"members": members}, separators=(",", ":")))
    read = load_structure(path)
    assert len(read) == 20_000 and read.names[-1] == members[-1]["name"]
    assert read.centers_m[-1].tolist() == [r[3] for r in members[-1]["matrix_world"][:3]]
    assert validate(read, "released").n_members == 20_000


def test_one_member_over_the_limit_is_one_error_line(house: Doc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "house.json"
    path.write_text(json.dumps(house))
    n = len(house["members"])
    monkeypatch.setenv("BUILDBENCH_LIMIT_HOUSE_MEMBERS", str(n))
    assert main(["dreamhouse", "validate", str(path)]) == 0
    monkeypatch.setenv("BUILDBENCH_LIMIT_HOUSE_MEMBERS", str(n - 1))
    assert main(["dreamhouse", "validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {path}: {n} members, over the limit of {n - 1} (BUILDBENCH_LIMIT_HOUSE_MEMBERS)"]


@pytest.mark.parametrize(("edit", "says"), [
    (lambda d: d.update(version="1"), "field 'version' is '1'; this reader reads version 1"),
    (lambda d: d.update(meta=[]), 'field "meta" must be a JSON object, got a list of 0 items'),
    (lambda d: d["members"][2].update(size_m="0.038 0.089 2.4"),
     "member 2 ('Stud_main_front_f1_001'): field 'size_m' is invalid: expected 3 numbers [x, y, z], got the string"),
    (lambda d: d["members"][2].update(phase=3), "field 'phase' must be a string, got the number 3"),
    (lambda d: d["members"][2].update(section=["main"]), "field 'section' must be a string, got a list of 1 item"),
    (lambda d: d["members"][2].update(supported_by=[4]), "field 'supported_by' must be a list of names"),
    (lambda d: d["members"][2]["matrix_world"][3].__setitem__(3, False), "true/false is not a number ([3][3])"),
])
def test_our_format_wrong_types_are_one_error_line(edit: Callable[[Doc], None], says: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    doc = generate_structure("RN_01_0001", 0).structure.subset(range(3)).to_json_dict()
    doc["members"][2]["name"] = "Stud_main_front_f1_001"
    edit(doc)
    path = tmp_path / "ours.json"
    path.write_text(json.dumps(doc))
    assert main(["dreamhouse", "validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}: ") and says in err[0], err


def test_the_bulk_reader_and_the_member_by_member_reader_give_the_same_house(
        house: Doc, monkeypatch: pytest.MonkeyPatch) -> None:
    """A member list of plain numbers is read as arrays at once; anything else member by member."""
    from buildbench.suites.dreamhouse.model import parse

    doc = _whole(house)  # integers and floats mixed, as a whole-number writer leaves them
    fast = parse.parse_document(doc)
    monkeypatch.setattr(parse, "_released_in_bulk", lambda members: None)
    slow = parse.parse_document(doc)
    assert fast.names == slow.names
    assert fast.sizes_m.tobytes() == slow.sizes_m.tobytes() and fast.matrices.tobytes() == slow.matrices.tobytes()
    assert parse._number_array([[1, 2.0, True]], (1, 3)) is None  # a boolean is never a number
    assert parse._number_array([[1, 2.0, 10**400]], (1, 3)) is None
