"""Member lists as other tools write them: the released export format (the walkthrough's
submission) and the variants seen around it, read by the validator's file reader.

Variants that keep the meaning (no bounding-box corners, no location, a null matrix with a
location, numbers as strings, extra keys, a byte-order mark, CRLF and indentation, a bare
member list) must give the very verdict of the original file; variants that are malformed
are one ``error:`` line (exit 2). The released rules are those of the harness's
``server/_blender_script.py``: a box of ``dimensions`` placed by ``matrix_world``, falling back
to ``location`` when the matrix is absent or null.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.suites.dreamhouse.check import validate
from buildbench.suites.dreamhouse.generate import generate_structure
from buildbench.suites.dreamhouse.model import StructureFormatError, load_structure

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "dreamhouse"

Doc = dict[str, Any]


def _members(doc: Doc, edit: Callable[[dict[str, Any]], None]) -> Doc:
    out = copy.deepcopy(doc)
    for m in out["members"]:
        edit(m)
    return out


def _pop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda m: m.pop(key)


def _null_matrix(m: dict[str, Any]) -> None:
    """A location stands for the matrix only without rotation (and, in Blender, without parent)."""
    if [row[:3] for row in m["matrix_world"][:3]] == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]:
        m["location"] = [row[3] for row in m["matrix_world"][:3]]
        m["matrix_world"] = None


def _strings(m: dict[str, Any]) -> None:
    m["dimensions"] = [str(v) for v in m["dimensions"]]
    m["matrix_world"] = [[repr(float(v)) for v in row] for row in m["matrix_world"]]


def _extra(m: dict[str, Any]) -> None:
    m.update({"type": "MESH", "material": "SPF #2", "rotation_euler": [0, 0, 0], "collection": "House"})


#: variant -> (document transform, how the file is written)
SAME_VERDICT: dict[str, Callable[[Doc], bytes]] = {
    "as released": lambda d: json.dumps(d, indent=2).encode(),
    "compact, no indent": lambda d: json.dumps(d, separators=(",", ":")).encode(),
    "CRLF and 4-space indent": lambda d: json.dumps(d, indent=4).replace("\n", "\r\n").encode(),
    "UTF-8 byte-order mark": lambda d: b"\xef\xbb\xbf" + json.dumps(d).encode(),
    "no bbox_world_corners": lambda d: json.dumps(_members(d, _pop("bbox_world_corners"))).encode(),
    "no location": lambda d: json.dumps(_members(d, _pop("location"))).encode(),
    "null matrix_world, location kept": lambda d: json.dumps(_members(d, _null_matrix)).encode(),
    "numbers as strings": lambda d: json.dumps(_members(d, _strings)).encode(),
    "extra keys everywhere": lambda d: json.dumps({**_members(d, _extra), "task_id": "AF_01_0018",
                                                   "session_id": "s", "round": 1}).encode(),
    "bare member list": lambda d: json.dumps(d["members"]).encode(),
}


def _malformed(edit: Callable[[dict[str, Any]], None]) -> Callable[[Doc], bytes]:
    def write(d: Doc) -> bytes:
        out = copy.deepcopy(d)
        edit(out["members"][0])
        return json.dumps(out).encode()
    return write


#: variant -> (file writer, what the one error line says)
MALFORMED: dict[str, tuple[Callable[[Doc], bytes], str]] = {
    "true as a size": (_malformed(lambda m: m.__setitem__("dimensions", [True, 1, 1])), "true/false is not a number"),
    "sizes keyed by axis": (_malformed(lambda m: m.__setitem__("dimensions", {"x": 1, "y": 2, "z": 3})),
                            "field 'dimensions' is invalid"),
    "size with a unit": (_malformed(lambda m: m.__setitem__("dimensions", ["7.32m", "0.14", "0.038"])),
                         "field 'dimensions' is invalid"),
    "flat 16-number matrix": (_malformed(lambda m: m.__setitem__("matrix_world", sum(m["matrix_world"], []))),
                              "expected a 4x4 matrix"),
    "no placement at all": (_malformed(lambda m: m.update(matrix_world=None, location=None)),
                            "needs 'matrix_world' or 'location'"),
    "no dimensions": (_malformed(_pop("dimensions")), "missing field 'dimensions'"),
    "NaN literal": (lambda d: json.dumps(d).replace("0.14", "NaN", 1).encode(), "NaN is not a finite number"),
    "members keyed by name": (lambda d: json.dumps({"members": {m["name"]: m for m in d["members"]}}).encode(),
                              'needs a "members" list'),
    "Windows-1252 text": (lambda d: json.dumps({"members": [{**d["members"][0], "name": "Schwelle_ä"}]},
                                               ensure_ascii=False).encode("cp1252"), "not UTF-8 text"),
}


def _released_walkthrough() -> Doc:
    path = SHARED / "4_submission.json"
    if not path.is_file():
        pytest.skip("shared/data/dreamhouse/4_submission.json not found (the project's reference data)")
    return json.loads(path.read_text())


@pytest.fixture(scope="module", params=["released walkthrough", "generated house"])
def base(request: pytest.FixtureRequest) -> Doc:
    """The released example (3 members) and a whole generated house that passes every test."""
    if request.param == "released walkthrough":
        return _released_walkthrough()
    return generate_structure("RN_01_0001", 0).structure.to_submission()


def _verdicts(path: Path) -> dict[str, Any]:
    return {p: validate(load_structure(path), p).to_json() for p in ("paper", "released")}


@pytest.mark.parametrize("variant", sorted(SAME_VERDICT))
def test_variant_gives_the_verdict_of_the_original(base: Doc, variant: str, tmp_path: Path) -> None:
    original, other = tmp_path / "original.json", tmp_path / "variant.json"
    original.write_text(json.dumps(base))
    other.write_bytes(SAME_VERDICT[variant](base))
    assert _verdicts(other) == _verdicts(original)


@pytest.mark.parametrize("variant", sorted(MALFORMED))
def test_malformed_variant_is_one_error_line(base: Doc, variant: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    write, says = MALFORMED[variant]
    path = tmp_path / "variant.json"
    path.write_bytes(write(base))
    with pytest.raises(StructureFormatError, match=says):
        load_structure(path)
    assert main(["dreamhouse", "validate", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0], lines


def test_blender_copy_suffixes_keep_categories(tmp_path: Path) -> None:
    """Blender names a second "Stud_01" "Stud_01.001"; the suffix must not change what a member is."""
    doc = _released_walkthrough()
    path = tmp_path / "suffixed.json"
    path.write_text(json.dumps(_members(doc, lambda m: m.__setitem__("name", m["name"] + ".001"))))
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(doc))
    assert load_structure(path).categories == load_structure(plain).categories
    assert _verdicts(path)["released"]["passed"] == _verdicts(plain)["released"]["passed"]


def test_empty_member_list_is_a_failing_verdict_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text('{"members": []}')
    report = validate(load_structure(path), "released")
    assert not report.passed and "completeness" in report.failed
