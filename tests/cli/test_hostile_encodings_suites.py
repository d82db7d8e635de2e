"""The suites' own file readers take JSON as the harness's do (tests/cli/test_hostile_encodings.py):
a DreamHouse house (``dreamhouse validate``), a BuildArena machine (``buildarena export-bsg``),
LEGO-Eval's ``--scene`` and ``--constraints`` (``legoeval evaluate``), a scene file of the scene tools
(``scenes export``, ``scenerevis render``) and a BIM-Edit task record (``bimedit score --task``). The same JSON written another way (a UTF-8 byte-order mark, CRLF) is
read as the plain file; what is not the same, or is ambiguous (UTF-16/32, NaN, 1e400, a trailing
comma, a key given twice), is one ``error:`` line naming the file and the cause, exit 2."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from buildbench.cli.main import main

from .json_variants import REFUSED as ENCODED
from .json_variants import SAME as ENCODED_SAME
from .json_variants import call, fill, repeat_first_key

ROOT = Path(__file__).resolve().parents[2]
HOUSE = ROOT / "examples" / "files" / "house.json"
MACHINE = ROOT / "examples" / "files" / "machine.json"
CONSTRAINTS = {"instruction": "a bedroom with a bed",
               "constraints": ["There is a bed in the bedroom.", {"id": "wood", "text": "The floor of the bedroom is wood."}]}


def _legoeval_house(rooms: int = 2) -> str:
    from buildbench.scenes.build import HouseBuilder
    from buildbench.scenes.io import write_thor

    b = HouseBuilder()
    b.room("bedroom", (6, 0, 10, 4), room_type="bedroom", floor_material="DarkWoodFloors")
    if rooms == 2:
        b.room("living room", (0, 0, 6, 4), room_type="living room")
        b.door("living room", "bedroom", along=0.3)
    b.place("bed", "bedroom", center_xz=(8, 2))
    return json.dumps(write_thor(b.build()), indent=1) + "\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str, list[str]]]:
    """Reader -> (file name, content, argv with {F} the file and {T} the test's folder)."""
    fixed = tmp_path_factory.mktemp("fixed")
    house, constraints = fixed / "house.json", fixed / "constraints.json"
    house.write_text(_legoeval_house())
    constraints.write_text(json.dumps(CONSTRAINTS, indent=1) + "\n")
    readers = {
        "legoeval --scene": ("house.json", house.read_text(),
                             ["legoeval", "evaluate", "--json", "--scene", "{F}", "--constraints", str(constraints)]),
        "legoeval --constraints": ("constraints.json", constraints.read_text(),
                                   ["legoeval", "evaluate", "--json", "--scene", str(house), "--constraints", "{F}"]),
        "scenes export": ("house.json", house.read_text(), ["scenes", "export", "{F}", "--out", "{T}/meshes"]),
        "scenerevis render": ("room.json", _legoeval_house(rooms=1),
                              ["scenerevis", "render", "{F}", "--out", "{T}/views"]),
    }
    if HOUSE.is_file():
        readers["dreamhouse house"] = ("house.json", HOUSE.read_text(encoding="utf-8"),
                                       ["dreamhouse", "validate", "--json", "{F}"])
    if MACHINE.is_file():
        readers["buildarena machine"] = ("machine.json", MACHINE.read_text(encoding="utf-8"),
                                         ["buildarena", "export-bsg", "{F}", "--out", "{T}/out.bsg"])
    return readers


def _insert(literal: str) -> Callable[[str], bytes]:
    """The file with ``"odd": literal`` as the first key of its first object."""
    return lambda t: t.replace("{", '{"odd": ' + literal + ", ", 1).encode()


#: Variant -> the bytes of the file, given its UTF-8 text: read as the same JSON.
SAME = {name: ENCODED_SAME[name] for name in ("UTF-8 byte-order mark", "CRLF line ends")}
#: Variant -> (the bytes of the file, what the error line says).
REFUSED: dict[str, tuple[Callable[[str], bytes], str]] = {
    **{name: ENCODED[name] for name in ("UTF-16 with a byte-order mark", "UTF-32 with a byte-order mark",
                                        "UTF-32 big-endian with a byte-order mark", "UTF-16 without a byte-order mark",
                                        "trailing comma")},
    "a key given twice": (ENCODED["a key given twice"][0], "given twice in one object"),
    "NaN": (_insert("NaN"), "NaN is not a finite number"),
    "1e400": (_insert("1e400"), "1e400 is out of the range of a finite number"),
}


READERS = ("buildarena machine", "dreamhouse house", "legoeval --constraints", "legoeval --scene", "scenes export",
           "scenerevis render")


@pytest.mark.parametrize("variant", sorted(SAME))
@pytest.mark.parametrize("reader", READERS)
def test_the_same_json_written_another_way_is_read_as_it(files: dict[str, tuple[str, str, list[str]]], reader: str,
                                                          variant: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    if reader not in files:
        pytest.skip("examples/files is absent")
    name, text, argv = files[reader]
    results = []
    for kind, data in (("plain", text.encode()), ("odd", SAME[variant](text))):
        path = tmp_path / kind / name
        path.parent.mkdir()
        path.write_bytes(data)
        rc, out, err = call(fill(argv, path, path.parent), capsys)
        written = (path.parent / "out.bsg").read_bytes() if reader == "buildarena machine" else b""
        results.append((rc, out.replace(str(path.parent), "FOLDER"), written))
        assert rc == 0, err
    assert results[0] == results[1]


@pytest.mark.parametrize("variant", sorted(REFUSED))
@pytest.mark.parametrize("reader", READERS)
def test_json_that_is_not_the_same_is_one_error_line_naming_file_and_cause(
        files: dict[str, tuple[str, str, list[str]]], reader: str, variant: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    if reader not in files:
        pytest.skip("examples/files is absent")
    name, text, argv = files[reader]
    make, expected = REFUSED[variant]
    path = tmp_path / name
    path.write_bytes(make(text))
    rc, out, err = call(fill(argv, path, tmp_path), capsys)
    lines = err.splitlines()
    assert rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith("error: ") and str(path) in lines[0], err
    assert expected in lines[0], err
    assert not (tmp_path / "out.bsg").exists()


def test_a_bimedit_task_record_with_a_key_given_twice_is_refused_at_its_line(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.harness.errors import ConfigError
    from buildbench.suites.bimedit.task_records import read_tasks

    record = {"id": "WAL-CRE-DIR-A-001", "instruction": "Create a wall."}
    one = json.dumps(record, indent=1)  # a pretty-printed single task: the repeat is on its line 3
    refused = {
        "lines": ("\n" + repeat_first_key(json.dumps(record)) + "\n", ":2: "),  # (read before it is checked)
        "pretty": (one.replace('"instruction"', '"id": "x",\n "instruction"', 1), ":3: "),
    }
    for kind, (text, where) in refused.items():
        path = tmp_path / f"{kind}.jsonl"
        path.write_text(text)
        with pytest.raises(ConfigError, match=re.escape(f"{path}{where}not valid JSON (key 'id' given twice")):
            read_tasks(path)
        assert main(["bimedit", "score", "--task", str(path), "--pred", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: ") and f"{path}{where}" in err and "given twice" in err
