"""`scenes convert --out X.jsonl` writes one scene a line, so its output reads back as the
readers read any .jsonl file (before: an indented JSON list, refused at line 1 by the same CLI)."""

from __future__ import annotations

import json
from pathlib import Path

from buildbench.cli.main import main


def test_a_jsonl_output_is_one_scene_a_line_and_reads_back(tmp_path: Path) -> None:
    rooms, two, back, one = (tmp_path / n for n in ("rooms.jsonl", "two.jsonl", "back.json", "one.jsonl"))
    assert main(["scenerevis", "rooms", "--n", "2", "--out", str(rooms)]) == 0
    assert main(["scenes", "convert", str(rooms), "--from", "scenerevis-flat", "--to", "respace",
                 "--out", str(two)]) == 0
    lines = two.read_text("utf-8").splitlines()
    assert len(lines) == 2 and all(isinstance(json.loads(line), dict) for line in lines)
    assert main(["scenes", "convert", str(two), "--from", "respace", "--to", "thor", "--out", str(back)]) == 0
    assert main(["scenes", "convert", str(two), "--from", "respace", "--to", "respace", "--out", str(one)]) == 0
    assert one.read_text("utf-8") == two.read_text("utf-8")


def test_one_scene_as_jsonl_is_one_line(tmp_path: Path) -> None:
    rooms, out = tmp_path / "rooms.jsonl", tmp_path / "one.jsonl"
    assert main(["scenerevis", "rooms", "--n", "1", "--out", str(rooms)]) == 0
    assert main(["scenes", "convert", str(rooms), "--from", "scenerevis-flat", "--to", "respace",
                 "--out", str(out)]) == 0
    assert len(out.read_text("utf-8").splitlines()) == 1
