"""scenerevis goals on rooms too sparse to spoil (an empty 3D-FRONT room, a room of two objects):
they give no task, and the command now says how many and which (the count of tasks was the only
hint)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from buildbench.suites.scenerevis.generate.cli import goals
from buildbench.suites.scenerevis.generate.goals import too_few_objects

FLOOR = [[-2.0, 0.0, -2.0], [2.0, 0.0, -2.0], [2.0, 0.0, 2.0], [-2.0, 0.0, 2.0]]
PIECES = [("double bed", [1.6, 0.9, 2.1], [0.0, 0.0, 0.5]), ("nightstand", [0.5, 0.5, 0.4], [1.2, 0.0, 1.5]),
          ("wardrobe", [1.2, 2.0, 0.6], [-1.3, 0.0, -1.6]), ("desk", [1.0, 0.75, 0.5], [1.3, 0.0, -1.6]),
          ("office chair", [0.5, 0.9, 0.5], [1.3, 0.0, -1.1])]


def _room(n: int) -> dict:
    return {"room_type": "bedroom", "bounds_bottom": FLOOR, "bounds_top": [[x, 2.6, z] for x, _, z in FLOOR],
            "objects": [{"desc": d, "size": s, "pos": p, "rot": [0, 0, 0, 1]} for d, s, p in PIECES[:n]]}


def test_small_rooms_are_counted_and_named(tmp_path: Path) -> None:
    scenes = tmp_path / "rooms.jsonl"
    scenes.write_text("".join(json.dumps(_room(n)) + "\n" for n in (5, 0, 2, 5)))
    out = tmp_path / "goals.jsonl"
    result = CliRunner().invoke(goals, [str(scenes), "--out", str(out), "--condition", "chaotic"])
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 2
    assert "2 of 4 rooms have fewer than 4 objects and give no task (rooms 2, 3," in result.output


def test_too_few_objects_matches_the_rooms_without_a_task() -> None:
    from buildbench.suites.scenerevis.generate.goals import goal_tasks

    rooms = [_room(n) for n in (5, 0, 2, 5, 4, 3)]
    made = {int(t["id"].rsplit("_", 1)[1]) for t in goal_tasks(rooms, "missing", seed=0)}  # type: ignore[arg-type]
    assert sorted(set(range(len(rooms))) - made) == too_few_objects(rooms) == [1, 2, 5]  # type: ignore[arg-type]
