"""Machine files as users have them from Besiege and BuildArena 2.0: a ``.bsg`` (the game's XML,
ours or the 2.0 exporter's) given where a machine is expected is refused in one line that says
what it is and what to give instead (a ``.bsg`` holds block poses, not which face joins which),
never a JSON parse error at line 1; other XML is named as such. The 2.0-style file is written
here after the layout of the public Kaggle entries' ``machine_raw.bsg`` (a starting block and two
game id 91 blocks, tracker data), not copied."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.export import history_json, to_bsg

_BLOCK = """        <Block id="{gid}" guid="00000000-0000-4000-8000-00000000000{n}">
            <Transform>
                <Position x="{x}" y="0.0" z="0.0" />
                <Rotation x="-0.0" y="0.7071067811865475" z="-0.0" w="0.7071067811865476" />
                <Scale x="1.0" y="1.0" z="1.0" />
            </Transform>
            <Data />
        </Block>"""

TWO_POINT_O = "\n".join([
    '<?xml version="1.0" encoding="utf-8"?>',
    '<Machine version="1" bsgVersion="1.4" name="pair">',
    '    <Global><Position x="0" y="5" z="0" /><Rotation x="0" y="0" z="0" w="1" /></Global>',
    '    <Data><Boolean key="tracker.enabled">True</Boolean></Data>',
    "    <Blocks>",
    _BLOCK.format(gid=0, n=1, x=0.0), _BLOCK.format(gid=91, n=2, x=0.5), _BLOCK.format(gid=91, n=3, x=-0.5),
    "    </Blocks>",
    "</Machine>", ""])


def _refused(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), lines
    return lines[0]


@pytest.mark.parametrize("command", [["simulate", "--task", "lift-1"], ["render"], ["export-bsg"]])
def test_a_besiege_bsg_is_refused_naming_what_to_give(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       command: list[str]) -> None:
    path = tmp_path / "machine_raw.bsg"
    path.write_text(TWO_POINT_O)
    line = _refused(capsys, ["buildarena", command[0], str(path), *command[1:]])
    assert f"{path} is a Besiege .bsg machine (3 blocks)" in line
    assert "not which face joins which" in line and "build_history.json" in line
    assert "JSON (line" not in line


def test_our_own_bsg_fed_back_is_refused_as_a_bsg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What ``export-bsg`` writes (Lua script and all) cannot come back in, and says so."""
    machine = designs.build(designs.Design("engine", designs.heated_engine()))
    bsg = tmp_path / "engine.bsg"
    bsg.write_text(to_bsg(machine, name="engine"))
    line = _refused(capsys, ["buildarena", "simulate", str(bsg), "--task", "lift-1"])
    assert f"is a Besiege .bsg machine ({len(machine.blocks)} blocks)" in line
    # the history the .bsg was written from is the file to give, and it is read
    history = tmp_path / "engine.json"
    history.write_text(history_json(machine))
    assert main(["buildarena", "export-bsg", str(history)]) == 0
    assert capsys.readouterr().out.count("<Block id=") == len(machine.blocks)


@pytest.mark.parametrize("content,gz", [
    ("\ufeff" + TWO_POINT_O, False),  # a byte-order mark and the declaration after it
    ("\r\n  " + TWO_POINT_O.replace("\n", "\r\n"), False),  # Windows line ends, leading blank line
    (TWO_POINT_O, True),  # machine.bsg.gz
])
def test_bsg_variants_are_recognised(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str,
                                     gz: bool) -> None:
    path = tmp_path / "m.bsg"
    data = content.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert "is a Besiege .bsg machine (3 blocks)" in _refused(capsys, ["buildarena", "export-bsg", str(path)])


def test_other_xml_is_named_as_xml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "level.blv"
    path.write_text('<?xml version="1.0"?>\n<Level><Entities /></Level>\n')
    line = _refused(capsys, ["buildarena", "export-bsg", str(path)])
    assert f"{path} is XML, not a machine file" in line


@pytest.mark.parametrize("field", ["keys", "detached", "links", "note", "group"])
def test_a_hand_edited_document_with_a_null_field_reads_as_without_it(tmp_path: Path, field: str,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Other tools write null for an empty field; the document check takes it as absent, and so
    must the reader (a null 'keys' or 'detached' was an AttributeError)."""
    machine = designs.build(designs.Design("engine", designs.heated_engine()))
    doc = machine.to_json()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain, edited = tmp_path / "a" / "engine.json", tmp_path / "b" / "engine.json"
    plain.write_text(json.dumps(doc))
    emptied = 0
    for block in doc["blocks"]:
        if not block.get(field):
            block[field] = None
            emptied += 1
    assert emptied
    edited.write_text(json.dumps(doc))
    assert main(["buildarena", "export-bsg", str(plain)]) == 0
    want = capsys.readouterr().out
    assert main(["buildarena", "export-bsg", str(edited)]) == 0
    got = capsys.readouterr().out
    fresh = re.compile(r'guid="[^"]*"|"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"')
    assert fresh.sub("", got) == fresh.sub("", want)
