"""House files as they come from the projects that write them, beyond their JSON: ProcTHOR-10k
ships its houses gzip-compressed as JSON lines (``train.jsonl.gz``), and Holodeck-style
generators write ``"open_walls": []`` when no wall was opened (Holodeck's own placement code
tests ``open_walls != []``). Both read as their plain forms; a damaged archive is one
``error:`` line naming the file. Built from the committed ProcTHOR/Holodeck fixtures."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.scenes.formats import read_items
from buildbench.scenes.io import load_scene, write_thor
from buildbench.scenes.model import SceneFormatError

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _doc(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def test_a_gzipped_jsonl_of_houses_reads_as_the_plain_one(tmp_path: Path) -> None:
    houses = [_doc("procthor_zg_house_100.json"), _doc("procthor_zg_klbr_house_0.json")]
    text = "".join(json.dumps(h) + "\n" for h in houses)
    plain, packed = tmp_path / "train.jsonl", tmp_path / "train.jsonl.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    a, b = read_items(plain, "procthor"), read_items(packed, "procthor")
    assert len(b) == 2 and [i.scene for i in a] == [i.scene for i in b]


def test_a_gzipped_house_loads_and_converts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    house = _doc("holodeck_a_living_room.json")
    packed = tmp_path / "living.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(house).encode()))
    assert load_scene(packed) == load_scene(house)
    out = tmp_path / "out.json"
    assert main(["scenes", "convert", str(packed), "--from", "holodeck", "--to", "holodeck", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == house
    assert main(["legoeval", "tool", "get_room_list", "--scene", str(packed), "--json"]) == 0


def test_a_damaged_archive_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packed = tmp_path / "train.jsonl.gz"
    packed.write_bytes(gzip.compress(b'{"rooms": []}\n' * 50)[:30])  # cut short
    assert main(["scenes", "convert", str(packed), "--from", "procthor", "--to", "thor", "--out",
                 str(tmp_path / "o.json")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {packed}: cannot read") and "not a gzip file" in line


@pytest.mark.parametrize("value", [[], None, {"segments": [], "openWallBoxes": []}])
def test_no_open_walls_in_any_spelling(value: Any) -> None:
    house = _doc("holodeck_a_living_room.json")
    variant = copy.deepcopy(house)
    variant["open_walls"] = value
    scene = load_scene(variant)
    assert scene.walls == load_scene(house).walls
    assert write_thor(scene) == variant  # written back as the file spelled it


def test_an_open_walls_list_of_entries_is_still_refused() -> None:
    variant = _doc("holodeck_a_living_room.json")
    variant["open_walls"] = [[[0, 0], [1, 0]]]
    with pytest.raises(SceneFormatError, match="open_walls: expected an object with 'segments' and 'openWallBoxes'"):
        load_scene(variant)


def test_scenerevis_metrics_reads_a_gzipped_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = json.dumps(_doc("procthor_zg_house_100.json")) + "\n"
    plain, packed = tmp_path / "houses.jsonl", tmp_path / "houses.jsonl.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    args = ["scenerevis", "metrics", "--json", "--no-voxels", "--no-navigation"]
    assert main([*args, str(plain)]) == 0
    want = json.loads(capsys.readouterr().out)
    assert main([*args, str(packed)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["n_scenes"] == want["n_scenes"] >= 1 and got["scenes"] == want["scenes"]


def test_a_generators_folder_of_gzipped_houses_is_read(tmp_path: Path) -> None:
    from buildbench.scenes.evaluate import read_generator

    gen = tmp_path / "holodeck"
    gen.mkdir()
    house = _doc("holodeck_a_living_room.json")
    (gen / "living.json.gz").write_bytes(gzip.compress(json.dumps(house).encode()))
    (gen / "notes.txt.gz").write_bytes(gzip.compress(b"not a scene"))
    (scene,) = read_generator(gen, "holodeck")
    assert scene.key == "living.json.gz" and scene.item.scene == load_scene(house)


def test_scenerevis_single_room_commands_take_a_one_room_house(tmp_path: Path) -> None:
    """``scenerevis render``/``apply`` read one room: a gzipped Holodeck house of one room is that
    room; a house of several is refused naming its rooms."""
    from buildbench.suites.scenerevis.cli import _InputError, read_scene

    packed = tmp_path / "living.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(_doc("holodeck_a_living_room.json")).encode()))
    room = read_scene(packed)
    assert room["room_id"] == "living room" and len(room["objects"]) == len(load_scene(packed).objects)
    several = tmp_path / "house.json"
    several.write_text(json.dumps(_doc("procthor_zg_house_100.json")))
    n = len(load_scene(several).rooms)
    assert n > 1
    with pytest.raises(_InputError, match=rf"a house of {n} rooms \('"):
        read_scene(several)
